"""The SQLite store: one file, one connection per process, one transaction per operation."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from array import array
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from . import bulk_writer, migrations, search_index
from .clock import Clock, parse, to_text, utc_now
from .entries import (MESSAGE, Entry, role_of, search_text,
                      tool_call_count)
from .fastjson import dumps, dumps_utf8
from .errors import (ArborError, NotFound, ReplayError, StoreDamaged, StoreNotFound,
                     StoreUnavailable)
from .ids import generate_id
from .models import Checkpoint, ExternalSession, InternalSession, LazyHistory
from .paths import default_db_path
from .replay import ReplayState, replay_kept

BUSY_TIMEOUT_MS = 10_000
BULK_CACHE_SIZE = -32 * 1024  # KiB, while an import's bulk writer runs
PAGE_SIZE = 16384  # bytes, for new stores
SQLITE_MAGIC = b"SQLite format 3\x00"

_ENTRY_COLUMNS = (
    "e.seq, e.id, e.external_session_id, e.parent_seq, e.type, e.timestamp, e.depth, "
    "e.chain, e.msg_index, e.role, e.data, p.id"
)
_ENTRY_FROM = "entries e LEFT JOIN entries p ON p.seq = e.parent_seq"

_INTERNAL_COLUMNS = (
    "i.id, i.external_session_id, i.langgraph_session_id, i.name, i.state_data, i.created_at, "
    "i.updated_at, i.is_current, i.checkpoint_count, i.parent_session_id, "
    "i.branch_point_checkpoint_id, i.fork_seq, i.head_seq, i.tool_invocation_count, i.metadata, "
    "h.id, h.msg_index, f.id"
)
_INTERNAL_FROM = (
    "internal_sessions i LEFT JOIN entries h ON h.seq = i.head_seq "
    "LEFT JOIN entries f ON f.seq = i.fork_seq"
)

_EXTERNAL_COLUMNS = (
    "x.id, x.uid, x.user_id, x.session_name, x.created_at, x.updated_at, x.is_active, x.metadata, "
    "x.total_checkpoints, x.cwd, x.source, x.kind, x.parent_session, x.message_count, "
    "(SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.parent_session_id IS NOT NULL), "
    "(SELECT i.langgraph_session_id FROM internal_sessions i "
    " WHERE i.external_session_id = x.id AND i.is_current = 1)"
)


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of the session list, read without loading the session."""

    id: int
    uid: str
    name: str
    source: str
    cwd: str
    kind: str
    created_at: str
    updated_at: str
    is_active: bool
    message_count: int
    entry_count: int
    branch_count: int


@dataclass(frozen=True, slots=True)
class SearchHit:
    seq: int
    entry_id: str
    external_session_id: int
    session_name: str
    type: str
    role: str | None
    timestamp: str
    snippet: str


_dumps = dumps

_INSERT_ENTRY = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
                 " depth, chain, msg_index, role, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
_INSERT_USAGE = ("INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
                 " output_tokens, total_tokens, duration_ms, timestamp) VALUES (?,?,?,?,?,?,?,?,?)")


def _as_text(rows: list[tuple]) -> Iterator[tuple]:
    """Rows whose last field is UTF-8 bytes (as the writer buffers them) with it as text."""
    for row in rows:
        yield (*row[:-1], row[-1].decode("utf-8"))


def _explain_write_error(error: BaseException) -> BaseException:
    if isinstance(error, sqlite3.IntegrityError) and "UNIQUE" in str(error):
        return ArborError(f"an entry id is already in this session ({error})")
    return error


def _loads(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


class EntryWriter:
    """Appends entries to one external session inside the caller's write transaction.

    The one place entry rows are made (depth, chain, message index, role, the full-text
    row, the session's counters). Rows are buffered and written in batches; `seq` is given
    here, which is safe because the write lock is held (`entries.seq` is AUTOINCREMENT, so
    the next one is above both max(seq) and sqlite_sequence). What it wrote is remembered
    in arrays (a few bytes an entry), so an import of a million lines never re-reads a
    parent. Call `flush()` before the transaction reads the entries back or ends.
    """

    BATCH = 2000

    def __init__(self, store: "Store", external_session_id: int, *, background: bool = False):
        if not store.in_write_transaction:
            raise RuntimeError("an EntryWriter needs an open store.transaction()")
        self.store = store
        self.external_session_id = external_session_id
        # background: batches go to the store's BulkWriter thread (for imports). The store
        # drains it before any other use of the connection, so reads here stay correct.
        self._bulk = store._start_bulk() if background else None
        row = self.conn.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'entries'), 0),"
            " COALESCE((SELECT MAX(seq) FROM entries), 0))").fetchone()
        self.next_seq = int(row[0] or 0) + 1
        self._base = self.next_seq
        self._depth = array("q")
        self._chain = array("q")
        self._msg = array("q")
        self._has_child = bytearray()
        self._parent = array("q")  # parent seq of each row written here, -1 for a root
        self._older: dict[int, list] = {}  # parents written before: [depth, chain, msg, has_child]
        self._rows: list[tuple] = []
        self._fts: list[tuple] = []
        self._usage: list[tuple] = []
        self._generated: set[str] = set()
        self._last_data: dict[str, Any] = {}
        self._counted_from = self.next_seq  # rows from this seq on are not in the counters yet
        self._messages = 0
        self._latest: str | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        return self.store._conn

    def _older_parent(self, parent_seq: int) -> list:
        known = self._older.get(parent_seq)
        if known is not None:
            return known
        row = self.conn.execute(
            "SELECT depth, chain, msg_index, external_session_id,"
            " EXISTS(SELECT 1 FROM entries c WHERE c.parent_seq = entries.seq)"
            " FROM entries WHERE seq = ?", (parent_seq,)).fetchone()
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
            if self.conn.execute("SELECT 1 FROM entries WHERE external_session_id = ? AND id = ?",
                                 (self.external_session_id, candidate)).fetchone() is None:
                self._generated.add(candidate)
                return candidate
        raise ArborError("could not generate a unique entry id")

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
            role = role_of(entry_type, data)
        else:
            msg_index = msg_base
            role = None
        stamp, stamped = self._stamp(timestamp, data)
        if stamped is not data:  # filed under now, with the log's unreadable time beside it
            self._last_data = data = stamped
        rows = self._rows
        rows.append((seq, self.external_session_id,
                     self._new_id() if entry_id is None else str(entry_id), parent_seq,
                     entry_type, stamp, depth, chain, msg_index, role, dumps_utf8(data)))
        self._depth.append(depth)
        self._parent.append(-1 if parent_seq is None else parent_seq)
        self._chain.append(chain)
        self._msg.append(msg_index)
        self._has_child.append(0)
        text = search_text(entry_type, data)
        if text:
            self._fts.append((seq, text.encode("utf-8")))
        latest = self._latest
        if latest is None or stamp > latest:
            self._latest = stamp
        if len(rows) >= self.BATCH:
            self.flush_rows()
        return seq

    def written_tree(self) -> tuple[int, array]:
        """(first seq, parent seq of each row) for the rows this writer wrote, which have
        the seqs first, first + 1, ... in order; -1 for a root."""
        return self._base, self._parent

    def add(self, parent_seq: int | None, entry_type: str, data: dict[str, Any], *,
            entry_id: str | None = None, timestamp: Any = None) -> Entry:
        """Buffer one entry and return it as an `Entry`."""
        previous = self._rows[-1] if self._rows else None
        self._last_data = data  # add_row replaces it if it files the entry with a note
        seq = self.add_row(parent_seq, entry_type, data, entry_id=entry_id, timestamp=timestamp)
        row = self._rows[-1] if self._rows else None
        if row is None or row[0] != seq:
            self.flush_rows()
            return self.store.get_entry(seq)
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
        found = self.conn.execute("SELECT id FROM entries WHERE seq = ?", (seq,)).fetchone()
        return found[0] if found else None

    def add_usage(self, provider: str, protocol: str, model: str, input_tokens: int,
                  output_tokens: int, total_tokens: int, duration_ms: int, timestamp: Any) -> None:
        """A usage row (one model request), written with the next batch."""
        self._usage.append((self.external_session_id, provider, protocol, model, int(input_tokens),
                            int(output_tokens), int(total_tokens), int(duration_ms),
                            to_text(timestamp)))

    def flush_rows(self) -> None:
        if self._bulk is not None:
            self._submit_rows()
            return
        conn = self.conn
        if self._rows:
            try:
                conn.executemany(_INSERT_ENTRY, _as_text(self._rows))
            except sqlite3.IntegrityError as error:
                raise _explain_write_error(error) from None
            self._rows.clear()
        if self._fts:
            conn.executemany(search_index.INSERT, _as_text(self._fts))
            self._fts.clear()
        if self._usage:
            conn.executemany(_INSERT_USAGE, self._usage)
            self._usage.clear()

    def _submit_rows(self) -> None:
        statements = []
        for rows, text_column, bulk_sql, row_sql in (
                (self._rows, 10, bulk_writer.ENTRIES_SQL, _INSERT_ENTRY),
                (self._fts, 1, bulk_writer.FTS_SQL, search_index.INSERT),
                (self._usage, None, bulk_writer.USAGE_SQL, _INSERT_USAGE)):
            if not rows:
                continue
            packed = bulk_writer.pack(rows, text_column)
            if packed is None:  # text SQLite cannot take: written here, in order, to report it
                if statements:
                    self._bulk.submit(statements)
                    statements = []
                self._bulk.drain()
                try:
                    self.store._db.executemany(row_sql, _as_text(rows) if text_column else rows)
                except sqlite3.IntegrityError as error:
                    raise _explain_write_error(error) from None
            else:
                statements.append((bulk_sql, packed))
            rows.clear()
        if statements:
            self._bulk.submit(statements)

    def flush(self) -> None:
        """Write what is buffered and bring the session's counters and activity up to date."""
        self.flush_rows()
        entries = self.next_seq - self._counted_from
        if not entries:
            return
        self.conn.execute(
            "UPDATE external_sessions SET entry_count = entry_count + ?,"
            " message_count = message_count + ?, updated_at = MAX(updated_at, ?) WHERE id = ?",
            (entries, self._messages, self._latest, self.external_session_id))
        self._counted_from = self.next_seq
        self._messages = 0
        self._latest = None


class Store:
    """An open arbor store. Use `open_store()`; close it when done."""

    def __init__(self, path: str | os.PathLike | None = None, *, clock: Clock | None = None,
                 id_factory: Callable[[], str] | None = None, create: bool = True,
                 on_upgrade: Callable[[str], None] | None = None):
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.clock: Clock = clock or utc_now
        self.id_factory = id_factory or generate_id
        self._lock = threading.RLock()
        self._depth = 0
        self._read_only = False
        self._segments_cache: OrderedDict[int, tuple] = OrderedDict()
        self._reader: Store | None = None
        self._bulk: bulk_writer.BulkWriter | None = None
        self._bulk_supported: bool | None = None
        self._bulk_cache = -2000
        self._on_upgrade = on_upgrade
        self._db = self._connect(create)

    # ------------------------------------------------------------------ opening
    def _connect(self, create: bool) -> sqlite3.Connection:
        path = self.path
        shown = str(path)
        if path.exists():
            if path.is_dir():
                raise StoreUnavailable(f"{shown} is a folder, not an arbor store")
            try:
                with open(path, "rb") as handle:
                    head = handle.read(16)
            except OSError as error:
                raise StoreUnavailable(f"cannot read {shown}: {error.strerror or error}") from None
            if head and head != SQLITE_MAGIC:
                raise StoreDamaged(f"{shown} is not an arbor store (it is not a SQLite database)")
        else:
            if not create:
                raise StoreNotFound(f"there is no arbor store at {shown}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreUnavailable(
                    f"cannot create the folder for {shown}: {error.strerror or error}") from None
            if not os.access(path.parent, os.W_OK):
                raise StoreUnavailable(f"cannot create {shown}: its folder is not writable")
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {shown}: {error}") from None
        try:
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "schema_migrations" not in tables:
                raise StoreDamaged(
                    f"{shown} is a SQLite database but not an arbor store; it was not changed")
            migrations.check_version(conn, shown)
            if not tables:
                # A new file: 16 KiB pages (SQLite's default is 4). Entries of a few KiB fit
                # a page, and an import writes and checkpoints a quarter as many pages.
                # An existing store keeps the size it has (WAL cannot change it).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"cannot use {shown} in WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = NORMAL")
            migrations.apply_migrations(conn, shown, self._on_upgrade)
        except sqlite3.DatabaseError as error:
            conn.close()
            message = str(error)
            if "readonly" in message or "unable to open" in message or "locked" in message:
                raise StoreUnavailable(f"cannot open {shown}: {message}") from None
            raise StoreDamaged(f"{shown} is damaged or not an arbor store ({message})") from None
        except BaseException:
            conn.close()
            raise
        return conn

    def reader(self) -> "Store":
        """A second connection to the same file, for reads in background threads.

        WAL lets it read while this one writes, and it has its own lock, so a long search
        or a poll never waits behind (or holds up) the app's own reads and writes.
        """
        with self._lock:
            if self._reader is None:
                self._reader = Store(self.path, clock=self.clock, id_factory=self.id_factory,
                                     create=False)
            return self._reader

    def close(self) -> None:
        with self._lock:
            self._stop_bulk(discard=True)
            if self._reader is not None:
                self._reader.close()
                self._reader = None
            if self._db is not None:
                self._db.close()
                self._db = None  # type: ignore[assignment]

    @property
    def _conn(self) -> sqlite3.Connection:
        """The connection, once the bulk writer (if one runs) has written all it was given."""
        bulk = self._bulk
        if bulk is not None:
            bulk.drain()
        return self._db

    def _start_bulk(self) -> bulk_writer.BulkWriter | None:
        """The thread that writes entry batches for this write transaction (None: this
        SQLite lacks the JSON functions it needs, and batches are written inline)."""
        if not self.in_write_transaction:
            raise RuntimeError("the bulk writer needs an open store.transaction()")
        if self._bulk is None:
            if self._bulk_supported is None:
                self._bulk_supported = bulk_writer.supported(self._db)
            if self._bulk_supported:
                # A big write touches index pages all over; a larger page cache for its
                # length keeps them from being written out and read back (restored after).
                self._bulk_cache = self._db.execute("PRAGMA cache_size").fetchone()[0]
                self._db.execute(f"PRAGMA cache_size = {BULK_CACHE_SIZE}")
                self._bulk = bulk_writer.BulkWriter(self._db, explain=_explain_write_error)
        return self._bulk

    def _stop_bulk(self, *, discard: bool = False) -> None:
        bulk, self._bulk = self._bulk, None
        if bulk is not None:
            try:
                bulk.stop(discard=discard)
            finally:
                self._db.execute(f"PRAGMA cache_size = {int(self._bulk_cache)}")

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._conn

    # ------------------------------------------------------------- transactions
    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE); nested uses join the outer one."""
        with self._lock:
            if self._depth:
                if self._read_only:
                    raise RuntimeError("a write cannot join a read snapshot; start the write first")
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            self._db.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self._db
                self._stop_bulk()  # everything queued is written (or its error raised) first
            except BaseException:
                self._depth = 0
                self._stop_bulk(discard=True)
                self._db.execute("ROLLBACK")
                raise
            self._depth = 0
            self._db.execute("COMMIT")

    @property
    def in_write_transaction(self) -> bool:
        return bool(self._depth) and not self._read_only

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several reads."""
        with self._lock:
            if self._depth:
                yield self._conn
                return
            self._conn.execute("BEGIN")
            self._depth = 1
            self._read_only = True
            try:
                yield self._conn
            finally:
                self._depth = 0
                self._read_only = False
                self._conn.execute("COMMIT")

    def data_version(self) -> int:
        """Changes whenever another connection commits to the file."""
        with self._lock:
            return self._conn.execute("PRAGMA data_version").fetchone()[0]

    def integrity_check(self) -> str:
        with self._lock:
            return self._conn.execute("PRAGMA integrity_check").fetchone()[0]

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT(key)"
                         " DO UPDATE SET value = excluded.value", (key, value))

    def schema_version(self) -> int:
        with self._lock:
            return migrations.recorded_version(self._conn)

    # --------------------------------------------------------- external sessions
    def create_external_session(self, session_name: str = "", *, uid: str | None = None,
                                user_id: int = 0, cwd: str = "", source: str = "arbor",
                                kind: str = "session", parent_session: str | None = None,
                                metadata: dict[str, Any] | None = None, created_at: Any = None,
                                header_version: int = 3) -> ExternalSession:
        stamp = to_text(created_at if created_at is not None else self.clock())
        with self.transaction() as conn:
            for _attempt in range(16):
                new_uid = uid or self.id_factory()
                try:
                    cursor = conn.execute(
                        "INSERT INTO external_sessions(uid, user_id, session_name, created_at,"
                        " updated_at, metadata, cwd, source, kind, parent_session, header_version)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (new_uid, user_id, session_name, stamp, stamp, _dumps(metadata or {}), cwd,
                         source, kind, parent_session, header_version),
                    )
                    break
                except sqlite3.IntegrityError:
                    if uid:
                        raise ArborError(f"a session with id {uid!r} already exists") from None
            return self.get_external_session(cursor.lastrowid)

    def _external_from_row(self, row) -> ExternalSession:
        (ext_id, uid, user_id, name, created, updated, active, meta, checkpoints, cwd, source,
         kind, parent, messages, branch_count, current) = row
        ids = [r[0] for r in self._conn.execute(
            "SELECT langgraph_session_id FROM internal_sessions WHERE external_session_id = ?"
            " ORDER BY id", (ext_id,))]
        return ExternalSession(
            id=ext_id, user_id=user_id, session_name=name, created_at=parse(created),
            updated_at=parse(updated), is_active=bool(active), internal_session_ids=ids,
            current_internal_session_id=current, metadata=_loads(meta, {}),
            branch_count=branch_count, total_checkpoints=checkpoints, uid=uid, cwd=cwd,
            source=source, kind=kind, parent_session=parent, message_count=messages,
        )

    def get_external_session(self, external_session_id: int) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(f"SELECT {_EXTERNAL_COLUMNS} FROM external_sessions x WHERE x.id = ?",
                               (external_session_id,)).fetchone()
            return self._external_from_row(row) if row else None

    def get_external_session_by_uid(self, uid: str) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(f"SELECT {_EXTERNAL_COLUMNS} FROM external_sessions x WHERE x.uid = ?",
                               (uid,)).fetchone()
            return self._external_from_row(row) if row else None

    def find_external_sessions(self, *, uid_prefix: str | None = None, cwd: str | None = None,
                               kind: str | None = None, active: bool | None = None,
                               user_id: int | None = None, limit: int | None = None
                               ) -> list[ExternalSession]:
        """Newest activity first."""
        where, args = [], []
        if uid_prefix is not None:
            where.append("x.uid >= ? AND x.uid < ?")
            args += [uid_prefix, uid_prefix + "\U0010ffff"]
        if cwd is not None:
            where.append("x.cwd = ?")
            args.append(cwd)
        if kind is not None:
            where.append("x.kind = ?")
            args.append(kind)
        if active is not None:
            where.append("x.is_active = ?")
            args.append(1 if active else 0)
        if user_id is not None:
            where.append("x.user_id = ?")
            args.append(user_id)
        sql = f"SELECT {_EXTERNAL_COLUMNS} FROM external_sessions x"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.reading() as conn:
            return [self._external_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def update_external_session(self, session: ExternalSession) -> bool:
        if not session.id:
            return False
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE external_sessions SET session_name = ?, is_active = ?, metadata = ?,"
                " total_checkpoints = ?, user_id = ?, cwd = ?, updated_at = ? WHERE id = ?",
                (session.session_name, 1 if session.is_active else 0, _dumps(session.metadata),
                 session.total_checkpoints, session.user_id, session.cwd,
                 to_text(self.clock()), session.id),
            )
            if cursor.rowcount and session.current_internal_session_id:
                row = conn.execute(
                    "SELECT id FROM internal_sessions WHERE langgraph_session_id = ?"
                    " AND external_session_id = ?",
                    (session.current_internal_session_id, session.id)).fetchone()
                if row:
                    self.set_current(row[0])
            return cursor.rowcount > 0

    def list_sessions(self, *, include_archived: bool = False, limit: int | None = None
                      ) -> list[SessionSummary]:
        """The session list, newest activity first, without loading any session."""
        sql = (
            "SELECT x.id, x.uid, x.session_name, x.source, x.cwd, x.kind, x.created_at, x.updated_at,"
            " x.is_active, x.message_count, x.entry_count,"
            " (SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id)"
            " FROM external_sessions x"
        )
        if not include_archived:
            sql += " WHERE x.is_active = 1"
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self.reading() as conn:
            rows = conn.execute(sql).fetchall()
        return [SessionSummary(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9],
                               r[10], r[11]) for r in rows]

    def rename_session(self, external_session_id: int, name: str) -> None:
        with self.transaction() as conn:
            if not conn.execute("UPDATE external_sessions SET session_name = ? WHERE id = ?",
                                (name, external_session_id)).rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def set_active(self, external_session_id: int, active: bool) -> None:
        """Archive (active=False) or restore a session; nothing is deleted."""
        with self.transaction() as conn:
            if not conn.execute("UPDATE external_sessions SET is_active = ? WHERE id = ?",
                                (1 if active else 0, external_session_id)).rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def delete_external_session(self, external_session_id: int) -> bool:
        """Delete a session and everything in it. Explicit, never implied by another operation."""
        with self.transaction() as conn:
            search_index.unindex_entries(conn, "WHERE external_session_id = ?",
                                         (external_session_id,))
            uid = conn.execute("SELECT uid FROM external_sessions WHERE id = ?",
                               (external_session_id,)).fetchone()
            conn.execute("UPDATE internal_sessions SET head_seq = NULL, fork_seq = NULL"
                         " WHERE external_session_id = ?", (external_session_id,))
            conn.execute("DELETE FROM entries WHERE external_session_id = ?", (external_session_id,))
            deleted = conn.execute("DELETE FROM external_sessions WHERE id = ?",
                                   (external_session_id,)).rowcount
            if uid:
                for table in ("session_run_events", "session_capability_events",
                              "session_capabilities"):
                    conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (uid[0],))
        self._segments_cache.clear()
        return deleted > 0

    # --------------------------------------------------------- internal sessions
    def _internal_from_row(self, row) -> InternalSession:
        (iid, ext, lg, name, state, created, updated, current, cps, parent, bp_cp, fork_seq,
         head_seq, tools, meta, head_id, msg_index, fork_id) = row
        session = InternalSession(
            id=iid, external_session_id=ext, langgraph_session_id=lg,
            session_state=_loads(state, {}), created_at=parse(created), is_current=bool(current),
            checkpoint_count=cps, parent_session_id=parent, branch_point_checkpoint_id=bp_cp,
            tool_invocation_count=tools, metadata=_loads(meta, {}), name=name, head_seq=head_seq,
            head_id=head_id, fork_seq=fork_seq, fork_id=fork_id, message_count=msg_index or 0,
            updated_at=parse(updated),
        )
        session.conversation_history = LazyHistory(
            lambda head=head_seq: self.replay(head).messages if head is not None else [])
        return session

    def _select_internal(self, where: str, args: tuple, order: str = "") -> list[InternalSession]:
        sql = f"SELECT {_INTERNAL_COLUMNS} FROM {_INTERNAL_FROM} WHERE {where} {order}"
        with self.reading() as conn:
            return [self._internal_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def create_internal_session(self, external_session_id: int, *, head_seq: int | None = None,
                                fork_seq: int | None = None, parent_session_id: int | None = None,
                                branch_point_checkpoint_id: int | None = None,
                                session_state: dict[str, Any] | None = None, name: str = "",
                                is_current: bool = True, metadata: dict[str, Any] | None = None,
                                langgraph_session_id: str | None = None, created_at: Any = None,
                                checkpoint_count: int = 0, tool_invocation_count: int = 0
                                ) -> InternalSession:
        stamp = to_text(created_at if created_at is not None else self.clock())
        with self.transaction() as conn:
            if is_current:
                conn.execute("UPDATE internal_sessions SET is_current = 0"
                             " WHERE external_session_id = ? AND is_current = 1",
                             (external_session_id,))
            for _attempt in range(16):
                lg = langgraph_session_id or f"{self.id_factory()}{self.id_factory()}"
                try:
                    cursor = conn.execute(
                        "INSERT INTO internal_sessions(external_session_id, langgraph_session_id,"
                        " name, state_data, created_at, updated_at, is_current, checkpoint_count,"
                        " parent_session_id, branch_point_checkpoint_id, fork_seq, head_seq,"
                        " tool_invocation_count, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (external_session_id, lg, name, _dumps(session_state or {}), stamp, stamp,
                         1 if is_current else 0, checkpoint_count, parent_session_id,
                         branch_point_checkpoint_id, fork_seq, head_seq, tool_invocation_count,
                         _dumps(metadata or {})),
                    )
                    break
                except sqlite3.IntegrityError as error:
                    if langgraph_session_id or "langgraph_session_id" not in str(error):
                        raise ArborError(f"cannot create branch: {error}") from None
            conn.execute("UPDATE external_sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?",
                         (stamp, external_session_id))
            return self.get_internal_session(cursor.lastrowid)

    def get_internal_session(self, internal_session_id: int) -> InternalSession | None:
        found = self._select_internal("i.id = ?", (internal_session_id,))
        return found[0] if found else None

    def get_internal_session_by_langgraph_id(self, langgraph_session_id: str) -> InternalSession | None:
        found = self._select_internal("i.langgraph_session_id = ?", (langgraph_session_id,))
        return found[0] if found else None

    def internal_sessions(self, external_session_id: int, *, newest_first: bool = True
                          ) -> list[InternalSession]:
        order = "ORDER BY i.created_at DESC, i.id DESC" if newest_first else "ORDER BY i.id"
        return self._select_internal("i.external_session_id = ?", (external_session_id,), order)

    def branch_children(self, parent_session_id: int) -> list[InternalSession]:
        return self._select_internal("i.parent_session_id = ?", (parent_session_id,),
                                     "ORDER BY i.created_at DESC, i.id DESC")

    def current_internal_session(self, external_session_id: int) -> InternalSession | None:
        found = self._select_internal("i.external_session_id = ? AND i.is_current = 1",
                                      (external_session_id,))
        return found[0] if found else None

    def count_internal_sessions(self, external_session_id: int) -> int:
        with self._lock:
            return self._conn.execute(
                "SELECT COUNT(*) FROM internal_sessions WHERE external_session_id = ?",
                (external_session_id,)).fetchone()[0]

    def set_current(self, internal_session_id: int) -> bool:
        with self.transaction() as conn:
            row = conn.execute("SELECT external_session_id FROM internal_sessions WHERE id = ?",
                               (internal_session_id,)).fetchone()
            if row is None:
                return False
            conn.execute("UPDATE internal_sessions SET is_current = 0"
                         " WHERE external_session_id = ? AND is_current = 1 AND id != ?",
                         (row[0], internal_session_id))
            conn.execute("UPDATE internal_sessions SET is_current = 1 WHERE id = ?",
                         (internal_session_id,))
            return True

    def update_internal_session_fields(self, internal_session_id: int, **fields: Any) -> bool:
        """Update stored fields of a branch (state, counters, metadata, name); not its history."""
        columns = {
            "session_state": ("state_data", _dumps), "metadata": ("metadata", _dumps),
            "checkpoint_count": ("checkpoint_count", int), "name": ("name", str),
            "tool_invocation_count": ("tool_invocation_count", int),
        }
        sets, args = [], []
        for key, value in fields.items():
            column, convert = columns[key]
            sets.append(f"{column} = ?")
            args.append(convert(value))
        sets.append("updated_at = ?")
        args.append(to_text(self.clock()))
        with self.transaction() as conn:
            cursor = conn.execute(f"UPDATE internal_sessions SET {', '.join(sets)} WHERE id = ?",
                                  (*args, internal_session_id))
            return cursor.rowcount > 0

    def delete_internal_session(self, internal_session_id: int) -> bool:
        """Remove a branch pointer. Its entries stay (they are history)."""
        with self.transaction() as conn:
            return conn.execute("DELETE FROM internal_sessions WHERE id = ?",
                                (internal_session_id,)).rowcount > 0

    def move_head(self, internal_session_id: int, head_seq: int | None, *, reason: str = "") -> None:
        """Point a branch at another entry; a move that is not a plain append is logged."""
        with self.transaction() as conn:
            row = conn.execute("SELECT head_seq FROM internal_sessions WHERE id = ?",
                               (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            conn.execute("UPDATE internal_sessions SET head_seq = ?, updated_at = ? WHERE id = ?",
                         (head_seq, to_text(self.clock()), internal_session_id))
            if reason and row[0] != head_seq:
                conn.execute("INSERT INTO reflog(internal_session_id, old_head_seq, new_head_seq,"
                             " reason, created_at) VALUES (?,?,?,?,?)",
                             (internal_session_id, row[0], head_seq, reason, to_text(self.clock())))

    def reflog(self, internal_session_id: int) -> list[tuple[int | None, int | None, str, str]]:
        with self._lock:
            return self._conn.execute(
                "SELECT old_head_seq, new_head_seq, reason, created_at FROM reflog"
                " WHERE internal_session_id = ? ORDER BY seq", (internal_session_id,)).fetchall()

    # ------------------------------------------------------------------ entries
    def writer(self, external_session_id: int, *, background: bool = False) -> EntryWriter:
        return EntryWriter(self, external_session_id, background=background)

    def append_entry(self, external_session_id: int, parent_seq: int | None, entry_type: str,
                     data: dict[str, Any], *, entry_id: str | None = None,
                     timestamp: Any = None) -> Entry:
        with self.transaction():
            writer = EntryWriter(self, external_session_id)
            entry = writer.add(parent_seq, entry_type, data, entry_id=entry_id, timestamp=timestamp)
            writer.flush()
            return entry

    def append_to_branch(self, internal_session_id: int, entry_type: str, data: dict[str, Any], *,
                         entry_id: str | None = None, timestamp: Any = None) -> Entry:
        """Append at a branch's head and move the head: one transaction, safe across processes."""
        with self.transaction() as conn:
            row = conn.execute("SELECT external_session_id, head_seq FROM internal_sessions"
                               " WHERE id = ?", (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            writer = EntryWriter(self, row[0])
            entry = writer.add(row[1], entry_type, data, entry_id=entry_id, timestamp=timestamp)
            writer.flush()
            tools = tool_call_count(entry.message)
            conn.execute("UPDATE internal_sessions SET head_seq = ?, updated_at = ?,"
                         " tool_invocation_count = tool_invocation_count + ? WHERE id = ?",
                         (entry.seq, entry.timestamp, tools, internal_session_id))
            return entry

    def append_messages(self, internal_session_id: int, messages: list[dict[str, Any]]) -> list[Entry]:
        """Append many messages to a branch in one transaction."""
        with self.transaction() as conn:
            row = conn.execute("SELECT external_session_id, head_seq FROM internal_sessions"
                               " WHERE id = ?", (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            writer = EntryWriter(self, row[0])
            head, tools, out = row[1], 0, []
            for message in messages:
                entry = writer.add(head, MESSAGE, {"message": message},
                                   timestamp=message.get("timestamp") if isinstance(message.get("timestamp"), str) else None)
                head = entry.seq
                tools += tool_call_count(message)
                out.append(entry)
            writer.flush()
            if out:
                conn.execute("UPDATE internal_sessions SET head_seq = ?, updated_at = ?,"
                             " tool_invocation_count = tool_invocation_count + ? WHERE id = ?",
                             (head, out[-1].timestamp, tools, internal_session_id))
            return out

    @staticmethod
    def _entry_from_row(row) -> Entry:
        return Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                     _loads(row[10], {}), row[11])

    def get_entry(self, seq: int) -> Entry | None:
        with self._lock:
            row = self._conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.seq = ?",
                                     (seq,)).fetchone()
        return self._entry_from_row(row) if row else None

    def find_entry(self, external_session_id: int, entry_id: str) -> Entry | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = ?"
                " AND e.id = ?", (external_session_id, entry_id)).fetchone()
        return self._entry_from_row(row) if row else None

    def entry_seqs(self, external_session_id: int) -> dict[str, int]:
        """Every entry id of a session with its seq (what an importer needs to add only what is new)."""
        with self._lock:
            return dict(self._conn.execute("SELECT id, seq FROM entries WHERE external_session_id = ?",
                                           (external_session_id,)).fetchall())

    def session_entries(self, external_session_id: int, *, after_seq: int = 0,
                        limit: int | None = None) -> list[Entry]:
        """Every entry of a session in insertion order (the raw log), from a cursor."""
        sql = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = ?"
               " AND e.seq > ? ORDER BY e.seq")
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self._lock:
            rows = self._conn.execute(sql, (external_session_id, after_seq)).fetchall()
        return [self._entry_from_row(row) for row in rows]

    def children(self, seq: int) -> list[Entry]:
        with self._lock:
            rows = self._conn.execute(f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM}"
                                      " WHERE e.parent_seq = ? ORDER BY e.seq", (seq,)).fetchall()
        return [self._entry_from_row(row) for row in rows]

    def leaves(self, external_session_id: int) -> list[Entry]:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = ? AND"
                " NOT EXISTS (SELECT 1 FROM entries c WHERE c.parent_seq = e.seq) ORDER BY e.seq",
                (external_session_id,)).fetchall()
        return [self._entry_from_row(row) for row in rows]

    # --------------------------------------------------------------------- paths
    def path_segments(self, head_seq: int) -> tuple[tuple[int, int, int], ...]:
        """The root-to-head path as (chain, first depth, last depth) pieces, root first.

        Entries never change, so the answer for a head is cached.
        """
        with self._lock:
            cached = self._segments_cache.get(head_seq)
            if cached is not None:
                self._segments_cache.move_to_end(head_seq)
                return cached
            pieces = []
            seq: int | None = head_seq
            conn = self._conn
            while seq is not None:
                row = conn.execute("SELECT depth, chain FROM entries WHERE seq = ?", (seq,)).fetchone()
                if row is None:
                    raise NotFound(f"entry {seq} does not exist")
                depth, chain = row
                start = conn.execute("SELECT depth, parent_seq FROM entries WHERE seq = ?",
                                     (chain,)).fetchone()
                pieces.append((chain, start[0], depth))
                seq = start[1]
            result = tuple(reversed(pieces))
            self._segments_cache[head_seq] = result
            if len(self._segments_cache) > 512:
                self._segments_cache.popitem(last=False)
            return result

    def path_length(self, head_seq: int | None) -> int:
        if head_seq is None:
            return 0
        return self.path_segments(head_seq)[-1][2] + 1

    def path_entries(self, head_seq: int | None, start: int = 0, stop: int | None = None) -> list[Entry]:
        """Entries at depths [start, stop) of the path from the root to `head_seq`."""
        if head_seq is None:
            return []
        segments = self.path_segments(head_seq)
        last = segments[-1][2]
        stop = last + 1 if stop is None else min(stop, last + 1)
        start = max(0, start)
        out: list[Entry] = []
        with self._lock:
            for chain, low, high in segments:
                lo, hi = max(low, start), min(high, stop - 1)
                if lo > hi:
                    continue
                rows = self._conn.execute(
                    f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.chain = ? AND e.depth"
                    " BETWEEN ? AND ? ORDER BY e.depth", (chain, lo, hi)).fetchall()
                out.extend(self._entry_from_row(row) for row in rows)
        return out

    def entry_at_depth(self, head_seq: int, depth: int) -> int | None:
        for chain, low, high in self.path_segments(head_seq):
            if low <= depth <= high:
                with self._lock:
                    row = self._conn.execute("SELECT seq FROM entries WHERE chain = ? AND depth = ?",
                                             (chain, depth)).fetchone()
                return row[0] if row else None
        return None

    def is_ancestor(self, seq: int, head_seq: int) -> bool:
        """Whether `seq` lies on the path from the root to `head_seq` (inclusive)."""
        entry = self.get_entry(seq)
        return entry is not None and self.entry_at_depth(head_seq, entry.depth) == seq

    def newest_compaction(self, head_seq: int) -> Entry | None:
        with self._lock:
            for chain, low, high in reversed(self.path_segments(head_seq)):
                row = self._conn.execute(
                    "SELECT seq FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                    " AND type = 'compaction' ORDER BY depth DESC LIMIT 1", (chain, low, high)).fetchone()
                if row:
                    return self.get_entry(row[0])
        return None

    def compactions_on_path(self, head_seq: int) -> list[Entry]:
        out = []
        with self._lock:
            for chain, low, high in self.path_segments(head_seq):
                seqs = [r[0] for r in self._conn.execute(
                    "SELECT seq FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                    " AND type = 'compaction' ORDER BY depth", (chain, low, high))]
                out.extend(self.get_entry(s) for s in seqs)
        return out

    def replay_start(self, head_seq: int | None) -> tuple[Entry | None, int]:
        """The newest compaction on the path and the depth its kept entries start at."""
        if head_seq is None:
            return None, 0
        compaction = self.newest_compaction(head_seq)
        if compaction is None:
            return None, 0
        kept_id = compaction.data.get("firstKeptEntryId")
        if not kept_id:
            return compaction, compaction.depth + 1
        kept = self.find_entry(compaction.external_session_id, kept_id)
        if kept is None or kept.depth > compaction.depth or \
                self.entry_at_depth(head_seq, kept.depth) != kept.seq:
            raise ReplayError(
                f"compaction {compaction.id} keeps entry {kept_id}, which is not on this branch's "
                "path; showing the raw entries instead")
        return compaction, kept.depth

    def replay(self, head_seq: int | None) -> ReplayState:
        """The context an agent resumes with at this head (newest compaction applied)."""
        if head_seq is None:
            return ReplayState()
        with self.reading():
            compaction, start = self.replay_start(head_seq)
            return replay_kept(compaction, self.path_entries(head_seq, start))

    # ------------------------------------------------------------------- labels
    def add_label(self, external_session_id: int, label: str | None, *, target_seq: int | None = None,
                  target_branch: int | None = None, entry_seq: int | None = None,
                  created_at: Any = None) -> None:
        """Record a label; None or "" clears the target's label. The log keeps every change."""
        if (target_seq is None) == (target_branch is None):
            raise ValueError("a label targets exactly one entry or one branch")
        text = (label or "").strip() or None
        with self.transaction() as conn:
            conn.execute("INSERT INTO labels(external_session_id, target_seq, target_branch, label,"
                         " entry_seq, created_at) VALUES (?,?,?,?,?,?)",
                         (external_session_id, target_seq, target_branch, text, entry_seq,
                          to_text(created_at if created_at is not None else self.clock())))

    def _current_labels(self, external_session_id: int, column: str) -> dict[int, str]:
        out: dict[int, str] = {}
        with self._lock:
            for target, label in self._conn.execute(
                    f"SELECT {column}, label FROM labels WHERE external_session_id = ?"
                    f" AND {column} IS NOT NULL ORDER BY seq", (external_session_id,)):
                if label is None:
                    out.pop(target, None)
                else:
                    out[target] = label
        return out

    def entry_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled entry of a session (seq -> label)."""
        return self._current_labels(external_session_id, "target_seq")

    def branch_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled branch of a session (internal id -> label)."""
        return self._current_labels(external_session_id, "target_branch")

    # --------------------------------------------------------------- checkpoints
    def _checkpoint_from_row(self, row) -> Checkpoint:
        (cid, ext, iid, entry_seq, name, state, auto, created, meta, tools, entry_id) = row
        checkpoint = Checkpoint(
            id=cid, internal_session_id=iid, checkpoint_name=name, session_state=_loads(state, {}),
            is_auto=bool(auto), created_at=parse(created), metadata=_loads(meta, {}),
            tool_invocations=_loads(tools, []), external_session_id=ext, entry_seq=entry_seq,
            entry_id=entry_id)
        checkpoint.conversation_history = LazyHistory(
            lambda head=entry_seq: self.replay(head).messages if head is not None else [])
        return checkpoint

    def _select_checkpoints(self, where: str, args: tuple) -> list[Checkpoint]:
        sql = ("SELECT c.id, c.external_session_id, c.internal_session_id, c.entry_seq,"
               " c.checkpoint_name, c.session_state, c.is_auto, c.created_at, c.metadata,"
               " c.tool_invocations, e.id FROM checkpoints c LEFT JOIN entries e ON e.seq = c.entry_seq"
               f" WHERE {where} ORDER BY c.created_at DESC, c.id DESC")
        with self.reading() as conn:
            return [self._checkpoint_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def create_checkpoint(self, internal_session_id: int, checkpoint_name: str = "", *,
                          entry_seq: int | None = None, session_state: dict[str, Any] | None = None,
                          is_auto: bool = False, metadata: dict[str, Any] | None = None,
                          tool_invocations: list[dict[str, Any]] | None = None,
                          created_at: Any = None) -> Checkpoint:
        """Tag an entry (default: the branch's head) with a snapshot of the branch's state."""
        with self.transaction() as conn:
            row = conn.execute("SELECT external_session_id, head_seq, state_data FROM internal_sessions"
                               " WHERE id = ?", (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            state = session_state if session_state is not None else _loads(row[2], {})
            cursor = conn.execute(
                "INSERT INTO checkpoints(external_session_id, internal_session_id, entry_seq,"
                " checkpoint_name, session_state, is_auto, created_at, metadata, tool_invocations)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                (row[0], internal_session_id, entry_seq if entry_seq is not None else row[1],
                 checkpoint_name, _dumps(state), 1 if is_auto else 0,
                 to_text(created_at if created_at is not None else self.clock()),
                 _dumps(metadata or {}), _dumps(tool_invocations or [])))
            conn.execute("UPDATE internal_sessions SET checkpoint_count = checkpoint_count + 1"
                         " WHERE id = ?", (internal_session_id,))
            conn.execute("UPDATE external_sessions SET total_checkpoints = total_checkpoints + 1"
                         " WHERE id = ?", (row[0],))
            return self.get_checkpoint(cursor.lastrowid)

    def get_checkpoint(self, checkpoint_id: int) -> Checkpoint | None:
        found = self._select_checkpoints("c.id = ?", (checkpoint_id,))
        return found[0] if found else None

    def checkpoints_for_branch(self, internal_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints("c.internal_session_id = ?", (internal_session_id,))

    def checkpoints_for_session(self, external_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints("c.external_session_id = ?", (external_session_id,))

    def delete_checkpoint(self, checkpoint_id: int) -> bool:
        with self.transaction() as conn:
            return conn.execute("DELETE FROM checkpoints WHERE id = ?", (checkpoint_id,)).rowcount > 0

    # ------------------------------------------------------------------- search
    def search(self, query: str, *, limit: int = 200, external_session_id: int | None = None
               ) -> list[SearchHit]:
        """Message text through FTS5. Any text is a valid query: words are matched as prefixes."""
        words = re.findall(r"\w+", query, flags=re.UNICODE)
        if not words:
            return []
        match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
        # Newest first: the index keeps no word counts to rank by, and in a log of one's
        # own work the latest mention is usually the one looked for. LIMIT then stops the
        # index scan early, however common the word.
        sql = ("SELECT e.seq, e.id, e.external_session_id, x.session_name, e.type, e.role,"
               " e.timestamp, e.data FROM entries_fts f JOIN entries e ON e.seq = f.rowid"
               " JOIN external_sessions x ON x.id = e.external_session_id WHERE entries_fts MATCH ?")
        args: list[Any] = [match]
        if external_session_id is not None:
            sql += " AND e.external_session_id = ?"
            args.append(external_session_id)
        sql += f" ORDER BY f.rowid DESC LIMIT {int(limit)}"
        with self.reading() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [SearchHit(r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                          snippet(search_text(r[4], _loads(r[7], {})), words)) for r in rows]

    def search_session_names(self, text: str, *, include_archived: bool = False) -> list[SessionSummary]:
        needle = text.casefold()
        return [s for s in self.list_sessions(include_archived=include_archived)
                if needle in s.name.casefold() or needle in s.uid.casefold()]

    def branch_containing(self, seq: int) -> InternalSession | None:
        """A branch whose path holds the entry: the current one if it does, else the newest."""
        entry = self.get_entry(seq)
        if entry is None:
            return None
        branches = self.internal_sessions(entry.external_session_id)
        branches.sort(key=lambda b: not b.is_current)
        for branch in branches:
            if branch.head_seq is not None and branch.head_seq >= seq and \
                    self.entry_at_depth(branch.head_seq, entry.depth) == seq:
                return branch
        return None

    # ------------------------------------------------------------- events/usage
    def record_usage(self, external_session_id: int, provider: str, protocol: str, model: str,
                     input_tokens: int, output_tokens: int, total_tokens: int, duration_ms: int,
                     timestamp: Any = None) -> None:
        with self.transaction() as conn:
            conn.execute(_INSERT_USAGE, (external_session_id, provider, protocol, model, input_tokens,
                                         output_tokens, total_tokens, duration_ms,
                                         to_text(timestamp if timestamp is not None else self.clock())))

    def usage(self, external_session_id: int) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(
                "SELECT provider, protocol, model, input_tokens, output_tokens, total_tokens,"
                " duration_ms, timestamp FROM usage WHERE external_session_id = ? ORDER BY seq",
                (external_session_id,))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]


def snippet(text: str | None, words: list[str], width: int = 160) -> str:
    """A one-line excerpt around the first matched word."""
    if not text:
        return ""
    flat = " ".join(text.split())
    lowered = flat.casefold()
    position = min((p for p in (lowered.find(w.casefold()) for w in words) if p >= 0), default=0)
    start = max(0, position - width // 3)
    excerpt = flat[start:start + width]
    return ("…" if start else "") + excerpt + ("…" if start + width < len(flat) else "")


def open_store(path: str | os.PathLike | None = None, **options: Any) -> Store:
    """Open (creating if needed) the store at `path`, or the default store when None."""
    return Store(path, **options)
