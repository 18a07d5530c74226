"""Entries: the immutable commits of the tree, written through an `EntryWriter`,
read one by one or a session at a time."""

from __future__ import annotations

import re

from core.model.entries import COMPACTION, MESSAGE, Entry, tool_call_count
from core.model.errors import ArborError, NotFound

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from core.store.writer import EntryWriter    # browser's first screen, need the entry writer;
    from typing import Any, Iterator   # nor typing, ~2.5 ms)


from core.store.records import _loads, data_decoder
from . import Room

_MADE_MAX = 4096       # facts a write transaction keeps (registry.Link.made) before entries' go


class EntriesRoom(Room):
    def writer(self, external_session_id: int, *, background: bool = False) -> EntryWriter:
        from core.store.writer import EntryWriter

        return EntryWriter(self._store, external_session_id, background=background)

    def append(self, external_session_id: int, parent_seq: int | None, entry_type: str,
               data: dict[str, Any], *, entry_id: str | None = None,
               timestamp: Any = None) -> Entry:
        with self.transaction():
            writer = self.writer(external_session_id)
            entry = writer.add(parent_seq, entry_type, data, entry_id=entry_id, timestamp=timestamp)
            writer.flush()
            return entry

    def _branch_target(self, conn: Any, internal_session_id: int) -> tuple[int, int | None]:
        """(session, head) of a branch whose head is about to move; the head is locked for
        this transaction (PostgreSQL: `FOR UPDATE`)."""
        row = conn.execute(self._sql.INTERNAL_TARGET_FOR_UPDATE, (internal_session_id,)).fetchone()
        if row is None:
            raise NotFound(f"branch {internal_session_id} does not exist")
        return row[0], row[1]

    def append_to_branch(self, internal_session_id: int, entry_type: str, data: dict[str, Any], *,
                         entry_id: str | None = None, timestamp: Any = None) -> Entry:
        """Append at a branch's head and move the head: one transaction, safe across processes."""
        with self.transaction() as conn:
            external_session_id, head = self._branch_target(conn, internal_session_id)
            if entry_type == COMPACTION:
                self._check_kept(external_session_id, head, data)
            writer = self.writer(external_session_id)
            entry = writer.add(head, entry_type, data, entry_id=entry_id, timestamp=timestamp)
            writer.flush()
            tools = tool_call_count(entry.message)
            conn.execute(self._sql.INTERNAL_ADVANCE_HEAD,
                         (entry.seq, entry.timestamp, tools, internal_session_id))
            return entry

    def _check_kept(self, external_session_id: int, head: int | None,
                    data: dict[str, Any]) -> None:
        """A compaction appended to a branch keeps entries from one on that branch (or
        none: no `firstKeptEntryId`, or ""); replay could not start anywhere else."""
        kept = data.get("firstKeptEntryId")
        if kept is None or kept == "":
            return
        if not isinstance(kept, str):
            raise ArborError(f"a compaction's firstKeptEntryId is an entry id, not "
                             f"{type(kept).__name__} {kept!r}; nothing was written")
        entry = self.find(external_session_id, kept)
        if entry is None or head is None or not self._store.paths.is_ancestor(entry.seq, head):
            raise ArborError(f"the compaction keeps entry {kept!r}, which is not on this branch; "
                             "nothing was written")

    def append_messages(self, internal_session_id: int, messages: list[dict[str, Any]]) -> list[Entry]:
        """Append many messages to a branch in one transaction."""
        with self.transaction() as conn:
            external_session_id, head = self._branch_target(conn, internal_session_id)
            writer = self.writer(external_session_id)
            tools, out = 0, []
            for message in messages:
                entry = writer.add(head, MESSAGE, {"message": message},
                                   timestamp=message.get("timestamp") if isinstance(message.get("timestamp"), str) else None)
                head = entry.seq
                tools += tool_call_count(message)
                out.append(entry)
            writer.flush()
            if out:
                conn.execute(self._sql.INTERNAL_ADVANCE_HEAD,
                             (head, out[-1].timestamp, tools, internal_session_id))
            return out

    @staticmethod
    def _from_rows(rows) -> list[Entry]:
        """Many rows at once (a path's): their data read by one decoder (data_decoder)."""
        read = data_decoder(rows, 10)
        return [Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8],
                      row[9], read(row[10]), row[11]) for row in rows]

    @staticmethod
    def _from_row(row) -> Entry:
        return Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                     _loads(row[10], {}), row[11])

    def _row(self, seq: int) -> tuple | None:
        """An entry's row (`ENTRY_BY_SEQ`'s columns; None: no such entry). Inside a write
        transaction, an entry read once is not read again (entries never change, and none
        is deleted but by this transaction: see registry.Link.made)."""
        with self._lock:
            if not self._store.in_write_transaction:
                return self._store._conn.execute(self._sql.ENTRY_BY_SEQ, (seq,)).fetchone()
            made = self._link.made
            row = made.get(("entry", seq))
            if row is None:
                row = self._store._conn.execute(self._sql.ENTRY_BY_SEQ, (seq,)).fetchone()
                if row is not None:
                    if len(made) >= _MADE_MAX:
                        for key in [key for key in made if key[0] == "entry"]:
                            del made[key]
                    made[("entry", seq)] = row
            return row

    def get(self, seq: int) -> Entry | None:
        row = self._row(seq)
        return self._from_row(row) if row else None

    def find(self, external_session_id: int, entry_id: str) -> Entry | None:
        row = self._one(self._sql.ENTRY_BY_ID, (external_session_id, entry_id))
        return self._from_row(row) if row else None

    def id_of(self, seq: int) -> str | None:
        if self._store.in_write_transaction:   # (the row, for what else this transaction asks of it)
            row = self._row(seq)
            return row[1] if row else None
        row = self._one(self._sql.ENTRY_ID_OF, (seq,))
        return row[0] if row else None

    def parent_of(self, seq: int) -> int | None:
        row = self._one(self._sql.ENTRY_PARENT_OF, (seq,))
        return row[0] if row else None

    def timestamp_of(self, seq: int) -> str | None:
        if self._store.in_write_transaction:
            row = self._row(seq)
            return row[5] if row else None
        row = self._one(self._sql.ENTRY_TIMESTAMP_OF, (seq,))
        return row[0] if row else None

    def span(self, external_session_id: int) -> tuple[int | None, int | None, int]:
        """(lowest seq, highest seq, count) of a session's entries."""
        low, high, count = self._one(self._sql.ENTRY_SPAN_OF_SESSION, (external_session_id,))
        return low, high, count

    def parents(self, external_session_id: int,
                span: tuple[int | None, int | None, int] | None = None) -> Iterator[tuple]:
        """(seq, parent seq or None) of a session's entries in seq order, streamed (a
        million rows are never held at once). `span`: what `entry_span` gave, if known."""
        low, high, count = span if span is not None else self.span(external_session_id)
        if not count:
            return
        if high - low + 1 <= 4 * count:
            sql, args = self._sql.ENTRY_PARENTS_IN_SPAN, (low, high, external_session_id)
        else:
            sql, args = self._sql.ENTRY_PARENTS_OF_SESSION, (external_session_id,)
        with self._lock:
            yield from self._store._conn.execute(sql, args)

    def outline(self, external_session_id: int) -> list[tuple[int, int | None, str, str | None]]:
        """(seq, parent seq, type, role) of every entry of a session in seq order: the
        tree's shape without its data (the entry tree view reads data only for rows shown)."""
        return [tuple(row) for row in self._all(self._sql.ENTRY_OUTLINE_OF_SESSION,
                                                (external_session_id,))]

    def data_field(self, external_session_id: int, key: str) -> list[tuple[int, int | None, Any]]:
        """(seq, parent seq, data[key] or None) of a session's entries in seq order; `key`
        is a plain name (letters, digits, `_`)."""
        if not re.fullmatch(r"\w+", key):
            raise ValueError(f"not a plain data key: {key!r}")
        return [tuple(row) for row in self._all(self._sql.ENTRY_DATA_FIELD_OF_SESSION,
                                                (key, external_session_id))]

    def seqs_with_id(self, entry_id: str, limit: int = 2) -> list[int]:
        """The seqs of entries with this id in any session (at most `limit`), oldest first."""
        return [row[0] for row in self._all(self._sql.ENTRY_SEQS_WITH_ID, (entry_id, int(limit)))]

    def seq_of(self, external_session_id: int, entry_id: str) -> int | None:
        row = self._one(self._sql.ENTRY_SEQ_OF_ID, (external_session_id, entry_id))
        return row[0] if row else None

    def link(self, seq: int) -> tuple[str, int | None]:
        """(id, parent seq) of an entry (an import going on from an offset reads the stored
        part of its tree this way, one entry at a time, as its lines need it)."""
        row = self._one(self._sql.ENTRY_LINK, (seq,))
        if row is None:
            raise NotFound(f"entry {seq} does not exist")
        return row[0], row[1]

    def newest_child(self, seq: int) -> int | None:
        """The seq of the newest entry whose parent is `seq`, or None."""
        return self._one(self._sql.ENTRY_NEWEST_CHILD, (seq,))[0]

    def seqs(self, external_session_id: int) -> dict[str, int]:
        """Every entry id of a session with its seq (what an importer needs to add only what is new)."""
        return dict(self._all(self._sql.ENTRY_SEQS_OF_SESSION, (external_session_id,)))

    def of_session(self, external_session_id: int, *, after_seq: int = 0,
                   limit: int | None = None) -> list[Entry]:
        """Every entry of a session in insertion order (the raw log), from a cursor."""
        if limit:
            rows = self._all(self._sql.ENTRIES_OF_SESSION_LIMIT,
                             (external_session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.ENTRIES_OF_SESSION, (external_session_id, after_seq))
        return [self._from_row(row) for row in rows]

    def children(self, seq: int) -> list[Entry]:
        return [self._from_row(row) for row in self._all(self._sql.ENTRY_CHILDREN, (seq,))]

    def leaves(self, external_session_id: int) -> list[Entry]:
        return [self._from_row(row)
                for row in self._all(self._sql.ENTRY_LEAVES, (external_session_id,))]
