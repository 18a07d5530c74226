"""The one entry writer: batched rows, the same answers as entries written one by one."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone

import pytest

from core import ArborError, open_store

from conftest import index_terms

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def script():
    # (id, parent id, type, data): a trunk, a fork, a second root, non-messages, big text.
    yield "a", None, "message", {"message": {"role": "user", "content": "hello world"}}
    yield "b", "a", "message", {"message": {"role": "assistant", "content": [
        {"type": "text", "text": "hi"}, {"type": "toolCall", "id": "t", "name": "x", "arguments": {}}]}}
    yield "c", "b", "compaction", {"summary": "sum", "firstKeptEntryId": "b", "tokensBefore": 3}
    yield "d", "b", "message", {"message": {"role": "user", "content": "fork \udcff bad surrogate"}}
    yield "e", "d", "label", {"targetId": "a", "label": "x"}
    yield "f", None, "codex:unknown", {"type": "odd", "payload": [1, 2]}
    yield "g", "f", "message", {"message": {"role": "user", "content": "y" * 100_000}}
    yield "h", "c", "branch_summary", {"summary": "left behind", "fromId": "b"}


ROWS = ("SELECT seq, id, parent_seq, type, timestamp, depth, chain, msg_index, role, data"
        " FROM entries ORDER BY seq")


def build(tmp_path, name, batch, background=False):
    """Write the script in one transaction with batches of `batch` rows, or one per transaction."""
    store = open_store(tmp_path / name)
    ext = store.sessions.create("s", uid="u", created_at=T0)
    seqs: dict[str, int] = {}
    if batch:
        with store.transaction():
            writer = store.entries.writer(ext.id, background=background)
            writer.BATCH = batch
            for n, (eid, parent, kind, data) in enumerate(script()):
                seqs[eid] = writer.add_row(seqs.get(parent), kind, data, entry_id=eid,
                                           timestamp=T0 + timedelta(seconds=n))
            writer.flush()
    else:
        for n, (eid, parent, kind, data) in enumerate(script()):
            seqs[eid] = store.entries.append(ext.id, seqs.get(parent), kind, data, entry_id=eid,
                                           timestamp=T0 + timedelta(seconds=n)).seq
    rows = store.connection.execute(ROWS).fetchall()
    fts = index_terms(store)
    session = store.connection.execute(
        "SELECT entry_count, message_count, updated_at FROM external_sessions").fetchall()
    return store, rows, fts, session


@pytest.mark.parametrize("background", [False, True], ids=["inline", "bulk-thread"])
@pytest.mark.parametrize("batch", [1, 3, 2000])
def test_batched_rows_equal_rows_written_one_by_one(tmp_path, batch, background):
    _single, *single_rows = build(tmp_path, "single.db", batch=0)
    store, *batched_rows = build(tmp_path, "batched.db", batch=batch, background=background)
    assert batched_rows == single_rows
    head = store.entries.find(1, "h")
    assert [e.id for e in store.paths.entries(head.seq)] == ["a", "b", "c", "h"]
    assert store.entries.find(1, "d").parent_id == "b"
    with store.transaction():
        writer = store.entries.writer(1)
        entry = writer.add(head.seq, "message", {"message": {"role": "user", "content": "z"}},
                           entry_id="i", timestamp=T0)
        writer.flush()
    assert (entry.seq, entry.depth, entry.parent_id, entry.msg_index) == (9, 4, "h", 3)


def test_writer_continues_entries_written_earlier(tmp_path):
    store = open_store(tmp_path / "x.db")
    ext = store.sessions.create("s", uid="u", created_at=T0)
    with store.transaction():
        writer = store.entries.writer(ext.id)
        first = writer.add(None, "message", {"message": {"role": "user", "content": "a"}},
                           entry_id="a", timestamp=T0)
        writer.add(first.seq, "message", {"message": {"role": "user", "content": "b"}},
                   entry_id="b", timestamp=T0)
        writer.flush()
    with store.transaction():
        later = store.entries.writer(ext.id)
        # `a` already has a child, so this one starts a new chain
        seq = later.add_row(first.seq, "message", {"message": {"role": "user", "content": "c"}},
                            entry_id="c", timestamp=T0)
        later.flush()
    c = store.entries.get(seq)
    assert (c.depth, c.chain, c.msg_index, c.parent_id) == (1, seq, 2, "a")
    assert store.sessions.get(ext.id).message_count == 3


@pytest.mark.parametrize("background", [False, True], ids=["inline", "bulk-thread"])
def test_writer_needs_a_write_transaction_and_refuses_duplicate_ids(store_location, background):
    with open_store(store_location) as store:
        ext = store.sessions.create("s")
        with pytest.raises(RuntimeError):
            store.entries.writer(ext.id, background=background)
        with pytest.raises(ArborError, match="already in this session"):
            with store.transaction():
                writer = store.entries.writer(ext.id, background=background)
                writer.add_row(None, "message", user("1"), entry_id="x")
                writer.add_row(None, "message", user("2"), entry_id="x")
                writer.flush()
        assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0
        assert not bulk_threads()


def bulk_threads():
    """The bulk writer's thread (both backends); PostgreSQL's for search words and the index."""
    return [t for t in threading.enumerate()
            if t.name == "arbor-bulk-writer" or t.name.startswith(("arbor-words", "arbor-gin"))]


def user(text):
    return {"message": {"role": "user", "content": text}}


def test_bulk_thread_rows_are_read_back_inside_the_transaction(store_location):
    # A batch handed to the thread is written before any other use of the connection.
    with open_store(store_location) as store:
        ext = store.sessions.create("s")
        with store.transaction():
            writer = store.entries.writer(ext.id, background=True)
            writer.BATCH = 2
            seqs = [writer.add_row(None, "message", user(f"m{i}"), entry_id=f"e{i}")
                    for i in range(5)]
            assert bulk_threads()
            # two batches went to the thread; the store waits for them before it reads
            assert store.entries.get(seqs[3]).message["content"] == "m3"
            assert [hit.entry_id for hit in store.search.messages("m1")] == ["e1"]
            writer.flush()
        assert not bulk_threads()
        assert store.sessions.get(ext.id).message_count == 5


def test_bulk_thread_is_discarded_when_the_transaction_fails(store_location):
    with open_store(store_location) as store:
        ext = store.sessions.create("s")
        with pytest.raises(KeyError):
            with store.transaction():
                writer = store.entries.writer(ext.id, background=True)
                writer.BATCH = 10
                for i in range(100):
                    writer.add_row(None, "message", user(f"m{i}"), entry_id=f"e{i}")
                raise KeyError("the importer failed")
        assert not bulk_threads()
        assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0
        if isinstance(store_location, str):   # PostgreSQL: the search rows
            assert store.connection.execute("SELECT COUNT(*) FROM entries_search").fetchone()[0] == 0
        else:
            assert index_terms(store) == []
        # and the store goes on working
        assert store.entries.append(ext.id, None, "message", user("after")).msg_index == 1


@pytest.mark.parametrize("background", [False, True], ids=["inline", "bulk-thread"])
def test_text_sqlite_cannot_take_fails_the_same_way(tmp_path, background):
    # An id with a lone surrogate cannot be stored as UTF-8: both ways refuse it, same error.
    store = open_store(tmp_path / "s.db")
    ext = store.sessions.create("s")
    with pytest.raises(UnicodeEncodeError):
        with store.transaction():
            writer = store.entries.writer(ext.id, background=background)
            writer.add_row(None, "message", user("fine"), entry_id="ok")
            writer.add_row(None, "message", user("bad"), entry_id="bad \udcff id")
            writer.flush()
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0


def test_pack_moves_texts_into_one_blob():
    from core.store.sqlite import bulk as bulk_writer

    fields, blob = bulk_writer.pack([(1, "é-text"), (2, "")], 1)
    assert blob == "é-text".encode()
    assert json.loads(fields) == [[1, 1, 7], [2, 8, 0]]
    assert bulk_writer.pack([(1, "x\udcff")], 1) is None
    assert bulk_writer.pack([(1, "a", 2)], None) == ('[[1,"a",2]]',)


def test_generated_ids_never_collide(tmp_path):
    ids = iter(["dup", "dup", "dup", "new1", "dup", "new2"])
    store = open_store(tmp_path / "z.db", id_factory=lambda: next(ids))
    ext = store.sessions.create("s", uid="session")
    branch = store.branches.create(ext.id, langgraph_session_id="b")
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "1"}})
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "2"}})
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "3"}})
    assert [e.id for e in store.paths.entries(store.branches.get(branch.id).head_seq)] == \
        ["dup", "new1", "new2"]


def test_generated_ids_pass_over_taken_ones_before_and_after_reading_them_at_once(store_location):
    # The id factory gives, among new ids, an id the session had before, one this writer
    # wrote itself (with a given id, written out), and one it made already: each is passed
    # over, one by one at first and from the ids read at once after IDS_AT_ONCE_AFTER,
    # exactly as asking the store each time does.
    from core.store.writer import EntryWriter

    made = [f"g{i}" for i in range(EntryWriter.IDS_AT_ONCE_AFTER + 10)]
    head = EntryWriter.IDS_AT_ONCE_AFTER - 2
    given = iter(["taken", made[0], made[0], "x", *made[1:head], "taken", "x", made[1],
                  *made[head:]])
    store = open_store(store_location, id_factory=lambda: next(given))
    ext = store.sessions.create("s", uid="u")
    with store.transaction():
        earlier = store.entries.writer(ext.id)
        earlier.add(None, "message", user("before"), entry_id="taken")
        earlier.flush()
    with store.transaction():
        writer = store.entries.writer(ext.id)
        parent = writer.add(None, "message", user("given id"), entry_id="x").seq
        writer.flush_rows()
        ids = []
        for i in range(len(made)):
            entry = writer.add(parent, "message", user(f"m{i}"))
            parent = entry.seq
            ids.append(entry.id)
        writer.flush()
    assert ids == made
    assert [e.id for e in store.entries.of_session(ext.id)] == ["taken", "x", *made]
    store.close()


def test_generated_ids_are_not_asked_about_one_by_one(postgres_server):
    # 300 appended messages: the first few ids are asked about one at a time, then the
    # session's ids are read once (a round trip an entry before).
    from core.store.postgres import backend as postgres
    from core.store.writer import EntryWriter

    store = open_store(postgres_server.new_store_url())
    branch = store.branches.create(store.sessions.create("s").id)
    asked = []
    original = postgres.Connection.execute

    def counting(self, sql, *args, **kwargs):
        asked.append(sql)
        return original(self, sql, *args, **kwargs)

    postgres.Connection.execute = counting
    try:
        entries = store.entries.append_messages(branch.id, [{"role": "user", "content": f"m{i}"}
                                                    for i in range(300)])
    finally:
        postgres.Connection.execute = original
    assert len({e.id for e in entries}) == 300
    one_by_one = asked.count(postgres.Statements.ENTRY_ID_TAKEN)
    assert one_by_one <= EntryWriter.IDS_AT_ONCE_AFTER
    assert asked.count(postgres.Statements.ENTRY_IDS_OF_SESSION) == 1
    assert len(asked) < 60
    store.close()
