"""Copies of a conversation in another session count once in any total.

Decided: a response copied into another session (Claude Code's `--fork-session` lines that
carry `forkedFrom`, a Codex fork's rollout with `forked_from_id`, the files arbor's own
resume writes) is in each session's figure (each session's cost is what its conversation
cost), and counted ONCE in every total across sessions (`arbor usage`, the usage screen):
Claude Code's copies keep `message.id` + `requestId`; a Codex fork repeats its parent's
`token_count` events with new timestamps, and the running total with the turn's counts
names the turn.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from tests import usage_files as uf

pytest.importorskip("genai_prices")

R = uf.CLAUDE_RESPONSES
FORK = "aaaaaaaa-0000-4000-8000-0000000000f1"


def _claude_fork(folder: Path, source: Path) -> Path:
    """`claude --resume X --fork-session`: the history copied under a new session id, each
    copied line naming its origin in `forkedFrom`, then one new response."""
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    copied = []
    for line in lines:
        if line.get("isSidechain") or line["uuid"] in ("u5", "a8"):
            continue   # the main path up to r4
        copy = dict(line, sessionId=FORK, uuid="f-" + line["uuid"],
                    parentUuid=None if line["parentUuid"] is None else "f-" + line["parentUuid"],
                    forkedFrom={"sessionId": uf.SESSION, "messageUuid": line["uuid"]})
        copied.append(copy)
    last = copied[-1]["uuid"]
    copied.append(uf._user("f-n1", last, "2025-10-04T08:00:00.000Z", "Fork: try it another way",
                           sessionId=FORK))
    copied.append(uf._assistant("f-n2", "f-n1", "2025-10-04T08:00:03.000Z", "msg_fork", "req_fork",
                                uf._usage(29, 110, 0, 7000), sessionId=FORK))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{FORK}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in copied))
    return path


@pytest.mark.parametrize("fork_first", [False, True], ids=["source first", "fork first"])
def test_a_claude_fork_session_counts_its_copies_once_in_totals(tmp_path, fork_first):
    folder = tmp_path / "projects" / "-work-usage-demo"
    source = uf.claude_session(folder)
    fork = _claude_fork(tmp_path / "forks", source)
    alone = open_store(tmp_path / "alone.db")
    import_paths(alone, [folder])
    before = alone.usage.report("model").totals
    alone.close()
    with open_store(tmp_path / "s.db") as store:
        for path in ([fork, folder] if fork_first else [folder, fork]):
            import_paths(store, [path])
        totals = store.usage.report("model").totals
        # the source's responses once, and the fork's one new response
        assert totals.responses == before.responses + 1
        assert totals.output_tokens == before.output_tokens + 110
        assert totals.cost_usd == pytest.approx(before.cost_usd + _sonnet(29, 110, 0, 7000), rel=1e-9)
        figures = store.usage.by_session()
        copy = figures[store.sessions.by_uid(FORK).id]
        # the fork's own figure: what its conversation cost, the copied r1..r4 included
        assert copy.responses == 4 + 1
        assert copy.output_tokens == sum(R[n]["output"] for n in ("r1", "r2", "r3", "r4")) + 110
        by_day = store.usage.report("day")
        assert by_day.totals.responses == totals.responses


def _sonnet(inp, out, write, read):
    from core.usage.pricing import price_book

    return price_book().cost(uf.SONNET, "anthropic", None, inp, write, 0, read, out)


def _codex_fork(folder: Path, parent: Path) -> Path:
    """`codex fork`: a new rollout whose session_meta names the parent, the parent's lines
    again (Codex writes them with new timestamps), then one more turn."""
    lines = [json.loads(line) for line in parent.read_text().splitlines()]
    child_id = "bbbbbbbb-0000-4000-8000-0000000000f2"
    meta = json.loads(json.dumps(lines[0]))
    meta["payload"].update(id=child_id, forked_from_id=lines[0]["payload"]["id"])
    copies = [dict(line, timestamp="2025-10-06T09:00:00.000Z") for line in lines[1:]]
    more = [
        {"timestamp": "2025-10-06T09:00:05.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "And the other bug"}]}},
        {"timestamp": "2025-10-06T09:00:06.000Z", "type": "event_msg",
         "payload": {"type": "token_count", "info": {
             "total_token_usage": {"input_tokens": 5000, "cached_input_tokens": 3000,
                                   "output_tokens": 500, "reasoning_output_tokens": 120},
             "last_token_usage": {"input_tokens": 1600, "cached_input_tokens": 850,
                                  "output_tokens": 80, "reasoning_output_tokens": 0}}}},
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-2025-10-06T09-00-00-{child_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [meta, *copies, *more]))
    return path


@pytest.mark.parametrize("fork_first", [False, True], ids=["parent first", "fork first"])
def test_a_codex_fork_counts_the_parents_turns_once(tmp_path, fork_first):
    parent = uf.codex_rollout(tmp_path / "parent")
    child = _codex_fork(tmp_path / "child", parent)
    with open_store(tmp_path / "s.db") as store:
        for path in ([child, parent] if fork_first else [parent, child]):
            import_paths(store, [path])
        totals = store.usage.report("model").totals
        expected = uf.CODEX_EXPECTED
        assert totals.responses == expected["responses"] + 1
        assert totals.input_tokens == expected["input"] + (1600 - 850)
        assert totals.cache_read_tokens == expected["cache_read"] + 850
        assert totals.output_tokens == expected["output"] + 80


def test_a_branch_written_back_by_arbor_resume_counts_once(tmp_path):
    """`arbor resume` of the rewind branch writes a new Claude Code transcript of it (the
    same message ids and request ids); importing it adds a session and no spend."""
    from agent_logs import NOW, fixed_ids
    from core.agents import prepare_resume

    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "PATH": ""}
    with open_store(tmp_path / "s.db") as store:
        import_paths(store, [folder])
        before = store.usage.report("model").as_json()["totals"]
        session = store.sessions.by_uid(uf.SESSION)
        rewind = next(b for b in store.branches.of_session(session.id) if b.fork_seq is not None
                      and store.usage.of_path(b.head_seq, after_seq=b.fork_seq).output_tokens
                      == R["r6"]["output"])
        plan = prepare_resume(store, session, rewind, env=env, now=NOW, ids=fixed_ids())
        assert plan.file is not None
        figures_before = {k: f.as_json() for k, f in store.usage.by_session().items()}
        import_paths(store, [plan.file])
        # the transcript is the source session's own (arbor knows the ids it wrote): the
        # session's figure and every total stay as they were
        assert store.sessions.by_uid(plan.native_id) is not None
        assert store.usage.report("model").as_json()["totals"] == before
        assert {k: f.as_json() for k, f in store.usage.by_session().items()} == figures_before
        # the agent carries on in that transcript: its new response is counted, once
        with plan.file.open("a") as out:
            lines = [json.loads(line) for line in plan.file.read_text().splitlines()]
            last = next(line for line in reversed(lines) if line.get("uuid"))
            out.write(json.dumps(uf._assistant(
                "n1", last["uuid"], "2026-03-02T12:31:00.000Z", "msg_after", "req_after",
                uf._usage(31, 120, 0, 9000), sessionId=plan.native_id)) + "\n")
        import_paths(store, [plan.file])
        after = store.usage.report("model").totals
        assert after.output_tokens == before["output_tokens"] + 120
        assert after.cache_read_tokens == before["cache_read_tokens"] + 9000
