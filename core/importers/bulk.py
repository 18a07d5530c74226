"""A batched entry writer for imports (same rows as `core.store.EntryWriter`, written faster).

`EntryWriter.add` runs two or three statements per entry; at import volumes (hundreds of
thousands of lines) that alone is slower than the 50,000 lines/s asked of an import. This
writer computes exactly what EntryWriter computes (depth, chain, msg_index, role, the
full-text row, the session's counters), assigns `seq` itself (the write transaction is
held, and `entries.seq` is AUTOINCREMENT, so the next seq is above both max(seq) and
sqlite_sequence) and inserts rows with `executemany` in batches. It must be used inside
one `store.transaction()`, and `flush()` must be called before anything else reads the
entries. `tests/test_import_bulk.py` checks that its rows equal EntryWriter's.

Suggested for core: an `EntryWriter.add_many` with these semantics, so the logic lives in
one place.
"""

from __future__ import annotations

from array import array
from typing import Any

from ..clock import to_text
from ..entries import FTS_TEXT_LIMIT, MESSAGE, entry_text
from ..errors import ArborError, NotFound
from .fastjson import dumps

BATCH = 2000
_ENTRY_SQL = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
              " depth, chain, msg_index, role, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
_USAGE_SQL = ("INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
              " output_tokens, total_tokens, duration_ms, timestamp) VALUES (?,?,?,?,?,?,?,?,?)")


def _storable(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


class BulkWriter:
    def __init__(self, store, external_session_id: int):
        self.store = store
        self.conn = store.connection
        self.external_session_id = external_session_id
        row = self.conn.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'entries'), 0),"
            " COALESCE((SELECT MAX(seq) FROM entries), 0))").fetchone()
        self.next_seq = int(row[0] or 0) + 1
        # What this writer wrote, by seq - base (arrays: a few bytes an entry).
        self.base = self.next_seq
        self._depth = array("q")
        self._chain = array("q")
        self._msg = array("q")
        self._has_child = bytearray()
        # Parents written before (a re-import that appends): [depth, chain, msg_index, has_child]
        self._known: dict[int, list] = {}
        self._rows: list[tuple] = []
        self._fts: list[tuple] = []
        self._entries = 0
        self._messages = 0
        self._latest: str | None = None
        self._stamp_cache: tuple[Any, str] | None = None
        self._usage: list[tuple] = []

    def _parent(self, parent_seq: int) -> list:
        known = self._known.get(parent_seq)
        if known is not None:
            return known
        self.flush_rows()
        row = self.conn.execute(
            "SELECT depth, chain, msg_index, external_session_id,"
            " EXISTS(SELECT 1 FROM entries c WHERE c.parent_seq = entries.seq)"
            " FROM entries WHERE seq = ?", (parent_seq,)).fetchone()
        if row is None:
            raise NotFound(f"parent entry {parent_seq} does not exist")
        if row[3] != self.external_session_id:
            raise ArborError(f"parent entry {parent_seq} belongs to another session")
        known = [row[0], row[1], row[2], bool(row[4])]
        self._known[parent_seq] = known
        return known

    def _stamp(self, timestamp: Any) -> str:
        if isinstance(timestamp, str) and len(timestamp) == 29 and timestamp[10] == "T" and \
                timestamp.endswith("+00:00"):
            return timestamp  # already in the stored form (see base.Clockwork)
        cached = self._stamp_cache
        if cached is not None and cached[0] == timestamp:
            return cached[1]
        text = to_text(timestamp if timestamp is not None else self.store.clock())
        self._stamp_cache = (timestamp, text)
        return text

    def add(self, parent_seq: int | None, entry_type: str, data: dict[str, Any], *,
            entry_id: str, timestamp: Any) -> int:
        if parent_seq is None:
            depth, msg_base = 0, 0
            chain = None
        elif parent_seq >= self.base:
            i = parent_seq - self.base
            depth, msg_base = self._depth[i] + 1, self._msg[i]
            chain = None if self._has_child[i] else self._chain[i]
            self._has_child[i] = 1
        else:
            parent = self._parent(parent_seq)
            depth, msg_base = parent[0] + 1, parent[2]
            chain = None if parent[3] else parent[1]
            parent[3] = True
        seq = self.next_seq
        self.next_seq += 1
        if chain is None:
            chain = seq
        is_message = entry_type == MESSAGE
        role = None
        if is_message:
            msg_index = msg_base + 1
            message = data.get("message")
            if isinstance(message, dict):          # as core.entries.role_of
                role = message.get("role")
                if role is not None and type(role) is not str:
                    role = str(role)
        else:
            msg_index = msg_base
        if type(timestamp) is str and len(timestamp) == 29 and timestamp[10] == "T" and \
                timestamp.endswith("+00:00"):
            stamp = timestamp
        else:
            stamp = self._stamp(timestamp)
        payload = dumps(data)
        if not payload.isascii():
            try:
                payload.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escaped, as EntryWriter does
                import json

                payload = json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)
        self._rows.append((seq, self.external_session_id, str(entry_id), parent_seq, entry_type,
                           stamp, depth, chain, msg_index, role, payload))
        self._depth.append(depth)
        self._chain.append(chain)
        self._msg.append(msg_index)
        self._has_child.append(0)
        text = entry_text(entry_type, data)
        if text:
            text = text[:FTS_TEXT_LIMIT]
            self._fts.append((seq, text if text.isascii() else _storable(text)))
        self._entries += 1
        if is_message:
            self._messages += 1
        if self._latest is None or stamp > self._latest:
            self._latest = stamp
        if len(self._rows) >= BATCH:
            self.flush_rows()
        return seq

    def add_usage(self, row: tuple) -> None:
        """A row for the usage table, written with the next batch."""
        self._usage.append(row)

    def flush_rows(self) -> None:
        conn = self.conn
        if self._rows:
            try:
                conn.executemany(_ENTRY_SQL, self._rows)
            except Exception as error:
                if "UNIQUE" in str(error):
                    raise ArborError(f"an entry id is already in this session ({error})") from None
                raise
            self._rows.clear()
        if self._fts:
            conn.executemany("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)", self._fts)
            self._fts.clear()
        if self._usage:
            conn.executemany(_USAGE_SQL, self._usage)
            self._usage.clear()

    def flush(self) -> None:
        """Write what is buffered and bring the session's counters up to date."""
        self.flush_rows()
        if not self._entries:
            return
        self.conn.execute(
            "UPDATE external_sessions SET entry_count = entry_count + ?,"
            " message_count = message_count + ?, updated_at = MAX(updated_at, ?) WHERE id = ?",
            (self._entries, self._messages, self._latest, self.external_session_id))
        self._entries = self._messages = 0
        self._latest = None
