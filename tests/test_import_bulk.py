"""The importers' batched writer must write exactly the rows core's EntryWriter writes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from core import open_store
from core.importers.bulk import BulkWriter

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


def build(tmp_path, name, bulk):
    store = open_store(tmp_path / name)
    with store.transaction():
        ext = store.create_external_session("s", uid="u", created_at=T0)
        writer = BulkWriter(store, ext.id) if bulk else store.writer(ext.id)
        seqs = {}
        for n, (eid, parent, kind, data) in enumerate(script()):
            stamp = T0 + timedelta(seconds=n)
            parent_seq = seqs.get(parent)
            if bulk:
                seqs[eid] = writer.add(parent_seq, kind, data, entry_id=eid, timestamp=stamp)
            else:
                seqs[eid] = writer.add(parent_seq, kind, data, entry_id=eid, timestamp=stamp).seq
        writer.flush()
    rows = store.connection.execute(ROWS).fetchall()
    fts = store.connection.execute("SELECT rowid, text FROM entries_fts ORDER BY rowid").fetchall()
    session = store.connection.execute(
        "SELECT entry_count, message_count, updated_at FROM external_sessions").fetchall()
    return store, rows, fts, session


def test_bulk_writer_rows_equal_entry_writer_rows(tmp_path):
    _s1, *core_rows = build(tmp_path, "core.db", bulk=False)
    s2, *bulk_rows = build(tmp_path, "bulk.db", bulk=True)
    assert bulk_rows == core_rows
    # Paths and replay work on what it wrote; appending later with core's writer works too.
    head = s2.find_entry(1, "h")
    assert [e.id for e in s2.path_entries(head.seq)] == ["a", "b", "c", "h"]
    with s2.transaction():
        entry = s2.writer(1).add(head.seq, "message", {"message": {"role": "user", "content": "z"}},
                                 entry_id="i", timestamp=T0)
    assert entry.seq == 9 and entry.depth == 4


def test_bulk_writer_continues_existing_entries(tmp_path):
    store = open_store(tmp_path / "x.db")
    with store.transaction():
        ext = store.create_external_session("s", uid="u", created_at=T0)
        core_writer = store.writer(ext.id)
        first = core_writer.add(None, "message", {"message": {"role": "user", "content": "a"}},
                                entry_id="a", timestamp=T0)
        core_writer.add(first.seq, "message", {"message": {"role": "user", "content": "b"}},
                        entry_id="b", timestamp=T0)
        core_writer.flush()
        bulk = BulkWriter(store, ext.id)
        # `a` already has a child, so this one starts a new chain, like EntryWriter would.
        seq = bulk.add(first.seq, "message", {"message": {"role": "user", "content": "c"}},
                       entry_id="c", timestamp=T0)
        bulk.flush()
    c = store.get_entry(seq)
    assert (c.depth, c.chain, c.msg_index, c.parent_id) == (1, seq, 2, "a")
    assert store.get_external_session(ext.id).message_count == 3
