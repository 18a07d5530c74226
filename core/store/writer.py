"""`EntryWriter`: the one place entry rows are made."""

from __future__ import annotations

from array import array

from core.model.clock import to_text
from core.model.entries import MESSAGE, Entry, search_text
from core.model.errors import ArborError, NotFound
from core.util.fastjson import dumps_utf8
from core.usage.tokens import USAGE_TYPES
from core.store.usage.rows import UsageRows

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any
    from core.store.store import Store


class EntryWriter:
    """Appends entries to one external session inside the caller's write transaction.

    The one place entry rows are made (depth, chain, message index, role, the full-text
    row, the session's counters). Rows are buffered and written in batches; `seq` is given
    here, which is safe because the write lock is held (the backend says which seq is
    free). What it wrote is remembered in arrays (a few bytes an entry), so an import of a
    million lines never re-reads a parent. Call `flush()` before the transaction reads the
    entries back or ends.
    """

    BATCH = 2000
    # A writer that has made this many ids reads the ids its session has at once (if at
    # most IDS_AT_ONCE_MAX), then tells a new id from a taken one without asking each time.
    IDS_AT_ONCE_AFTER = 32
    IDS_AT_ONCE_MAX = 50_000
    # With the bulk writer thread idle, a batch of this many rows is handed to it at once
    # rather than at BATCH: the thread then works while the import reads on, and a file's
    # end (which reads the store, so waits for the thread) waits for a short remainder only.
    EARLY = 256

    def __init__(self, store: "Store", external_session_id: int, *, background: bool = False):
        if not store.in_write_transaction:
            raise RuntimeError("an EntryWriter needs an open store.transaction()")
        self.store = store
        self.external_session_id = external_session_id
        self._backend = store._backend
        self._sql = store._backend.sql
        # background: batches go to the backend's bulk writer thread (for imports). The
        # store drains it before any other use of the connection, so reads here stay correct.
        self._bulk = store._start_bulk() if background else None
        # (a thread that writes while this one reads on can say it waits for work)
        self._idle = getattr(self._bulk, "idle", None)
        self.next_seq = self._backend.first_free_entry_seq(self.conn)
        self._base = self.next_seq
        self._generation = store.write_generation
        self._gaps: list[tuple[int, int]] = []   # (first seq, count) taken by others
        store._writers.add(self)
        self._depth = array("q")
        self._chain = array("q")
        self._msg = array("q")
        self._has_child = bytearray()
        self._parent = array("q")  # parent seq of each row written here, -1 for a root
        self._older: dict[int, list] = {}  # parents written before: [depth, chain, msg, has_child]
        self._rows: list[tuple] = []
        self._fts: list[tuple] = []
        self._usage: list[tuple] = []   # the bulk writer's old usage path: stays empty
        self._usage_rows: UsageRows | None = None   # responses of the entries written here
        self._generated: set[str] = set()
        self._session_ids: set[str] | None = None   # the session's ids, once read at once
        self._session_ids_read = False
        self._last_data: dict[str, Any] = {}
        self._uncounted = 0  # rows not in the session's counters yet
        self._messages = 0
        self._latest: str | None = None
        self._first_user: int | None = None  # the first user message among the uncounted

    @property
    def conn(self) -> Any:
        return self.store._conn

    def _after_commit(self) -> None:
        """The store committed and began again (`Store.commit_and_continue`): another
        process may have added entries meanwhile, so seqs go on after theirs. The seqs
        skipped get placeholder slots in the arrays (never a parent of ours)."""
        self._generation = self.store.write_generation
        self._session_ids, self._session_ids_read = None, False   # others may have written
        free = self._backend.first_free_entry_seq(self.conn)
        gap = free - self.next_seq
        if gap > 0:
            self._gaps.append((self.next_seq, gap))
            self._depth.extend([0] * gap)
            self._chain.extend([0] * gap)
            self._msg.extend([0] * gap)
            self._parent.extend([-1] * gap)
            self._has_child.extend(b"\x01" * gap)
            self.next_seq = free

    def after_others(self) -> None:
        """Another writer of this transaction wrote rows since this one last did (an import
        writing two sessions in turn, each writer flushed before the other writes): go on
        after their seqs, as after a commit."""
        self._after_commit()

    def _older_parent(self, parent_seq: int) -> list:
        known = self._older.get(parent_seq)
        if known is not None:
            return known
        row = self.conn.execute(self._sql.ENTRY_PARENT_FACTS, (parent_seq,)).fetchone()
        if row is None:
            raise NotFound(f"parent entry {parent_seq} does not exist")
        if row[3] != self.external_session_id:
            raise ArborError(f"parent entry {parent_seq} belongs to another session")
        known = self._older[parent_seq] = [row[0], row[1], row[2], bool(row[4])]
        return known

    def _new_id(self) -> str:
        for _attempt in range(64):
            candidate = self.store.id_factory()
            if candidate in self._generated:
                continue
            if not self._id_taken(candidate):
                self._generated.add(candidate)
                return candidate
        raise ArborError("could not generate a unique entry id")

    def _id_taken(self, candidate: str) -> bool:
        """Whether the session has an entry with this id written (as the store would say)."""
        known = self._session_ids
        if known is None and not self._session_ids_read and \
                len(self._generated) >= self.IDS_AT_ONCE_AFTER:
            known = self._read_session_ids()
        if known is not None:
            return candidate in known
        return self.conn.execute(self._sql.ENTRY_ID_TAKEN,
                                 (self.external_session_id, candidate)).fetchone() is not None

    def _read_session_ids(self) -> set[str] | None:
        self._session_ids_read = True
        conn, session = self.conn, self.external_session_id
        count = conn.execute(self._sql.EXTERNAL_ENTRY_COUNT, (session,)).fetchone()
        if count is None or count[0] + self._uncounted > self.IDS_AT_ONCE_MAX:
            return None
        self._session_ids = {row[0] for row in conn.execute(self._sql.ENTRY_IDS_OF_SESSION,
                                                            (session,))}
        return self._session_ids

    def _written(self, rows: list[tuple]) -> None:
        """Rows go to the store: writers of the session that know its ids learn theirs."""
        for writer in self.store._writers:
            if writer._session_ids is not None and \
                    writer.external_session_id == self.external_session_id:
                writer._session_ids.update(row[2] for row in rows)

    def _stamp(self, timestamp: Any, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if type(timestamp) is str and len(timestamp) == 29 and timestamp[10] == "T" and \
                timestamp.endswith("+00:00"):
            return timestamp, data  # already in the stored form
        try:
            return to_text(timestamp if timestamp is not None else self.store.clock()), data
        except ValueError:
            # an unreadable time from a log: keep it beside the data, file the entry under now
            return to_text(self.store.clock()), {**data, "originalTimestamp": str(timestamp)}

    def add_row(self, parent_seq: int | None, entry_type: str, data: dict[str, Any],
                entry_id: str | None = None, timestamp: Any = None) -> int:
        """Buffer one entry and return its seq (the fast path for imports)."""
        if self._generation != self.store.write_generation:
            self._after_commit()
        if type(timestamp) is str and len(timestamp) == 29 and timestamp[10] == "T" and \
                timestamp.endswith("+00:00"):
            stamp, stamped = timestamp, data   # already in the stored form (`_stamp`)
        else:
            stamp, stamped = self._stamp(timestamp, data)
        encoded = dumps_utf8(stamped)   # first: data that cannot be written changes nothing
        seq = self.next_seq
        self.next_seq = seq + 1
        if parent_seq is None:
            depth = msg_base = 0
            chain = seq
        elif parent_seq >= self._base:
            i = parent_seq - self._base
            depth = self._depth[i] + 1
            msg_base = self._msg[i]
            has_child = self._has_child
            if has_child[i]:
                chain = seq
            else:
                chain = self._chain[i]
                has_child[i] = 1
        else:
            parent = self._older_parent(parent_seq)
            depth, msg_base = parent[0] + 1, parent[2]
            chain = seq if parent[3] else parent[1]
            parent[3] = True
        if entry_type == MESSAGE:
            msg_index = msg_base + 1
            self._messages += 1
            message = data.get("message")   # (role_of, without the call)
            role = message.get("role") if isinstance(message, dict) else None
            if role is not None and type(role) is not str:
                role = str(role)
            if role == "user" and self._first_user is None:
                self._first_user = seq  # the session row keeps its first (COALESCE)
        else:
            msg_index = msg_base
            role = None
        if stamped is not data:  # filed under now, with the log's unreadable time beside it
            self._last_data = data = stamped
        rows = self._rows
        if type(entry_id) is not str:
            entry_id = self._new_id() if entry_id is None else str(entry_id)
        rows.append((seq, self.external_session_id, entry_id, parent_seq,
                     entry_type, stamp, depth, chain, msg_index, role, encoded))
        if entry_type in USAGE_TYPES:
            usage = self._usage_rows
            if usage is None:
                usage = self._usage_rows = UsageRows(self)
            usage.take(seq, chain, depth, entry_id, entry_type, stamp, data)
            if usage.pending() >= usage.HOLD:
                self.flush_rows()
                usage.flush()
        self._depth.append(depth)
        self._parent.append(-1 if parent_seq is None else parent_seq)
        self._chain.append(chain)
        self._msg.append(msg_index)
        self._has_child.append(0)
        self._uncounted += 1
        text = search_text(entry_type, data)
        if text:
            self._fts.append((seq, text.encode("utf-8")))
        latest = self._latest
        if latest is None or stamp > latest:
            self._latest = stamp
        if len(rows) >= self.BATCH or (len(rows) >= self.EARLY and self._idle is not None
                                        and self._idle()):
            self.flush_rows()
        return seq

    def written_rows(self) -> tuple[array, array]:
        """(seqs, parent seqs) of the rows this writer wrote, in seq order; -1 for a root."""
        parents = self._parent
        if not self._gaps:
            return array("q", range(self._base, self._base + len(parents))), array("q", parents)
        skip: set[int] = set()
        for start, length in self._gaps:
            skip.update(range(start, start + length))
        seqs, kept = array("q"), array("q")
        for i, parent in enumerate(parents):
            if self._base + i not in skip:
                seqs.append(self._base + i)
                kept.append(parent)
        return seqs, kept

    def add(self, parent_seq: int | None, entry_type: str, data: dict[str, Any], *,
            entry_id: str | None = None, timestamp: Any = None) -> Entry:
        """Buffer one entry and return it as an `Entry`."""
        previous = self._rows[-1] if self._rows else None
        self._last_data = data  # add_row replaces it if it files the entry with a note
        seq = self.add_row(parent_seq, entry_type, data, entry_id=entry_id, timestamp=timestamp)
        row = self._rows[-1] if self._rows else None
        if row is None or row[0] != seq:
            self.flush_rows()
            return self.store.entries.get(seq)
        parent_id = None
        if parent_seq is not None:
            parent_id = previous[2] if previous is not None and previous[0] == parent_seq \
                else self._id_of(parent_seq)
        return Entry(seq, row[2], self.external_session_id, parent_seq, entry_type, row[5], row[6],
                     row[7], row[8], row[9], self._last_data, parent_id)

    def _id_of(self, seq: int) -> str | None:
        for row in self._rows:
            if row[0] == seq:
                return row[2]
        found = self.conn.execute(self._sql.ENTRY_ID_OF, (seq,)).fetchone()
        return found[0] if found else None

    def flush_rows(self) -> None:
        if self._rows:
            self._written(self._rows)
        if self._bulk is not None:
            self._bulk.write(self._rows, self._fts, self._usage)
            return
        conn = self.conn
        backend, sql = self._backend, self._sql
        if self._rows:
            try:
                backend.executemany_text(conn, sql.ENTRY_INSERT, self._rows)
            except backend.errors as error:
                raise self.store._explain_write_error(error) from None
            self._rows.clear()
        if self._fts:
            backend.executemany_text(conn, sql.SEARCH_INSERT, self._fts)
            self._fts.clear()
        if self._usage:
            backend.executemany(conn, sql.USAGE_INSERT, self._usage)
            self._usage.clear()

    def flush(self) -> None:
        """Write what is buffered and bring the session's counters and activity up to date."""
        self.flush_rows()
        if self._usage_rows is not None:
            self._usage_rows.flush()
        entries = self._uncounted
        if not entries:
            return
        self.conn.execute(self._sql.EXTERNAL_COUNT_ENTRIES,
                          (entries, self._messages, self._latest, self._first_user,
                           self.external_session_id))
        self._uncounted = 0
        self._messages = 0
        self._latest = None
        self._first_user = None
