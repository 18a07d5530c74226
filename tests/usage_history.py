"""A store with fourteen months of usage (the usage screen's spans and bars) and a session
copied twice by `o` (kind `fork`, the copied responses repeated in each copy): the same
every run, costs logged with each response so no price table decides them."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

TODAY = date(2026, 3, 1)
NOW = datetime(2026, 3, 1, 15, 0, tzinfo=timezone.utc)
FIRST = date(2025, 1, 6)
ORIGINAL = "Port the billing service"
MODELS = ("claude-opus-4-1", "gpt-5")


def _reply(response: str, model: str, cost: float) -> dict:
    return {"message": {
        "role": "assistant", "model": model, "provider": "anthropic" if "claude" in model else "openai",
        "api": "test", "responseId": response, "content": [{"type": "text", "text": "done"}],
        "usage": {"input": 100, "output": 400, "cacheRead": 0, "cacheWrite": 0,
                  "cost": {"total": cost}}}}


def _ask(text: str) -> dict:
    return {"message": {"role": "user", "content": text}}


def build_usage_history(path: Path) -> Path:
    from core import open_store
    from core.history.lineage import link_sessions

    counter = iter(range(1, 1_000_000))
    store = open_store(path, clock=lambda: NOW, id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        day, number = FIRST, 0
        while day <= TODAY:
            number += 1
            moment = datetime(day.year, day.month, day.day, 10, tzinfo=timezone.utc)
            session = store.sessions.create(
                f"Weekly task {number:03d}", cwd=f"~/src/project{number % 3}", created_at=moment)
            branch = store.branches.create(session.id, name="main", created_at=moment)
            store.entries.append_to_branch(branch.id, "message", _ask("go"), timestamp=moment)
            # costs that rise and fall over the year, so bars differ
            cost = 2.0 + (number * 7 % 11) + (day.month % 4) * 1.5
            store.entries.append_to_branch(branch.id, "message",
                                   _reply(f"r{number}", MODELS[number % 2], cost),
                                   timestamp=moment + timedelta(minutes=1))
            day += timedelta(days=3 + number % 4)
        # a session copied twice by `o`: each copy repeats its responses, then adds one
        moment = datetime(2026, 2, 25, 9, tzinfo=timezone.utc)
        original = store.sessions.create(ORIGINAL, cwd="~/src/billing", created_at=moment)
        branch = store.branches.create(original.id, name="main", created_at=moment)
        shared = [("b1", 9.5), ("b2", 12.25)]
        for index, (response, cost) in enumerate(shared):
            store.entries.append_to_branch(branch.id, "message", _ask(f"step {index}"),
                                   timestamp=moment + timedelta(minutes=2 * index))
            store.entries.append_to_branch(branch.id, "message", _reply(response, MODELS[0], cost),
                                   timestamp=moment + timedelta(minutes=2 * index + 1))
        for copy in (1, 2):
            start = moment + timedelta(days=copy)
            fork = store.sessions.create(ORIGINAL, cwd="~/src/billing", created_at=start)
            store.sessions.set_lineage(fork.id, kind="fork", parent_ref=original.uid)
            fork_branch = store.branches.create(fork.id, name="main", created_at=start)
            for index, (response, cost) in enumerate(shared):
                store.entries.append_to_branch(fork_branch.id, "message", _ask(f"step {index}"),
                                       timestamp=moment + timedelta(minutes=2 * index))
                store.entries.append_to_branch(fork_branch.id, "message", _reply(response, MODELS[0], cost),
                                       timestamp=moment + timedelta(minutes=2 * index + 1))
            store.entries.append_to_branch(fork_branch.id, "message", _ask("carry on"), timestamp=start)
            store.entries.append_to_branch(fork_branch.id, "message",
                                   _reply(f"c{copy}", MODELS[0], 1.0 * copy),
                                   timestamp=start + timedelta(minutes=1))
        link_sessions(store)
    store.close()
    return path
