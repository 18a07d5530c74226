"""Generate a big store for the TUI benchmark.

10,000 external sessions and 1,000,000 entries in all, one of them a linear branch of
100,000 messages ("Big session: 100k messages"), and one session with 40 branches. Written in one transaction through the
store's own `EntryWriter`, so the file is exactly what arbor itself would write.

    /work/venv/bin/python bench/make_big_store.py /tmp/arbor-big.db
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import open_store  # noqa: E402

SESSIONS = 10_000
ENTRIES = 1_000_000
BIG_BRANCH = 100_000
BIG_NAME = "Big session: 100k messages"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)

WORDS = ("the test fails because the handler reads the config before the cache is warm so "
         "we retry with backoff and check the counts after every batch of rows").split()


PRICED = (("claude-sonnet-4-5", "anthropic"), ("claude-opus-4-1", "anthropic"),
          ("claude-haiku-4-5", "anthropic"), ("gpt-5", "openai"))


def _message(rng: random.Random, index: int, usage: bool = False) -> dict:
    kind = index % 3
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(6, 30)))
    if kind == 0:
        return {"role": "user", "content": f"Step {index}: {text}"}
    if kind == 1:
        message = {"role": "assistant", "model": "bench-model",
                   "content": [{"type": "text", "text": f"**Step {index}.** {text}"},
                               {"type": "toolCall", "id": f"c{index}", "name": "bash",
                                "arguments": {"command": f"echo {index}"}}]}
        if usage:   # a response's usage as pi logs it (no cost: priced when written)
            model, provider = PRICED[index % len(PRICED)]
            message.update(model=model, provider=provider, api="bench", usage={
                "input": rng.randrange(1, 50), "output": rng.randrange(20, 2000),
                "cacheRead": rng.randrange(0, 150_000), "cacheWrite": rng.randrange(0, 5000)})
        return message
    return {"role": "toolResult", "toolCallId": f"c{index - 1}", "toolName": "bash",
            "content": [{"type": "text", "text": f"{index}\n{text}"}], "isError": False}


BRANCHES = 40


def _branches(store, session_id: int, main, rng: random.Random) -> None:
    """Forty branches in one session (heads on the main path, no new entries): half of them
    nested one inside the next, half siblings, so the branches pane has a tree to move in."""
    parent = main
    for number in range(BRANCHES):
        depth = rng.randrange(1, store.paths.length(main.head_seq))
        seq = store.paths.at_depth(main.head_seq, depth)
        branch = store.branches.create(
            session_id, head_seq=seq, fork_seq=seq, parent_session_id=parent.id,
            name=f"try {number}", is_current=False, created_at=START + timedelta(seconds=number))
        if number % 2 == 0:
            parent = branch
        if number % 5 == 0:
            store.annotations.add_label(session_id, f"idea {number}", target_branch=branch.id)


def build(path: Path, sessions: int = SESSIONS, entries: int = ENTRIES, big: int = BIG_BRANCH,
          *, usage: bool = False) -> None:
    """`usage`: every assistant message carries a response's usage (bench/bench_usage.py)."""
    if not str(path).startswith(("postgresql://", "postgres://")):   # (a URL: a new, empty store)
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    rng = random.Random(7)
    counter = [0]

    def ids() -> str:
        counter[0] += 1
        return f"{counter[0]:08x}"

    store = open_store(path, id_factory=ids, clock=lambda: START)
    per_session = (entries - big) // (sessions - 1)
    extra = (entries - big) - per_session * (sessions - 1)
    started = time.perf_counter()
    with store.transaction():
        for number in range(sessions):
            is_big = number == sessions // 2
            ordinal = number if number < sessions // 2 else number - 1  # among the small ones
            count = big if is_big else per_session + (1 if ordinal < extra else 0)
            moment = START + timedelta(minutes=7 * number)
            session = store.sessions.create(
                BIG_NAME if is_big else f"Session {number:05d}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
                source=("claude_code", "codex", "pi", "langgraph")[number % 4],
                cwd=f"~/src/project{number % 40}", created_at=moment)
            writer = store.entries.writer(session.id)
            head = None
            for index in range(count):
                stamp = moment + timedelta(seconds=index)
                # the id given (the same one the store's id factory would make): no
                # round trip per entry to check a generated id is free on PostgreSQL
                head = writer.add(head, "message", {"message": _message(rng, index, usage)},
                                  entry_id=ids(), timestamp=stamp).seq
            writer.flush()
            main = store.branches.create(session.id, head_seq=head, name="main",
                                                 created_at=moment)
            if number == 1:
                _branches(store, session.id, main, rng)
            if number % 1000 == 0:
                print(f"  {number:>6} sessions  {time.perf_counter() - started:6.1f} s", flush=True)
    store.checkpoint_log()
    total = sum(s.entry_count for s in store.sessions.list(include_archived=True))
    store.close()
    print(f"{path}: {sessions} sessions, {total} entries, one branch of {big} messages "
          f"({time.perf_counter() - started:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="/tmp/arbor-big.db")
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--big", type=int, default=BIG_BRANCH)
    parser.add_argument("--usage", action="store_true", help="usage on every assistant message")
    args = parser.parse_args()
    build(Path(args.path), args.sessions, args.entries, args.big, usage=args.usage)


if __name__ == "__main__":
    main()
