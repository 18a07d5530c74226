"""The store API: what all of core and the app use to read and write sessions.

One `Store` is one open store, whatever its backend; callers never ask which backend they
have. The SQL is the backend's (`sqlite.py`, by statement name); here is what the store
means: transactions, sessions, branches, entries and paths, labels, checkpoints, search.
"""

from __future__ import annotations

import os
import time
import weakref
from contextlib import contextmanager

from core.model.clock import utc_now
from core.model.errors import ArborError, NotFound, StoreUnavailable
from core.model.ids import generate_id
from . import registry
from .backends import backend_for

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from .writer import EntryWriter    # browser's first screen, need the entry writer;
    from typing import Any, Callable, Iterator   # nor typing, ~2.5 ms)

    from core.model.clock import Clock

COMMIT_PAUSE = 0.002   # seconds a long write leaves the store free between its transactions


class _Room:
    """A room of a store (see core/store/rooms), made on first use and kept."""

    def __init__(self, module: str, cls: str) -> None:
        self.module, self.cls = module, cls

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: Any, owner: Any = None) -> Any:
        if store is None:
            return self
        from importlib import import_module

        room = getattr(import_module(f"core.store.rooms.{self.module}"), self.cls)(store)
        store.__dict__[self.name] = room
        return room


class Store:
    """A handle on an open arbor store. Use `open_store()`; close it when done.

    Every handle of a process on the same store shares one connection and its
    transaction (see `registry`); a handle has its own clock and id factory, and closing
    it leaves the connection to the process's other handles."""

    # the rooms: one object per concern, made on first use (see core/store/rooms)
    sessions = _Room("sessions", "SessionsRoom")
    branches = _Room("branches", "BranchesRoom")
    entries = _Room("entries", "EntriesRoom")
    paths = _Room("paths", "PathsRoom")
    annotations = _Room("annotations", "AnnotationsRoom")
    langgraph = _Room("langgraph", "LangGraphRoom")
    oplog = _Room("oplog", "OperationLog")
    imports = _Room("imports", "ImportsRoom")
    search = _Room("search", "SearchRoom")
    usage = _Room("usage", "UsageRoom")
    events = _Room("events", "EventsRoom")

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
        # the store's name: a file's Path, or a PostgreSQL URL (core.store.location.PostgresURL)
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

    def searcher(self) -> "Store":
        """A new handle on a connection for searches alone (one per process, shared): a
        search made stale by the next key is stopped there (`interrupt`) without touching
        any other read. The caller closes it."""
        with self._lock:
            if self._closed:
                raise StoreUnavailable("the store is closed")
        return Store(self.path, clock=self.clock, id_factory=self.id_factory, create=False,
                     read_only=True, _role=registry.SEARCHER)

    def interrupt(self) -> None:
        """Stop the statement this handle's connection runs now, from any thread, without
        waiting for the store's lock (the thread running it gets one of `errors`)."""
        db = self._link.db
        if db is not None:
            self._backend.interrupt(db)

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

    def keep_log_small(self, guard: Any = None) -> None:
        """This process will close the store with `close(keep_log=True)` (`arbor import`):
        SQLite keeps the write-ahead log small meanwhile (the backend's `keep_log_small`).
        `guard`: a read-only connection of this process to the same store that stays open
        until this store is closed (the backend's `peek_import_stamps(held=...)`): closing
        then needs no connection of its own to leave the log as it is."""
        keep = getattr(self._backend, "keep_log_small", None)
        if keep is not None:
            with self._lock:
                if guard is None:
                    keep(self._db)
                else:
                    keep(self._db, guard)

    def close(self, *, keep_log: bool = False) -> None:
        """Done with this handle; the connection closes with the process's last handle.
        `keep_log`: without writing the store's log back into its file, where the backend
        can leave it (SQLite, after `keep_log_small`: a short command that wrote a little)."""
        with self._lock:
            if self._closed:
                return
            for own in (self._reader, self._write_handle):
                if own is not None:
                    own.close()
            self._reader = self._write_handle = None
            self._closed = True
        registry.release(self._link, keep_log=keep_log)

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
        self._committed()

    def on_commit(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """`watcher()` after each commit of a write from now on: the end of an outer
        `transaction()` (not one rolled back, nor a nested one) and each
        `commit_and_continue()` within a long write; by any handle of this process on
        this store (they share the connection), on the committing thread, once the store's
        lock is let go (within a long write, the next transaction has begun). Returns
        the function that ends it. A watcher's exception is the committer's: keep it
        short and safe."""
        watchers = self._link.commit_watchers
        with self._lock:
            watchers.append(watcher)

        def stop() -> None:
            with self._lock:
                if watcher in watchers:
                    watchers.remove(watcher)
        return stop

    def _committed(self) -> None:
        for watcher in tuple(self._link.commit_watchers):
            watcher()

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
        self._committed()
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

    # ------------------------------------------- for the rooms: what a write made, and whose

    def _made(self, kind: str, key: int) -> Any:
        """What this write transaction made of a session or branch (see registry.Link.made),
        or None."""
        with self._lock:
            return self._link.made.get((kind, key)) if self.in_write_transaction else None

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


def _acquire_read_only(backend: Any, role: str,
                       on_upgrade: Callable[[str], None] | None) -> registry.Link:
    """A link that cannot write (`Store(read_only=True)`); for an older arbor's store, the
    ordinary link that updates it, since this arbor cannot read it as it is."""
    from core.model.errors import StoreError, StoreOutdated

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
