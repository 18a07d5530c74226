"""Damaged and unusual inputs, made in tmp_path: nothing that parses is lost, what does not
parse is reported with its line number, no traceback reaches the user."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, import_paths
from store_sql import query

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CC_FIXTURE = FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl"
PI_FIXTURE = FIXTURES / "pi" / "pi_v3_generated.jsonl"
CODEX_FIXTURE = FIXTURES / "codex" / \
    "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
LG_FIXTURE = FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def cc_line(uuid, parent, kind="user", text="hi", msg_id=None, ts="2025-07-01T10:00:00.000Z",
            **extra):
    line = {"type": kind, "timestamp": ts, "parentUuid": parent, "isSidechain": False,
            "sessionId": "sx", "cwd": "/w", "version": "2.1.0", "uuid": uuid}
    if kind == "user":
        line["message"] = {"role": "user", "content": text}
    else:
        content = text if isinstance(text, list) else [{"type": "text", "text": text}]
        line["message"] = {"id": msg_id or f"msg_{uuid}", "type": "message", "role": "assistant",
                           "model": "claude-x", "content": content,
                           "usage": {"input_tokens": 10, "output_tokens": 5}}
    line.update(extra)
    return json.dumps(line)


def write_lines(path: Path, lines, end="\n"):
    path.write_text("\n".join(lines) + end)
    return path


def only(report):
    assert len(report.files) == 1
    return report.files[0]


# ----------------------------------------------------------------- damaged files
def test_truncated_last_line_then_completed(store, tmp_path):
    path = tmp_path / "s.jsonl"
    whole = cc_line("z1", "p1a", text="one more")
    good = CC_FIXTURE.read_bytes()
    path.write_bytes(good + whole[:40].encode())          # cut mid-line, no newline
    result = only(import_paths(store, [path]))
    assert result.status == "imported"
    assert result.entries_added == 12
    assert [(s.line, "truncated" in s.reason) for s in result.skipped] == [(13, True)]
    # The agent finishes writing the line: the next import adds exactly it.
    path.write_bytes(good + whole.encode() + b"\n")
    again = only(import_paths(store, [path]))
    assert again.entries_added == 1 and again.skipped == []
    ext = store.sessions.by_uid(again.session_uid)
    current = store.branches.current(ext.id)
    assert current.head_id == "z1"     # the branch that grew moved its head
    assert again.branches_added == 0


def test_twenty_megabyte_line(store, tmp_path):
    big = "x" * (20 * 1024 * 1024)
    path = write_lines(tmp_path / "big.jsonl", [
        cc_line("u1", None, text="read the big file"),
        cc_line("a1", "u1", kind="assistant",
                text=[{"type": "tool_use", "id": "t1", "name": "Read", "input": {"p": "f"}}]),
        json.dumps({"type": "user", "parentUuid": "a1", "uuid": "r1", "sessionId": "sx",
                    "timestamp": "2025-07-01T10:00:01.000Z",
                    "message": {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": big}]}}),
        cc_line("a2", "r1", kind="assistant", text="done"),
    ])
    assert path.stat().st_size > 20 * 1024 * 1024
    result = only(import_paths(store, [path]))
    assert result.status == "imported" and result.skipped == []
    ext = store.sessions.by_uid(result.session_uid)
    entry = store.entries.find(ext.id, "r1")
    assert entry.message["role"] == "toolResult" and entry.message["toolName"] == "Read"
    assert len(entry.message["content"][0]["text"]) == 20 * 1024 * 1024


def test_binary_garbage_file_and_lines(store, tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(bytes(range(256)) * 64 + b"\n\x00\xff\xfe" * 100)
    result = only(import_paths(store, [garbage]))
    assert result.status == "not-a-log" and result.error
    # Garbage lines inside a good file: skipped with their numbers, the rest kept.
    mixed = tmp_path / "mixed.jsonl"
    lines = CC_FIXTURE.read_bytes().splitlines()
    mixed.write_bytes(b"\n".join(lines[:3] + [b"\x00\x01\x02\xff binary \xfe"] + lines[3:]
                                 + [b"[1, 2, 3]", b"{\"no\": "]) + b"\n")
    result = only(import_paths(store, [mixed]))
    assert result.status == "imported"
    assert result.entries_added == 12
    assert [s.line for s in result.skipped] == [4, 14, 15]
    assert "binary" in result.skipped[0].reason
    assert "not an object" in result.skipped[1].reason


def test_empty_file(store, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = only(import_paths(store, [empty]))
    assert result.status == "not-a-log" and result.error == "empty file"
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\n\n   \n")
    assert only(import_paths(store, [blank])).status == "not-a-log"
    assert store.sessions.list() == []


@pytest.mark.sqlite_only
def test_missing_path_and_store_file_are_reported(store, tmp_path):
    report = import_paths(store, [tmp_path / "nope.jsonl", store.path])
    assert [(f.status, f.error) for f in report.files] == [
        ("failed", "no such file or folder"), ("skipped", "an arbor store, not an agent log")]


def test_parent_cycle_dangling_and_duplicate_uuids(store, tmp_path):
    path = write_lines(tmp_path / "cycle.jsonl", [
        cc_line("c1", "c2", text="first of a cycle"),                 # line 1: parent later
        cc_line("c2", "c1", kind="assistant", text="second"),         # line 2: cycle c1<->c2
        cc_line("c3", "c2", text="child of the cycle"),               # line 3
        cc_line("d1", "gone", text="dangling parent"),               # line 4: becomes a root
        cc_line("d1", "gone", text="dangling parent"),               # line 5: exact duplicate
        cc_line("d1", "gone", text="same uuid, other text"),         # line 6: kept apart
        cc_line("s1", "s1", text="its own parent"),                  # line 7: self loop
    ])
    result = only(import_paths(store, [path]))
    assert result.status == "imported"
    ext = store.sessions.by_uid(result.session_uid)
    ids = set(store.entries.seqs(ext.id))
    # Nothing that parses is lost; the exact duplicate is counted, not stored twice.
    assert ids == {"c1", "c2", "c3", "d1", "d1~L6", "s1"}
    assert result.duplicates == 1
    reasons = {s.line: s.reason for s in result.skipped}
    assert "cycle" in reasons[1] and "duplicate uuid d1" in reasons[6]
    c1, c2, c3 = (store.entries.find(ext.id, i) for i in ("c1", "c2", "c3"))
    assert c1.parent_seq is None and c2.parent_id == "c1" and c3.parent_id == "c2"
    assert store.entries.find(ext.id, "d1").parent_seq is None
    assert store.entries.find(ext.id, "s1").parent_seq is None
    # Every leaf is a branch; the tree replays without error.
    leaves = store.entries.leaves(ext.id)
    assert len(store.branches.of_session(ext.id)) == len(leaves) == 4
    for branch in store.branches.of_session(ext.id):
        store.paths.replay(branch.head_seq)


# ------------------------------------------------------- Claude Code false forks
def test_claude_code_false_forks_collapse_real_rewinds_stay(store, tmp_path):
    tool = lambda i: [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"c": i}}]
    result_line = lambda uuid, parent, i: json.dumps({
        "type": "user", "parentUuid": parent, "uuid": uuid, "sessionId": "sx",
        "timestamp": "2025-07-01T10:00:02.000Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"out {i}"}]}})
    path = write_lines(tmp_path / "forks.jsonl", [
        json.dumps({"type": "summary", "summary": "Fixing the build", "leafUuid": "zz"}),
        cc_line("u1", None, text="fix the build"),
        cc_line("a1", "u1", kind="assistant", msg_id="m1", text="Let me look."),
        cc_line("a2", "a1", kind="assistant", msg_id="m1", text=tool(1)),   # same reply
        cc_line("a3", "a2", kind="assistant", msg_id="m1", text=tool(2)),   # parallel call
        result_line("r1", "a2", 1),          # points at its own tool_use line: false fork
        result_line("r2", "a3", 2),
        json.dumps({"type": "progress", "uuid": "g1", "parentUuid": "a3", "sessionId": "sx",
                    "timestamp": "2025-07-01T10:00:02.500Z", "data": {"type": "hook"}}),
        cc_line("a4", "r2", kind="assistant", msg_id="m2", text="Fixed."),
        json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}),
        cc_line("u2", "a4", text="now run the tests"),
        cc_line("a5", "u2", kind="assistant", msg_id="m3", text="All green."),
        cc_line("s1", None, text="sub-agent task", isSidechain=True, agentId="ag1"),
        cc_line("s2", "s1", kind="assistant", msg_id="m4", text="sub result", isSidechain=True),
        cc_line("u3", "a4", text="actually, deploy instead"),              # a rewind
        cc_line("a6", "u3", kind="assistant", msg_id="m5", text=tool(9)),
        result_line("r9", "a6", 9),
        # The user interrupts the tool: a text line under the same tool_use line.
        cc_line("i1", "a6", text="[Request interrupted by user for tool use]"),
        json.dumps({"type": "custom-title", "customTitle": "Build fixes", "sessionId": "sx"}),
        json.dumps({"type": "brand-new-line-type", "uuid": "n1", "parentUuid": "i1",
                    "sessionId": "sx", "whatever": [1, 2]}),
    ])
    result = only(import_paths(store, [path]))
    ext = store.sessions.by_uid(result.session_uid)
    assert ext.session_name == "Build fixes"        # custom-title wins over summary
    branches = store.branches.of_session(ext.id, newest_first=False)
    # main thread and the rewind: two branches, no false ones; the sub-agent written inline
    # (s1-s2) is a session of its own under this one (tests/test_import_inline_sidechains.py)
    assert len(branches) == 2
    main, rewind = branches
    main_path = [e.id for e in store.paths.entries(main.head_seq)]
    assert main_path == ["L1", "u1", "a1", "a2", "a3", "r1", "r2", "g1", "a4", "L10", "u2", "a5"]
    sub = store.sessions.by_uid(f"{result.session_uid}:agent-ag1")
    assert sub.kind == "subagent"
    [side] = store.branches.of_session(sub.id)
    assert [e.id for e in store.paths.entries(side.head_seq)] == ["s1", "s2"]
    assert side.name == "main" and side.parent_session_id is None
    rewind_path = [e.id for e in store.paths.entries(rewind.head_seq)]
    assert rewind_path[-7:] == ["a4", "u3", "a6", "r9", "i1", "L19", "n1"]
    assert rewind.fork_id == "a4" and rewind.parent_session_id == main.id
    assert rewind.is_current
    # Unknown line types are kept raw.
    assert store.entries.find(ext.id, "n1").type == "claude:brand-new-line-type"
    assert store.entries.find(ext.id, "n1").data["whatever"] == [1, 2]
    assert store.entries.find(ext.id, "L19").type == "session_info"
    # Usage once per request: m1 (three lines) counts once; m1..m5 = 5 rows (m4 the
    # sub-agent's).
    assert len(store.usage.of_session(ext.id)) == 4 and len(store.usage.of_session(sub.id)) == 1
    a1, a3 = store.entries.find(ext.id, "a1"), store.entries.find(ext.id, "a3")
    assert "usage" not in a1.message and a3.message["usage"]["input"] == 10
    # Tool results are their own messages, with the tool's name.
    r1 = store.entries.find(ext.id, "r1").message
    assert r1 == {"role": "toolResult", "toolCallId": "t1", "toolName": "Bash",
                  "content": [{"type": "text", "text": "out 1"}], "isError": False}


# --------------------------------------------------------------- growing files
def test_appended_pi_lines_add_only_those(store, tmp_path):
    path = tmp_path / "pi.jsonl"
    shutil.copy(PI_FIXTURE, path)
    first = only(import_paths(store, [path]))
    assert first.entries_added == 18
    with open(path, "a") as handle:
        handle.write(json.dumps({"type": "message", "id": "new1", "parentId": "ed2ea693",
                                 "timestamp": "2026-11-29T08:00:00.000Z",
                                 "message": {"role": "user", "content": "more"}}) + "\n")
        handle.write(json.dumps({"type": "message", "id": "new2", "parentId": "new1",
                                 "timestamp": "2026-11-29T08:00:01.000Z",
                                 "message": {"role": "assistant", "content": []}}) + "\n")
    second = only(import_paths(store, [path]))
    assert second.entries_added == 2 and second.branches_added == 0
    ext = store.sessions.by_uid(second.session_uid)
    assert store.branches.current(ext.id).head_id == "new2"
    assert len(store.branches.of_session(ext.id)) == 3
    # Importing the grown file once more adds nothing.
    os.utime(path, (1_900_000_000, 1_900_000_000))
    assert only(import_paths(store, [path])).entries_added == 0


def test_appended_codex_lines_and_rollback(store, tmp_path):
    path = tmp_path / CODEX_FIXTURE.name
    shutil.copy(CODEX_FIXTURE, path)
    first = only(import_paths(store, [path]))
    assert first.entries_added == 11
    ts = "2026-01-02T03:05:00.000Z"
    more = [
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": "Second question"}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Second question"}]}},
        {"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Second answer"}]}},
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}},
        {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": "Instead this"}},
        {"timestamp": ts, "type": "compacted", "payload": {"message": "summary of it all", "replacement_history": []}},
    ]
    with open(path, "a") as handle:
        for line in more:
            handle.write(json.dumps(line) + "\n")
    second = only(import_paths(store, [path]))
    # user (event+item folded) 1, assistant 1, rollback marker 1, user 1, compaction 1.
    assert second.entries_added == 5
    ext = store.sessions.by_uid(second.session_uid)
    branches = store.branches.of_session(ext.id, newest_first=False)
    assert len(branches) == 2
    current = store.branches.current(ext.id)
    path_ids = [e.id for e in store.paths.entries(current.head_seq)]
    # The rolled-back turn (L15, L17) is off the current path, still in the store.
    assert "L15" not in path_ids and "L17" not in path_ids
    assert path_ids[-3:] == ["L18", "L19", "L20"]
    assert store.entries.find(ext.id, "L18").type == "codex:thread_rolled_back"
    assert store.entries.find(ext.id, "L18").parent_id == "L14"
    assert store.entries.find(ext.id, "L20").type == "compaction"
    old = [b for b in branches if not b.is_current][0]
    assert old.head_id == "L17"


def test_codex_fork_becomes_branches_of_parent(store, tmp_path):
    parent_lines = [json.loads(line) for line in CODEX_FIXTURE.read_text().splitlines()]
    child_id = "22222222-2222-4222-8222-222222222222"
    meta = {"timestamp": "2026-01-03T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": child_id, "forked_from_id": "11111111-1111-4111-8111-111111111111",
                        "cwd": "/workspace/synthetic-project", "timestamp": "2026-01-03T00:00:00.000Z"}}
    repeated = []
    for line in parent_lines[:13]:            # the parent's history up to its last answer
        line = dict(line, timestamp="2026-01-03T00:00:01.000Z")   # new times, same content
        repeated.append(line)
    new = [{"timestamp": "2026-01-03T00:00:02.000Z", "type": "event_msg",
            "payload": {"type": "user_message", "message": "Now in the fork"}}]
    folder = tmp_path / "sessions"
    folder.mkdir()
    child = folder / f"rollout-2026-01-03T00-00-00-{child_id}.jsonl"
    child.write_text("\n".join(json.dumps(x) for x in [meta] + repeated + new) + "\n")
    shutil.copy(CODEX_FIXTURE, folder / CODEX_FIXTURE.name)
    # The child sorts first by name; the parent is still imported first.
    report = import_paths(store, [folder])
    assert [Path(f.path).name for f in report.files][0] == CODEX_FIXTURE.name
    assert all(f.status == "imported" for f in report.files)
    assert store.sessions.by_uid(child_id) is None   # no session of its own
    ext = store.sessions.by_uid("11111111-1111-4111-8111-111111111111")
    branches = store.branches.of_session(ext.id, newest_first=False)
    assert len(branches) == 2
    fork = branches[1]
    # The repeated history is shared: the fork adds only its new message.
    assert report.files[1].entries_added == 1
    assert fork.fork_id == "L12" and fork.head_id == f"{child_id}:L15"
    assert fork.name.startswith("fork 22222222")
    assert ext.metadata["forks"][child_id]["relation"] == "fork"
    again = import_paths(store, [folder])
    assert again.entries_added == 0


# ------------------------------------------------------------ folders, discover
def test_directory_of_mixed_formats(store, tmp_path):
    folder = tmp_path / "logs"
    (folder / "nested" / "deeper").mkdir(parents=True)
    shutil.copy(CC_FIXTURE, folder / "cc.jsonl")
    shutil.copy(CODEX_FIXTURE, folder / "nested" / CODEX_FIXTURE.name)
    shutil.copy(PI_FIXTURE, folder / "nested" / "deeper" / "pi.jsonl")
    shutil.copy(LG_FIXTURE, folder / "graph.sqlite")
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "noise.jsonl").write_bytes(b"\x00\x01garbage\n{\"a\": 1}\n")
    (folder / "README.txt").write_text("not looked at")
    sqlite3.connect(folder / "other.db").execute("CREATE TABLE t(x)").connection.close()
    report = import_paths(store, [folder])
    status = {Path(f.path).name: (f.format, f.status) for f in report.files}
    assert status == {
        "cc.jsonl": ("claude_code", "imported"),
        "empty.jsonl": (None, "not-a-log"),
        "graph.sqlite": ("langgraph", "imported"),
        "noise.jsonl": (None, "not-a-log"),
        "other.db": (None, "not-a-log"),
        CODEX_FIXTURE.name: ("codex", "imported"),
        "pi.jsonl": ("pi", "imported"),
    }
    assert report.sessions_added == 5
    assert report.entries_added == 12 + 11 + 18 + 11 + 3


def test_detection_is_by_content_not_name(store, tmp_path):
    odd = tmp_path / "session.log.jsonl"
    shutil.copy(PI_FIXTURE, odd)
    renamed = tmp_path / "rollout-not-really.jsonl"
    shutil.copy(CC_FIXTURE, renamed)
    report = import_paths(store, [odd, renamed])
    assert [f.format for f in report.files] == ["pi", "claude_code"]


def test_progress_is_reported(store, tmp_path):
    seen = []
    import_paths(store, [CC_FIXTURE, PI_FIXTURE], progress=seen.append)
    assert {p.path for p in seen} == {str(CC_FIXTURE), str(PI_FIXTURE)}
    assert seen[-1].done == seen[-1].total and seen[-1].file_count == 2


def test_discover_finds_usual_places(tmp_path):
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    (tmp_path / ".pi" / "agent" / "sessions").mkdir(parents=True)
    assert discover(tmp_path) == [tmp_path / ".claude" / "projects",
                                  tmp_path / ".pi" / "agent" / "sessions"]
    (tmp_path / ".codex" / "sessions").mkdir(parents=True)
    assert len(discover(tmp_path)) == 3


def test_claude_code_subagent_file_is_its_own_session(store, tmp_path):
    folder = tmp_path / "proj" / "8f0e2a4c-0000-4000-8000-000000000001" / "subagents"
    folder.mkdir(parents=True)
    path = write_lines(folder / "agent-a1b2.jsonl", [
        cc_line("s1", None, text="find the bug", isSidechain=True, agentId="a1b2"),
        cc_line("s2", "s1", kind="assistant", text="found it", isSidechain=True, agentId="a1b2"),
    ])
    result = only(import_paths(store, [path]))
    ext = store.sessions.by_uid(result.session_uid)
    assert ext.uid == "sx:agent-a1b2" and ext.kind == "subagent" and ext.parent_session == "sx"
    assert ext.session_name == "find the bug"   # the sub-agent's task
    assert ext.message_count == 2


def test_codex_subagent_is_a_session_under_its_parent(store, tmp_path):
    parent = tmp_path / CODEX_FIXTURE.name
    shutil.copy(CODEX_FIXTURE, parent)
    child_id = "33333333-3333-4333-8333-333333333333"
    child = tmp_path / f"rollout-2026-01-04T00-00-00-{child_id}.jsonl"
    child.write_text("\n".join(json.dumps(x) for x in [
        {"timestamp": "2026-01-04T00:00:00.000Z", "type": "session_meta",
         "payload": {"id": child_id, "source": {"subagent": {"thread_spawn": {
             "parent_thread_id": "11111111-1111-4111-8111-111111111111", "depth": 1}}}}},
        {"timestamp": "2026-01-04T00:00:01.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "Sub task"}},
        {"timestamp": "2026-01-04T00:00:02.000Z", "type": "event_msg",
         "payload": {"type": "agent_message", "message": "Sub answer"}},
    ]) + "\n")
    import_paths(store, [child, parent])
    ext = store.sessions.by_uid("11111111-1111-4111-8111-111111111111")
    assert len(store.branches.of_session(ext.id)) == 1      # not a branch of the parent
    sub = store.sessions.by_uid(child_id)
    assert sub.kind == "subagent" and sub.message_count == 2
    rows = {s.id: s for s in store.sessions.list()}
    assert rows[sub.id].parent_id == ext.id               # listed under its parent


def test_langgraph_database_in_wal_mode(store, tmp_path):
    db = tmp_path / "wal.sqlite"
    shutil.copy(LG_FIXTURE, db)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    # A writer still has the database open (its WAL and shared memory exist).
    conn.execute("CREATE TABLE IF NOT EXISTS other(x)")
    conn.commit()
    result = only(import_paths(store, [db]))
    conn.close()
    assert result.format == "langgraph" and len(result.sessions) == 2
    assert result.entries_added == 14


def test_langgraph_pickled_and_damaged_blobs_are_reported(store, tmp_path):
    db = tmp_path / "odd.sqlite"
    shutil.copy(LG_FIXTURE, db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE checkpoints SET type = 'pickle' WHERE checkpoint_id = ?",
                 ("1f1ebc80-d768-6c63-8000-fae2d47832e7",))
    conn.execute("UPDATE checkpoints SET checkpoint = X'c1c1c1' WHERE checkpoint_id = ?",
                 ("1f1ebc80-d76c-666d-8001-68d93fd56634",))
    conn.commit()
    conn.close()
    result = only(import_paths(store, [db]))
    reasons = [s.reason for s in result.skipped]
    assert any("never unpickles" in r for r in reasons)
    assert any("cannot be decoded" in r for r in reasons)
    # Thread t1 is intact; t2 kept its first checkpoint and tags for all three.
    t2 = store.sessions.by_uid(result.sessions[1].uid)
    assert len(store.annotations.checkpoints_of_session(t2.id)) == 3


def test_codex_fork_imported_before_its_parent_is_merged_later(store, tmp_path):
    child_id = "44444444-4444-4444-8444-444444444444"
    lines = [json.loads(line) for line in CODEX_FIXTURE.read_text().splitlines()]
    child = tmp_path / f"rollout-2026-01-05T00-00-00-{child_id}.jsonl"
    child.write_text("\n".join(json.dumps(x) for x in [
        {"timestamp": "2026-01-05T00:00:00.000Z", "type": "session_meta",
         "payload": {"id": child_id, "forked_from_id": "11111111-1111-4111-8111-111111111111"}},
        *lines[:13],
        {"timestamp": "2026-01-05T00:00:02.000Z", "type": "event_msg",
         "payload": {"type": "user_message", "message": "A later question"}},
    ]) + "\n")
    alone = only(import_paths(store, [child]))
    assert alone.session_uid == child_id          # no parent yet: a session of its own
    parent = tmp_path / CODEX_FIXTURE.name
    shutil.copy(CODEX_FIXTURE, parent)
    report = only(import_paths(store, [parent]))
    ext = store.sessions.by_uid("11111111-1111-4111-8111-111111111111")
    assert len(store.branches.of_session(ext.id)) == 2
    lone = store.sessions.by_uid(child_id)
    assert lone.is_active is False and lone.metadata["mergedInto"] == ext.uid
    assert report.entries_added == 11 + 1          # the parent, then the fork's new message
    # The fork's file again: it goes to the parent, which has it all already.
    again = only(import_paths(store, [child]))
    assert again.entries_added == 0 and again.session_uid == ext.uid


def _codex_with_reasoning(tmp_path, name, events_first: bool, parts=("Look at the tests.", "Then fix the import.")):
    ts = "2026-01-02T03:04:06.000Z"
    meta = {"timestamp": ts, "type": "session_meta",
            "payload": {"id": "77777777-7777-4777-8777-777777777777", "cwd": "/w",
                        "originator": "codex_cli_rs", "cli_version": "0.144.0"}}
    item = {"timestamp": ts, "type": "response_item",
            "payload": {"type": "reasoning", "encrypted_content": "SECRET",
                        "summary": [{"type": "summary_text", "text": p} for p in parts]}}
    events = [{"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_reasoning", "text": p}}
              for p in parts]
    between = {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": None}}
    answer = {"timestamp": ts, "type": "response_item",
              "payload": {"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": "Done."}]}}
    lines = [meta] + ([events[0], between, *events[1:], item] if events_first
                      else [item, events[0], between, *events[1:]]) + [answer]
    path = tmp_path / f"rollout-2026-01-02T03-04-05-{name}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("events_first", [True, False], ids=["events-first", "item-first"])
def test_codex_reasoning_in_parts_is_one_entry(store, tmp_path, events_first):
    path = _codex_with_reasoning(tmp_path, "77777777-7777-4777-8777-777777777777", events_first)
    result = only(import_paths(store, [path]))
    ext = store.sessions.by_uid(result.session_uid)
    entries = store.paths.entries(store.branches.current(ext.id).head_seq)
    thinking = [e for e in entries if e.type == "message" and e.message["content"]
                and e.message["content"][0].get("type") == "thinking"]
    assert len(thinking) == 1, [e.message for e in entries if e.type == "message"]
    assert thinking[0].message["content"][0]["thinking"] == "Look at the tests.\nThen fix the import."
    kept = thinking[0].data["codex"]["duplicates"]
    assert sorted(line["payload"]["text"] for line in kept) == ["Look at the tests.", "Then fix the import."]
    # the other lines are all there: token_count raw, the answer, nothing else
    assert [e.type for e in entries] == ["message", "codex:event_msg.token_count", "message"]
    assert "SECRET" not in json.dumps([e.message for e in entries if e.type == "message"])
    again = only(import_paths(store, [path]))
    assert again.entries_added == 0


def test_codex_reasoning_events_that_are_not_its_parts_stay_messages(store, tmp_path):
    path = _codex_with_reasoning(tmp_path, "88888888-8888-4888-8888-888888888888", True)
    lines = path.read_text().splitlines()
    lines[1] = lines[1].replace("Look at the tests.", "Something else entirely.")
    path.write_text("\n".join(lines) + "\n")
    result = only(import_paths(store, [path]))
    ext = store.sessions.by_uid(result.session_uid)
    texts = [e.message["content"][0].get("thinking") for e in
             store.paths.entries(store.branches.current(ext.id).head_seq)
             if e.type == "message" and e.message["content"]
             and e.message["content"][0].get("type") == "thinking"]
    # the stray event is its own message; the summary is whole once
    assert "Something else entirely." in texts
    assert "Look at the tests.\nThen fix the import." in texts


def test_langgraph_subgraph_namespace_is_a_session_of_its_own(store, tmp_path):
    # A sub-graph's checkpoints share the thread id under another checkpoint_ns. Copy
    # thread t2 into a namespace, as a sub-graph run inside it would write it.
    db = tmp_path / "ns.sqlite"
    shutil.copy(LG_FIXTURE, db)
    conn = sqlite3.connect(db)
    for table in ("checkpoints", "writes"):
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
        chosen = ", ".join("'tools:9f2c'" if c == "checkpoint_ns" else c for c in columns)
        conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {chosen} FROM {table}"
                     " WHERE thread_id = 't2' AND checkpoint_ns = ''")
    conn.commit()
    conn.close()
    result = only(import_paths(store, [db]))
    assert len(result.sessions) == 3
    sessions = [store.sessions.by_uid(s.uid) for s in result.sessions]
    by_ns = {(s.metadata["thread_id"], s.metadata["checkpoint_ns"]): s for s in sessions}
    assert set(by_ns) == {("t1", ""), ("t2", ""), ("t2", "tools:9f2c")}
    plain, nested = by_ns[("t2", "")], by_ns[("t2", "tools:9f2c")]
    assert plain.uid != nested.uid
    assert nested.session_name == f"{plain.session_name} · sub-graph tools"
    assert nested.kind == "subgraph" and nested.parent_session == plain.uid
    # the same checkpoints, so the same messages and tags, kept apart
    assert nested.message_count == plain.message_count > 0
    assert len(store.annotations.checkpoints_of_session(nested.id)) == len(store.annotations.checkpoints_of_session(plain.id)) == 3
    assert only(import_paths(store, [db])).entries_added == 0


def test_ctrl_c_in_the_middle_of_a_file_keeps_what_was_committed_and_goes_on(store, tmp_path,
                                                                            monkeypatch):
    # Interrupted after several batches went to the bulk-writer thread: the transaction
    # in progress is rolled back, what earlier short transactions committed stays (with the
    # record of how far the file got), the thread is gone, the store is intact, and the
    # next import adds exactly the rest.
    import threading

    from core.agents.claude_code import importer as claude_code

    first = only(import_paths(store, [CC_FIXTURE]))
    assert first.status == "imported"
    before = query(store, "SELECT COUNT(*) FROM entries").fetchone()[0]
    lines = [cc_line("u0", None, text="start")]
    for n in range(1, 7000):
        lines.append(cc_line(f"u{n}", f"u{n - 1}", kind="assistant" if n % 2 else "user",
                             text=f"line {n}"))
    big = write_lines(tmp_path / "big.jsonl", lines)
    calls = {"n": 0}
    convert = claude_code._Import._convert

    def interrupted(self, *args):
        calls["n"] += 1
        if calls["n"] == 5000:  # two full batches of 2,000 are with the writer by now
            raise KeyboardInterrupt
        return convert(self, *args)

    monkeypatch.setattr("core.importing.driver.COMMIT_EVERY", 0.01)
    monkeypatch.setattr(claude_code._Import, "_convert", interrupted)
    with pytest.raises(KeyboardInterrupt):
        import_paths(store, [big])
    assert calls["n"] == 5000
    assert not [t for t in threading.enumerate() if t.name == "arbor-bulk-writer"]
    assert store.integrity_check() == "ok"
    kept = query(store, "SELECT COUNT(*) FROM entries").fetchone()[0] - before
    assert 0 < kept < 5000
    record = store.imports.source(f"claude_code:{big.resolve()}")[4]
    assert record["complete"] is False and 0 < record["offset"] < big.stat().st_size
    monkeypatch.setattr(claude_code._Import, "_convert", convert)
    again = only(import_paths(store, [big]))
    assert again.status == "imported" and again.entries_added == 7000 - kept
    assert again.sessions[0].entries_total == 7000


def test_each_line_knows_where_the_next_read_starts(tmp_path, monkeypatch):
    """`RawLine.end` (what the Claude Code reader records as consumed, instead of asking
    the file's tell() on every line) is where the file stands after the line: with blank
    lines, CRLF endings, a line over the length limit (skipped whole) and a torn last line."""
    from core.importing import base

    monkeypatch.setattr(base, "MAX_LINE_BYTES", 64)
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \n{"b": 2}\r\n' + b'{"long": "' + b"x" * 200 + b'"}\n'
                     + b'{"c": 3}\n{"torn": ')
    with open(path, "rb") as handle:
        seen = []
        for raw in base.iter_lines(handle):
            seen.append((raw.number, raw.end, handle.tell()))
    assert [number for number, _end, _tell in seen] == [1, 4, 5, 6, 7]
    assert all(end == tell for _number, end, tell in seen)
    assert seen[-1][1] == path.stat().st_size
    with open(path, "rb") as handle:   # from an offset, as a resumed read starts
        handle.seek(9)
        ends = [(raw.end, handle.tell()) for raw in base.iter_lines(handle, 9, 2)]
    assert ends and all(end == tell for end, tell in ends)
