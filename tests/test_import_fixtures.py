"""Every file in ../shared/fixtures, imported with the exact counts its own tool implies.

The counts are worked out by reading each file; the comments say why each number is right.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from store_sql import query

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CC = FIXTURES / "claude_code"
CODEX = FIXTURES / "codex"
PI = FIXTURES / "pi"
LG = FIXTURES / "langgraph"


def test_fixture_folder_is_there():
    # Nothing is skipped silently: without the fixtures this test fails loudly.
    assert FIXTURES.is_dir(), f"missing {FIXTURES}"
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == [
        "claude_code", "codex", "langgraph", "pi"]


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def one(report):
    assert len(report.files) == 1, report.files
    result = report.files[0]
    assert result.status == "imported", (result.status, result.error)
    return result


def session_of(store, result, index=0):
    return store.sessions.by_uid(result.sessions[index].uid)


def count_type(store, ext_id, entry_type):
    return query(store, 
        "SELECT COUNT(*) FROM entries WHERE external_session_id = ? AND type = ?",
        (ext_id, entry_type)).fetchone()[0]


def branches(store, ext_id):
    return store.branches.of_session(ext_id, newest_first=False)


def current(store, ext_id):
    found = [b for b in branches(store, ext_id) if b.is_current]
    assert len(found) == 1
    return found[0]


def path_ids(store, branch):
    return [e.id for e in store.paths.entries(branch.head_seq)]


# --------------------------------------------------------------------- Claude Code
def test_claude_code_compact_after_rewind(store):
    result = one(import_paths(store, [CC / "dag_compact_after_rewind.jsonl"]))
    # 12 lines, all JSON, each with a uuid: 12 entries, nothing skipped.
    assert result.lines == 12 and result.skipped == []
    ext = session_of(store, result)
    assert ext.source == "claude_code"
    assert store.sessions.get(ext.id).metadata["sessionId"] == "s1"
    assert ext.session_name == "Start"            # no title line: the first user message
    assert result.entries_added == 12
    # 11 user/assistant lines (everything but the compact_boundary) are messages.
    assert ext.message_count == 11
    # The boundary is one compaction entry; the isCompactSummary line gives its summary.
    assert count_type(store, ext.id, "compaction") == 1
    compaction = store.entries.find(ext.id, "cb")
    assert compaction.type == "compaction"
    assert "the user asked for a plan" in compaction.data["summary"]
    assert compaction.data["tokensBefore"] == 150000
    # Linked to its logical parent b2a2 (its parentUuid is null).
    assert compaction.parent_id == "b2a2"
    # One real rewind: b1u and b2u are two user prompts under a1 -> two branches.
    assert result.branches_added == 2
    bs = branches(store, ext.id)
    assert len(bs) == 2
    main, rewind = bs
    assert path_ids(store, main) == ["u1", "a1", "b1u", "b1a"]
    assert path_ids(store, rewind) == ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "cb", "cs",
                                       "p1u", "p1a"]
    assert rewind.parent_session_id == main.id and rewind.fork_id == "a1"
    # The newest leaf (p1a, last line) is current.
    assert current(store, ext.id).id == rewind.id
    # No preserved segment: replay starts after the compaction; the summary message cs
    # repeats the compaction's summary and is shown once, as the compaction's.
    assert store.paths.replay(rewind.head_seq).entry_ids == ["cb", "p1u", "p1a"]
    # Usage once per request: five assistant lines, five distinct message ids.
    assert len(store.usage.of_session(ext.id)) == 5
    assert ext.created_at.isoformat().startswith("2025-07-01T10:00:00")


def test_claude_code_compact_with_preserved_segment(store):
    result = one(import_paths(store, [CC / "dag_compact_after_rewind_preserved.jsonl"]))
    ext = session_of(store, result)
    assert result.entries_added == 12 and ext.message_count == 11
    assert count_type(store, ext.id, "compaction") == 1
    assert result.branches_added == 2
    main, rewind = branches(store, ext.id)
    assert path_ids(store, main) == ["u1", "a1", "b1u", "b1a"]
    # The boundary's logical parent b2a2 was re-parented below the summary (cs), so linking
    # to it would be a cycle; the boundary goes after b2u2, the newest preserved message
    # written before it, and the preserved tail b2a2 stays where the file puts it.
    assert path_ids(store, rewind) == ["u1", "a1", "b2u", "b2a", "b2u2", "cb", "cs", "b2a2",
                                       "p1u", "p1a"]
    compaction = store.entries.find(ext.id, "cb")
    assert compaction.data["firstKeptEntryId"] == "b2a"   # preservedSegment.headUuid
    assert store.paths.replay(rewind.head_seq).entry_ids == ["cb", "b2a", "b2u2", "b2a2", "p1u", "p1a"]
    assert current(store, ext.id).id == rewind.id


def test_claude_code_schema_file_is_not_a_log(store):
    report = import_paths(store, [CC / "claude-code-session.schema.v2.1.144.json"])
    assert report.files[0].status == "not-a-log"
    assert report.sessions_added == 0


# --------------------------------------------------------------------------- Codex
CODEX_MAIN = CODEX / "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"
CODEX_BAD = CODEX / "rollout-66666666-6666-4666-8666-666666666666.malformed.jsonl"


def test_codex_rollout(store):
    result = one(import_paths(store, [CODEX_MAIN]))
    ext = session_of(store, result)
    assert ext.uid == "11111111-1111-4111-8111-111111111111"
    assert ext.cwd == "/workspace/synthetic-project"
    assert ext.session_name == "List the synthetic files."
    # 14 lines: session_meta -> metadata (no entry); turn_context -> model_change;
    # user event+response_item -> 1; reasoning; 3 calls; 3 outputs; agent event+item -> 1;
    # the unknown future type kept raw: 1+1+1+3+3+1+1 = 11 entries.
    assert result.entries_added == 11
    # Messages: user, reasoning, 3 tool calls, 3 tool results, assistant = 9.
    assert ext.message_count == 9
    assert count_type(store, ext.id, "model_change") == 1
    assert count_type(store, ext.id, "codex:future_synthetic_record") == 1
    # The duplicated text appears once.
    entries = store.entries.of_session(ext.id)
    texts = [str(e.message.get("content")) for e in entries if e.message]
    assert sum("List the synthetic files." in t for t in texts) == 1
    assert sum("alpha.txt and beta.txt" in t for t in texts) == 1
    # ... and the twin line is kept inside the entry, not dropped.
    user = next(e for e in entries if e.message and e.message["role"] == "user")
    assert user.data["codex"]["duplicates"][0]["type"] == "event_msg"
    assert user.data["codex"]["duplicates"][0]["payload"]["type"] == "user_message"
    assert user.data["codex"]["line"]["type"] == "response_item"
    # Encrypted reasoning is kept but never displayed.
    reasoning = next(e for e in entries if e.message and e.message["content"]
                     and e.message["content"][0].get("type") == "thinking")
    assert "SYNTHETIC_ENCRYPTED" not in str(reasoning.message["content"])
    assert reasoning.data["codex"]["payload"]["encrypted_content"].startswith("SYNTHETIC")
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [m["toolName"] for m in results] == ["exec_command", "apply_patch",
                                                 "mcp__synthetic__lookup"]
    assert results[1]["content"] == [{"type": "text", "text": "Done!"}]
    assert result.branches_added == 1 and len(branches(store, ext.id)) == 1


def test_codex_malformed_rollout(store):
    result = one(import_paths(store, [CODEX_BAD]))
    # Line 3 is not JSON: skipped and reported with its number; line 2 is kept.
    assert [(s.line, s.path) for s in result.skipped] == [(3, str(CODEX_BAD))]
    ext = session_of(store, result)
    assert result.entries_added == 1 and ext.message_count == 1
    assert ext.session_name == "Safe line before malformed input."
    assert len(branches(store, ext.id)) == 1


# ------------------------------------------------------------------------------ pi
def test_pi_specstory_full_format(store):
    result = one(import_paths(store, [PI / "specstory_full_format_v3_synthetic.jsonl"]))
    ext = session_of(store, result)
    assert ext.uid == "full-format-uuid"
    assert ext.session_name == "My test session"     # its session_info entry
    meta = store.sessions.get(ext.id).metadata
    assert meta["parentSession"] == "/orig/session.jsonl" and meta["version"] == 3
    # 20 lines = header + 19 entries.
    assert result.lines == 20 and result.entries_added == 19
    # message entries: u1 u1b a1 tr1 a2 be1 cm2 bs1 cs1 u2 a3 = 11.
    assert ext.message_count == 11
    assert count_type(store, ext.id, "label") == 1
    assert count_type(store, ext.id, "compaction") == 1
    assert count_type(store, ext.id, "branch_summary") == 1
    for kind in ("model_change", "thinking_level_change", "session_info", "custom",
                 "custom_message"):
        assert count_type(store, ext.id, kind) == 1
    # The label lb1 puts "checkpoint-1" on u1.
    labels = store.annotations.entry_labels(ext.id)
    assert labels == {store.entries.find(ext.id, "u1").seq: "checkpoint-1"}
    # brs1 hangs below a2 while be1 already continues a2: two leaves, two branches.
    assert result.branches_added == 2
    main, other = branches(store, ext.id)
    assert main.head_id == "cs1" and other.head_id == "a3"
    assert other.fork_id == "a2" and other.parent_session_id == main.id
    assert current(store, ext.id).head_id == "a3"    # the last entry written
    # Compaction cp1 keeps a2: replay = summary, a2, brs1, u2, a3.
    assert store.paths.replay(other.head_seq).entry_ids == ["cp1", "a2", "brs1", "u2", "a3"]
    # Unknown fields are kept as they are.
    assert store.entries.find(ext.id, "brs1").data["fromHook"] is True


def test_pi_generated_by_pi(store):
    result = one(import_paths(store, [PI / "pi_v3_generated.jsonl"]))
    ext = session_of(store, result)
    assert ext.session_name == "demo session"
    assert result.lines == 19 and result.entries_added == 18
    # 11 message entries (4 user, 6 assistant... counted by type "message").
    assert ext.message_count == 11
    # Two label entries: set "first-answer" on 3492bce1, then cleared (no label field).
    assert count_type(store, ext.id, "label") == 2
    assert store.annotations.entry_labels(ext.id) == {}
    assert count_type(store, ext.id, "compaction") == 1
    assert count_type(store, ext.id, "branch_summary") == 1
    assert count_type(store, ext.id, "model_change") == 1
    assert count_type(store, ext.id, "thinking_level_change") == 1
    # Leaves: 10f51839 (abandoned after the rollback), 444451e3 (plain fork of the tool
    # result under eb168c9d), ed2ea693 (the last entry): three branches.
    assert result.branches_added == 3
    bs = branches(store, ext.id)
    assert [b.head_id for b in bs] == ["10f51839", "444451e3", "ed2ea693"]
    assert [b.fork_id for b in bs] == [None, "eb168c9d", "3492bce1"]
    assert current(store, ext.id).head_id == "ed2ea693"
    # The rollback's branch_summary is on the current path, the compaction keeps f4ad2f0f.
    assert store.paths.replay(bs[2].head_seq).entry_ids == ["c6c4ab74", "f4ad2f0f", "6b524e92",
                                                      "f5d88b34"]


def test_pi_version_1_is_one_linear_branch(store):
    result = one(import_paths(store, [PI / "large-session.v1.head.jsonl"]))
    ext = session_of(store, result)
    assert ext.uid == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    # 27 lines: the header and 26 entries without ids (25 messages, 1 model_change).
    assert result.entries_added == 26 and ext.message_count == 25
    assert count_type(store, ext.id, "model_change") == 1
    bs = branches(store, ext.id)
    assert len(bs) == 1
    path = store.paths.entries(bs[0].head_seq)
    assert len(path) == 26
    assert [e.id for e in path][:3] == ["L2", "L3", "L4"]
    # The longest line (a 15 KB tool result) is intact.
    big = store.entries.find(ext.id, "L7")
    assert len(big.message["content"][0]["text"]) > 14000


# ----------------------------------------------------------------------- LangGraph
def test_langgraph_sqlite_saver(store, tmp_path):
    db = tmp_path / "lg.sqlite"
    shutil.copy(LG / "langgraph_checkpoints.sqlite", db)
    before = db.read_bytes()
    result = one(import_paths(store, [db]))
    assert db.read_bytes() == before           # opened read-only
    assert len(result.sessions) == 2           # threads t1 and t2
    t1 = session_of(store, result, 0)
    t2 = session_of(store, result, 1)
    assert t1.session_name == "hello" and t2.session_name == "second thread"
    # t1: h1 ai-h1 h2 ai-h2 h3 ai-h3 (three turns), hA ai-hA (invoked at the checkpoint after
    # turn 1), hB ai-hB (update_state there): 10 messages + the thread's root entry.
    assert t1.message_count == 10
    assert store.sessions.get(t1.id).message_count == 10
    assert result.sessions[0].entries_added == 11
    # Three leaf checkpoints -> three branches, both forks at ai-h1.
    bs = branches(store, t1.id)
    assert [b.head_id for b in bs] == ["ai-h3", "ai-hA", "ai-hB"]
    assert [b.fork_id for b in bs] == [None, "ai-h1", "ai-h1"]
    assert current(store, t1.id).head_id == "ai-hB"   # the newest checkpoint
    assert path_ids(store, bs[2]) == ["thread", "h1", "ai-h1", "hB", "ai-hB"]
    msg = store.entries.find(t1.id, "ai-h1").message
    assert msg["role"] == "assistant" and msg["content"] == "echo[1]: hello"
    # 14 checkpoints in t1, 3 in t2, each an arbor checkpoint with its channel values.
    assert len(store.annotations.checkpoints_of_session(t1.id)) == 14
    assert len(store.annotations.checkpoints_of_session(t2.id)) == 3
    first = [c for c in store.annotations.checkpoints_of_session(t1.id)
             if c.metadata["checkpoint_id"] == "1f1ebc80-d703-6113-bfff-59e0e1ceb179"][0]
    assert first.session_state["__start__"]["messages"][0]["content"] == "hello"
    assert first.metadata["metadata"]["source"] == "input"
    # t2: one turn.
    assert t2.message_count == 2 and len(branches(store, t2.id)) == 1


FORK_INPUT = "1f1ebc80-d743-6b22-8002-7b66904084cd"   # the input checkpoint of "alt question A"


def _tag_of(store, ext_id, checkpoint_id):
    return next(c for c in store.annotations.checkpoints_of_session(ext_id)
                if c.metadata["checkpoint_id"] == checkpoint_id)


def test_langgraph_a_run_started_at_an_old_checkpoint_has_no_marker_while_it_starts(store, tmp_path):
    """The input checkpoint of the run invoked at the checkpoint after turn 1 is a leaf
    until the run's next checkpoint: it gets no `checkpoint:` marker (a follow that saw it
    then would keep one a whole import of the finished database does not make); its tag
    sits on ai-h1, where its messages end. Grown to the end, the store is the one a whole
    import makes."""
    from test_agent_conformance import DatabaseFeed, shape

    feed = DatabaseFeed(LG / "langgraph_checkpoints.sqlite", "langgraph")
    db = tmp_path / "lg.sqlite"
    feed.write_prefix(db, 10)                  # its 10th checkpoint is that input checkpoint
    t1 = session_of(store, one(import_paths(store, [db])))
    assert count_type(store, t1.id, "custom") == 0
    assert store.entries.get(_tag_of(store, t1.id, FORK_INPUT).entry_seq).id == "ai-h1"
    assert [b.head_id for b in branches(store, t1.id)] == ["ai-h3"]
    for k in range(11, len(feed.pieces) + 1):
        feed.append(db, k)
        one(import_paths(store, [db]))
    whole = open_store(tmp_path / "whole.db")
    try:
        import_paths(whole, [db])
        assert shape(store) == shape(whole)
    finally:
        whole.close()


def test_langgraph_a_thread_followed_from_its_first_checkpoint_is_named_after_its_first_message(
        store, tmp_path):
    """Read when its one checkpoint has no message yet, a thread is "thread t1"; once its
    first message is written it is named after it, as a whole import names it, unless
    someone renamed it meanwhile."""
    from test_agent_conformance import DatabaseFeed

    feed = DatabaseFeed(LG / "langgraph_checkpoints.sqlite", "langgraph")
    db = tmp_path / "lg.sqlite"
    feed.write_prefix(db, 1)
    t1 = session_of(store, one(import_paths(store, [db])))
    assert store.sessions.name(t1.id) == "thread t1"
    feed.append(db, 2)
    one(import_paths(store, [db]))
    assert store.sessions.name(t1.id) == "hello"
    store.sessions.rename(t1.id, "mine")
    for k in range(3, len(feed.pieces) + 1):
        feed.append(db, k)
    import_paths(store, [db])
    assert store.sessions.name(t1.id) == "mine"
    t2 = store.sessions.by_uid(t1.uid.replace("langgraph:t1", "langgraph:t2"))
    assert t2.session_name == "second thread"

def test_langgraph_a_stray_marker_from_an_earlier_follow_stays_a_readable_branch(store, tmp_path):
    """A store that followed this database with arbor before the fix holds a marker for
    the input checkpoint (made here as that arbor made it: the checkpoint is read as an
    `update` one while it is a leaf). Nothing is deleted: the fixed import goes on beside
    it, adds everything else a whole import adds, and the marker stays a branch of its own
    from ai-h1 whose last row is that checkpoint ("step 2 (input)")."""
    import sqlite3

    from test_agent_conformance import DatabaseFeed, shape

    feed = DatabaseFeed(LG / "langgraph_checkpoints.sqlite", "langgraph")
    db = tmp_path / "lg.sqlite"
    feed.write_prefix(db, 10)

    def source_of_fork_input(source):
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?",
                         (f'{{"source": "{source}", "step": 2, "parents": {{}}}}'.encode(),
                          FORK_INPUT))
        conn.close()

    source_of_fork_input("update")
    t1 = session_of(store, one(import_paths(store, [db])))
    marker = f"checkpoint:{FORK_INPUT}"
    assert store.entries.find(t1.id, marker) is not None
    source_of_fork_input("input")
    for k in range(11, len(feed.pieces) + 1):
        feed.append(db, k)
        result = one(import_paths(store, [db]))
        assert result.skipped == []
    os.utime(db, (1_900_000_000, 1_900_000_000))     # read again, not skipped as unchanged
    again = one(import_paths(store, [db]))
    assert again.entries_added == 0 and again.branches_added == 0
    whole = open_store(tmp_path / "whole.db")
    try:
        import_paths(whole, [db])
        followed, expected = shape(store), shape(whole)
    finally:
        whole.close()
    uid = next(u for u in expected if u.startswith("langgraph:t1"))
    name, tree, tags = followed[uid]
    assert (name, [e for e in tree if e[0] != marker]) == expected[uid][:2]
    assert (marker, "ai-h1", "custom", "langgraph:checkpoint") in tree
    assert [t for t in tags if t[0] != marker] == [t for t in expected[uid][2] if t[1] != FORK_INPUT]
    assert (marker, FORK_INPUT) in tags
    heads = sorted(b.head_id for b in branches(store, t1.id))
    assert heads == sorted(["ai-h3", "ai-hA", "ai-hB", marker])
    stray = next(b for b in branches(store, t1.id) if b.head_id == marker)
    assert path_ids(store, stray) == ["thread", "h1", "ai-h1", marker]
    assert current(store, t1.id).head_id == "ai-hB"


# ---------------------------------------------------------------------- everything
def totals(store):
    return query(store, 
        "SELECT (SELECT COUNT(*) FROM external_sessions), (SELECT COUNT(*) FROM entries),"
        " (SELECT COUNT(*) FROM internal_sessions), (SELECT COUNT(*) FROM checkpoints),"
        " (SELECT COUNT(*) FROM labels), (SELECT COUNT(*) FROM usage)").fetchone()


def test_all_fixtures_twice_same_counts(store, tmp_path):
    folder = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, folder)
    # The whole folder, recursively: mixed formats; the .json schema is not looked at.
    first = import_paths(store, [folder])
    names = sorted((Path(f.path).name, f.status) for f in first.files)
    assert [n for n, _s in names if n.endswith(".json")] == []
    assert [s for _n, s in names] == ["imported"] * 8
    counts = totals(store)
    # 8 files, 9 sessions (the LangGraph file holds two threads);
    # entries: 12+12+11+1+19+18+26+11+3 = 113; branches: 2+2+1+1+2+3+1+3+1 = 16;
    # checkpoints: 14+3; labels: 1+2; usage rows, one per response: 5+5 (Claude Code),
    # 8+5+3 (the three pi files' assistant replies).
    assert counts == (9, 113, 16, 17, 3, 26)
    # Same files again: unchanged, nothing added.
    second = import_paths(store, [folder])
    assert [f.status for f in second.files] == ["unchanged"] * 8
    assert second.entries_added == 0
    # Touch every file so the unchanged shortcut does not apply: the importers run again,
    # find every entry by its id, add nothing; the counts stay the same.
    for path in folder.rglob("*"):
        if path.is_file():
            os.utime(path, (1_900_000_000, 1_900_000_000))
    third = import_paths(store, [folder])
    assert [f.status for f in third.files] == ["imported"] * 8
    assert third.entries_added == 0 and third.branches_added == 0 and third.sessions_added == 0
    assert totals(store) == counts


def test_same_session_from_another_path_adds_nothing(store, tmp_path):
    # pi and Codex name their sessions (header id, session_meta id): a copy of the file
    # elsewhere is the same session, so nothing is added.
    import_paths(store, [PI, CODEX])
    counts = totals(store)
    copy = tmp_path / "copy"
    shutil.copytree(PI, copy / "pi")
    shutil.copytree(CODEX, copy / "codex")
    again = import_paths(store, [copy])
    assert [f.status for f in again.files] == ["imported"] * 5
    assert again.entries_added == 0 and again.sessions_added == 0
    assert totals(store) == counts
