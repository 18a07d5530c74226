"""Claude Code logs with the sub-agents inline (issue 26, item 5).

Claude Code 1.0.x wrote a sub-agent's lines into the main file (`isSidechain: true`, a
chain of their own whose root's parent is null, the Task prompt as its first user line),
where newer versions write `<session>/subagents/agent-<id>.jsonl`. The fixture is a real
1.0.98 session (tests/fixtures/claude_inline_sidechains/SOURCES.md): one orchestration
whose main thread starts five sub-agents with Task calls (three at once), each logged
inline after the calls, out of the calls' order. Required: each sidechain is the
sub-agent's own session, nested under the Task call that started it as newer logs are;
the conversation is the main session's only branch, "main"; an orphan line is never what
a session opens on.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core import open_store
from core.model.entries import content_text
from core.importing import import_paths
from store_sql import query

FIXTURE = Path(__file__).parent / "fixtures" / "claude_inline_sidechains" / \
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
SESSION = "fe5e1c67-53e7-4862-81ae-d0e013e3270b"


def lines() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines()]


def task_calls() -> dict[str, dict]:
    """Task call id -> its input, from the main thread."""
    out = {}
    for d in lines():
        message = d.get("message") or {}
        if d.get("type") == "assistant" and not d.get("isSidechain"):
            for block in message.get("content") or []:
                if block.get("type") == "tool_use" and block.get("name") == "Task":
                    out[block["id"]] = block["input"]
    return out


def sidechains() -> list[list[dict]]:
    """The inline sub-agents: each root (parent null) and the lines chained below it."""
    roots: dict[str, int] = {}
    out: list[list[dict]] = []
    for d in lines():
        if not d.get("isSidechain"):
            continue
        parent = d.get("parentUuid")
        if parent is None:
            out.append([d])
            roots[d["uuid"]] = len(out) - 1
        else:
            index = roots[parent]
            out[index].append(d)
            roots[d["uuid"]] = index
    return out


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "store.db")
    yield s
    s.close()


def place(tmp_path: Path, data: bytes | None = None) -> Path:
    folder = tmp_path / "projects" / "-path-to-Demo"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FIXTURE.name
    if data is None:
        shutil.copyfile(FIXTURE, path)
    else:
        path.write_bytes(data)
    return path


def spawn_of(store, session_id: int) -> tuple[int | None, int | None]:
    """(parent session id, spawning entry seq) of a session, as the sessions pane nests it."""
    return tuple(query(store, "SELECT parent_id, spawn_seq FROM external_sessions WHERE id = ?",
                       (session_id,)).fetchone())


def test_inline_sub_agents_are_sessions_of_their_own_under_their_task_calls(store, tmp_path):
    path = place(tmp_path)
    report = import_paths(store, [path])
    assert report.failed_files == [] and report.skipped == []
    sessions = {s.uid: s for s in store.sessions.list(include_archived=True)}
    main = sessions[SESSION]
    subs = [s for s in sessions.values() if s.uid != SESSION]
    chains = sidechains()
    assert len(chains) == 5 and len(subs) == 5

    # the conversation: one branch, "main", current, without a sub-agent's line
    [branch] = store.branches.of_session(main.id)
    assert (branch.name, branch.is_current) == ("main", True)
    main_entries = store.entries.of_session(main.id)
    assert len(main_entries) == sum(1 for d in lines() if not d.get("isSidechain"))
    assert not any((e.data.get("claude") or {}).get("isSidechain") for e in main_entries)
    path_ids = [e.id for e in store.paths.entries(branch.head_seq)]
    assert path_ids[-1] == lines()[-1]["uuid"]

    calls = task_calls()
    by_root = {chain[0]["uuid"]: chain for chain in chains}
    seen_calls = set()
    for sub in subs:
        assert sub.kind == "subagent"
        meta = store.sessions.metadata(sub.id)
        chain = by_root[meta["rootUuid"]]
        # its entries are exactly its sidechain's lines, in one branch "main"
        entries = store.entries.of_session(sub.id)
        assert [e.id for e in entries] == [d["uuid"] for d in chain]
        [only] = store.branches.of_session(sub.id)
        assert (only.name, only.is_current) == ("main", True)
        # under the Task call whose prompt its first line repeats, named by its description
        call = calls[meta["toolUseId"]]
        assert call["prompt"] == chain[0]["message"]["content"]
        assert sub.name == call["description"]
        seen_calls.add(meta["toolUseId"])
        parent_id, spawn_seq = spawn_of(store, sub.id)
        assert parent_id == main.id
        spawner = store.entries.get(spawn_seq)
        assert spawner.external_session_id == main.id
        assert meta["toolUseId"] in [b.get("id") for b in spawner.message["content"]]
    assert seen_calls == set(calls)

    # every line once; every response counted once (one usage row per message id)
    assert sum(len(store.entries.of_session(s.id)) for s in sessions.values()) == len(lines())
    responses = {(d["message"].get("id")) for d in lines() if d.get("type") == "assistant"}
    assert store.usage.report("day").totals.responses == len(responses)
    # a second import adds nothing
    again = import_paths(store, [path])
    assert again.entries_added == 0 and again.sessions_added == 0


def test_a_sidechain_line_whose_parent_is_missing_stays_with_its_sub_agent(store, tmp_path):
    """A damaged copy: one sub-agent line is gone, so the tool result below it has no
    parent. It joins the sub-agent being written where it stands (not the main session),
    and the main session still opens on its conversation."""
    raw = FIXTURE.read_bytes().splitlines(keepends=True)
    gone = 19                                     # a sub-agent's Bash call (line 20)
    assert json.loads(raw[gone])["isSidechain"] is True
    orphan = json.loads(raw[gone + 1])
    path = place(tmp_path, b"".join(raw[:gone] + raw[gone + 1:]))
    report = import_paths(store, [path])
    assert [s.line for s in report.skipped] == [gone + 1]
    sessions = {s.uid: s for s in store.sessions.list(include_archived=True)}
    main = sessions[SESSION]
    current = store.branches.current(main.id)
    assert current.name == "main"
    assert store.entries.get(current.head_seq).id == json.loads(raw[-1])["uuid"]
    assert len(store.branches.of_session(main.id)) == 1
    holder = next(s for s in sessions.values()
                  if any(e.id == orphan["uuid"] for e in store.entries.of_session(s.id)))
    assert holder.kind == "subagent"
    assert store.sessions.metadata(holder.id)["rootUuid"] == json.loads(raw[15])["uuid"]


@pytest.mark.parametrize("cut", [25, 60, 124, 300])
def test_a_file_read_in_two_parts_gives_the_same_sessions(store, tmp_path, cut):
    """Live follow reads a growing file from where it stopped: a sub-agent begun in the
    first part goes on in its own session in the second."""
    raw = FIXTURE.read_bytes().splitlines(keepends=True)
    path = place(tmp_path, b"".join(raw[:cut]))
    import_paths(store, [path])
    path.write_bytes(b"".join(raw))
    report = import_paths(store, [path])
    assert report.failed_files == [] and report.skipped == []
    whole = open_store(tmp_path / "whole.db")
    try:
        import_paths(whole, [place(tmp_path / "w")])
        assert picture(store) == picture(whole)
    finally:
        whole.close()


def picture(store) -> dict:
    out = {}
    for s in store.sessions.list(include_archived=True):
        parent_id, spawn_seq = spawn_of(store, s.id)
        parent_uid = next((p.uid for p in store.sessions.list(include_archived=True)
                           if p.id == parent_id), None)
        spawner = store.entries.get(spawn_seq).id if spawn_seq else None
        out[s.uid] = (s.kind, s.name, parent_uid, spawner,
                      sorted((b.name, b.is_current, store.entries.id_of(b.head_seq))
                             for b in store.branches.of_session(s.id)),
                      Counter((e.id, e.parent_id) for e in store.entries.of_session(s.id)),
                      [content_text(e.message.get("content"))[:40]
                       for e in store.entries.of_session(s.id) if e.message])
    out["responses"] = store.usage.report("day").totals.responses
    return out
