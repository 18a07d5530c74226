"""The seed repositories over the store: same behaviour as the seed, history derived from entries."""

import pytest

from core import (Checkpoint, CheckpointRepository, ExternalSession, ExternalSessionRepository,
                  InternalSession, InternalSessionRepository, open_store)


@pytest.fixture
def repos(store_location):
    store = open_store(store_location)
    yield (ExternalSessionRepository(store=store), InternalSessionRepository(store=store),
           CheckpointRepository(store=store), store)
    store.close()


def test_create_get_and_orders(repos):
    externals, internals, _, _ = repos
    ext = externals.create(ExternalSession(user_id=1, session_name="Project"))
    assert ext.id is not None
    first = internals.create(InternalSession(external_session_id=ext.id, langgraph_session_id="lg_1"))
    second = internals.create(InternalSession(external_session_id=ext.id, langgraph_session_id="lg_2"))
    assert internals.get_by_id(first.id).langgraph_session_id == "lg_1"
    assert internals.get_by_langgraph_session_id("lg_2").id == second.id
    assert [s.id for s in internals.get_by_external_session(ext.id)] == [second.id, first.id]
    assert internals.count_sessions(ext.id) == 2
    # is_current is exclusive: the newest created current one wins
    assert internals.get_current_session(ext.id).id == second.id
    assert internals.set_current_session(first.id) is True
    assert internals.get_current_session(ext.id).id == first.id
    assert not internals.get_by_id(second.id).is_current
    assert internals.set_current_session(999) is False
    assert internals.get_by_id(999) is None and internals.get_by_langgraph_session_id("nope") is None
    assert externals.get_by_id(ext.id).internal_session_ids == ["lg_1", "lg_2"]
    assert externals.get_by_id(ext.id).current_internal_session_id == "lg_1"


def test_history_is_derived_and_update_appends_only_new(repos):
    externals, internals, _, store = repos
    ext = externals.create(ExternalSession(session_name="H"))
    session = InternalSession(external_session_id=ext.id, langgraph_session_id="lg")
    session.add_message("user", "one")
    session.add_message("assistant", "two")
    internals.create(session)
    entries_before = store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert entries_before == 2
    loaded = internals.get_by_id(session.id)
    assert [m["content"] for m in loaded.conversation_history] == ["one", "two"]
    loaded.add_message("user", "three")
    assert internals.update(loaded) is True
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 3
    # no JSON copy of the history is stored anywhere
    columns = [r[0] for r in store.connection.execute("SELECT * FROM internal_sessions").description]
    assert "conversation_history" not in columns
    # a diverging history forks from the last common message and keeps the old entries
    diverged = internals.get_by_id(session.id)
    history = list(diverged.conversation_history)
    diverged.conversation_history = history[:1] + [{"role": "assistant", "content": "TWO"}]
    internals.update(diverged)
    again = internals.get_by_id(session.id)
    assert [m["content"] for m in again.conversation_history] == ["one", "TWO"]
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 4
    assert store.branches.reflog(session.id)[-1][2] == "history diverged"
    # updating with an untouched (lazy, unread) history changes no entries
    untouched = internals.get_by_id(session.id)
    untouched.update_state({"x": 1})
    internals.update(untouched)
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 4
    assert internals.get_by_id(session.id).session_state == {"x": 1}


def test_update_missing_and_delete(repos):
    externals, internals, _, store = repos
    assert internals.update(InternalSession()) is False
    assert internals.update(InternalSession(id=42)) is False
    ext = externals.create(ExternalSession(session_name="D"))
    session = internals.create(InternalSession(external_session_id=ext.id, langgraph_session_id="d"))
    session.add_message("user", "keep me")
    internals.update(session)
    assert internals.delete(session.id) is True
    assert internals.delete(session.id) is False
    # deleting a branch pointer keeps its entries (history)
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 1


def test_branches_lineage_and_checkpoints(repos):
    externals, internals, checkpoints, _ = repos
    ext = externals.create(ExternalSession(session_name="B"))
    root = InternalSession(external_session_id=ext.id, langgraph_session_id="root",
                           session_state={"step": 1})
    root.add_message("user", "a")
    root.add_message("assistant", "b")
    internals.create(root)
    cp = checkpoints.create(Checkpoint(internal_session_id=root.id, checkpoint_name="after b",
                                       session_state={"step": 1}))
    assert cp.id and cp.entry_id == internals.get_by_id(root.id).head_id
    assert [m["content"] for m in checkpoints.get_by_id(cp.id).conversation_history] == ["a", "b"]
    root = internals.get_by_id(root.id)
    root.add_message("user", "c")
    internals.update(root)
    child = InternalSession.create_branch_from_checkpoint(checkpoints.get_by_id(cp.id), ext.id, root.id)
    internals.create(child)
    assert [m["content"] for m in internals.get_by_id(child.id).conversation_history] == ["a", "b"]
    grandchild = internals.create(InternalSession(external_session_id=ext.id, langgraph_session_id="gc",
                                                  parent_session_id=child.id,
                                                  head_seq=internals.get_by_id(child.id).head_seq))
    assert [s.id for s in internals.get_branch_sessions(root.id)] == [child.id]
    assert [s.id for s in internals.get_session_lineage(grandchild.id)] == [root.id, child.id, grandchild.id]
    # branch_count counts branches made from another one (as the seed's is_branch adds)
    assert externals.get_by_id(ext.id).branch_count == 2
    assert externals.get_by_id(ext.id).get_branch_info()["total_internal_sessions"] == 3
    assert internals.get_by_id(root.id).checkpoint_count == 1
    assert checkpoints.get_latest_checkpoint(root.id).id == cp.id
    assert checkpoints.count_checkpoints(root.id) == 1
    assert checkpoints.delete(cp.id) and checkpoints.get_by_id(cp.id) is None


def test_external_repository(repos):
    externals, _, _, _ = repos
    a = externals.create(ExternalSession(user_id=1, session_name="a"))
    b = externals.create(ExternalSession(user_id=1, session_name="b"))
    externals.create(ExternalSession(user_id=2, session_name="c"))
    assert {s.session_name for s in externals.get_user_sessions(1)} == {"a", "b"}
    assert externals.deactivate(a.id) is True
    assert [s.session_name for s in externals.get_user_sessions(1, active_only=True)] == ["b"]
    b.session_name = "renamed"
    b.update_metadata({"k": "v"})
    assert externals.update(b) is True
    assert externals.get_by_id(b.id).session_name == "renamed"
    assert externals.get_by_id(b.id).metadata == {"k": "v"}
    assert externals.count_sessions() == 3 and externals.count_sessions(user_id=2) == 1
    assert externals.delete(a.id) is True and externals.get_by_id(a.id) is None
    assert externals.deactivate(a.id) is False
