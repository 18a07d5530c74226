"""A connection to a PostgreSQL store: statements held back and sent with the next one
that has rows to give (one round trip), a server that goes away told as StoreUnreachable,
and the process's connection pools (psycopg_pool, one per server, closed with their last user)."""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Sequence

from core.model.errors import StoreUnreachable
from . import reconnect as reconnecting
from .bulk import Lexemes
from .reconnect import broke

if TYPE_CHECKING:
    from .bulk import CopyWriter

POOL_TIMEOUT = 30         # seconds to wait for a connection of the pool (all of it in use)

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
LATER_ROWS_MAX = 16   # an executemany of at most this many rows waits too, a row a statement
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
            if len(rows) <= LATER_ROWS_MAX:
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
        release_pool(self._pool, conn)


# ------------------------------------------------------------------- the pools
_pools: dict[str, list] = {}   # conninfo -> [pool, users]
_pools_lock = threading.Lock()


def _configure(conn: Any) -> None:
    """Every connection: integer flags for booleans, numbers for sums (not Decimal)."""
    adapt(conn)


def adapt(conn: Any) -> None:
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


def acquire_pool(conninfo: str) -> Any:
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


def release_pool(pool: Any, conn: Any) -> None:
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


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
