"""The store API: what all of core and the app use to read and write sessions.

One `Store` is one open store, whatever its backend; callers never ask which backend they
have. The SQL is the backend's (`sqlite.py`, by statement name); here is what the store
means: transactions, sessions, branches, entries and paths, labels, checkpoints, search.
"""

from __future__ import annotations

import json
import os
import re
import time
import weakref
from contextlib import contextmanager
from datetime import timedelta

from ..clock import parse, to_text, utc_now
from ..entries import COMPACTION, MESSAGE, Entry, search_text, tool_call_count
from ..errors import ArborError, NotFound, ReplayError, StoreUnavailable
from ..fastjson import dumps
from ..ids import generate_id
from ..models import Checkpoint, ExternalSession, InternalSession, LazyHistory
from ..values import Frozen
from . import registry
from .backends import backend_for

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from ..replay import ReplayState   # does a program that only reads, such as the
    from .writer import EntryWriter    # browser's first screen, need the entry writer;
    from typing import Any, Callable, Iterator   # nor typing, ~2.5 ms)

    from ..clock import Clock
    from .search import BacklogStep, SearchCoverage, SearchResults
    from ..session_types import (SequencedSessionCapabilityEvent, SequencedSessionRunEvent,
                                 SessionCapabilities, SessionCapabilityEvent, SessionRunEvent)

COMMIT_PAUSE = 0.002   # seconds a long write leaves the store free between its transactions
_MADE_MAX = 4096       # facts a write transaction keeps (registry.Link.made) before entries' go


class SessionSummary(Frozen):
    """One row of the session list, read without loading the session."""

    __slots__ = _fields = ("id", "uid", "name", "source", "cwd", "kind", "created_at",
                           "updated_at", "is_active", "message_count", "entry_count",
                           "branch_count", "parent_id")
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
    parent_id: int | None   # the session it belongs under (sub-agent, fork), if any

    def __init__(self, id: int, uid: str, name: str, source: str, cwd: str, kind: str,
                 created_at: str, updated_at: str, is_active: bool, message_count: int,
                 entry_count: int, branch_count: int, parent_id: int | None = None):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "uid", uid)
        setattr_(self, "name", name)
        setattr_(self, "source", source)
        setattr_(self, "cwd", cwd)
        setattr_(self, "kind", kind)
        setattr_(self, "created_at", created_at)
        setattr_(self, "updated_at", updated_at)
        setattr_(self, "is_active", is_active)
        setattr_(self, "message_count", message_count)
        setattr_(self, "entry_count", entry_count)
        setattr_(self, "branch_count", branch_count)
        setattr_(self, "parent_id", parent_id)


class SpawnedSession(Frozen):
    """A session that started at an entry of another one: a sub-agent at the tool call
    that spawned it, a fork at the entry it was forked from."""

    __slots__ = _fields = ("id", "kind", "name", "spawn_seq", "spawn_depth", "message_count",
                           "updated_at", "is_active", "metadata")
    id: int
    kind: str
    name: str
    spawn_seq: int | None
    spawn_depth: int | None
    message_count: int
    updated_at: str
    is_active: bool
    metadata: dict

    def __init__(self, id: int, kind: str, name: str, spawn_seq: int | None,
                 spawn_depth: int | None, message_count: int, updated_at: str, is_active: bool,
                 metadata: dict):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "kind", kind)
        setattr_(self, "name", name)
        setattr_(self, "spawn_seq", spawn_seq)
        setattr_(self, "spawn_depth", spawn_depth)
        setattr_(self, "message_count", message_count)
        setattr_(self, "updated_at", updated_at)
        setattr_(self, "is_active", is_active)
        setattr_(self, "metadata", metadata)


class UnlinkedChild(Frozen):
    """A session that names a parent (or an entry in one) not yet found in the store."""

    __slots__ = _fields = ("id", "kind", "parent_ref", "spawn_ref", "parent_id")
    id: int
    kind: str
    parent_ref: str
    spawn_ref: str | None
    parent_id: int | None

    def __init__(self, id: int, kind: str, parent_ref: str, spawn_ref: str | None,
                 parent_id: int | None):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "kind", kind)
        setattr_(self, "parent_ref", parent_ref)
        setattr_(self, "spawn_ref", spawn_ref)
        setattr_(self, "parent_id", parent_id)


class PathCounts(Frozen):
    """What a depth range of a path holds, counted without reading its entries."""

    __slots__ = _fields = ("entries", "messages", "compactions")
    entries: int
    messages: int
    compactions: int

    def __init__(self, entries: int, messages: int, compactions: int):
        setattr_ = object.__setattr__
        setattr_(self, "entries", entries)
        setattr_(self, "messages", messages)
        setattr_(self, "compactions", compactions)


class SearchHit(Frozen):
    """One entry found by a search, with its session and a snippet."""

    __slots__ = _fields = ("seq", "entry_id", "external_session_id", "session_name", "type",
                           "role", "timestamp", "snippet")
    seq: int
    entry_id: str
    external_session_id: int
    session_name: str
    type: str
    role: str | None
    timestamp: str
    snippet: str

    def __init__(self, seq: int, entry_id: str, external_session_id: int, session_name: str,
                 type: str, role: str | None, timestamp: str, snippet: str):
        setattr_ = object.__setattr__
        setattr_(self, "seq", seq)
        setattr_(self, "entry_id", entry_id)
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "session_name", session_name)
        setattr_(self, "type", type)
        setattr_(self, "role", role)
        setattr_(self, "timestamp", timestamp)
        setattr_(self, "snippet", snippet)


class LangGraphCheckpoint(Frozen):
    """A checkpoint of a LangGraph agent as its checkpointer stored it (see core.langgraph):
    the serializer's output (`type`, `blob`) and metadata (JSON text) given back as they
    were, and the session, entry and arbor checkpoint it is in the store."""

    __slots__ = _fields = ("external_session_id", "thread_id", "checkpoint_ns", "checkpoint_id",
                           "parent_checkpoint_id", "type", "blob", "metadata", "checkpoint_ref",
                           "entry_seq", "messages", "messages_digest")
    external_session_id: int
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    type: str
    blob: bytes
    metadata: str
    checkpoint_ref: int | None
    entry_seq: int | None
    messages: int
    messages_digest: str

    def __init__(self, external_session_id: int, thread_id: str, checkpoint_ns: str,
                 checkpoint_id: str, parent_checkpoint_id: str | None, type: str, blob: bytes,
                 metadata: str, checkpoint_ref: int | None, entry_seq: int | None, messages: int,
                 messages_digest: str):
        setattr_ = object.__setattr__
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "thread_id", thread_id)
        setattr_(self, "checkpoint_ns", checkpoint_ns)
        setattr_(self, "checkpoint_id", checkpoint_id)
        setattr_(self, "parent_checkpoint_id", parent_checkpoint_id)
        setattr_(self, "type", type)
        setattr_(self, "blob", blob)
        setattr_(self, "metadata", metadata)
        setattr_(self, "checkpoint_ref", checkpoint_ref)
        setattr_(self, "entry_seq", entry_seq)
        setattr_(self, "messages", messages)
        setattr_(self, "messages_digest", messages_digest)


_dumps = dumps


class LoggedOperation(Frozen):
    """One row of the undo log (core.undo): an operation of the app and what it changed,
    each change [what, target id, value before, value after]."""

    __slots__ = _fields = ("seq", "kind", "external_session_id", "description", "changes",
                           "undoes", "created_at")
    seq: int
    kind: str
    external_session_id: int | None
    description: str
    changes: list[list[Any]]
    undoes: int | None
    created_at: str

    def __init__(self, seq: int, kind: str, external_session_id: int | None, description: str,
                 changes: list[list[Any]], undoes: int | None, created_at: str):
        setattr_ = object.__setattr__
        setattr_(self, "seq", seq)
        setattr_(self, "kind", kind)
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "description", description)
        setattr_(self, "changes", changes)
        setattr_(self, "undoes", undoes)
        setattr_(self, "created_at", created_at)


def _operation_from_row(row) -> LoggedOperation:
    return LoggedOperation(row[0], row[1], row[2], row[3], _loads(row[4], []), row[5], row[6])


def _loads(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default


class Store:
    """A handle on an open arbor store. Use `open_store()`; close it when done.

    Every handle of a process on the same store shares one connection and its
    transaction (see `registry`); a handle has its own clock and id factory, and closing
    it leaves the connection to the process's other handles."""

    def __init__(self, path: Any = None, *, clock: Clock | None = None,
                 id_factory: Callable[[], str] | None = None, create: bool = True,
                 read_only: bool = False, on_upgrade: Callable[[str], None] | None = None,
                 _role: str = registry.MAIN):
        """`read_only`: for a caller that only reads (`arbor list`, `usage`, `export`): the
        store is opened with a connection that cannot write, which works in a read-only
        folder and never creates a store (`create` is then ignored) nor makes one of an
        empty or foreign file. An older arbor's store is updated first, as any opening does
        (that writes; where it cannot, the error says so)."""
        backend = backend_for(path)
        # the store's name: a file's Path, or a PostgreSQL URL (core.paths.PostgresURL)
        self.path = backend.path
        self.clock: Clock = clock or utc_now
        self.id_factory = id_factory or generate_id
        self._role = _role
        self._reader: Store | None = None
        self._write_handle: Store | None = None
        self._closed = False
        self.read_only = read_only
        if read_only:
            link = self._link = _acquire_read_only(backend, _role, on_upgrade)
        else:
            link = self._link = registry.acquire(backend, _role, create=create,
                                                 on_upgrade=on_upgrade)
        self._backend = link.backend
        self._sql = link.backend.sql
        self._lock = link.lock
        self._segments_cache = link.segments_cache

    # The state of the shared connection's transaction lives in the link.
    @property
    def _depth(self) -> int:
        return self._link.depth

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._link.depth = value

    @property
    def _read_only(self) -> bool:
        return self._link.read_only

    @_read_only.setter
    def _read_only(self, value: bool) -> None:
        self._link.read_only = value

    @property
    def _bulk(self) -> Any:
        return self._link.bulk

    @_bulk.setter
    def _bulk(self, value: Any) -> None:
        self._link.bulk = value

    @property
    def _db(self) -> Any:
        return None if self._closed else self._link.db

    @property
    def write_generation(self) -> int:
        """How many times the shared transaction was committed and begun again
        (`commit_and_continue`)."""
        return self._link.write_generation

    @write_generation.setter
    def write_generation(self, value: int) -> None:
        self._link.write_generation = value

    @property
    def _writers(self) -> "weakref.WeakSet[EntryWriter]":
        return self._link.writers

    # ------------------------------------------------------------------ opening
    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        """What a store call raises for a fault, to catch: arbor's own errors and the
        database driver's (whichever backend this store has)."""
        return (ArborError, *self._backend.errors)

    @property
    def database_errors(self) -> tuple[type[BaseException], ...]:
        """The database driver's errors alone (a fault arbor did not foresee)."""
        return self._backend.errors

    def reader(self) -> "Store":
        """A handle on the process's second connection to this store, for reads in
        background threads (one per store per process, shared like the first).

        WAL lets it read while the first one writes, and it has its own lock, so a long
        search or a poll never waits behind (or holds up) the app's own reads and writes.
        """
        with self._lock:
            if self._closed:
                raise StoreUnavailable("the store is closed")
            if self._reader is None:
                self._reader = Store(self.path, clock=self.clock, id_factory=self.id_factory,
                                     create=False, read_only=self.read_only,
                                     _role=registry.READER)
            return self._reader

    def write_handle(self) -> "Store":
        """A handle on the process's third connection to this store, for writes made in a
        background thread (the app's queue of writes, its live follow) while the first
        connection serves the screen's reads: a write waiting for the store's write lock
        (another program's import) or for a server that went away holds that connection's
        lock, never the first one's."""
        with self._lock:
            if self._closed:   # (a thread still at work after its store was closed)
                raise StoreUnavailable("the store is closed")
            if self._write_handle is None:
                self._write_handle = Store(self.path, clock=self.clock,
                                           id_factory=self.id_factory, create=False,
                                           _role=registry.WRITER)
            return self._write_handle

    def close(self) -> None:
        """Done with this handle; the connection closes with the process's last handle."""
        with self._lock:
            if self._closed:
                return
            for own in (self._reader, self._write_handle):
                if own is not None:
                    own.close()
            self._reader = self._write_handle = None
            self._closed = True
        registry.release(self._link)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def _conn(self) -> Any:
        """The connection, once the bulk writer (if one runs) has written all it was given."""
        bulk = self._link.bulk
        if bulk is not None:
            bulk.drain()
        return self._db

    def _explain_write_error(self, error: BaseException) -> BaseException:
        if self._backend.is_unique_violation(error):
            return ArborError(f"an entry id is already in this session ({error})")
        return error

    def _start_bulk(self) -> Any:
        """The backend's writer of entry batches for this write transaction (None: it has
        none here, and batches are written inline)."""
        if not self.in_write_transaction:
            raise RuntimeError("the bulk writer needs an open store.transaction()")
        if self._bulk is None:
            self._bulk = self._backend.start_bulk(self._db, self._explain_write_error)
        return self._bulk

    def _stop_bulk(self, *, discard: bool = False, keep: bool = False) -> None:
        """End the bulk writer; `keep`: only wait until it has written everything (inside
        `bulk_writes()`, it serves the next transaction too)."""
        bulk = self._bulk
        if bulk is None:
            return
        if keep and not discard:
            bulk.drain()
            return
        self._bulk = None
        self._backend.stop_bulk(self._db, bulk, discard=discard)

    @contextmanager
    def bulk_writes(self) -> Iterator[None]:
        """Many write transactions in a row (an import of many files, one transaction or
        more each): the bulk writer started by the first stays, with its larger page cache,
        until the end, instead of a thread started and stopped (and the cache shrunk and
        read again) for every file."""
        with self._lock:
            self._link.bulk_keep += 1
        try:
            yield
        finally:
            with self._lock:
                self._link.bulk_keep -= 1
                if not self._link.bulk_keep and not self._depth:
                    self._stop_bulk()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def connection(self) -> Any:
        return self._conn

    # ------------------------------------------------------------- transactions
    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction (the store's write lock taken at once); nested uses join
        the outer one."""
        if self.read_only:
            raise ArborError(f"{self.path} was opened for reading only; nothing was written")
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
            backend = self._backend
            backend.begin_write(self._db)
            self._depth = 1
            made = self._link.made
            made.clear()
            try:
                yield self._db
                # everything queued is written (or its error raised) first
                self._stop_bulk(keep=bool(self._link.bulk_keep))
            except BaseException:
                self._depth = 0
                self._writers.clear()   # a writer lives and dies with its transaction
                made.clear()
                self._stop_bulk(discard=True)
                backend.rollback(self._db)
                raise
            self._depth = 0
            self._writers.clear()
            made.clear()
            backend.commit(self._db)

    def commit_and_continue(self) -> bool:
        """Inside a long write (an import): commit what is written, leave the store to
        writers that wait for it for a moment, and begin again. Entry writers of the
        transaction are flushed first (their rows hold seqs) and go on after it
        (`write_generation`). Does nothing inside a nested transaction (the outer one
        decides when to commit); returns whether it committed."""
        with self._lock:
            if self._depth != 1 or self._read_only:
                return False
            for writer in list(self._writers):
                writer.flush()
            if self._bulk is not None:
                self._bulk.drain()
            self._backend.commit(self._db)
            self._link.made.clear()   # (others may change it now)
            self.write_generation += 1
            time.sleep(COMMIT_PAUSE)
            self._backend.begin_write(self._db)
            return True

    @property
    def in_write_transaction(self) -> bool:
        return bool(self._depth) and not self._read_only

    @contextmanager
    def reading(self) -> Iterator[Any]:
        """A consistent snapshot for several reads."""
        with self._lock:
            if self._depth:
                yield self._conn
                return
            self._backend.begin_read(self._conn)
            self._depth = 1
            self._read_only = True
            try:
                yield self._conn
            finally:
                self._depth = 0
                self._read_only = False
                # (a snapshot wrote nothing: rolled back, also after an error, which on
                # PostgreSQL leaves the transaction unable to commit)
                self._backend.rollback(self._conn)

    def _one(self, sql: str, args: tuple = ()) -> Any:
        """The first row of a query, read under the store's lock (None: no row)."""
        with self._lock:
            return self._conn.execute(sql, args).fetchone()

    def _all(self, sql: str, args: tuple | list = ()) -> list:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    def data_version(self) -> int:
        """Changes whenever another connection commits to the store."""
        with self._lock:
            return self._backend.data_version(self._conn)

    def ping(self) -> None:
        """Whether the store answers: connects again where a connection was lost (a
        server that went away and came back): this handle's, and the process's reader and
        background writer if they are open. Raises StoreUnreachable while it does not
        answer."""
        with self._lock:
            conn = self._conn
            ping = getattr(conn, "ping", None)
            if ping is not None:
                ping()
            else:
                conn.execute("SELECT 1").fetchone()
        for own in (self._reader, self._write_handle):
            if own is not None:
                own.ping()

    def integrity_check(self) -> str:
        with self._lock:
            return self._backend.integrity_check(self._conn)

    def get_meta(self, key: str) -> str | None:
        row = self._one(self._sql.META_GET, (key,))
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(self._sql.META_SET, (key, value))

    def schema_version(self) -> int:
        with self._lock:
            return self._backend.schema_version(self._conn)

    def checkpoint_log(self) -> None:
        """Bring everything written into the store's main file (SQLite: empty the
        write-ahead log), as before the store is copied; a no-op where there is no log."""
        with self._lock:
            self._backend.checkpoint_log(self._conn)

    # --------------------------------------------------------- external sessions
    def create_external_session(self, session_name: str = "", *, uid: str | None = None,
                                user_id: int = 0, cwd: str = "", source: str = "arbor",
                                kind: str = "session", parent_session: str | None = None,
                                metadata: dict[str, Any] | None = None, created_at: Any = None,
                                header_version: int = 3) -> ExternalSession:
        stamp = to_text(created_at if created_at is not None else self.clock())
        stored_metadata = _dumps(metadata or {})
        with self.transaction() as conn:
            for _attempt in range(16):
                new_uid = uid or self.id_factory()
                new_id = self._backend.insert_unless_taken(
                    conn, self._sql.EXTERNAL_INSERT,
                    (new_uid, user_id, session_name, stamp, stamp, stored_metadata, cwd,
                     source, kind, parent_session, header_version), "uid")
                if new_id is not None:
                    break
                if uid:
                    raise ArborError(f"a session with id {uid!r} already exists")
            self._link.made[("session", new_id)] = [str(session_name), stored_metadata, 0]
            # what reading the row back gives (a session this transaction just made has no
            # branch yet), without reading it: the columns not given are their defaults
            return self._external_from_row(
                (new_id, new_uid, int(user_id), str(session_name), stamp, stamp, 1,
                 stored_metadata, 0, str(cwd), str(source), str(kind),
                 None if parent_session is None else str(parent_session), 0, 0, None, []))

    def _external_from_row(self, row) -> ExternalSession:
        """A session from `EXTERNAL_BY_ID`'s columns; a backend's select may end with the
        session's branch keys (`EXTERNAL_BRANCH_IDS`'s, in one round trip), else they are
        read apart."""
        (ext_id, uid, user_id, name, created, updated, active, meta, checkpoints, cwd, source,
         kind, parent, messages, branch_count, current, *branch_ids) = row
        if branch_ids:
            ids = list(branch_ids[0] or ())
        else:
            ids = [r[0] for r in self._conn.execute(self._sql.EXTERNAL_BRANCH_IDS, (ext_id,))]
        return ExternalSession(
            id=ext_id, user_id=user_id, session_name=name, created_at=parse(created),
            updated_at=parse(updated), is_active=bool(active), internal_session_ids=ids,
            current_internal_session_id=current, metadata=_loads(meta, {}),
            branch_count=branch_count, total_checkpoints=checkpoints, uid=uid, cwd=cwd,
            source=source, kind=kind, parent_session=parent, message_count=messages,
        )

    def get_external_session(self, external_session_id: int) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.EXTERNAL_BY_ID, (external_session_id,)).fetchone()
            return self._external_from_row(row) if row else None

    def get_external_session_by_uid(self, uid: str) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.EXTERNAL_BY_UID, (uid,)).fetchone()
            return self._external_from_row(row) if row else None

    def find_external_sessions(self, *, uid_prefix: str | None = None, cwd: str | None = None,
                               kind: str | None = None, active: bool | None = None,
                               user_id: int | None = None, limit: int | None = None
                               ) -> list[ExternalSession]:
        """Newest activity first."""
        sql, args = self._sql.find_external_sessions(
            uid_prefix=uid_prefix, cwd=cwd, kind=kind, active=active, user_id=user_id, limit=limit)
        with self.reading() as conn:
            return [self._external_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def update_external_session(self, session: ExternalSession) -> bool:
        if not session.id:
            return False
        with self.transaction() as conn:
            self._link.made.pop(("session", session.id), None)
            cursor = conn.execute(
                self._sql.EXTERNAL_UPDATE,
                (session.session_name, 1 if session.is_active else 0, _dumps(session.metadata),
                 session.total_checkpoints, session.user_id, session.cwd,
                 to_text(self.clock()), session.id),
            )
            if cursor.rowcount and session.current_internal_session_id:
                row = conn.execute(self._sql.INTERNAL_BY_LANGGRAPH_IN_SESSION,
                                   (session.current_internal_session_id, session.id)).fetchone()
                if row:
                    self.set_current(row[0])
            return cursor.rowcount > 0

    def mark_most_recent(self, external_session_id: int) -> None:
        """Make a session the newest activity of its working directory, the one
        `SessionManager.continue_recent` picks: its updated_at becomes now, or one millisecond
        after the newest other session of that directory when the clock has not moved past
        it (times are stored to the millisecond, and a tie goes to the session made later)."""
        with self.transaction() as conn:
            session = self.get_external_session(external_session_id)
            if session is None:
                raise NotFound(f"session {external_session_id} does not exist")
            stamp = parse(to_text(self.clock()))
            newest = self.find_external_sessions(cwd=session.cwd, kind=session.kind, limit=1)
            if newest and newest[0].id != session.id and newest[0].updated_at >= stamp:
                stamp = newest[0].updated_at + timedelta(milliseconds=1)
            conn.execute(self._sql.EXTERNAL_TOUCH, (to_text(stamp), external_session_id))

    def list_sessions(self, *, include_archived: bool = False, limit: int | None = None
                      ) -> list[SessionSummary]:
        """The session list, newest activity first, without loading any session."""
        sql = self._sql.list_sessions(include_archived=include_archived, limit=limit)
        with self.reading() as conn:
            rows = conn.execute(sql).fetchall()
        return [SessionSummary(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9],
                               r[10], r[11], r[12]) for r in rows]

    # ------------------------------------------------------------ lineage
    def add_spawn_point(self, external_session_id: int, key: str, seq: int) -> None:
        """Remember that the entry `seq` of this session started a child known by `key`
        (a tool call id, a child's thread id). The first entry recorded for a key stays."""
        with self.transaction() as conn:
            conn.execute(self._sql.SPAWN_POINT_ADD, (key, external_session_id, seq))

    def spawn_point(self, key: str, parent_ref: str | None = None) -> tuple[int, int] | None:
        """(session id, entry seq) of the entry that started the child known by `key`;
        where several sessions hold the key, the one whose uid is `parent_ref` (or a
        sub-agent of it) first."""
        with self.reading() as conn:
            row = conn.execute(self._sql.SPAWN_POINT, (key, parent_ref, parent_ref)).fetchone()
        return (row[0], row[1]) if row else None

    def set_lineage(self, external_session_id: int, *, kind: str | None = None,
                    parent_ref: str | None = None, spawn_ref: str | None = None) -> None:
        """Say where a session came from (see core.lineage); None leaves a field as it is."""
        with self.transaction() as conn:
            conn.execute(self._sql.LINEAGE_SET, (kind, parent_ref, spawn_ref, external_session_id))

    def unlinked_children(self) -> list[UnlinkedChild]:
        """Sessions that name a parent but are not yet attached to it (or to the entry
        that started them)."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.LINEAGE_UNLINKED).fetchall()
        return [UnlinkedChild(*row) for row in rows]

    def session_id_by_uid(self, uid: str) -> int | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.SESSION_ID_BY_UID, (uid,)).fetchone()
        return row[0] if row else None

    def session_id_by_source_key(self, source_key: str) -> int | None:
        """The session imported from a file (`import_sources.source_key`)."""
        with self.reading() as conn:
            row = conn.execute(self._sql.SESSION_ID_BY_SOURCE_KEY, (source_key,)).fetchone()
        return row[0] if row else None

    def import_source_paths(self) -> list[tuple[str, str]]:
        """(resolved path, format) of every file the store imported from."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.IMPORT_SOURCE_KEYS).fetchall()
        return [(key[len(fmt) + 1:], fmt) for key, fmt in rows
                if key.startswith(f"{fmt}:") and len(key) > len(fmt) + 1]

    def last_shared_entry(self, child_id: int, parent_id: int) -> int | None:
        """The parent's entry that is the deepest entry the child copied (same id): where a
        fork that copies its source's history left it."""
        with self.reading() as conn:
            row = conn.execute(self._sql.LINEAGE_LAST_SHARED, (parent_id, child_id)).fetchone()
        return row[0] if row else None

    def link_child(self, child_id: int, parent_id: int, spawn_seq: int | None) -> None:
        """Attach a session under its parent (never under itself or its own descendants)."""
        with self.transaction() as conn:
            ancestor, steps = parent_id, 0
            while ancestor is not None and steps < 1000:
                if ancestor == child_id:
                    return
                row = conn.execute(self._sql.LINEAGE_PARENT_OF, (ancestor,)).fetchone()
                ancestor = row[0] if row else None
                steps += 1
            conn.execute(self._sql.LINEAGE_LINK, (parent_id, spawn_seq, child_id))

    def spawned_sessions(self, external_session_id: int) -> list[SpawnedSession]:
        """The sessions attached under this one, oldest first, with the entry each started at."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.LINEAGE_CHILDREN, (external_session_id,)).fetchall()
        return [SpawnedSession(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]),
                               _loads(r[8], {})) for r in rows]

    def count_external_sessions(self, *, user_id: int | None = None,
                                archived: bool = False) -> int:
        """How many sessions there are (of one user; only the archived ones)."""
        if archived:
            return self._one(self._sql.EXTERNAL_COUNT_ARCHIVED)[0]
        if user_id is not None:
            return self._one(self._sql.EXTERNAL_COUNT_OF_USER, (user_id,))[0]
        return self._one(self._sql.EXTERNAL_COUNT)[0]

    def _made(self, kind: str, key: int) -> Any:
        """What this write transaction made of a session or branch (see registry.Link.made),
        or None."""
        with self._lock:
            return self._link.made.get((kind, key)) if self.in_write_transaction else None

    def session_name(self, external_session_id: int) -> str | None:
        """A session's name (None: no such session)."""
        made = self._made("session", external_session_id)
        if made is not None:
            return made[0]
        row = self._one(self._sql.EXTERNAL_NAME, (external_session_id,))
        return row[0] if row else None

    def session_metadata(self, external_session_id: int) -> dict[str, Any]:
        """A session's metadata ({} when it has none or no such session)."""
        made = self._made("session", external_session_id)
        if made is not None:
            text = made[1]
        else:
            row = self._one(self._sql.EXTERNAL_METADATA, (external_session_id,))
            text = row[0] if row else None
        value = _loads(text, {}) if text else {}
        return value if isinstance(value, dict) else {}

    def set_session_metadata(self, external_session_id: int, metadata: dict[str, Any]) -> None:
        """Replace a session's metadata (its activity time stays)."""
        text = _dumps(metadata)
        with self.transaction() as conn:
            conn.execute(self._sql.EXTERNAL_SET_METADATA, (text, external_session_id))
            made = self._link.made.get(("session", external_session_id))
            if made is not None:
                made[1] = text

    def set_cwd_if_empty(self, external_session_id: int, cwd: str) -> None:
        """Give a session its working folder unless it has one."""
        with self.transaction() as conn:
            conn.execute(self._sql.EXTERNAL_SET_CWD_IF_EMPTY, (cwd, external_session_id))

    def session_totals(self, external_session_id: int) -> tuple[int, int]:
        """(entries, branches) of a session, counted."""
        row = self._one(self._sql.EXTERNAL_TOTALS, (external_session_id, external_session_id))
        return row[0], row[1]

    def session_sizes(self, external_session_id: int) -> tuple[int, int]:
        """(entries, branches) of a session, the entries from the count its row keeps (as
        the session list shows them): an import of a few lines into a session of 100,000
        entries does not count them all to report its size. (0, 0) for no such session."""
        row = self._one(self._sql.EXTERNAL_KEPT_TOTALS, (external_session_id,))
        return (row[0], row[1]) if row is not None else (0, 0)

    def sessions_by_metadata(self, source: str, equal: dict[str, Any], *,
                             unset: str) -> list[ExternalSession]:
        """The sessions of a source whose metadata has every key of `equal` with its value
        and no `unset` key, oldest first. Keys are plain names (letters, digits, `_`)."""
        for name in (*equal, unset):
            if not re.fullmatch(r"\w+", name):
                raise ValueError(f"not a plain metadata key: {name!r}")
        args: list[Any] = [source]
        for key, value in equal.items():
            args += [key, value]
        args.append(unset)
        with self.reading() as conn:
            return [self._external_from_row(row) for row in conn.execute(
                self._sql.sessions_by_metadata(len(equal)), args).fetchall()]

    def session_listing(self, *, kind: str = "session", cwd: str | None = None,
                        preview: bool = False) -> list[tuple[str, str, str, str, int, Any]]:
        """(uid, name, cwd, updated_at, message count, first user message or None) of every
        session of a kind (in one folder), newest activity first, in one query. The message
        is read only with `preview`."""
        sql, args = self._sql.session_listing(kind=kind, cwd=cwd, preview=preview)
        out = []
        for uid, name, session_cwd, updated, count, first in self._all(sql, args):
            message = None
            if first:
                data = _loads(first, {})
                message = data.get("message") if isinstance(data, dict) else None
            out.append((uid, name, session_cwd, updated, count, message))
        return out

    def rename_session(self, external_session_id: int, name: str) -> None:
        with self.transaction() as conn:
            cursor = conn.execute(self._sql.EXTERNAL_RENAME, (name, external_session_id))
            made = self._link.made.get(("session", external_session_id))
            if made is not None:   # (it is there: this transaction made it)
                made[0] = str(name)
            elif not cursor.rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def set_active(self, external_session_id: int, active: bool) -> None:
        """Archive (active=False) or restore a session; nothing is deleted."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.EXTERNAL_SET_ACTIVE,
                                (1 if active else 0, external_session_id)).rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def delete_external_session(self, external_session_id: int) -> bool:
        """Delete a session and everything in it. Explicit, never implied by another operation."""
        sql = self._sql
        with self.transaction() as conn:
            made = self._link.made
            for key in [key for key, value in made.items() if key == ("session", external_session_id)
                        or (key[0] == "branch" and value == external_session_id)
                        or (key[0] == "entry" and value[2] == external_session_id)]:
                del made[key]
            self._backend.forget_session_entries(conn, external_session_id)
            uid = conn.execute(sql.EXTERNAL_UID, (external_session_id,)).fetchone()
            # responses this session held first: a copy in another session counts instead
            held = [r[0] for r in conn.execute(sql.USAGE_RECOUNT_KEYS_OF, (external_session_id,))]
            conn.execute(sql.EXTERNAL_DETACH_BRANCHES, (external_session_id,))
            conn.execute(sql.EXTERNAL_DELETE_ENTRIES, (external_session_id,))
            deleted = conn.execute(sql.EXTERNAL_DELETE, (external_session_id,)).rowcount
            if held:
                conn.executemany(sql.USAGE_RECOUNT_KEY, [(key, key) for key in held])
            if uid:
                for statement in sql.EXTERNAL_DELETE_EVENTS:
                    conn.execute(statement, (uid[0],))
        self._segments_cache.clear()
        return deleted > 0

    # --------------------------------------------------------- internal sessions
    def _internal_from_row(self, row) -> InternalSession:
        (iid, ext, lg, name, state, created, updated, current, cps, parent, bp_cp, fork_seq,
         head_seq, tools, meta, head_id, msg_index, fork_id, hidden) = row
        session = InternalSession(
            id=iid, external_session_id=ext, langgraph_session_id=lg,
            session_state=_loads(state, {}), created_at=parse(created), is_current=bool(current),
            checkpoint_count=cps, parent_session_id=parent, branch_point_checkpoint_id=bp_cp,
            tool_invocation_count=tools, metadata=_loads(meta, {}), name=name, head_seq=head_seq,
            head_id=head_id, fork_seq=fork_seq, fork_id=fork_id, message_count=msg_index or 0,
            updated_at=parse(updated), is_hidden=bool(hidden),
        )
        session.conversation_history = LazyHistory(
            lambda head=head_seq: self.replay(head).messages if head is not None else [])
        return session

    def _select_internal(self, sql: str, args: tuple) -> list[InternalSession]:
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
        sql = self._sql
        with self.transaction() as conn:
            head = self._own_entry(conn, head_seq, external_session_id, "a branch's head")
            fork = self._own_entry(conn, fork_seq, external_session_id, "a branch's fork point")
            self._check_own(conn, sql.INTERNAL_SESSION_OF, parent_session_id, external_session_id,
                            "branch", "a branch's parent")
            self._check_own(conn, sql.CHECKPOINT_SESSION_OF, branch_point_checkpoint_id,
                            external_session_id, "checkpoint", "a branch's fork point")
            if is_current:
                conn.execute(sql.INTERNAL_CLEAR_CURRENT, (external_session_id,))
            state_text, metadata_text = _dumps(session_state or {}), _dumps(metadata or {})
            for _attempt in range(16):
                lg = langgraph_session_id or f"{self.id_factory()}{self.id_factory()}"
                try:
                    new_id = self._backend.insert_unless_taken(
                        conn, sql.INTERNAL_INSERT,
                        (external_session_id, lg, name, state_text, stamp, stamp,
                         1 if is_current else 0, checkpoint_count, parent_session_id,
                         branch_point_checkpoint_id, fork_seq, head_seq, tool_invocation_count,
                         metadata_text), "langgraph_session_id")
                except self._backend.errors as error:
                    raise ArborError(f"cannot create branch: {error}") from None
                if new_id is not None:
                    break
                if langgraph_session_id:
                    raise ArborError(f"cannot create branch: the branch key {lg!r} is taken")
            conn.execute(sql.EXTERNAL_TOUCH, (stamp, external_session_id))
            made = self._link.made
            made[("branch", new_id)] = external_session_id
            session = made.get(("session", external_session_id))
            if session is not None:
                session[2] += 1   # (branches it has)
            if (head_seq is not None and head is None) or (fork_seq is not None and fork is None):
                return self.get_internal_session(new_id)
            # what reading the row back gives, without reading it (the head's id and message
            # index, the fork's id: from the entries' rows this transaction read)
            return self._internal_from_row(
                (new_id, external_session_id, str(lg), str(name), state_text, stamp, stamp,
                 1 if is_current else 0, int(checkpoint_count), parent_session_id,
                 branch_point_checkpoint_id, fork_seq, head_seq, int(tool_invocation_count),
                 metadata_text, head and head[1], head and head[8], fork and fork[1], 0))

    def _entry_row(self, seq: int) -> tuple | None:
        """An entry's row (`ENTRY_BY_SEQ`'s columns; None: no such entry). Inside a write
        transaction, an entry read once is not read again (entries never change, and none
        is deleted but by this transaction: see registry.Link.made)."""
        with self._lock:
            if not self.in_write_transaction:
                return self._conn.execute(self._sql.ENTRY_BY_SEQ, (seq,)).fetchone()
            made = self._link.made
            row = made.get(("entry", seq))
            if row is None:
                row = self._conn.execute(self._sql.ENTRY_BY_SEQ, (seq,)).fetchone()
                if row is not None:
                    if len(made) >= _MADE_MAX:
                        for key in [key for key in made if key[0] == "entry"]:
                            del made[key]
                    made[("entry", seq)] = row
            return row

    def _own_entry(self, conn: Any, seq: int | None, external_session_id: int, role: str
                   ) -> tuple | None:
        """Refuse (as `_check_own`) an entry a branch points at unless it is one of the
        session's; its row when this transaction has read it (else None: only its session
        is read, not its data)."""
        if seq is None:
            return None
        row = self._link.made.get(("entry", seq))
        if row is None:
            self._check_own(conn, self._sql.ENTRY_SESSION_OF, seq, external_session_id, "entry",
                            role)
        elif row[2] != external_session_id:
            raise ArborError(f"entry {seq} belongs to another session; {role} must be one of "
                             f"session {external_session_id}")
        return row

    @staticmethod
    def _check_own(conn: Any, sql: str, ref: int | None, external_session_id: int, kind: str,
                   role: str) -> None:
        """Refuse a reference (`sql` gives the session of `ref`) to a thing of another
        session or to none: a rollback to it would show another session's messages."""
        if ref is None:
            return
        row = conn.execute(sql, (ref,)).fetchone()
        if row is None:
            raise NotFound(f"{kind} {ref} does not exist")
        if row[0] != external_session_id:
            raise ArborError(f"{kind} {ref} belongs to another session; {role} must be one of "
                             f"session {external_session_id}")

    def get_internal_session(self, internal_session_id: int) -> InternalSession | None:
        found = self._select_internal(self._sql.INTERNAL_BY_ID, (internal_session_id,))
        return found[0] if found else None

    def get_internal_session_by_langgraph_id(self, langgraph_session_id: str) -> InternalSession | None:
        found = self._select_internal(self._sql.INTERNAL_BY_LANGGRAPH_ID, (langgraph_session_id,))
        return found[0] if found else None

    def internal_sessions(self, external_session_id: int, *, newest_first: bool = True
                          ) -> list[InternalSession]:
        sql = self._sql.INTERNAL_OF_SESSION_NEWEST_FIRST if newest_first \
            else self._sql.INTERNAL_OF_SESSION
        return self._select_internal(sql, (external_session_id,))

    def branch_children(self, parent_session_id: int) -> list[InternalSession]:
        return self._select_internal(self._sql.INTERNAL_CHILDREN, (parent_session_id,))

    def current_internal_session(self, external_session_id: int) -> InternalSession | None:
        found = self._select_internal(self._sql.INTERNAL_CURRENT, (external_session_id,))
        return found[0] if found else None

    def branch_heads(self, external_session_id: int) -> list[tuple[int, int | None]]:
        """(branch id, head seq) of every branch of a session, oldest branch first."""
        made = self._made("session", external_session_id)
        if made is not None and not made[2]:
            return []   # (made by this transaction, which has given it no branch yet)
        return [(row[0], row[1]) for row in self._all(self._sql.INTERNAL_HEADS, (external_session_id,))]

    def branch_key_taken(self, langgraph_session_id: str) -> bool:
        """Whether a branch of any session has this key (`langgraph_session_id`)."""
        return self._one(self._sql.INTERNAL_KEY_TAKEN, (langgraph_session_id,)) is not None

    def add_tool_calls_to_current(self, external_session_id: int, count: int) -> None:
        """Count tool calls into the session's current branch."""
        with self.transaction() as conn:
            conn.execute(self._sql.INTERNAL_ADD_TOOL_CALLS_TO_CURRENT, (count, external_session_id))

    def current_branch_id(self, external_session_id: int) -> int | None:
        """The id of the session's current branch (None: it has none)."""
        row = self._one(self._sql.INTERNAL_CURRENT_ID, (external_session_id,))
        return row[0] if row else None

    def count_internal_sessions(self, external_session_id: int) -> int:
        return self._one(self._sql.INTERNAL_COUNT, (external_session_id,))[0]

    def set_current(self, internal_session_id: int) -> bool:
        sql = self._sql
        with self.transaction() as conn:
            session = self._link.made.get(("branch", internal_session_id))
            if session is None:
                row = conn.execute(sql.INTERNAL_SESSION_OF, (internal_session_id,)).fetchone()
                if row is None:
                    return False
                session = row[0]
            conn.execute(sql.INTERNAL_CLEAR_OTHER_CURRENT, (session, internal_session_id))
            conn.execute(sql.INTERNAL_SET_CURRENT, (internal_session_id,))
            return True

    def unset_current(self, internal_session_id: int) -> bool:
        """Make a branch not current (its session then has no current branch until one is set)."""
        with self.transaction() as conn:
            return conn.execute(self._sql.INTERNAL_UNSET_CURRENT, (internal_session_id,)).rowcount > 0

    def update_internal_session_fields(self, internal_session_id: int, **fields: Any) -> bool:
        """Update stored fields of a branch (state, counters, metadata, name); not its history."""
        convert = {"session_state": _dumps, "metadata": _dumps, "checkpoint_count": int,
                   "name": str, "tool_invocation_count": int}
        names = [name for name in fields if convert[name]]
        args = [convert[name](fields[name]) for name in names]
        names.append("updated_at")
        args.append(to_text(self.clock()))
        with self.transaction() as conn:
            cursor = conn.execute(self._sql.update_internal_fields(names),
                                  (*args, internal_session_id))
            return cursor.rowcount > 0

    def delete_internal_session(self, internal_session_id: int) -> bool:
        """Remove a branch pointer. Its entries stay (they are history)."""
        with self.transaction() as conn:
            made = self._link.made
            session = made.pop(("branch", internal_session_id), None)
            if session is not None and ("session", session) in made:
                made.pop(("session", session))   # (its branches are read again)
            return conn.execute(self._sql.INTERNAL_DELETE, (internal_session_id,)).rowcount > 0

    def move_head(self, internal_session_id: int, head_seq: int | None, *, reason: str = "") -> None:
        """Point a branch at another entry; a move that is not a plain append is logged."""
        sql = self._sql
        with self.transaction() as conn:
            external_session_id, old_head = self._branch_target(conn, internal_session_id)
            self._check_own(conn, sql.ENTRY_SESSION_OF, head_seq, external_session_id, "entry",
                            "a branch's head")
            conn.execute(sql.INTERNAL_MOVE_HEAD,
                         (head_seq, to_text(self.clock()), internal_session_id))
            if reason and old_head != head_seq:
                conn.execute(sql.REFLOG_INSERT,
                             (internal_session_id, old_head, head_seq, reason, to_text(self.clock())))

    def reflog(self, internal_session_id: int) -> list[tuple[int | None, int | None, str, str]]:
        return [tuple(row) for row in self._all(self._sql.REFLOG_OF_BRANCH, (internal_session_id,))]

    def set_branch_hidden(self, internal_session_id: int, hidden: bool) -> None:
        """Hide a branch (or show it again); its entries and head stay as they are."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.INTERNAL_SET_HIDDEN,
                                (1 if hidden else 0, internal_session_id)).rowcount:
                raise NotFound(f"branch {internal_session_id} does not exist")

    # ------------------------------------------------------------------ entries
    def writer(self, external_session_id: int, *, background: bool = False) -> EntryWriter:
        from .writer import EntryWriter

        return EntryWriter(self, external_session_id, background=background)

    def append_entry(self, external_session_id: int, parent_seq: int | None, entry_type: str,
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
        entry = self.find_entry(external_session_id, kept)
        if entry is None or head is None or not self.is_ancestor(entry.seq, head):
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
    def _entry_from_row(row) -> Entry:
        return Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                     _loads(row[10], {}), row[11])

    def get_entry(self, seq: int) -> Entry | None:
        row = self._entry_row(seq)
        return self._entry_from_row(row) if row else None

    def find_entry(self, external_session_id: int, entry_id: str) -> Entry | None:
        row = self._one(self._sql.ENTRY_BY_ID, (external_session_id, entry_id))
        return self._entry_from_row(row) if row else None

    def entry_id_of(self, seq: int) -> str | None:
        if self.in_write_transaction:   # (the row, for what else this transaction asks of it)
            row = self._entry_row(seq)
            return row[1] if row else None
        row = self._one(self._sql.ENTRY_ID_OF, (seq,))
        return row[0] if row else None

    def entry_parent_of(self, seq: int) -> int | None:
        row = self._one(self._sql.ENTRY_PARENT_OF, (seq,))
        return row[0] if row else None

    def entry_timestamp_of(self, seq: int) -> str | None:
        if self.in_write_transaction:
            row = self._entry_row(seq)
            return row[5] if row else None
        row = self._one(self._sql.ENTRY_TIMESTAMP_OF, (seq,))
        return row[0] if row else None

    def entry_span(self, external_session_id: int) -> tuple[int | None, int | None, int]:
        """(lowest seq, highest seq, count) of a session's entries."""
        low, high, count = self._one(self._sql.ENTRY_SPAN_OF_SESSION, (external_session_id,))
        return low, high, count

    def entry_parents(self, external_session_id: int,
                      span: tuple[int | None, int | None, int] | None = None) -> Iterator[tuple]:
        """(seq, parent seq or None) of a session's entries in seq order, streamed (a
        million rows are never held at once). `span`: what `entry_span` gave, if known."""
        low, high, count = span if span is not None else self.entry_span(external_session_id)
        if not count:
            return
        if high - low + 1 <= 4 * count:
            sql, args = self._sql.ENTRY_PARENTS_IN_SPAN, (low, high, external_session_id)
        else:
            sql, args = self._sql.ENTRY_PARENTS_OF_SESSION, (external_session_id,)
        with self._lock:
            yield from self._conn.execute(sql, args)

    def entry_outline(self, external_session_id: int) -> list[tuple[int, int | None, str, str | None]]:
        """(seq, parent seq, type, role) of every entry of a session in seq order: the
        tree's shape without its data (the entry tree view reads data only for rows shown)."""
        return [tuple(row) for row in self._all(self._sql.ENTRY_OUTLINE_OF_SESSION,
                                                (external_session_id,))]

    def entry_data_field(self, external_session_id: int, key: str) -> list[tuple[int, int | None, Any]]:
        """(seq, parent seq, data[key] or None) of a session's entries in seq order; `key`
        is a plain name (letters, digits, `_`)."""
        if not re.fullmatch(r"\w+", key):
            raise ValueError(f"not a plain data key: {key!r}")
        return [tuple(row) for row in self._all(self._sql.ENTRY_DATA_FIELD_OF_SESSION,
                                                (key, external_session_id))]

    def seqs_with_entry_id(self, entry_id: str, limit: int = 2) -> list[int]:
        """The seqs of entries with this id in any session (at most `limit`), oldest first."""
        return [row[0] for row in self._all(self._sql.ENTRY_SEQS_WITH_ID, (entry_id, int(limit)))]

    def entry_seq(self, external_session_id: int, entry_id: str) -> int | None:
        row = self._one(self._sql.ENTRY_SEQ_OF_ID, (external_session_id, entry_id))
        return row[0] if row else None

    def entry_link(self, seq: int) -> tuple[str, int | None]:
        """(id, parent seq) of an entry (an import going on from an offset reads the stored
        part of its tree this way, one entry at a time, as its lines need it)."""
        row = self._one(self._sql.ENTRY_LINK, (seq,))
        if row is None:
            raise NotFound(f"entry {seq} does not exist")
        return row[0], row[1]

    def newest_child(self, seq: int) -> int | None:
        """The seq of the newest entry whose parent is `seq`, or None."""
        return self._one(self._sql.ENTRY_NEWEST_CHILD, (seq,))[0]

    # ------------------------------------------------------- import records
    def import_records(self) -> dict[str, str]:
        """Every imported file's record: source key -> its state as JSON text (read as
        text: an import over thousands of unchanged files decodes what it needs)."""
        return dict(self._all(self._sql.IMPORT_RECORDS))

    def import_stamps(self) -> dict[str, tuple]:
        """Every imported file's stamp: source key -> (record version, complete, size,
        mtime_ns, inode, device, lines), what telling an unchanged file from `stat` needs
        (kept in columns: no record's JSON is read; see importers/unchanged.py)."""
        return {row[0]: row[1:] for row in self._all(self._sql.IMPORT_STAMPS)}

    def import_record_sessions(self) -> dict[str, str]:
        """source key -> the uids of the sessions its file wrote into (JSON text)."""
        return dict(self._all(self._sql.IMPORT_RECORD_SESSIONS))

    def session_summaries(self, uids: list[str]) -> dict[str, tuple[str, str, int, int]]:
        """uid -> (name, source, entries, branches) of these sessions (500 a query)."""
        out: dict[str, tuple[str, str, int, int]] = {}
        for start in range(0, len(uids), 500):
            chunk = uids[start:start + 500]
            for uid, name, source, entries, branches in self._all(
                    self._sql.session_summaries(len(chunk)), chunk):
                out[uid] = (name, source, entries, branches)
        return out

    def entry_seqs(self, external_session_id: int) -> dict[str, int]:
        """Every entry id of a session with its seq (what an importer needs to add only what is new)."""
        return dict(self._all(self._sql.ENTRY_SEQS_OF_SESSION, (external_session_id,)))

    def session_entries(self, external_session_id: int, *, after_seq: int = 0,
                        limit: int | None = None) -> list[Entry]:
        """Every entry of a session in insertion order (the raw log), from a cursor."""
        if limit:
            rows = self._all(self._sql.ENTRIES_OF_SESSION_LIMIT,
                             (external_session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.ENTRIES_OF_SESSION, (external_session_id, after_seq))
        return [self._entry_from_row(row) for row in rows]

    def children(self, seq: int) -> list[Entry]:
        return [self._entry_from_row(row) for row in self._all(self._sql.ENTRY_CHILDREN, (seq,))]

    def leaves(self, external_session_id: int) -> list[Entry]:
        return [self._entry_from_row(row)
                for row in self._all(self._sql.ENTRY_LEAVES, (external_session_id,))]

    # --------------------------------------------------------------------- paths
    def path_segments(self, head_seq: int) -> tuple[tuple[int, int, int], ...]:
        """The root-to-head path as (chain, first depth, last depth) pieces, root first.

        Entries never change, so the answer for a head is cached.
        """
        sql = self._sql
        with self._lock:
            cached = self._segments_cache.get(head_seq)
            if cached is not None:
                self._segments_cache.move_to_end(head_seq)
                return cached
            pieces = []
            seq: int | None = head_seq
            conn = self._conn
            while seq is not None:
                row = conn.execute(sql.PATH_DEPTH_CHAIN, (seq,)).fetchone()
                if row is None:
                    raise NotFound(f"entry {seq} does not exist")
                depth, chain = row
                start = conn.execute(sql.PATH_CHAIN_START, (chain,)).fetchone()
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
                rows = self._conn.execute(self._sql.PATH_PIECE, (chain, lo, hi)).fetchall()
                out.extend(self._entry_from_row(row) for row in rows)
        return out

    def _path_pieces(self, head_seq: int, start: int, stop: int | None,
                     newest_first: bool = False) -> list[tuple[int, int, int]]:
        """(chain, first depth, last depth) of each piece of depths [start, stop) of a path."""
        segments = self.path_segments(head_seq)
        last = segments[-1][2]
        stop = last + 1 if stop is None else min(stop, last + 1)
        pieces = [(chain, max(low, start), min(high, stop - 1)) for chain, low, high in segments
                  if max(low, start) <= min(high, stop - 1)]
        return pieces[::-1] if newest_first else pieces

    def path_counts(self, head_seq: int | None, start: int = 0, stop: int | None = None) -> PathCounts:
        """How many entries, messages and compactions depths [start, stop) of a path hold,
        without reading them: depths are contiguous, each entry stores how many messages
        lead to it (msg_index), and compactions have their own index."""
        if head_seq is None:
            return PathCounts(0, 0, 0)
        pieces = self._path_pieces(head_seq, start, stop)
        if not pieces:
            return PathCounts(0, 0, 0)
        first, last = pieces[0][1], pieces[-1][2]
        segments = self.path_segments(head_seq)

        def messages_to(depth: int) -> int:
            if depth < 0:
                return 0
            chain = next(c for c, low, high in segments if low <= depth <= high)
            return self._one(self._sql.PATH_MSG_INDEX, (chain, depth))[0]

        with self._lock:
            messages = messages_to(last) - messages_to(first - 1)
            compactions = sum(self._one(self._sql.PATH_COMPACTION_COUNT, piece)[0] for piece in pieces)
        return PathCounts(last - first + 1, messages, compactions)

    def path_end_entry(self, head_seq: int | None, start: int = 0, stop: int | None = None, *,
                       type: str | None = None, not_type: str | None = None,
                       last: bool = False) -> Entry | None:
        """The first (or last) entry in depths [start, stop) of a path, of a type or not of
        one (give one of them)."""
        if (type is None) == (not_type is None):
            raise ValueError("give exactly one of type or not_type")
        if head_seq is None:
            return None
        if type is not None:
            sql = self._sql.PATH_LAST_OF_TYPE if last else self._sql.PATH_FIRST_OF_TYPE
        else:
            sql = self._sql.PATH_LAST_NOT_OF_TYPE if last else self._sql.PATH_FIRST_NOT_OF_TYPE
        with self._lock:
            for chain, lo, hi in self._path_pieces(head_seq, start, stop, newest_first=last):
                row = self._one(sql, (chain, lo, hi, type if type is not None else not_type))
                if row:
                    return self._entry_from_row(row)
        return None

    def path_messages(self, head_seq: int | None, start: int = 0, stop: int | None = None, *,
                      limit: int | None = None, newest_first: bool = False,
                      role: str | None = None) -> list[dict[str, Any]]:
        """The messages in depths [start, stop) of a path, in path order (or newest first),
        at most `limit`, of one `role` if given. Only `message` entries' data is read: no
        Entry is made."""
        out: list[dict[str, Any]] = []
        if head_seq is None:
            return out
        sql = self._sql
        if role is None:
            query = sql.PATH_MESSAGES_NEWEST if newest_first else sql.PATH_MESSAGES
        else:
            query = sql.PATH_ROLE_MESSAGES_NEWEST if newest_first else sql.PATH_ROLE_MESSAGES
        with self._lock:
            for chain, lo, hi in self._path_pieces(head_seq, start, stop, newest_first):
                remaining = -1 if limit is None else limit - len(out)
                if remaining == 0:
                    break
                args = (chain, lo, hi, remaining) if role is None else (chain, lo, hi, role, remaining)
                for (data,) in self._conn.execute(query, args):
                    message = _loads(data, {}).get("message")
                    if isinstance(message, dict):
                        out.append(message)
        return out

    def path_sample(self, head_seq: int | None, start: int, stop: int, count: int) -> list[dict[str, Any]]:
        """The messages at `count` depths spread evenly over [start, stop) of a path (an
        index lookup each): what an estimate over a long range reads."""
        if head_seq is None or stop <= start or count <= 0:
            return []
        step = max(1, (stop - start) // count)
        depths = range(start, stop, step)
        out: list[dict[str, Any]] = []
        with self._lock:
            for chain, lo, hi in self._path_pieces(head_seq, start, stop):
                wanted = [d for d in depths if lo <= d <= hi]
                for at in range(0, len(wanted), 500):
                    part = wanted[at:at + 500]
                    rows = self._conn.execute(self._sql.path_messages_at(len(part)), (chain, *part))
                    for (data,) in rows:
                        message = _loads(data, {}).get("message")
                        if isinstance(message, dict):
                            out.append(message)
        return out

    def entry_at_depth(self, head_seq: int, depth: int) -> int | None:
        for chain, low, high in self.path_segments(head_seq):
            if low <= depth <= high:
                row = self._one(self._sql.PATH_SEQ_AT_DEPTH, (chain, depth))
                return row[0] if row else None
        return None

    def is_ancestor(self, seq: int, head_seq: int) -> bool:
        """Whether `seq` lies on the path from the root to `head_seq` (inclusive)."""
        entry = self.get_entry(seq)
        return entry is not None and self.entry_at_depth(head_seq, entry.depth) == seq

    def newest_compaction(self, head_seq: int) -> Entry | None:
        with self._lock:
            for chain, low, high in reversed(self.path_segments(head_seq)):
                row = self._conn.execute(self._sql.PATH_NEWEST_COMPACTION,
                                         (chain, low, high)).fetchone()
                if row:
                    return self.get_entry(row[0])
        return None

    def compactions_on_path(self, head_seq: int) -> list[Entry]:
        out = []
        with self._lock:
            for chain, low, high in self.path_segments(head_seq):
                seqs = [r[0] for r in self._conn.execute(self._sql.PATH_COMPACTIONS,
                                                         (chain, low, high))]
                out.extend(self.get_entry(s) for s in seqs)
        return out

    def replay_start(self, head_seq: int | None) -> tuple[Entry | None, int]:
        """The newest compaction on the path and the depth its kept entries start at.
        ReplayError when the stored compaction keeps something that is not an entry of this
        path (an old store or an imported log may hold one): see `replay`."""
        if head_seq is None:
            return None, 0
        compaction = self.newest_compaction(head_seq)
        if compaction is None:
            return None, 0
        from ..replay import first_kept_id, off_path

        kept_id = first_kept_id(compaction)
        if kept_id is None:
            return compaction, compaction.depth + 1
        kept = self.find_entry(compaction.external_session_id, kept_id)
        if kept is None or kept.depth > compaction.depth or \
                self.entry_at_depth(head_seq, kept.depth) != kept.seq:
            raise off_path(compaction, kept_id)
        return compaction, kept.depth

    def replay(self, head_seq: int | None) -> ReplayState:
        """The context an agent resumes with at this head (newest compaction applied).

        Never raises on stored data: a compaction whose kept entry is not on the path
        gives every message of the path instead, with `warning` saying why."""
        from ..replay import ReplayState, replay_fallback, replay_kept

        if head_seq is None:
            return ReplayState()
        with self.reading():
            try:
                compaction, start = self.replay_start(head_seq)
            except ReplayError as error:
                return replay_fallback(self.path_entries(head_seq), error)
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
            conn.execute(self._sql.LABEL_INSERT,
                         (external_session_id, target_seq, target_branch, text, entry_seq,
                          to_text(created_at if created_at is not None else self.clock())))

    def label_log(self, external_session_id: int) -> list[dict[str, Any]]:
        """Every label change of a session, oldest first: label (None: cleared), at, the
        target entry's id or the target branch's id, the label entry's id."""
        return [{"label": r[0], "at": r[1], "target_entry": r[2], "target_branch": r[3],
                 "label_entry": r[4]}
                for r in self._all(self._sql.LABEL_LOG, (external_session_id,))]

    def _current_labels(self, sql: str, external_session_id: int) -> dict[int, str]:
        out: dict[int, str] = {}
        for target, label in self._all(sql, (external_session_id,)):
            if label is None:
                out.pop(target, None)
            else:
                out[target] = label
        return out

    def entry_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled entry of a session (seq -> label)."""
        return self._current_labels(self._sql.LABELS_OF_ENTRIES, external_session_id)

    def branch_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled branch of a session (internal id -> label)."""
        return self._current_labels(self._sql.LABELS_OF_BRANCHES, external_session_id)

    # --------------------------------------------------------------- checkpoints
    def _checkpoint_from_row(self, row) -> Checkpoint:
        (cid, ext, iid, entry_seq, name, state, auto, created, meta, tools, entry_id, hidden) = row
        checkpoint = Checkpoint(
            id=cid, internal_session_id=iid, checkpoint_name=name, session_state=_loads(state, {}),
            is_auto=bool(auto), created_at=parse(created), metadata=_loads(meta, {}),
            tool_invocations=_loads(tools, []), external_session_id=ext, entry_seq=entry_seq,
            entry_id=entry_id, is_hidden=bool(hidden))
        checkpoint.conversation_history = LazyHistory(
            lambda head=entry_seq: self.replay(head).messages if head is not None else [])
        return checkpoint

    def _select_checkpoints(self, sql: str, args: tuple) -> list[Checkpoint]:
        with self.reading() as conn:
            return [self._checkpoint_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def create_checkpoint(self, internal_session_id: int, checkpoint_name: str = "", *,
                          entry_seq: int | None = None, session_state: dict[str, Any] | None = None,
                          is_auto: bool = False, metadata: dict[str, Any] | None = None,
                          tool_invocations: list[dict[str, Any]] | None = None,
                          created_at: Any = None) -> Checkpoint:
        """Tag an entry (default: the branch's head) with a snapshot of the branch's state."""
        sql = self._sql
        with self.transaction() as conn:
            row = conn.execute(sql.INTERNAL_FOR_CHECKPOINT, (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            self._check_own(conn, sql.ENTRY_SESSION_OF, entry_seq, row[0], "entry",
                            "a checkpoint's entry")
            state = session_state if session_state is not None else _loads(row[2], {})
            new_id = self._backend.inserted_id(conn.execute(
                sql.CHECKPOINT_INSERT,
                (row[0], internal_session_id, entry_seq if entry_seq is not None else row[1],
                 checkpoint_name, _dumps(state), 1 if is_auto else 0,
                 to_text(created_at if created_at is not None else self.clock()),
                 _dumps(metadata or {}), _dumps(tool_invocations or []))))
            conn.execute(sql.INTERNAL_COUNT_CHECKPOINT, (internal_session_id,))
            conn.execute(sql.EXTERNAL_COUNT_CHECKPOINT, (row[0],))
            return self.get_checkpoint(new_id)

    def set_checkpoint_hidden(self, checkpoint_id: int, hidden: bool) -> None:
        """Hide a checkpoint (or show it again); nothing is deleted."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.CHECKPOINT_SET_HIDDEN,
                                (1 if hidden else 0, checkpoint_id)).rowcount:
                raise NotFound(f"checkpoint {checkpoint_id} does not exist")

    def get_checkpoint(self, checkpoint_id: int) -> Checkpoint | None:
        found = self._select_checkpoints(self._sql.CHECKPOINT_BY_ID, (checkpoint_id,))
        return found[0] if found else None

    def checkpoints_for_branch(self, internal_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints(self._sql.CHECKPOINTS_OF_BRANCH, (internal_session_id,))

    def checkpoints_for_session(self, external_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints(self._sql.CHECKPOINTS_OF_SESSION, (external_session_id,))

    def checkpoint_metadata_values(self, external_session_id: int, key: str) -> set[Any]:
        """The values of `metadata[key]` over a session's checkpoints (a plain key)."""
        if not re.fullmatch(r"\w+", key):
            raise ValueError(f"not a plain metadata key: {key!r}")
        return {row[0] for row in self._all(self._sql.CHECKPOINT_METADATA_FIELD_OF_SESSION,
                                            (key, external_session_id))}

    def delete_checkpoint(self, checkpoint_id: int) -> bool:
        with self.transaction() as conn:
            return conn.execute(self._sql.CHECKPOINT_DELETE, (checkpoint_id,)).rowcount > 0

    # ------------------------------------------------- LangGraph's checkpointer
    @staticmethod
    def _langgraph_row(row) -> LangGraphCheckpoint:
        return LangGraphCheckpoint(row[0], row[1], row[2], row[3], row[4], row[5], bytes(row[6]),
                                   row[7], row[8], row[9], row[10], row[11])

    def langgraph_session(self, thread_id: str, checkpoint_ns: str = "") -> int | None:
        """The session that holds a LangGraph thread's namespace (None: not in the store)."""
        row = self._one(self._sql.LANGGRAPH_THREAD_SESSION, (thread_id, checkpoint_ns))
        return row[0] if row else None

    def langgraph_sessions(self, thread_id: str) -> list[tuple[str, int]]:
        """(namespace, session) of every namespace of a LangGraph thread, root first."""
        return [(row[1], row[2]) for row in self._all(self._sql.LANGGRAPH_THREAD_SESSIONS,
                                                      (thread_id,))]

    def langgraph_thread_of(self, external_session_id: int) -> tuple[str, str] | None:
        """(thread id, namespace) of a session a LangGraph checkpointer writes (None: not one)."""
        row = self._one(self._sql.LANGGRAPH_THREAD_OF_SESSION, (external_session_id,))
        return (row[0], row[1]) if row else None

    def add_langgraph_thread(self, thread_id: str, checkpoint_ns: str,
                             external_session_id: int) -> None:
        """Say that a session holds this LangGraph thread's namespace."""
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_THREAD_INSERT,
                         (thread_id, checkpoint_ns, external_session_id))

    def add_langgraph_checkpoint(self, external_session_id: int, checkpoint_id: str, *,
                                 parent_checkpoint_id: str | None, checkpoint_ref: int | None,
                                 entry_seq: int | None, type: str, blob: bytes, metadata: str,
                                 messages: int = 0, messages_digest: str = "") -> None:
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_CHECKPOINT_INSERT,
                         (external_session_id, checkpoint_id, parent_checkpoint_id, checkpoint_ref,
                          entry_seq, type, blob, metadata, messages, messages_digest))

    def rewrite_langgraph_checkpoint(self, external_session_id: int, checkpoint_id: str, *,
                                     type: str, blob: bytes, metadata: str) -> bool:
        """Replace what LangGraph stored for a checkpoint id it writes again (its entry and
        arbor checkpoint stay as they are)."""
        with self.transaction() as conn:
            return conn.execute(self._sql.LANGGRAPH_CHECKPOINT_REWRITE,
                                (type, blob, metadata, external_session_id,
                                 checkpoint_id)).rowcount > 0

    def langgraph_checkpoint(self, external_session_id: int, checkpoint_id: str
                             ) -> LangGraphCheckpoint | None:
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_BY_ID, (external_session_id, checkpoint_id))
        return self._langgraph_row(row) if row else None

    def langgraph_checkpoint_at(self, entry_seq: int) -> LangGraphCheckpoint | None:
        """The LangGraph checkpoint whose entry this is (None: the entry is not one)."""
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_AT_ENTRY, (entry_seq,))
        return self._langgraph_row(row) if row else None

    def langgraph_checkpoint_continued(self, external_session_id: int, checkpoint_id: str) -> bool:
        """Whether another checkpoint of the session has this one as its parent."""
        return self._one(self._sql.LANGGRAPH_CHECKPOINT_HAS_CHILD,
                         (external_session_id, checkpoint_id)) is not None

    def newest_langgraph_checkpoint(self, external_session_id: int) -> LangGraphCheckpoint | None:
        """The checkpoint of a session with the highest id (LangGraph's ids grow with time)."""
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_NEWEST, (external_session_id,))
        return self._langgraph_row(row) if row else None

    def langgraph_checkpoints_in_order(self, external_session_id: int) -> list[LangGraphCheckpoint]:
        """Every checkpoint of a session in the order they were written."""
        return [self._langgraph_row(row) for row in
                self._all(self._sql.LANGGRAPH_CHECKPOINTS_IN_ORDER, (external_session_id,))]

    def langgraph_checkpoint_page(self, sessions: list[int] | None, *,
                                  after: tuple[str, int] | None = None, size: int = 64
                                  ) -> list[LangGraphCheckpoint]:
        """Up to `size` checkpoints of these sessions (None: of every LangGraph session),
        newest id first, following the (checkpoint id, session) `after` when given. A long
        listing reads page by page, never holding the store between pages."""
        if sessions is not None and not sessions:
            return []
        args: list[Any] = list(sessions or [])
        if after is not None:
            args += [after[0], after[0], after[1]]
        args.append(int(size))
        sql = self._sql.langgraph_page(len(sessions) if sessions is not None else None,
                                       after is not None)
        return [self._langgraph_row(row) for row in self._all(sql, args)]

    def put_langgraph_writes(self, external_session_id: int, checkpoint_id: str,
                             rows: list[tuple[str, int, str, str, str | None, bytes | None]], *,
                             replace: bool) -> None:
        """Keep a task's pending writes with their checkpoint: rows of (task id, idx, task
        path, channel, type, value). A write already kept for (task id, idx) stays unless
        `replace` (LangGraph replaces its special writes: errors, interrupts)."""
        sql = self._sql.LANGGRAPH_WRITE_REPLACE if replace else self._sql.LANGGRAPH_WRITE_KEEP
        with self.transaction() as conn:
            self._backend.executemany(conn, sql, [(external_session_id, checkpoint_id, *row)
                                                  for row in rows])

    def langgraph_writes(self, external_session_id: int, checkpoint_id: str
                         ) -> list[tuple[str, str, str | None, bytes | None]]:
        """(task id, channel, type, value) of a checkpoint's pending writes, in the order
        LangGraph applies them (task path, task id, idx)."""
        return [(row[0], row[1], row[2], bytes(row[3]) if row[3] is not None else None)
                for row in self._all(self._sql.LANGGRAPH_WRITES_OF,
                                     (external_session_id, checkpoint_id))]

    def copy_langgraph_writes(self, from_session: int, to_session: int) -> None:
        """Every pending write of one session's checkpoints, kept also for the same
        checkpoint ids of another."""
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_WRITES_COPY, (to_session, from_session))
    # ------------------------------------------------------------ operation log
    def record_operation(self, kind: str, external_session_id: int | None, description: str,
                         changes: list[list[Any]], *, undoes: int | None = None) -> int:
        """Append one operation of the app (and what it changed) to the undo log."""
        with self.transaction() as conn:
            return self._backend.inserted_id(conn.execute(
                self._sql.OPLOG_INSERT,
                (kind, external_session_id, description, _dumps(changes), undoes,
                 to_text(self.clock()))))

    def last_undoable_operation(self) -> LoggedOperation | None:
        """The newest operation that is not an undo and has not been undone."""
        row = self._one(self._sql.OPLOG_LAST_UNDOABLE)
        return _operation_from_row(row) if row else None

    def operation_log(self, limit: int = 100) -> list[LoggedOperation]:
        """The newest operations first (undos included)."""
        return [_operation_from_row(row) for row in self._all(self._sql.OPLOG_RECENT, (limit,))]

    # ----------------------------------------------------------- import sources
    def import_source(self, key: str) -> tuple[int, str, int, float, dict[str, Any]] | None:
        """What was recorded of an imported file: (session id, format, size, mtime, state)."""
        row = self._one(self._sql.IMPORT_SOURCE_GET, (key,))
        if row is None:
            return None
        state = _loads(row[4], {})
        return row[0], row[1], row[2], row[3], state if isinstance(state, dict) else {}

    def record_import_source(self, *, key: str, path: str, external_session_id: int, fmt: str,
                             size: int, mtime: float, state: dict[str, Any]) -> None:
        """Record (or replace) how far a file was imported and into which session."""
        def number(name: str) -> int | None:
            value = state.get(name)
            return value if type(value) is int else None

        with self.transaction() as conn:
            conn.execute(self._sql.IMPORT_SOURCE_SET,
                         (path, key, external_session_id, fmt, size, mtime, json.dumps(state),
                          to_text(self.clock()), number("version"),
                          1 if state.get("complete") is True else 0, number("mtime_ns"),
                          number("inode"), number("device"), number("lines") or 0))

    def forget_import_sources(self, external_session_id: int) -> None:
        """Forget which files were imported into a session (its next import starts over)."""
        with self.transaction() as conn:
            conn.execute(self._sql.IMPORT_SOURCES_FORGET, (external_session_id,))

    # ------------------------------------------------------------ scratch stores
    @property
    def takes_scratch(self) -> bool:
        """Whether sessions imported into a scratch store (a worker's, in a big import:
        core.importers.parallel) can be moved into this store (SQLite: yes)."""
        return getattr(self._backend, "takes_scratch", False)

    def price_cards(self) -> list[tuple[str, str]]:
        """The rates kept for pricing (price_cards.py), for a scratch store to start with."""
        from .sqlite_merge import price_cards

        with self._lock:
            return price_cards(self._conn)

    @contextmanager
    def scratch_attached(self, path: str | os.PathLike) -> Iterator[None]:
        """The scratch store at `path` open beside this one, for `merge_scratch_session`
        (not inside a transaction: a file is attached between them)."""
        from . import sqlite_merge

        with self._lock:
            if self._depth:
                raise RuntimeError("a scratch store is attached outside any transaction")
            conn = self._conn
            sqlite_merge.attach(conn, os.fspath(path))
            try:
                yield
            finally:
                if self._depth:   # (a failure inside a transaction rolled it back already)
                    raise RuntimeError("scratch_attached ended inside a transaction")
                sqlite_merge.detach(conn)

    def scratch_problems(self) -> list[str]:
        """What in the attached scratch store cannot be moved into this store (tables with
        rows this store does not take from a scratch store); empty when all can."""
        from . import sqlite_merge

        with self._lock:
            return sqlite_merge.unmergeable(self._conn)

    def merge_scratch_sessions(self, uids: list[str], *,
                               pace: Callable[[], Any] = lambda: None) -> bool:
        """Move these sessions of the attached scratch store (the first ones it made, in
        order) into this store, with new ids, inside the caller's write transaction, which
        `pace()` may commit and go on with (`commit_and_continue`) between stretches of
        their entries (sqlite_merge.merge_sessions says what a commit there leaves). False,
        changing nothing, when this store has a session with one of these uids already."""
        from . import sqlite_merge

        with self._lock:
            if not self.in_write_transaction:
                raise RuntimeError("merge_scratch_sessions needs an open store.transaction()")
            conn = self._conn
            if any(conn.execute(self._sql.SESSION_ID_BY_UID, (uid,)).fetchone() is not None
                   for uid in uids):
                return False
            ids = sorted(row[0] for row in conn.execute(
                f"SELECT id FROM {sqlite_merge.SCRATCH}.external_sessions WHERE uid IN"
                f" ({', '.join('?' * len(uids))})", uids))
            if len(ids) != len(uids) or (ids and ids[-1] - ids[0] + 1 != len(ids)) or \
                    (ids and conn.execute(f"SELECT COUNT(*) FROM {sqlite_merge.SCRATCH}."
                                          "external_sessions WHERE id < ?", (ids[0],)
                                          ).fetchone()[0]):
                raise ArborError("the scratch store's sessions are not the first ones it made")
            if ids:
                sqlite_merge.merge_sessions(conn, ids[0], ids[-1], pace=pace)
            return True

    def merge_scratch_prices(self) -> None:
        """Keep the rates the attached scratch store's importer had to ask the price table
        for (each card's days, this store's and the scratch store's together)."""
        from . import sqlite_merge

        with self.transaction() as conn:
            sqlite_merge.merge_price_cards(conn)

    # ------------------------------------------------------------------- search
    def search(self, query: str, *, limit: int = 200, external_session_id: int | None = None
               ) -> list[SearchHit]:
        """Message text through the search index, best match first. Any text is a valid
        query: words are matched by their stems and as prefixes, "quoted phrases" as
        written (core/store/search.py)."""
        from . import search

        return search.search_messages(self, query, limit=limit,
                                      external_session_id=external_session_id)

    def search_all(self, query: str, *, include_archived: bool = False, names: int = 50,
                   messages: int = 200) -> SearchResults:
        """Sessions by name, labelled entries and message text for one query, with how much
        of the history the index covers: what `/` shows (core/store/search.py)."""
        from . import search

        return search.search_all(self, query, include_archived=include_archived, names=names,
                                 messages=messages)

    def search_coverage(self) -> SearchCoverage:
        """How much of the history the search index covers (all of it but after an upgrade
        of a big store, until `index_search_backlog` has caught up)."""
        from . import search

        return search.coverage(self)

    def index_search_backlog(self, budget_ms: float = 100.0) -> BacklogStep:
        """Index the newest part of what the search index does not cover yet, in one write
        transaction of about `budget_ms`; call again until the step says it is done."""
        from . import search

        return search.index_backlog(self, budget_ms)

    def search_labels(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        """Labelled entries whose current label has every word of `query` (anywhere in it,
        any case), newest label first, as search hits whose snippet starts with the label."""
        words = [w.lower() for w in re.findall(r"\w+", query, flags=re.UNICODE)]
        if not words:
            return []
        current: dict[int, str] = {}
        for target, label in self._all(self._sql.LABELS_OF_ALL_ENTRIES):
            if label is None:
                current.pop(target, None)
            else:
                current.pop(target, None)
                current[target] = label       # newest last
        hits: list[SearchHit] = []
        for seq, label in reversed(current.items()):
            if not all(word in label.lower() for word in words):
                continue
            entry = self.get_entry(seq)
            if entry is None:
                continue
            text = search_text(entry.type, entry.data)
            hits.append(SearchHit(seq, entry.id, entry.external_session_id,
                                  self.session_name(entry.external_session_id) or "", entry.type,
                                  entry.role, entry.timestamp,
                                  f"⚑ {label} · {snippet(text, words) if text else ''}"))
            if len(hits) >= limit:
                break
        return hits

    def search_session_names(self, text: str, *, include_archived: bool = False,
                             limit: int | None = None) -> list[SessionSummary]:
        """Sessions whose name matches `text` as typed (prefixes, pieces of words, stems,
        typos), best first; or whose uid has it."""
        from . import search

        return search.search_names(self, text, include_archived=include_archived, limit=limit)

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
        """A model request an agent reports itself (the seed API's usage log): priced and
        counted in the session's totals like a response read from an entry. (An agent that
        appends its replies with `usage` in them need not call this: those are counted.)"""
        from ..usage import UsageRecord
        from .usage_rows import UsageRows

        record = UsageRecord(model=model or "", provider=provider or "", protocol=protocol or "",
                             input_tokens=max(0, int(input_tokens)), output_tokens=max(0, int(output_tokens)),
                             duration_ms=int(duration_ms))
        stamp = to_text(timestamp if timestamp is not None else self.clock())
        with self.transaction() as conn:
            rows = UsageRows.reading(external_session_id)
            rows.unkeyed.append((record, (None, None, None), stamp))
            rows.write(conn, self._sql, self._backend)

    # ------------------------------------------------------------------ usage
    def usage_report(self, by: str = "day", *, since: Any = None, until: Any = None,
                     source: str | None = None, timezone: str | None = None,
                     copies_under_original: bool = False) -> Any:
        """`arbor usage`: a `core.usage.Report` (rows per group, and totals); by session,
        `copies_under_original` folds each copy of a session into its original's row."""
        from . import usage_queries

        return usage_queries.report(self, by, since=since, until=until, source=source,
                                    zone_name=timezone, copies_under_original=copies_under_original)

    def session_usage(self) -> dict[int, Any]:
        """Every session's usage figure (`core.usage.Figure`), its sub-agents' included, from
        the totals kept as entries are written: as cheap as listing the sessions."""
        from . import usage_queries

        return usage_queries.session_figures(self)

    def response_usage(self, seqs: list[int]) -> dict[int, Any]:
        """The usage of the responses these entries hold, by entry seq."""
        from . import usage_queries

        return usage_queries.responses(self, seqs)

    def path_usage(self, head_seq: int | None, *, after_seq: int | None = None,
                   before_seq: int | None = None) -> Any:
        """The usage on the path root -> head after the entry `after_seq` (a branch's own
        part, from its fork point) and before `before_seq`: a `core.usage.Figure`."""
        from . import usage_queries

        after = before = None
        if after_seq is not None:
            entry = self.get_entry(after_seq)
            after = entry.depth if entry is not None else None
        if before_seq is not None:
            entry = self.get_entry(before_seq)
            before = entry.depth if entry is not None else None
        return usage_queries.path_figure(self, head_seq,
                                         after_depth=-1 if after is None else after,
                                         before_depth=before)

    def range_usage(self, head_seq: int | None, start: int, stop: int) -> Any:
        """The usage of the responses at depths [start, stop) of the path root -> head (a
        compaction's summarised part): a `core.usage.Figure`."""
        from . import usage_queries

        return usage_queries.path_figure(self, head_seq, after_depth=start - 1, before_depth=stop)

    def last_response_model(self, head_seq: int | None) -> tuple[str, str, str] | None:
        """(model, provider, timestamp) of the newest response on the path root -> head that
        names its model; None when there is none."""
        from . import usage_queries

        return usage_queries.last_model(self, head_seq)

    def usage_by_day_and_model(self, since: Any, until: Any, *, timezone: str | None = None
                               ) -> dict[str, dict[str, Any]]:
        """{local day: {model: Figure}} (the usage screen's chart)."""
        from . import usage_queries

        return usage_queries.daily_by_model(self, since, until, timezone)

    def usage_prices_stale(self) -> bool:
        """Whether some cost was computed with other prices than today's."""
        from .usage_rows import prices_stale

        with self.reading() as conn:
            return prices_stale(conn, self._sql)

    def reprice_usage(self) -> int:
        """Price again what was priced with other prices (an upgraded table, a changed
        ARBOR_PRICES); returns how many responses changed."""
        from .usage_rows import reprice

        with self.transaction() as conn:
            return reprice(conn, self._sql)

    def usage(self, external_session_id: int) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._conn.execute(self._sql.USAGE_OF_SESSION, (external_session_id,))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]

    # ------------------------------------------------ run and capability events
    def add_run_event(self, event: SessionRunEvent) -> str:
        """Record a run event (an id is given when it has none) and return its id."""
        event.id = event.id or self.id_factory() + self.id_factory()
        stamp = to_text(event.timestamp or self.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.RUN_EVENT_INSERT,
                         (event.id, event.session_id, event.run_id, event.event_type, event.source,
                          event.status, event.model, event.mode, stamp,
                          None if event.data is None else _dumps(event.data)))
        return event.id

    def run_events(self, session_id: str, after_seq: int = 0, limit: int = 0
                   ) -> list[SequencedSessionRunEvent]:
        """A session's run events after the cursor `after_seq`, oldest first."""
        from ..session_types import SequencedSessionRunEvent, SessionRunEvent

        if limit:
            rows = self._all(self._sql.RUN_EVENTS_AFTER_LIMIT, (session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.RUN_EVENTS_AFTER, (session_id, after_seq))
        return [SequencedSessionRunEvent(r[0], SessionRunEvent(
            r[2], r[4], r[1], r[3], r[5], r[6], r[7], r[8], parse(r[9]),
            json.loads(r[10]) if r[10] else None)) for r in rows]

    def add_capability_event(self, event: SessionCapabilityEvent) -> str:
        """Record a capability event (an id is given when it has none) and return its id."""
        event.id = event.id or self.id_factory() + self.id_factory()
        stamp = to_text(event.timestamp or self.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.CAPABILITY_EVENT_INSERT,
                         (event.id, event.session_id, event.run_id, event.event_type, event.source,
                          event.actor, event.capability, event.old_value, event.new_value, stamp,
                          None if event.data is None else _dumps(event.data)))
        return event.id

    def capability_events(self, session_id: str, after_seq: int = 0, limit: int = 0
                          ) -> list[SequencedSessionCapabilityEvent]:
        """A session's capability events after the cursor `after_seq`, oldest first."""
        from ..session_types import SequencedSessionCapabilityEvent, SessionCapabilityEvent

        if limit:
            rows = self._all(self._sql.CAPABILITY_EVENTS_AFTER_LIMIT,
                             (session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.CAPABILITY_EVENTS_AFTER, (session_id, after_seq))
        return [SequencedSessionCapabilityEvent(r[0], SessionCapabilityEvent(
            r[2], r[4], r[1], r[3], r[5], r[6], r[7], r[8], r[9], parse(r[10]),
            json.loads(r[11]) if r[11] else None)) for r in rows]

    def save_capabilities(self, caps: SessionCapabilities) -> None:
        """A session's capabilities (the newest save wins)."""
        stamp = to_text(caps.updated_at or self.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.CAPABILITIES_SET,
                         (caps.session_id, caps.mode, int(caps.delegate_mode),
                          int(caps.multi_agent), int(caps.workflows), int(caps.web_search),
                          int(caps.browser), int(caps.a2a_master), stamp))

    def load_capabilities(self, session_id: str) -> SessionCapabilities | None:
        from ..session_types import SessionCapabilities

        row = self._one(self._sql.CAPABILITIES_GET, (session_id,))
        if row is None:
            return None
        return SessionCapabilities(row[0], row[1], bool(row[2]), bool(row[3]), bool(row[4]),
                                   bool(row[5]), bool(row[6]), bool(row[7]), parse(row[8]))


def snippet(text: str | None, words: list[str], width: int = 160) -> str:
    """A one-line excerpt around the first matched word."""
    if not text:
        return ""
    from ..search_query import stem_hint

    flat = " ".join(text.split())
    lowered = flat.casefold()
    position = min((p for p in (lowered.find(w.casefold()) for w in words) if p >= 0), default=-1)
    if position < 0:   # matched through its stem ("migration" on "Migrate")
        position = min((p for p in (lowered.find(h) for w in words for h in stem_hint(w)[1:])
                        if p >= 0), default=0)
    start = max(0, position - width // 3)
    excerpt = flat[start:start + width]
    return ("…" if start else "") + excerpt + ("…" if start + width < len(flat) else "")


def _acquire_read_only(backend: Any, role: str,
                       on_upgrade: Callable[[str], None] | None) -> registry.Link:
    """A link that cannot write (`Store(read_only=True)`); for an older arbor's store, the
    ordinary link that updates it, since this arbor cannot read it as it is."""
    from ..errors import StoreError, StoreOutdated

    try:
        return registry.acquire(backend, role, create=False, read_only=True)
    except StoreOutdated as outdated:
        try:
            return registry.acquire(backend, role, create=False, on_upgrade=on_upgrade)
        except StoreError as error:
            raise type(error)(f"{outdated}, and has to be updated before this arbor can read "
                              f"it, but that failed: {error}") from None


def open_store(path: str | os.PathLike | None = None, **options: Any) -> Store:
    """Open (creating if needed) the store at `path`, or the default store when None."""
    return Store(path, **options)
