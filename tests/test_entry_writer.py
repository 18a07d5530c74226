"""The one entry writer: batched rows, the same answers as entries written one by one."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from core import ArborError, open_store

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


def build(tmp_path, name, batch):
    """Write the script in one transaction with batches of `batch` rows, or one per transaction."""
    store = open_store(tmp_path / name)
    ext = store.create_external_session("s", uid="u", created_at=T0)
    seqs: dict[str, int] = {}
    if batch:
        with store.transaction():
            writer = store.writer(ext.id)
            writer.BATCH = batch
            for n, (eid, parent, kind, data) in enumerate(script()):
                seqs[eid] = writer.add_row(seqs.get(parent), kind, data, entry_id=eid,
                                           timestamp=T0 + timedelta(seconds=n))
            writer.flush()
    else:
        for n, (eid, parent, kind, data) in enumerate(script()):
            seqs[eid] = store.append_entry(ext.id, seqs.get(parent), kind, data, entry_id=eid,
                                           timestamp=T0 + timedelta(seconds=n)).seq
    rows = store.connection.execute(ROWS).fetchall()
    fts = store.connection.execute("SELECT rowid, text FROM entries_fts ORDER BY rowid").fetchall()
    session = store.connection.execute(
        "SELECT entry_count, message_count, updated_at FROM external_sessions").fetchall()
    return store, rows, fts, session


@pytest.mark.parametrize("batch", [1, 3, 2000])
def test_batched_rows_equal_rows_written_one_by_one(tmp_path, batch):
    _single, *single_rows = build(tmp_path, "single.db", batch=0)
    store, *batched_rows = build(tmp_path, "batched.db", batch=batch)
    assert batched_rows == single_rows
    head = store.find_entry(1, "h")
    assert [e.id for e in store.path_entries(head.seq)] == ["a", "b", "c", "h"]
    assert store.find_entry(1, "d").parent_id == "b"
    with store.transaction():
        writer = store.writer(1)
        entry = writer.add(head.seq, "message", {"message": {"role": "user", "content": "z"}},
                           entry_id="i", timestamp=T0)
        writer.flush()
    assert (entry.seq, entry.depth, entry.parent_id, entry.msg_index) == (9, 4, "h", 3)


def test_writer_continues_entries_written_earlier(tmp_path):
    store = open_store(tmp_path / "x.db")
    ext = store.create_external_session("s", uid="u", created_at=T0)
    with store.transaction():
        writer = store.writer(ext.id)
        first = writer.add(None, "message", {"message": {"role": "user", "content": "a"}},
                           entry_id="a", timestamp=T0)
        writer.add(first.seq, "message", {"message": {"role": "user", "content": "b"}},
                   entry_id="b", timestamp=T0)
        writer.flush()
    with store.transaction():
        later = store.writer(ext.id)
        # `a` already has a child, so this one starts a new chain
        seq = later.add_row(first.seq, "message", {"message": {"role": "user", "content": "c"}},
                            entry_id="c", timestamp=T0)
        later.flush()
    c = store.get_entry(seq)
    assert (c.depth, c.chain, c.msg_index, c.parent_id) == (1, seq, 2, "a")
    assert store.get_external_session(ext.id).message_count == 3


def test_writer_needs_a_write_transaction_and_refuses_duplicate_ids(tmp_path):
    store = open_store(tmp_path / "y.db")
    ext = store.create_external_session("s")
    with pytest.raises(RuntimeError):
        store.writer(ext.id)
    with pytest.raises(ArborError, match="already in this session"):
        with store.transaction():
            writer = store.writer(ext.id)
            writer.add_row(None, "message", {"message": {"role": "user", "content": "1"}}, entry_id="x")
            writer.add_row(None, "message", {"message": {"role": "user", "content": "2"}}, entry_id="x")
            writer.flush()
    assert store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0


def test_generated_ids_never_collide(tmp_path):
    ids = iter(["dup", "dup", "dup", "new1", "dup", "new2"])
    store = open_store(tmp_path / "z.db", id_factory=lambda: next(ids))
    ext = store.create_external_session("s", uid="session")
    branch = store.create_internal_session(ext.id, langgraph_session_id="b")
    store.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "1"}})
    store.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "2"}})
    store.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "3"}})
    assert [e.id for e in store.path_entries(store.get_internal_session(branch.id).head_seq)] == \
        ["dup", "new1", "new2"]
