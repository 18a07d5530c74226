"""A pointer never crosses sessions, and a compaction keeps entries of its own branch
(issue 8 item 3, the store's part): refused with one sentence, nothing written."""

import pytest

from core import (Checkpoint, CheckpointRepository, InternalSession, InternalSessionRepository,
                  SessionManager, open_store)
from core.actions import operations as ops
from core.model.errors import ArborError, NotFound
from core.seed.manager import close_root_dbs


@pytest.fixture
def two(store_location):
    """Two sessions of two messages each: (store, (session, branch, entries) x 2)."""
    store = open_store(store_location)
    made = []
    for name in ("mine", "other"):
        session = store.sessions.create(name)
        branch = store.branches.create(session.id)
        entries = [store.entries.append_to_branch(branch.id, "message",
                                          {"message": {"role": "user", "content": f"{name} {n}"}})
                   for n in range(2)]
        made.append((session, branch, entries))
    yield store, made
    store.close()


def counts(store, session_id):
    return (len(store.branches.of_session(session_id)), len(store.annotations.checkpoints_of_session(session_id)),
            store.sessions.totals(session_id)[0], store.sessions.get(session_id).total_checkpoints)


def test_a_checkpoint_of_another_sessions_entry_is_refused(two):
    store, ((mine, branch, _), (_, _, theirs)) = two
    before = counts(store, mine.id)
    with pytest.raises(ArborError, match="belongs to another session"):
        store.annotations.create_checkpoint(branch.id, "x", entry_seq=theirs[0].seq)
    with pytest.raises(NotFound):
        store.annotations.create_checkpoint(branch.id, "x", entry_seq=99999)
    repository = CheckpointRepository(store=store)
    with pytest.raises(ArborError, match="belongs to another session"):
        repository.create(Checkpoint(internal_session_id=branch.id, entry_seq=theirs[1].seq))
    with pytest.raises(NotFound):  # an id the session does not have is not taken as "the head"
        repository.create(Checkpoint(internal_session_id=branch.id, entry_id=theirs[1].id + "-x"))
    assert counts(store, mine.id) == before
    assert store.branches.get(branch.id).checkpoint_count == 0


def test_a_branch_pointing_into_another_session_is_refused(two):
    store, ((mine, branch, own), (other, other_branch, theirs)) = two
    before = counts(store, mine.id)
    checkpoint = store.annotations.create_checkpoint(other_branch.id, "theirs")
    for fields in ({"head_seq": theirs[1].seq}, {"fork_seq": theirs[0].seq},
                   {"parent_session_id": other_branch.id},
                   {"branch_point_checkpoint_id": checkpoint.id}):
        with pytest.raises(ArborError, match="belongs to another session"):
            store.branches.create(mine.id, **fields)
    with pytest.raises(NotFound):
        store.branches.create(mine.id, head_seq=99999)
    with pytest.raises(ArborError, match="belongs to another session"):
        InternalSessionRepository(store=store).create(
            InternalSession(external_session_id=mine.id, head_seq=theirs[1].seq))
    with pytest.raises(ArborError, match="belongs to another session"):
        store.branches.move_head(branch.id, theirs[1].seq, reason="x")
    assert counts(store, mine.id) == before
    assert store.branches.current(mine.id).id == branch.id
    assert store.branches.get(branch.id).head_seq == own[1].seq
    # within the session every pointer still works
    fork = store.branches.create(mine.id, head_seq=own[0].seq, fork_seq=own[0].seq,
                                         parent_session_id=branch.id)
    assert [m["content"] for m in store.paths.replay(fork.head_seq).messages] == ["mine 0"]
    # and a rollback never shows another session's messages
    with pytest.raises(NotFound):
        ops.rollback(store, branch.id, entry_id=theirs[0].seq)
    with pytest.raises(NotFound):
        ops.rollback(store, branch.id, checkpoint_id=checkpoint.id)


def test_a_compaction_keeping_an_entry_off_the_branch_is_refused(tmp_path):
    session_dir = tmp_path / "sessions"
    try:
        manager = SessionManager.new("/p", session_dir)
        manager.init()
        ids = [manager.append_message({"role": "user", "content": f"m{n}"}) for n in range(4)]
        manager.branch(ids[1])
        abandoned = ids[2]  # on the old branch only
        manager.append_message({"role": "user", "content": "new"})
        elsewhere = SessionManager.new("/p", session_dir)
        elsewhere.init()
        foreign = elsewhere.append_message({"role": "user", "content": "foreign"})
        entries = manager.store.sessions.totals(manager.external_session_id)[0]
        for kept in ("no-such-entry", abandoned, foreign, ["a list"], 7):
            with pytest.raises(ArborError, match="not on this branch|is an entry id"):
                manager.append_compaction("summary", kept, 10)
        assert manager.store.sessions.totals(manager.external_session_id)[0] == entries
        assert [m["content"] for m in manager.get_messages()] == ["m0", "m1", "new"]
        # on the branch it is taken, and "" keeps nothing
        manager.append_compaction("summary", ids[1], 10)
        assert [m["content"] for m in manager.get_messages()][1:] == ["m1", "new"]
        manager.append_compaction("all of it", "", 10)
        assert [m["content"] for m in manager.get_messages()] == ["all of it"]
    finally:
        close_root_dbs()


def test_a_stored_compaction_off_the_branch_never_breaks_a_replay(tmp_path):
    """As an import or an older arbor may have stored it: replay and the manager's listing
    show the whole path and say why, instead of raising."""
    from core.model.entries import COMPACTION

    session_dir = tmp_path / "sessions"
    try:
        manager = SessionManager.new("/p", session_dir)
        manager.init()
        for n in range(2):
            manager.append_message({"role": "user", "content": f"m{n}"})
        store = manager.store
        branch = manager.current_branch()
        for kept in ("elsewhere", ["a", "list"]):
            bad = store.entries.append(manager.external_session_id, branch.head_seq, COMPACTION,
                                     {"summary": "S", "firstKeptEntryId": kept})
            store.branches.move_head(branch.id, bad.seq)
            state = store.paths.replay(bad.seq)
            assert [m["content"] for m in state.messages] == ["m0", "m1"]
            assert "compaction" in state.warning
            listed = SessionManager.list_session_messages_with_seq(session_dir, manager.session_id)
            assert [m.message["content"] for m in listed] == ["m0", "m1"]
            assert [m["content"] for m in manager.get_messages()] == ["m0", "m1"]
    finally:
        close_root_dbs()


def nested(levels: int, leaf="x"):
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("levels", [260, 1_200, 100_000])
@pytest.mark.parametrize("leaf", ["x", "lone \ud800 surrogate"], ids=["text", "surrogate"])
def test_data_nested_too_deeply_is_refused_in_one_sentence_and_changes_nothing(tmp_path, levels, leaf):
    """More than fastjson.MAX_DEPTH (254, orjson's limit) levels: an ArborError sentence, not
    a RecursionError from the encoder (whose depth would depend on the caller's stack);
    the writer is left as it was, so the same transaction can go on."""
    manager = SessionManager("/w", tmp_path)
    manager.init()
    first = manager.append_message({"role": "user", "content": "before"})
    store = manager.store
    with store.transaction():
        with pytest.raises(ArborError, match="nested more than 254 levels deep"):
            manager.append_message({"role": "user", "content": nested(levels, leaf)})
        after = manager.append_message({"role": "assistant", "content": "after"})
    assert [m["content"] for m in manager.get_messages()] == ["before", "after"]
    assert manager.store.entries.find(manager.external_session_id, after).parent_seq == \
        manager.store.entries.find(manager.external_session_id, first).seq
    with pytest.raises(ArborError, match="nested more than 254 levels deep"):
        store.sessions.create("deep", metadata={"deep": nested(levels, leaf)})
    assert [s.session_name for s in store.sessions.find()] == [""]
    close_root_dbs()


def test_data_nested_as_deeply_as_allowed_is_stored_and_read_back(tmp_path):
    manager = SessionManager("/w", tmp_path)
    manager.init()
    deepest = nested(254 - 3)     # inside {"message": {"content": ...}}
    manager.append_message({"role": "user", "content": deepest})
    assert manager.get_messages()[0]["content"] == deepest
    close_root_dbs()
