"""core.actions.undo: every operation of the app is undone through the store's operation log,
nothing deleted, repeated undos walk back, a restart keeps the log, conflicts change nothing."""

from __future__ import annotations

import pytest

from core import open_store
from core.actions import operations, undo
from core.model.errors import ArborError


@pytest.fixture
def store(store_location):
    """A new store, SQLite and PostgreSQL (the log and the hidden flags have twins)."""
    store = open_store(store_location)
    yield store
    store.close()


def make_session(store):
    session = store.sessions.create("work")
    main = store.branches.create(session.id, name="main")
    entries = store.entries.append_messages(main.id, [
        {"role": "user", "content": f"question {n}"} if n % 2 == 0 else
        {"role": "assistant", "content": [{"type": "text", "text": f"answer {n} " * 30}]}
        for n in range(8)])
    return session, store.branches.get(main.id), entries


def counts(store, session_id):
    return (len(store.entries.of_session(session_id)), len(store.branches.of_session(session_id)),
            len(store.annotations.checkpoints_of_session(session_id)), len(store.annotations.label_log(session_id)))


def test_undo_branch_hides_it_and_restores_the_current(store):
    session, main, entries = make_session(store)
    with undo.recorded(store, session.id, "branch", "branch alt at e3") as done:
        new = operations.branch(store, main.id, entries[3].seq, name="alt")
    assert done.seq is not None
    assert store.branches.current_id(session.id) == new.id
    result = undo.undo_last(store)
    assert result.done and result.operation.description == "branch alt at e3"
    assert store.branches.current_id(session.id) == main.id
    assert store.branches.get(new.id).is_hidden          # hidden, not deleted
    assert [s.branch_count for s in store.sessions.list()] == [1]   # the hidden one not counted
    assert undo.undo_last(store) is None                         # nothing more to undo


def test_undo_rollback_with_summary(store):
    session, main, entries = make_session(store)
    before = counts(store, session.id)
    with undo.recorded(store, session.id, "rollback", "roll back"):
        new = operations.rollback(store, main.id, entry_id=entries[2].seq, summary="left this")
    assert undo.undo_last(store).done
    assert store.branches.current_id(session.id) == main.id
    assert store.branches.get(new.id).is_hidden
    entries_now, branches_now, *_ = counts(store, session.id)
    assert entries_now == before[0] + 1 and branches_now == before[1] + 1   # kept


def test_undo_labels_puts_back_the_previous_label(store):
    session, main, entries = make_session(store)
    operations.set_label(store, entries[1].seq, "first")
    with undo.recorded(store, session.id, "label", "label e1"):
        operations.set_label(store, entries[1].seq, "second")
    with undo.recorded(store, session.id, "label", "label branch"):
        operations.set_branch_label(store, main.id, "mine")
    with undo.recorded(store, session.id, "label", "clear e1"):
        operations.set_label(store, entries[1].seq, None)
    assert store.annotations.entry_labels(session.id) == {}
    assert undo.undo_last(store).operation.description == "clear e1"
    assert store.annotations.entry_labels(session.id) == {entries[1].seq: "second"}
    assert undo.undo_last(store).operation.description == "label branch"
    assert store.annotations.branch_labels(session.id) == {}
    assert undo.undo_last(store).operation.description == "label e1"
    assert store.annotations.entry_labels(session.id) == {entries[1].seq: "first"}
    # every value stays in the label log
    assert [row["label"] for row in store.annotations.label_log(session.id)] == \
        ["first", "second", "mine", None, "second", None, "first"]


def test_undo_compaction_moves_the_head_back_and_keeps_the_entry(store):
    session, main, _entries = make_session(store)
    with undo.recorded(store, session.id, "compact", "compact main"):
        operations.compact(store, main.id, keep_recent_tokens=80)
    compacted = store.branches.get(main.id)
    assert compacted.head_seq != main.head_seq
    assert undo.undo_last(store).done
    assert store.branches.get(main.id).head_seq == main.head_seq
    assert store.entries.get(compacted.head_seq) is not None      # the compaction entry stays
    assert store.branches.reflog(main.id)[-1][2] == "undo: compact main"


def test_undo_archive_rename_make_current_hide_checkpoint(store):
    session, main, entries = make_session(store)
    other = operations.branch(store, main.id, entries[5].seq)
    operations.make_current(store, main.id)
    steps = []
    with undo.recorded(store, session.id, "make_current", "make other current"):
        operations.make_current(store, other.id)
    steps.append(lambda: store.branches.current_id(session.id) == main.id)
    with undo.recorded(store, session.id, "rename", "rename session"):
        store.sessions.rename(session.id, "better name")
    steps.append(lambda: store.sessions.get(session.id).session_name == "work")
    with undo.recorded(store, session.id, "rename_branch", "rename branch"):
        operations.rename_branch(store, main.id, "trunk")
    steps.append(lambda: store.branches.get(main.id).name == "main")
    with undo.recorded(store, session.id, "hide", "hide main"):
        operations.hide_branch(store, main.id)
    steps.append(lambda: not store.branches.get(main.id).is_hidden)
    with undo.recorded(store, session.id, "checkpoint", "checkpoint"):
        checkpoint = operations.checkpoint(store, other.id, "before refactor",
                                           at_entry_id=entries[2].seq)
    steps.append(lambda: store.annotations.get_checkpoint(checkpoint.id).is_hidden)
    with undo.recorded(store, session.id, "archive", "archive"):
        store.sessions.set_active(session.id, False)
    steps.append(lambda: store.sessions.get(session.id).is_active)
    before = counts(store, session.id)
    for check in reversed(steps):
        assert undo.undo_last(store).done
        assert check()
    assert undo.undo_last(store) is None
    assert counts(store, session.id)[:3] == before[:3]          # nothing deleted


def test_the_log_survives_a_restart(store_location):
    path = store_location
    store = open_store(path)
    session, main, entries = make_session(store)
    with undo.recorded(store, session.id, "branch", "branch"):
        new = operations.branch(store, main.id, entries[1].seq)
    store.close()
    again = open_store(path)
    assert again.oplog.last_undoable().description == "branch"
    assert undo.undo_last(again).done
    assert again.branches.get(new.id).is_hidden
    again.close()


def test_a_branch_that_moved_since_is_not_moved_back(store):
    session, main, _entries = make_session(store)
    with undo.recorded(store, session.id, "compact", "compact main"):
        operations.compact(store, main.id, keep_recent_tokens=80)
    # an agent appends to the branch afterwards
    appended = store.entries.append_to_branch(main.id, "message", {"message": {"role": "user",
                                                                       "content": "more"}})
    result = undo.undo_last(store)
    assert not result.done
    assert "the head of main changed since" in result.conflict
    assert store.branches.get(main.id).head_seq == appended.seq   # untouched
    # left as it is, the next undo reaches the operation before (none here)
    undo.leave_as_is(store, result.operation)
    assert undo.undo_last(store) is None


def test_an_operation_that_changes_nothing_is_not_logged(store):
    session, main, entries = make_session(store)
    operations.set_label(store, entries[1].seq, "x")
    with undo.recorded(store, session.id, "label", "same label") as done:
        operations.set_label(store, entries[1].seq, "x")
    assert done.seq is None
    assert store.oplog.last_undoable() is None


def test_a_failed_operation_logs_nothing_and_changes_nothing(store):
    session, main, _entries = make_session(store)
    with pytest.raises(ArborError):
        with undo.recorded(store, session.id, "hide", "hide main"):
            operations.hide_branch(store, main.id)        # the current branch
    assert store.oplog.last_undoable() is None


def test_checkpoint_must_be_on_its_branch(store):
    session, main, entries = make_session(store)
    other = operations.branch(store, main.id, entries[1].seq)
    with pytest.raises(ArborError):
        operations.checkpoint(store, other.id, "x", at_entry_id=entries[5].seq)
