"""The PostgreSQL store's numbered schema migrations, recorded in `schema_migrations`.

The twin of `sqlite/migrations.py`: the same numbers and names, each making the same
change in PostgreSQL's terms, so a store of either kind at version N has the same tables,
columns and meaning. A new migration on one side needs its twin here (a test compares the
two lists). They run in one transaction under the store's write lock, so two processes
opening a new store at once migrate it once; a store whose highest recorded migration is
above `CURRENT_VERSION` was written by a newer arbor and is refused before anything is
written to it.

Types: INTEGER of SQLite is BIGINT for ids and seqs and INTEGER for counts of one row;
REAL is DOUBLE PRECISION; TEXT compares byte by byte (`COLLATE "C"`), as in SQLite, so
ids, timestamps and prefixes sort and match the same on both.
"""

from __future__ import annotations

from typing import Any, Callable

from core.model.clock import to_text
from core.model.errors import StoreTooNew

from . import schema_v1

T = 'TEXT COLLATE "C"'   # text compared as SQLite compares it (bytes), whatever the database's locale


def _v2(conn: Any, backend=None) -> None:
    """SQLite rebuilt its search index without positions here; PostgreSQL's was made so
    in 1 (lexemes without positions), so there is nothing to change."""


_V3 = """
ALTER TABLE external_sessions
    ADD COLUMN IF NOT EXISTS parent_id BIGINT REFERENCES external_sessions(id) ON DELETE SET NULL,
    ADD COLUMN IF NOT EXISTS spawn_seq BIGINT REFERENCES entries(seq) ON DELETE SET NULL,
    ADD COLUMN IF NOT EXISTS spawn_ref TEXT COLLATE "C";
CREATE INDEX IF NOT EXISTS idx_external_sessions_parent ON external_sessions(parent_id);
CREATE INDEX IF NOT EXISTS idx_external_sessions_spawn ON external_sessions(spawn_seq)
    WHERE spawn_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_external_sessions_parent_ref ON external_sessions(parent_session)
    WHERE parent_session IS NOT NULL;
CREATE TABLE IF NOT EXISTS spawn_points (
    spawn_key TEXT COLLATE "C" NOT NULL,
    external_session_id BIGINT NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL REFERENCES entries(seq) ON DELETE CASCADE,
    PRIMARY KEY (spawn_key, external_session_id)
);
CREATE INDEX IF NOT EXISTS idx_spawn_points_session ON spawn_points(external_session_id);
CREATE INDEX IF NOT EXISTS idx_spawn_points_seq ON spawn_points(seq);
"""

_V4 = """
ALTER TABLE external_sessions ADD COLUMN IF NOT EXISTS first_user_seq BIGINT;
UPDATE external_sessions SET first_user_seq = (SELECT MIN(e.seq) FROM entries e
    WHERE e.external_session_id = external_sessions.id AND e.role = 'user');
DROP INDEX IF EXISTS idx_entries_first_user;
DROP INDEX IF EXISTS idx_external_sessions_cwd;
CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd);
"""

_V5 = """
ALTER TABLE usage
    ADD COLUMN IF NOT EXISTS entry_seq BIGINT REFERENCES entries(seq) ON DELETE CASCADE,
    ADD COLUMN IF NOT EXISTS chain BIGINT,
    ADD COLUMN IF NOT EXISTS depth BIGINT,
    ADD COLUMN IF NOT EXISTS response_key TEXT COLLATE "C",
    ADD COLUMN IF NOT EXISTS cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cache_creation_1h_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cost_usd DOUBLE PRECISION,
    ADD COLUMN IF NOT EXISTS cost_logged INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS price_basis BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS fast INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS subagent INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS counted INTEGER NOT NULL DEFAULT 1;
CREATE UNIQUE INDEX IF NOT EXISTS idx_usage_response ON usage(external_session_id, response_key)
    WHERE response_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_key ON usage(response_key) WHERE response_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_entry ON usage(entry_seq) WHERE entry_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_path ON usage(chain, depth) WHERE chain IS NOT NULL;
CREATE TABLE IF NOT EXISTS session_usage (
    external_session_id BIGINT NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    model TEXT COLLATE "C" NOT NULL,
    responses BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    unpriced BIGINT NOT NULL DEFAULT 0,
    subagent_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    subagent_tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (external_session_id, model)
);
"""


def _v5(conn: Any, backend=None) -> None:
    conn.execute(_V5)
    from core.store.usage.rows import rebuild_from_entries  # only needed when migrating

    rebuild_from_entries(conn, backend.sql, backend)


# LangGraph's records of the checkpoints its agents write through core.langgraph.ArborSaver
# (see migrations/sqlite.py); a serialized checkpoint or write is BYTEA.
_V6 = f"""
CREATE TABLE IF NOT EXISTS langgraph_threads (
    thread_id {T} NOT NULL,
    checkpoint_ns {T} NOT NULL,
    external_session_id BIGINT NOT NULL UNIQUE REFERENCES external_sessions(id) ON DELETE CASCADE,
    PRIMARY KEY (thread_id, checkpoint_ns)
);
CREATE TABLE IF NOT EXISTS langgraph_checkpoints (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    external_session_id BIGINT NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    checkpoint_id {T} NOT NULL,
    parent_checkpoint_id {T},
    checkpoint_ref BIGINT REFERENCES checkpoints(id) ON DELETE SET NULL,
    entry_seq BIGINT REFERENCES entries(seq) ON DELETE SET NULL,
    type {T} NOT NULL,
    checkpoint BYTEA NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{{}}',
    messages BIGINT NOT NULL DEFAULT 0,
    messages_digest {T} NOT NULL DEFAULT '',
    UNIQUE (external_session_id, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_entry ON langgraph_checkpoints(entry_seq);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_ref ON langgraph_checkpoints(checkpoint_ref);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_parent
    ON langgraph_checkpoints(external_session_id, parent_checkpoint_id);
CREATE TABLE IF NOT EXISTS langgraph_writes (
    external_session_id BIGINT NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    checkpoint_id {T} NOT NULL,
    task_id {T} NOT NULL,
    idx INTEGER NOT NULL,
    task_path {T} NOT NULL DEFAULT '',
    channel {T} NOT NULL,
    type {T},
    value BYTEA,
    PRIMARY KEY (external_session_id, checkpoint_id, task_id, idx)
);
"""


# What `stat` said of an imported file, in columns of its own (see the SQLite twin): a
# no-change import compares them with `stat` and reads no record's JSON.
_V7 = """
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS record_version BIGINT;
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS complete INTEGER NOT NULL DEFAULT 0;
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS mtime_ns BIGINT;
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS inode BIGINT;
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS device BIGINT;
ALTER TABLE import_sources ADD COLUMN IF NOT EXISTS lines BIGINT NOT NULL DEFAULT 0;
"""


def _v7(conn: Any, backend=None) -> None:
    import json

    conn.execute(_V7)
    for key, state in conn.execute("SELECT source_key, state FROM import_sources").fetchall():
        try:
            value = json.loads(state)
        except (TypeError, ValueError):
            continue   # (SQLite's twin skips what json_valid refuses)
        if not isinstance(value, dict):
            continue

        def number(name: str, value=value):
            got = value.get(name)
            return got if type(got) is int and -(1 << 63) <= got < (1 << 63) else None

        conn.execute("UPDATE import_sources SET record_version = %s, complete = %s,"
                     " mtime_ns = %s, inode = %s, device = %s, lines = %s WHERE source_key = %s",
                     (number("version"), 1 if value.get("complete") is True else 0,
                      number("mtime_ns"), number("inode"), number("device"),
                      number("lines") or 0, key))


# The twin of SQLite's 8: the app's operations, undoable (core.actions.undo); branches and
# checkpoints can be hidden, never deleted.
_V8 = f"""
ALTER TABLE internal_sessions ADD COLUMN IF NOT EXISTS is_hidden INTEGER NOT NULL DEFAULT 0;
ALTER TABLE checkpoints ADD COLUMN IF NOT EXISTS is_hidden INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS operation_log (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind {T} NOT NULL,
    external_session_id BIGINT REFERENCES external_sessions(id) ON DELETE CASCADE,
    description {T} NOT NULL DEFAULT '',
    changes {T} NOT NULL DEFAULT '[]',
    undoes BIGINT REFERENCES operation_log(seq) ON DELETE CASCADE,
    created_at {T} NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_operation_log_undoes ON operation_log(undoes)
    WHERE undoes IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_operation_log_session ON operation_log(external_session_id);
"""


# Usage summed per (counted, UTC hour, session, model), kept by a trigger on `usage`
# (migrations/sqlite.py's three triggers in one PL/pgSQL function).
_BUCKET_KEY = "counted, hour, external_session_id, model"
_BUCKET_SUMS = ("responses", "input_tokens", "output_tokens", "cache_creation_tokens",
                "cache_read_tokens", "reasoning_tokens", "cost_usd", "unpriced",
                "subagent_cost_usd", "subagent_tokens")


def _bucket_move(row: str, sign: str) -> str:
    tokens = (f"{row}.input_tokens + {row}.output_tokens + {row}.cache_creation_tokens"
              f" + {row}.cache_read_tokens")
    values = (f"{row}.counted, substr({row}.timestamp, 1, 13), {row}.external_session_id,"
              f" {row}.model, {sign}1, {sign}{row}.input_tokens, {sign}{row}.output_tokens,"
              f" {sign}{row}.cache_creation_tokens, {sign}{row}.cache_read_tokens,"
              f" {sign}{row}.reasoning_tokens, {sign}COALESCE({row}.cost_usd, 0),"
              f" {sign}({row}.cost_usd IS NULL)::int,"
              f" {sign}(CASE WHEN {row}.subagent = 1 THEN COALESCE({row}.cost_usd, 0) ELSE 0 END),"
              f" {sign}(CASE WHEN {row}.subagent = 1 THEN {tokens} ELSE 0 END)")
    update = ", ".join(f"{c} = usage_buckets.{c} + excluded.{c}" for c in _BUCKET_SUMS)
    return (f"INSERT INTO usage_buckets({_BUCKET_KEY}, {', '.join(_BUCKET_SUMS)})"
            f" VALUES ({values}) ON CONFLICT ({_BUCKET_KEY}) DO UPDATE SET {update};")


_V9 = f"""
CREATE TABLE IF NOT EXISTS usage_buckets (
    counted INTEGER NOT NULL,
    hour {T} NOT NULL,
    external_session_id BIGINT NOT NULL,
    model {T} NOT NULL,
    responses BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    unpriced BIGINT NOT NULL DEFAULT 0,
    subagent_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
    subagent_tokens BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY ({_BUCKET_KEY})
);
CREATE INDEX IF NOT EXISTS idx_usage_basis ON usage(price_basis);
CREATE OR REPLACE FUNCTION usage_buckets_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        {_bucket_move("OLD", "-")}
        DELETE FROM usage_buckets WHERE counted = OLD.counted
            AND hour = substr(OLD.timestamp, 1, 13)
            AND external_session_id = OLD.external_session_id AND model = OLD.model
            AND responses = 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        {_bucket_move("NEW", "")}
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS usage_buckets_move ON usage;
CREATE TRIGGER usage_buckets_move AFTER INSERT OR DELETE OR UPDATE OF counted, timestamp,
    external_session_id, model, input_tokens, output_tokens, cache_creation_tokens,
    cache_read_tokens, reasoning_tokens, cost_usd, subagent ON usage
    FOR EACH ROW EXECUTE FUNCTION usage_buckets_move();
DELETE FROM usage_buckets;
INSERT INTO usage_buckets({_BUCKET_KEY}, {', '.join(_BUCKET_SUMS)})
    SELECT u.counted, substr(u.timestamp, 1, 13), u.external_session_id, u.model, COUNT(*),
        SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),
        SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), SUM(COALESCE(u.cost_usd, 0)),
        SUM((u.cost_usd IS NULL)::int),
        SUM(CASE WHEN u.subagent = 1 THEN COALESCE(u.cost_usd, 0) ELSE 0 END),
        SUM(CASE WHEN u.subagent = 1 THEN u.input_tokens + u.output_tokens
            + u.cache_creation_tokens + u.cache_read_tokens ELSE 0 END)
    FROM usage u GROUP BY 1, 2, 3, 4;
"""

# What telling an unchanged file needs of every record (`Statements.IMPORT_STAMPS`), in an
# index that holds it all: the table's rows carry each reader's state (2 KB on average,
# up to 60 KB) before these columns, and a scan read through all of it (on SQLite, 3,000
# records: 7.8 ms; 3.6 ms from this index).
_V10 = """
CREATE INDEX IF NOT EXISTS idx_import_stamps ON import_sources(
    source_key, record_version, complete, size, mtime_ns, inode, device, lines);
"""


def _v11(conn: Any, backend=None) -> None:
    from . import search_index as postgres_search

    postgres_search.start_stemmed_index(conn)


# SQLite's twin leaves rows written with `bucketed = 0` to one statement per batch; a
# PostgreSQL import writes its usage rows by COPY with the trigger kept (every row 1), so
# here the column is only made, that the two stores have the same columns.
_V12 = "ALTER TABLE usage ADD COLUMN IF NOT EXISTS bucketed INTEGER NOT NULL DEFAULT 1"


# (version, name, SQL or a function of the connection): the numbers and names of
# sqlite/migrations.py. Append only; never edit a released migration.
MIGRATIONS: list[tuple[int, str, str | Callable[[Any], None]]] = [
    (1, "initial schema", schema_v1.V1),
    (2, "contentless search index without positions (a third of the size and insert time)",
     _v2),
    (3, "sessions know the session and entry they came from (sub-agents, forks)", _V3),
    (4, "an append touches fewer index pages (first user message kept in the session row)",
     _V4),
    (5, "tokens and cost of every response, and each session's totals (read from its entries)",
     _v5),
    (6, "LangGraph checkpoints and pending writes of agents that write through arbor", _V6),
    (7, "import records keep what stat said in columns (a no-change import reads no JSON)",
     _v7),
    (8, "an undo log of the app's operations; branches and checkpoints can be hidden", _V8),
    (9, "usage summed per hour, session and model, kept by triggers, and responses found by"
        " the prices they were priced with (fast usage reports)", _V9),
    (10, "a no-change import reads the records' stamps from an index, not past each"
         " record's reader state", _V10),
    (11, "search stems English words, ranks its hits and finds quoted phrases (a big store's"
         " index is rebuilt in the background)", _v11),
    (12, "an import sums its usage rows into the hourly buckets a batch at a time", _V12),
]

CURRENT_VERSION = MIGRATIONS[-1][0]

_HAS_TABLE = ("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
              " AND table_name = %s")


def recorded_version(conn: Any) -> int:
    """The highest migration recorded, 0 for a new store. Reads only."""
    if conn.execute(_HAS_TABLE, ("schema_migrations",)).fetchone() is None:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def check_version(conn: Any, shown: str) -> int:
    version = recorded_version(conn)
    if version > CURRENT_VERSION:
        raise StoreTooNew(
            f"{shown} was written by a newer arbor (schema {version}; this arbor knows up to "
            f"{CURRENT_VERSION}). Upgrade arbor to open it; the store was not changed.")
    return version


def apply_migrations(conn: Any, shown: str, lock: str,
                     on_upgrade: Callable[[str], None] | None = None, backend=None) -> int:
    """Run pending migrations in order, in one transaction that holds the store's write
    lock (`lock`: the statement that takes it). Safe on every open. `backend`: the
    PostgreSQL backend's class, for the migrations that write through it."""
    version = check_version(conn, shown)
    if version == CURRENT_VERSION:
        return version
    conn.execute("BEGIN")
    try:
        conn.execute(lock)
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                     " name TEXT NOT NULL, applied_at TEXT NOT NULL)")
        version = check_version(conn, shown)  # another process may have migrated meanwhile
        existing = version > 0
        for number, name, sql in MIGRATIONS:
            if number <= version:
                continue
            if existing and on_upgrade is not None:
                on_upgrade(name)
            if callable(sql):
                sql(conn, backend)
            else:
                conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations(version, name, applied_at)"
                         " VALUES (%s, %s, %s)", (number, name, to_text(None)))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return CURRENT_VERSION
