"""The PostgreSQL backend: every SQL statement the store runs on PostgreSQL, and how it
connects to a server.

`Statements` has the names of `sqlite.Statements`, each the same statement in PostgreSQL's
terms (`%s` for `?`, `GREATEST` for the two-argument `MAX`, `ON CONFLICT DO NOTHING` for
`INSERT OR IGNORE`, `RETURNING id` for `lastrowid`, `->>` for `json_extract`, a `tsvector`
for FTS5, `FOR UPDATE` where a branch head is read to be moved), so the two read side by
side. `PostgresBackend` holds what is not one statement: connecting (psycopg 3 and its
pool, imported only when a store is a URL: connection.py), transactions under the store's
write lock, COPY for imports (bulk.py), LISTEN/NOTIFY for "something changed" (listener.py).

Writers take the store's write lock (a transaction-level advisory lock) when they begin,
as SQLite's BEGIN IMMEDIATE does: an entry writer gives seqs to the rows it buffers
before they are written, and seq order is what "newest" means everywhere (labels, search,
a branch's newest child). Reads never wait for it. Appends to one branch also lock the
branch's row (`INTERNAL_TARGET_FOR_UPDATE`), so each reads the head the one before left.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from core.model.errors import StoreDamaged, StoreNotFound, StoreUnavailable, StoreUnreachable
from core.store.location import PostgresURL
from . import reconnect as reconnecting
from . import migrations
from . import search_index as postgres_search
from .bulk import CopyWriter, search_text
from .connection import Connection, LATER_ROWS_MAX, acquire_pool, adapt, release_pool
from .listener import CHANNEL, listener_of
from core.store.statements import compose

LOCK_TIMEOUT_MS = 60_000  # a writer waits this long for the store's write lock
# The store's write lock: one advisory lock per schema (two stores in one database do not
# wait on each other). 0x4152_424f is "ARBO".
WRITE_LOCK = "SELECT pg_advisory_xact_lock(1095910991, hashtext(current_schema()))"


Statements = compose("Postgres")


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
            adapt(first)
            self._check_and_migrate(first, create=create, on_upgrade=on_upgrade)
        except psycopg.Error as error:
            raise StoreUnavailable(f"cannot use the PostgreSQL store {self.location}: "
                                   f"{_first_line(error)}") from None
        finally:
            first.close()
        pool = acquire_pool(conninfo)
        try:
            return Connection(pool, pool.getconn(), conninfo)
        except Exception as error:
            release_pool(pool, None)
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
            if len(rows) > LATER_ROWS_MAX:
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
        listener = listener_of(self.url.url, self._schema)
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


# An executemany of more than LATER_ROWS_MAX rows of these is one statement: one round
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
