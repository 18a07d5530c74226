"""The operations the app's keys call: one transaction each, nothing copied, nothing deleted."""

import pytest

from core import ArborError, NotFound, open_store
from core.actions import operations as ops
from core.history.summariser import CommandSummariser, builtin_summary, get_summariser
from store_sql import query


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def make_branch(store, n=10, text="x" * 40):
    ext = store.sessions.create("s")
    branch = store.branches.create(ext.id, name="main", session_state={"v": 0})
    entries = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        entries.append(store.entries.append_to_branch(branch.id, "message",
                                              {"message": {"role": role, "content": f"{i} {text}"}}))
    return ext, store.branches.get(branch.id), entries


def count(store, table):
    return query(store, f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_branch_at_entry_and_head(store):
    ext, main, entries = make_branch(store)
    before = count(store, "entries")
    new = ops.branch(store, main.id, entries[3].id)
    assert new.head_seq == entries[3].seq == new.fork_seq and new.parent_session_id == main.id
    assert new.is_current and not store.branches.get(main.id).is_current
    assert count(store, "entries") == before, "branching copies nothing"
    at_head = ops.branch(store, main.id)
    assert at_head.head_seq == main.head_seq
    assert ops.branch(store, main.id, entries[2].seq).head_seq == entries[2].seq
    with pytest.raises(NotFound):
        ops.branch(store, main.id, "no-such-entry")
    with pytest.raises(NotFound):
        ops.branch(store, 999)


def test_rollback_to_checkpoint_restores_state(store):
    ext, main, entries = make_branch(store)
    cp = store.annotations.create_checkpoint(main.id, "early", entry_seq=entries[3].seq, session_state={"v": 3})
    store.branches.update_fields(main.id, session_state={"v": 9})
    new = ops.rollback(store, main.id, checkpoint_id=cp.id)
    assert new.branch_point_checkpoint_id == cp.id and new.session_state == {"v": 3}
    assert new.head_seq == entries[3].seq and new.is_current
    old = store.branches.get(main.id)
    assert old.head_seq == entries[-1].seq and old.session_state == {"v": 9}
    with pytest.raises(ValueError):
        ops.rollback(store, main.id)
    with pytest.raises(ValueError):
        ops.rollback(store, main.id, checkpoint_id=cp.id, entry_id=entries[0].id)


def test_rollback_to_entry_with_summary(store):
    ext, main, entries = make_branch(store)
    store.annotations.create_checkpoint(main.id, "cp2", entry_seq=entries[2].seq, session_state={"v": 2})
    store.annotations.create_checkpoint(main.id, "cp6", entry_seq=entries[6].seq, session_state={"v": 6})
    behind = ops.left_behind(store, main.id, entries[4].seq)
    assert [e.seq for e in behind.entries()] == [e.seq for e in entries[5:]]
    assert behind.counts().messages == len(entries[5:])
    summary = builtin_summary(behind.messages())
    assert summary == builtin_summary([e.message for e in entries[5:]])
    new = ops.rollback(store, main.id, entry_id=entries[4].id, summary=summary)
    assert new.session_state == {"v": 2}, "state of the newest checkpoint at or before the entry"
    head = store.entries.get(new.head_seq)
    assert head.type == "branch_summary" and head.parent_seq == entries[4].seq
    assert head.data == {"summary": summary, "fromId": entries[-1].id}
    replay = store.paths.replay(new.head_seq).messages
    assert replay[-1]["kind"] == "branch_summary" and len(replay) == 6
    assert new.branch_point_checkpoint_id is None


def test_labels_entry_and_branch(store):
    ext, main, entries = make_branch(store)
    ops.set_label(store, entries[1].seq, "one")
    ops.set_label(store, entries[1].id, "uno", external_session_id=ext.id)
    ops.set_label(store, entries[2].seq, "two")
    assert store.annotations.entry_labels(ext.id) == {entries[1].seq: "uno", entries[2].seq: "two"}
    ops.set_label(store, entries[1].seq, "")
    ops.set_label(store, entries[2].seq, None)
    assert store.annotations.entry_labels(ext.id) == {}
    assert count(store, "labels") == 5, "every label change is kept in the log"
    ops.set_branch_label(store, main.id, "main line")
    assert store.annotations.branch_labels(ext.id) == {main.id: "main line"}


def test_compaction_plan_and_compact(store):
    ext, main, entries = make_branch(store, n=20, text="word " * 40)
    plan = ops.plan_compaction(store, main.id, keep_recent_tokens=200)
    assert plan.summarised and plan.first_kept is not None
    assert plan.first_kept.message["role"] == "user", "cut at a user message"
    assert plan.tokens_after < plan.tokens_before
    assert "## Goal" in plan.summary
    before = count(store, "entries")
    entry_id = ops.compact(store, main.id, summary="edited summary", keep_recent_tokens=200)
    assert count(store, "entries") == before + 1, "compaction appends one entry, deletes none"
    head = store.branches.get(main.id).head_seq
    replay = store.paths.replay(head).messages
    assert replay[0]["content"] == "edited summary"
    assert len(replay) == 1 + plan.kept_count
    compaction = store.entries.find(ext.id, entry_id)
    assert compaction.data["firstKeptEntryId"] == plan.first_kept.id
    assert compaction.data["tokensBefore"] == plan.tokens_before
    # compacting again takes the previous summary into account and points at it
    for i in range(10):
        store.entries.append_to_branch(main.id, "message", {"message": {"role": "user" if i % 2 == 0 else "assistant",
                                                                 "content": "more " * 60}})
    second = ops.compact(store, main.id, keep_recent_tokens=200)
    data = store.entries.find(ext.id, second).data
    assert data["previousCompactionId"] == entry_id and "## Earlier" in data["summary"]
    # raw entries are all still there
    assert len(store.paths.entries(store.branches.get(main.id).head_seq)) == 20 + 1 + 10 + 1


def test_nothing_to_compact(store):
    ext, main, entries = make_branch(store, n=2)
    with pytest.raises(ArborError, match="nothing to compact"):
        ops.compact(store, main.id, keep_recent_tokens=100_000)


def test_make_current(store):
    ext, main, entries = make_branch(store)
    other = ops.branch(store, main.id, entries[0].seq)
    ops.make_current(store, main.id)
    assert store.branches.current(ext.id).id == main.id
    assert not store.branches.get(other.id).is_current
    with pytest.raises(NotFound):
        ops.make_current(store, 12345)


def test_external_summariser_command(tmp_path):
    messages = [{"role": "user", "content": "fix the bug"}, {"role": "assistant", "content": "done"}]
    script = tmp_path / "summarise.sh"
    script.write_text("#!/bin/sh\necho \"lines: $(wc -l)\"\n")
    script.chmod(0o755)
    assert get_summariser(str(script))(messages).startswith("lines: ")
    with pytest.raises(ArborError, match="not found"):
        CommandSummariser("/no/such/command")(messages)
    with pytest.raises(ArborError, match="failed"):
        CommandSummariser(["sh", "-c", "echo oops >&2; exit 3"])(messages)
    with pytest.raises(ArborError, match="printed nothing"):
        CommandSummariser(["true"])(messages)


def test_builtin_summary_names_goal_files_tools_state():
    messages = [
        {"role": "user", "content": "Make the login test stable"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "1", "name": "read",
                                           "arguments": {"path": "tests/login.spec.ts"}}]},
        {"role": "toolResult", "toolCallId": "1", "content": [{"type": "text", "text": "..."}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "2", "name": "bash",
                                           "arguments": {"command": "npx playwright test tests/auth/a.spec.ts"}}]},
        {"role": "assistant", "content": "It passes now."},
    ]
    summary = builtin_summary(messages)
    assert "Make the login test stable" in summary
    assert "tests/login.spec.ts" in summary and "tests/auth/a.spec.ts" in summary
    assert "read ×1" in summary and "bash ×1" in summary
    assert "It passes now." in summary
