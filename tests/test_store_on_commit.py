"""`Store.on_commit`: a watcher told after each commit of a write (the first import's
process yields to the app after its first one: core/importing/first_run/priority.py)."""

import threading

import pytest

from core import open_store
from core.importing.first_run.priority import after_first_commit


def test_a_watcher_is_told_after_each_commit_and_not_after_a_rollback(tmp_path):
    told = []
    with open_store(tmp_path / "a.db") as store:
        stop = store.on_commit(lambda: told.append(store.in_write_transaction))
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.set_meta("x", "1")
                raise RuntimeError("rolled back")
        assert told == []
        with store.transaction():
            with store.transaction():
                store.set_meta("x", "2")
            assert told == []                  # (nested: the outer one commits)
        assert told == [False]
        with store.transaction():
            store.set_meta("x", "3")
            assert store.commit_and_continue()
            assert told == [False, True]       # (within the long write, begun again)
            store.set_meta("x", "4")
        assert told == [False, True, False]
        stop()
        stop()                                 # (twice: nothing more)
        store.set_meta("x", "5")
        assert told == [False, True, False]
        assert store.get_meta("x") == "5"


def test_a_commit_by_any_handle_of_the_process_is_told(tmp_path):
    """Handles of one store share its connection and transaction: a commit is the store's,
    whichever handle made it."""
    told = []
    with open_store(tmp_path / "a.db") as store, open_store(tmp_path / "a.db") as other:
        store.on_commit(lambda: told.append("commit"))
        other.set_meta("x", "1")
        assert told == ["commit"]


def test_a_watcher_is_told_on_the_committing_thread_with_the_lock_let_go(tmp_path):
    """(so that it may read the store, or end itself, without waiting)"""
    seen = []
    with open_store(tmp_path / "a.db") as store:
        def watcher():
            seen.append(threading.current_thread().name)
            seen.append(store.get_meta("x"))
        stop = store.on_commit(watcher)
        worker = threading.Thread(target=store.set_meta, args=("x", "1"), name="writer")
        worker.start()
        worker.join(10)
        stop()
    assert seen == ["writer", "1"]


def test_after_first_commit_leaves_the_store_as_it_was_and_hears_every_handle(tmp_path):
    """The first import's priority hook is a watcher, not the store's methods replaced on
    one handle: a commit through another handle of the store counts, once."""
    told = []
    with open_store(tmp_path / "a.db") as store, open_store(tmp_path / "a.db") as other:
        after_first_commit(store, lambda: told.append("first"))
        assert "transaction" not in vars(store) and "commit_and_continue" not in vars(store)
        other.set_meta("x", "1")
        store.set_meta("x", "2")
        assert told == ["first"]
        assert store._link.commit_watchers == []   # (ended once told)
