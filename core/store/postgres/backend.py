"""The PostgreSQL backend: every SQL statement the store runs on PostgreSQL, and how it
connects to a server.

`Statements` has the names of `sqlite.Statements`, each the same statement in PostgreSQL's
terms (`%s` for `?`, `GREATEST` for the two-argument `MAX`, `ON CONFLICT DO NOTHING` for
`INSERT OR IGNORE`, `RETURNING id` for `lastrowid`, `->>` for `json_extract`, a `tsvector`
for FTS5, `FOR UPDATE` where a branch head is read to be moved), so the two read side by
side. `PostgresBackend` holds what is not one statement: connecting (psycopg 3 and its
pool, imported only when a store is a URL), transactions under the store's write lock,
COPY for imports, LISTEN/NOTIFY for "something changed".

Writers take the store's write lock (a transaction-level advisory lock) when they begin,
as SQLite's BEGIN IMMEDIATE does: an entry writer gives seqs to the rows it buffers
before they are written, and seq order is what "newest" means everywhere (labels, search,
a branch's newest child). Reads never wait for it. Appends to one branch also lock the
branch's row (`INTERNAL_TARGET_FOR_UPDATE`), so each reads the head the one before left.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Sequence

from core.model.errors import StoreDamaged, StoreNotFound, StoreUnavailable, StoreUnreachable
from core.store.location import PostgresURL
from . import reconnect as reconnecting
from . import migrations
from . import search_index as postgres_search
from .bulk import CopyWriter, Lexemes, search_text
from .reconnect import CONNECT_TIMEOUT, broke
from core.store.statements import compose

LISTEN_RETRY_MAX = 5      # seconds between tries to listen again after the server went away
POOL_TIMEOUT = 30         # seconds to wait for a connection of the pool (all of it in use)
LOCK_TIMEOUT_MS = 60_000  # a writer waits this long for the store's write lock
CHANNEL = "arbor_changes"  # NOTIFY channel; the payload is the store's schema
# The store's write lock: one advisory lock per schema (two stores in one database do not
# wait on each other). 0x4152_424f is "ARBO".
WRITE_LOCK = "SELECT pg_advisory_xact_lock(1095910991, hashtext(current_schema()))"


Statements = compose("Postgres")


_IDLE = 0   # psycopg.pq.TransactionStatus.IDLE

# Inside a write transaction, an INSERT or UPDATE that returns no rows waits in the
# connection and goes with the next statement that has rows to give (or with the COMMIT),
# several statements in one query string with their values bound here: one round trip.
# So a file's import sends its counters, metadata, current branch and import record with
# the reads that follow them, and a transaction's BEGIN goes with its first statement.
# Statements run in the order they were made (the writer thread sends what waits before
# its COPY). A statement's rowcount, when asked for, sends it and what waits before it.
# An error of one that waited is raised by the statement it went with, and fails the
# transaction as it would have at once: on PostgreSQL an error ends what a transaction can
# do. Statements that touch search rows are never held (`_waits_for_search`).
_LATER_ROWS_MAX = 16   # an executemany of at most this many rows waits too, a row a statement
_held: dict[str, bool] = {}   # statement -> whether it may wait
# (entry rows go at once: the entry writer explains their errors, an id taken for one)
_ENTRY_WRITES = ("INSERT INTO entries(", "INSERT INTO entries ", "UPDATE entries ")


def _may_wait(sql: str) -> bool:
    found = _held.get(sql)
    if found is None:
        found = (sql.startswith(("INSERT", "UPDATE")) and "RETURNING" not in sql
                 and "%b" not in sql and not _waits_for_search(sql)
                 and not sql.startswith(_ENTRY_WRITES))
        if len(_held) < 4096:
            _held[sql] = found
    return found


def _waits_for_search(sql: str) -> bool:
    """Whether a statement must wait for the search rows an import is writing apart: any
    that reads or writes them, deletes, or is not a plain SELECT, INSERT or UPDATE (a
    ROLLBACK never waits: what is pending is discarded)."""
    if sql.startswith(("SELECT", "INSERT", "UPDATE")):
        return "entries_search" in sql or "DELETE" in sql
    return not sql.startswith("ROLLBACK")


class _Waiting:
    """The cursor of a statement that waits (see `_may_wait`): its rowcount sends it."""

    __slots__ = ("_conn", "_rowcount", "_sent")

    def __init__(self, conn: "Connection"):
        self._conn = conn
        self._rowcount = -1
        self._sent = False

    @property
    def rowcount(self) -> int:
        if not self._sent:
            self._conn.send_later()
        if not self._sent:
            raise RuntimeError("this statement did not run: one sent before it failed")
        return self._rowcount

    def fetchone(self) -> Any:
        import psycopg   # (what psycopg says of a cursor whose statement gave no rows)

        raise psycopg.ProgrammingError("the last operation didn't produce records (an INSERT"
                                       " or UPDATE without RETURNING)")

    fetchall = fetchone


class Connection:
    """A pooled psycopg connection with the part of sqlite3's connection interface the
    store uses: `execute(sql, args)` giving a cursor (`fetchone`, `fetchall`, iteration,
    `rowcount`), `executemany`, `close` (back to the pool)."""

    def __init__(self, pool: Any, conn: Any, conninfo: str):
        self._pool = pool
        self.raw = conn
        self._conninfo = conninfo
        self.reach = reconnecting.reach_of(conninfo)
        # the error every statement gets once the connection broke inside a transaction
        # (its work is gone), until the transaction is rolled back
        self._lost: StoreUnreachable | None = None
        # an import's CopyWriter while it writes search rows apart (postgres_bulk): waited
        # for before a commit and before statements that read search rows or delete
        self.deferred: CopyWriter | None = None
        # statements (their values bound) that go with the next one, each with how many
        # statements it is and the cursor that gets its rowcount: the transaction's BEGIN
        # (`_begin` while it has not gone), INSERTs and UPDATEs (see `_may_wait`)
        self._later: list[tuple[str, int, _Waiting | None]] = []
        self._later_lock = threading.Lock()
        self._begin: str | None = None
        self._writing = False
        self._committing = False   # the COMMIT is among the statements being sent

    def _live(self) -> Any:
        conn = self.raw
        if not broke(conn):
            return conn
        if self._lost is not None:
            raise self._lost
        # the server went away (or the connection was never had): a fresh one for what
        # follows, if this thread may wait for it (see reach)
        if conn is not None:
            self.raw = None
            self._pool.putconn(conn)
        self.raw = reconnecting.reconnect(self._pool, self.reach, self._conninfo)
        return self.raw

    def _broke(self, error: BaseException, *, in_transaction: bool) -> StoreUnreachable:
        """The error to raise for a statement whose connection broke; inside a transaction
        the transaction is lost, and says so to every statement until its rollback."""
        lost = self.reach.lost(reconnecting.reason(error))
        if in_transaction:
            # (cut while its COMMIT was on the way, the server may have committed it)
            lost.saved_unknown = self._committing
            self._lost = lost
        return lost

    def ping(self) -> None:
        """Reconnect if need be, and ask the server for nothing (StoreUnreachable when it
        does not answer)."""
        self._run([], "SELECT 1", None)

    # ------------------------------------------------ statements sent later
    def begin(self, statements: str, *, write: bool) -> None:
        """BEGIN (and what goes with it, no values): sent with the transaction's first
        statement, and not at all by a transaction that sends none."""
        with self._later_lock:
            self._later.append((statements, statements.count(";") + 1, None))
            self._begin = statements
        self._writing = write

    def _bound(self, sql: str, args: Sequence[Any] | None) -> str:
        import psycopg

        return psycopg.ClientCursor(self._live()).mogrify(sql, args) if args else sql

    def _hold(self, sql: str, args: Sequence[Any] | None) -> _Waiting:
        waiting = _Waiting(self)
        bound = self._bound(sql, args)
        with self._later_lock:
            self._later.append((bound, 1, waiting))
        return waiting

    def _take_later(self) -> list[tuple[str, int, _Waiting | None]]:
        with self._later_lock:
            later, self._later = self._later, []
            self._begin = None
        return later

    def send_later(self) -> None:
        """Send what waits (before the writer thread's COPY, or for a rowcount)."""
        if self._later:
            self._run(self._take_later(), None, None)

    def _run(self, later: list, sql: str | None, args: Any) -> Any:
        """Run what waits and then `sql` (if any) in one query, or `sql` alone; once more on
        a fresh connection when this one broke outside any transaction (a restart or a
        crash of the server ends every connection): then nothing ran. Inside a
        transaction the error stands (its work is gone). Either way a connection that
        broke for good is StoreUnreachable, with the sentence that says where."""
        conn = self._live()
        idle = conn.info.transaction_status == _IDLE
        try:
            return self._send(conn, later, sql, args)
        except Exception as error:
            if not broke(conn):
                raise
            if not idle or self._committing:
                raise self._broke(error, in_transaction=True) from None
            self._broke(error, in_transaction=False)   # (raised below if it stays so)
        conn = self._live()
        try:
            return self._send(conn, later, sql, args)
        except Exception as error:
            if not broke(conn):
                raise
            raise self._broke(error, in_transaction=bool(later)) from None

    def _send(self, conn: Any, later: list, sql: str | None, args: Any) -> Any:
        if not later:
            return conn.execute(sql, args or None)
        import psycopg

        parts = [text for text, _n, _w in later]
        if sql is not None:
            parts.append(self._bound(sql, args))
        cursor = psycopg.ClientCursor(conn)
        cursor.execute("; ".join(parts), prepare=False)
        counts = []   # the rowcount of each statement's result, in order
        while True:
            counts.append(cursor.rowcount)
            if not cursor.nextset():
                break
        at = 0
        for _text, n, waiting in later:
            at += n
            if waiting is not None:
                waiting._rowcount, waiting._sent = counts[at - 1], True
        return cursor   # (at the last statement's result)

    def commit(self, statement: str) -> None:
        """COMMIT (`statement`, no values) with what waits; nothing at all when the
        transaction sent nothing. Failed, the transaction is rolled back."""
        with self._later_lock:
            unsent = self._begin is not None
        later = self._take_later()
        self._writing = False
        if unsent and len(later) == 1:
            return
        later.append((statement, statement.count(";") + 1, None))
        conn = self._live()
        self._committing = True
        try:
            self._run(later, None, None)
        except BaseException:
            conn = self.raw
            if not broke(conn) and conn.info.transaction_status != _IDLE:
                conn.execute("ROLLBACK")
            self._lost = None
            raise
        finally:
            self._committing = False

    def rollback(self) -> None:
        """ROLLBACK, and what waits is dropped; nothing is sent when the BEGIN was not."""
        with self._later_lock:
            unsent = self._begin is not None
        self._take_later()
        self._writing = False
        lost, self._lost = self._lost, None
        if unsent or lost is not None or broke(self.raw):
            return   # (nothing was sent, or the server ended the transaction with the connection)
        self.raw.execute("ROLLBACK")

    def settle(self) -> None:
        """Wait for the search rows an import writes apart (raising its error)."""
        deferred = self.deferred
        if deferred is not None and deferred.pending:
            deferred.settle()

    def execute(self, sql: str, args: Sequence[Any] | None = None) -> Any:
        if self._writing and _may_wait(sql):
            return self._hold(sql, args)
        if self.deferred is not None and _waits_for_search(sql):
            self.settle()
        later = self._later
        if later and ("%b" in sql or any(type(arg) is Lexemes for arg in args or ())):
            self.send_later()   # (values only the server binds: this one goes apart)
            later = None
        return self._run(self._take_later() if later else [], sql, args)

    def executemany(self, sql: str, rows: Any) -> None:
        if self._writing and _may_wait(sql):
            rows = list(rows)
            if len(rows) <= _LATER_ROWS_MAX:
                for row in rows:
                    self._hold(sql, row)
                return
        if self.deferred is not None and _waits_for_search(sql):
            self.settle()
        self.send_later()
        conn = self._live()
        try:
            with conn.cursor() as cursor:
                cursor.executemany(sql, rows)
        except Exception as error:
            if broke(conn):
                raise self._broke(error, in_transaction=True) from None
            raise

    @property
    def backend_pid(self) -> int:
        return self._live().info.backend_pid

    def spare(self, timeout: float) -> Any:
        """A second psycopg connection of the pool for work outside this one's transaction
        (None if none comes within `timeout` seconds); `give_back` returns it."""
        import psycopg
        from psycopg_pool import PoolTimeout

        if self.reach.state != "up":
            return None
        try:
            return self._pool.getconn(timeout=timeout)
        except (PoolTimeout, psycopg.Error):
            return None

    def give_back(self, conn: Any) -> None:
        self._pool.putconn(conn)

    def close(self) -> None:
        conn, self.raw = self.raw, None
        self.deferred = None
        self._later, self._begin, self._writing, self._lost = [], None, False, None
        _release_pool(self._pool, conn)


# ------------------------------------------------------------------- the pools
_pools: dict[str, list] = {}   # conninfo -> [pool, users]
_pools_lock = threading.Lock()


def _configure(conn: Any) -> None:
    """Every connection: integer flags for booleans, numbers for sums (not Decimal)."""
    _adapt(conn)


def _adapt(conn: Any) -> None:
    from psycopg.adapt import Dumper, Loader
    from psycopg.pq import Format

    class IntFlag(Dumper):   # a Python bool goes into the INTEGER 0/1 columns SQLite has
        oid = conn.adapters.types["int4"].oid
        format = Format.TEXT

        def dump(self, obj: bool) -> bytes:
            return b"1" if obj else b"0"

    class Number(Loader):    # SUM of BIGINT is NUMERIC: an int when whole, as on SQLite
        format = Format.TEXT

        def load(self, data: Any) -> Any:
            text = bytes(data)
            if b"." in text or b"e" in text or b"N" in text:
                return float(text)
            return int(text)

    class Words(Dumper):     # postgres_bulk.Lexemes: a tsvector as the server sent it
        oid = conn.adapters.types["tsvector"].oid
        format = Format.BINARY

        def dump(self, obj: Lexemes) -> bytes:
            return obj

    conn.adapters.register_dumper(bool, IntFlag)
    conn.adapters.register_loader("numeric", Number)
    conn.adapters.register_dumper(Lexemes, Words)


def _acquire_pool(conninfo: str) -> Any:
    from psycopg_pool import ConnectionPool

    with _pools_lock:
        held = _pools.get(conninfo)
        if held is None:
            pool = ConnectionPool(conninfo, min_size=0, max_size=8, open=True,
                                  timeout=POOL_TIMEOUT, configure=_configure,
                                  check=ConnectionPool.check_connection, name="arbor",
                                  **reconnecting.pool_options(conninfo,
                                                              reconnecting.reach_of(conninfo)))
            held = _pools[conninfo] = [pool, 0]
        held[1] += 1
        return held[0]


def _release_pool(pool: Any, conn: Any) -> None:
    """A connection back to its pool (None: one that never came); the pool closes with its
    last connection out."""
    if conn is not None:
        pool.putconn(conn)
    with _pools_lock:
        for conninfo, held in list(_pools.items()):
            if held[0] is pool:
                held[1] -= 1
                if held[1] <= 0:
                    del _pools[conninfo]
                    pool.close(timeout=1)
                break


def _forget_in_child() -> None:
    # A forked child must not use its parent's pools (their threads are not in the child).
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()
    _listeners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


# ----------------------------------------------------------------- LISTEN/NOTIFY
class Listener:
    """One connection per store and process that LISTENs for the store's commits and
    counts them per committing server process; a store asks how many came from others.
    When the server goes away (restarted, unreachable), it listens again once it is back."""

    def __init__(self, conninfo: str, schema: str):
        self.conninfo = conninfo
        self.schema = schema
        self.reach = reconnecting.reach_of(conninfo)
        self.total = 0
        self.by_pid: dict[int, int] = {}
        self.connected = False   # listening now (False while it listens again after a loss)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="arbor-listen", daemon=True)
        self._thread.start()
        self._ready.wait(CONNECT_TIMEOUT + 1)

    def count_from_others(self, own_pid: int) -> int:
        return self.total - self.by_pid.get(own_pid, 0)

    def _run(self) -> None:
        import psycopg

        try:
            conn = self._listen()
        except (psycopg.Error, StoreUnreachable) as error:
            self._error = error
            self._ready.set()
            return
        self.connected = True
        self._ready.set()
        while True:
            try:
                for note in conn.notifies():
                    if note.payload == self.schema:
                        self.by_pid[note.pid] = self.by_pid.get(note.pid, 0) + 1
                        self.total += 1
            except psycopg.Error as error:
                # the server went away (a restart, the network): listen again below
                self.connected = False
                self.reach.lost(reconnecting.reason(error))
            finally:
                conn.close()
            conn = self._listen_again()
            self.connected = True
            # commits while nobody listened went untold: count one change from elsewhere,
            # so that a store asking `data_version` reads again
            self.by_pid[-1] = self.by_pid.get(-1, 0) + 1
            self.total += 1

    def _listen(self) -> Any:
        conn = reconnecting.connect(self.conninfo, self.reach)
        try:
            conn.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _listen_again(self) -> Any:
        """A new listening connection once the server takes one: tried after half a
        second, then ever less often, up to every LISTEN_RETRY_MAX seconds."""
        import psycopg

        delay = 0.5
        while True:
            time.sleep(delay)
            try:
                return self._listen()
            except (psycopg.Error, StoreUnreachable):
                delay = min(delay * 2, LISTEN_RETRY_MAX)


_listeners: dict[tuple[str, str], Listener] = {}
_listeners_lock = threading.Lock()


def _listener(conninfo: str, schema: str) -> Listener:
    """The process's listener of a store (made, and its first connection waited for, by a
    thread that may wait for the network)."""
    with _listeners_lock:
        found = _listeners.get((conninfo, schema))
        if found is None or found._error is not None:
            refusal = reconnecting.reach_of(conninfo).refusal()
            if refusal is not None:
                raise refusal
        if found is None or found._error is not None:
            found = _listeners[(conninfo, schema)] = Listener(conninfo, schema)
        return found


# ---------------------------------------------------------------------- backend
class PostgresBackend:
    """One arbor store on a PostgreSQL server (a database, or a schema of one named by the
    URL's search_path): connecting, its transactions, and what is not a plain statement."""

    name = "postgresql"
    sql = Statements
    search_index = postgres_search   # the full-text index's statements (core/store/search.py)

    def __init__(self, location: PostgresURL):
        import psycopg

        self.url = location
        self.path = location          # what `Store.path` gives back: the store's name
        self.location = location.shown()
        self.errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        self._schema: str | None = None
        self._begin_write = _BEGIN_WRITE   # with lz4 once the server is known to have it

    # ---------------------------------------------------------------- opening
    def identity(self) -> tuple:
        """The URL as given (two spellings of one server are two connections, which on
        PostgreSQL is harmless)."""
        return ("postgresql", self.url.url)

    def connect(self, *, create: bool, on_upgrade: Callable[[str], None] | None = None
                ) -> Connection:
        """A pooled connection to the store, checked to be an arbor store and migrated.
        A server that cannot be reached is one sentence: where, and what failed."""
        import psycopg

        conninfo = self.url.url
        try:
            first = reconnecting.connect(conninfo, reconnecting.reach_of(conninfo))
        except psycopg.Error as error:
            raise StoreUnavailable(self._cannot_connect(error)) from None
        except (ValueError, UnicodeError) as error:   # a URL libpq cannot read
            raise StoreUnavailable(f"cannot read the PostgreSQL URL {self.location}: "
                                   f"{_first_line(error)}") from None
        try:
            _adapt(first)
            self._check_and_migrate(first, create=create, on_upgrade=on_upgrade)
        except psycopg.Error as error:
            raise StoreUnavailable(f"cannot use the PostgreSQL store {self.location}: "
                                   f"{_first_line(error)}") from None
        finally:
            first.close()
        pool = _acquire_pool(conninfo)
        try:
            return Connection(pool, pool.getconn(), conninfo)
        except Exception as error:
            _release_pool(pool, None)
            if isinstance(error, StoreUnreachable):
                raise
            from psycopg_pool import PoolTimeout

            if isinstance(error, (psycopg.Error, PoolTimeout)):
                raise reconnecting.reach_of(conninfo).failed(
                    reconnecting.reason(error)) from None
            raise

    def _cannot_connect(self, error: BaseException) -> str:
        where = reconnecting.server_of(self.url.url)
        return f"cannot connect to PostgreSQL at {where}: {reconnecting.reason(error)}"

    def _check_and_migrate(self, conn: Any, *, create: bool,
                           on_upgrade: Callable[[str], None] | None) -> None:
        shown = self.location
        schema = conn.execute("SELECT current_schema()").fetchone()[0]
        if schema is None:
            path = conn.execute("SHOW search_path").fetchone()[0]
            raise StoreUnavailable(
                f"{shown}: no schema of the search path ({path}) exists in that database;"
                " create it first")
        self._schema = schema
        tables = {row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,))}
        if tables and "schema_migrations" not in tables:
            raise StoreDamaged(
                f"{shown}: the schema {schema} holds tables that are not an arbor store; they"
                " were not changed (give an empty database, or a schema of its own with"
                " ?options=-csearch_path%3Darbor)")
        if not tables and not create:
            raise StoreNotFound(f"there is no arbor store at {shown}")
        migrations.check_version(conn, shown)
        migrations.apply_migrations(conn, shown, WRITE_LOCK, on_upgrade)
        if conn.execute(_HAS_LZ4).fetchone() is not None:
            self._begin_write = _BEGIN_WRITE + _LZ4

    # ----------------------------------------------------------- transactions
    def begin_write(self, conn: Connection) -> None:
        """Begin and take the store's write lock (with the transaction's first statement:
        no round trip of its own)."""
        conn.begin(self._begin_write, write=True)

    @staticmethod
    def begin_read(conn: Connection) -> None:
        conn.begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", write=False)

    @staticmethod
    def commit(conn: Connection) -> None:
        """Commit, telling listeners of the store when the transaction wrote something.
        Search rows still being written apart are waited for; if one failed, the
        transaction is rolled back and the error raised."""
        try:
            conn.settle()
        except BaseException:
            conn.rollback()
            raise
        conn.commit(_COMMIT)

    @staticmethod
    def rollback(conn: Connection) -> None:
        conn.rollback()

    # ---------------------------------------------------------------- writing
    @staticmethod
    def executemany(conn: Connection, sql: str, rows: Any) -> None:
        as_one = _AS_ONE.get(sql)
        if as_one is not None:
            rows = list(rows)
            if len(rows) > _LATER_ROWS_MAX:
                one_sql, kinds = as_one
                columns = [list(column) for column in zip(*rows)]
                if all(_of_kind(column, kind) for kind, column in zip(kinds, columns)):
                    conn.execute(one_sql, columns)
                    return
        conn.executemany(sql, rows)

    @staticmethod
    def executemany_text(conn: Connection, sql: str, rows: list[tuple]) -> None:
        """Rows whose last field is UTF-8 bytes, written as text."""
        conn.executemany(sql, [(*row[:-1], search_text(row[-1])) for row in rows])

    @staticmethod
    def inserted_id(cursor: Any) -> int:
        """The id the INSERT … RETURNING id just run gave its row."""
        return cursor.fetchone()[0]

    @staticmethod
    def insert_unless_taken(conn: Connection, sql: str, args: Sequence[Any], column: str
                            ) -> int | None:
        """Run an INSERT … ON CONFLICT (column) DO NOTHING RETURNING id: the new row's id,
        or None when `column`'s value is taken (the transaction goes on, as on SQLite)."""
        row = conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def is_unique_violation(self, error: BaseException, column: str | None = None) -> bool:
        import psycopg

        if not isinstance(error, psycopg.errors.UniqueViolation):
            return False
        return column is None or column in str(error)

    @staticmethod
    def first_free_entry_seq(conn: Connection) -> int:
        """The seq the next entry written in this transaction gets; the write lock is held."""
        row = conn.execute(_FIRST_FREE_SEQ).fetchone()
        return int(row[0]) + 1

    @staticmethod
    def forget_session_entries(conn: Connection, external_session_id: int) -> None:
        """Before a session's entries are deleted: keep the highest seq ever given (their
        search rows go with them, ON DELETE CASCADE)."""
        conn.execute(_KEEP_HIGH_SEQ)

    # ------------------------------------------------------------ bulk writes
    def start_bulk(self, conn: Connection, explain: Callable[[BaseException], BaseException]
                   ) -> CopyWriter:
        """A thread that writes entry batches for the open write transaction."""
        return CopyWriter(conn, explain, Statements.USAGE_INSERT)

    @staticmethod
    def stop_bulk(conn: Connection, bulk: CopyWriter, *, discard: bool = False) -> None:
        bulk.stop(discard=discard)

    # ---------------------------------------------------------------- reading
    @staticmethod
    def interrupt(conn: Connection) -> None:
        """(any thread) Ask the server to cancel the statement running on `conn` (it fails
        with QueryCanceled); nothing when none runs."""
        raw = conn.raw
        if raw is not None and not raw.closed:
            try:
                raw.cancel()
            except Exception:   # (a connection going away meanwhile: nothing to stop)
                pass

    def data_version(self, conn: Connection) -> int:
        """Changes whenever another connection commits to the store: the commits NOTIFY
        the store's channel, and a listening connection of this process counts them."""
        if self._schema is None:
            self._schema = conn.execute("SELECT current_schema()").fetchone()[0]
        listener = _listener(self.url.url, self._schema)
        if listener._error is not None:
            error = listener._error
            if isinstance(error, StoreUnreachable):
                raise error
            raise StoreUnavailable(self._cannot_connect(error))
        reach = listener.reach
        if not listener.connected and reach.state != "up":   # (commits now go untold)
            raise StoreUnreachable(reach.sentence or f"lost the connection to PostgreSQL at"
                                   f" {reach.where}")
        return listener.count_from_others(conn.backend_pid)

    @staticmethod
    def integrity_check(conn: Connection) -> str:
        """PostgreSQL keeps its own pages whole; what arbor checks is that the store's
        tables are readable."""
        conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()
        return "ok"

    @staticmethod
    def checkpoint_log(conn: Connection) -> None:
        """Nothing to do: the server owns its write-ahead log."""

    @staticmethod
    def schema_version(conn: Connection) -> int:
        return migrations.recorded_version(conn)


def _as_one(sql: str, types: str) -> tuple[str, tuple]:
    """The statement that inserts many rows of an `INSERT … VALUES (%s,…)` at once, in their
    order, each column a binary array of the type given (and the Python type its values
    are given as, for an array of one type)."""
    columns = sql[sql.index("(") + 1:sql.index(")")]
    kinds = {"bigint": int, "integer": int, "text": str, "float8": float}
    names = types.split()
    arrays = ", ".join(f"%b::{name}[]" for name in names)
    return (f"INSERT INTO {sql.split()[2].split('(')[0]}({columns}) SELECT {columns} FROM"
            f" unnest({arrays}) WITH ORDINALITY AS r({columns}, _i) ORDER BY _i",
            tuple(kinds[name] for name in names))


def _of_kind(column: list, kind: type) -> bool:
    """Whether every value of a column is None or of the type its array is sent as (a bool
    as an int and an int as a float are the numbers they are); else the rows go one by one."""
    for i, value in enumerate(column):
        found = type(value)
        if found is kind or value is None:
            continue
        if found is bool and kind is int:
            column[i] = int(value)
        elif found is int and kind is float:
            column[i] = float(value)
        else:
            return False
    return True


# An executemany of more than _LATER_ROWS_MAX rows of these is one statement: one round
# trip, one executor run, where psycopg's executemany pipelines a statement a row (which
# waits on the server once more for every few rows when the machine is busy). The same
# rows, in the same order (their seqs), the same triggers.
_AS_ONE = {
    Statements.USAGE_INSERT_RESPONSE: _as_one(
        Statements.USAGE_INSERT_RESPONSE,
        "bigint text text text bigint bigint bigint bigint text bigint bigint bigint text"
        " bigint bigint bigint bigint float8 integer bigint integer integer integer"),
}

_BEGIN_WRITE = f"BEGIN; SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}; {WRITE_LOCK}"
# Long texts (entry data, big search vectors) are compressed with lz4 where the server was
# built with it (PostgreSQL 14+): several times faster to write than the default pglz, and
# to read; values written before keep theirs (each value records its method).
_HAS_LZ4 = ("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'"
            " AND 'lz4' = ANY(enumvals)")
_LZ4 = "; SET LOCAL default_toast_compression = lz4"
_COMMIT = ("SELECT pg_notify('" + CHANNEL + "', current_schema())"
           " WHERE pg_current_xact_id_if_assigned() IS NOT NULL; COMMIT")
_FIRST_FREE_SEQ = ("SELECT GREATEST(COALESCE((SELECT MAX(seq) FROM entries), 0),"
                   " (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM entries_seq_high))")
_KEEP_HIGH_SEQ = ("SELECT setval('entries_seq_high', GREATEST((SELECT CASE WHEN is_called THEN"
                  " last_value ELSE 0 END FROM entries_seq_high), COALESCE((SELECT MAX(seq)"
                  " FROM entries), 0), 1), true)")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0].strip() if text else type(error).__name__
