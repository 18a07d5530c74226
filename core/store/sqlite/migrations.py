"""The SQLite store's numbered schema migrations, recorded in `schema_migrations`.

A store whose highest recorded migration is above `CURRENT_VERSION` was written by a
newer arbor: it is refused before anything is written to it.
"""

from __future__ import annotations

import sqlite3

from core.model.errors import StoreTooNew

from . import schema_v1

TYPE_CHECKING = False   # (peek_import_stamps reads the version here: no typing, no clock)
if TYPE_CHECKING:
    from typing import Callable


def _v2(conn: sqlite3.Connection, backend=None) -> None:
    from . import search_index as sqlite_search  # imports core.entries; only needed when migrating

    sqlite_search.rebuild(conn)


# Where a session came from: the session it belongs under (`parent_id`: a sub-agent under
# the session whose tool call spawned it, a fork under its source) and the entry there
# that started it (`spawn_seq`: the tool call, or the fork point). `spawn_ref` is what the
# child knows of that entry until the parent is in the store; `spawn_points` is what a
# parent knows of the children it spawned (a tool call id, a child's thread id), so the
# link is made whichever of the two files is imported first.
_V3_COLUMNS = (
    ("parent_id", "INTEGER REFERENCES external_sessions(id) ON DELETE SET NULL"),
    ("spawn_seq", "INTEGER REFERENCES entries(seq) ON DELETE SET NULL"),
    ("spawn_ref", "TEXT"),
)
_V3 = """
CREATE INDEX IF NOT EXISTS idx_external_sessions_parent ON external_sessions(parent_id);
-- (deleting an entry looks its children up through these foreign keys: indexed, never a scan)
CREATE INDEX IF NOT EXISTS idx_external_sessions_spawn ON external_sessions(spawn_seq)
    WHERE spawn_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_external_sessions_parent_ref ON external_sessions(parent_session)
    WHERE parent_session IS NOT NULL;
CREATE TABLE IF NOT EXISTS spawn_points (
    spawn_key TEXT NOT NULL,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL REFERENCES entries(seq) ON DELETE CASCADE,
    PRIMARY KEY (spawn_key, external_session_id)
);
CREATE INDEX IF NOT EXISTS idx_spawn_points_session ON spawn_points(external_session_id);
CREATE INDEX IF NOT EXISTS idx_spawn_points_seq ON spawn_points(seq);
"""


def _v3(conn: sqlite3.Connection, backend=None) -> None:
    have = {row[1] for row in conn.execute("PRAGMA table_info(external_sessions)")}
    for column, declaration in _V3_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE external_sessions ADD COLUMN {column} {declaration}")
    for statement in _statements(_V3):
        conn.execute(statement)


# An append writes every page it touches to the write-ahead log: 13 pages of 16 KiB (213 KB)
# for a 40-byte message with schema 3. Two of them were index pages that an append needs
# not touch: the session's first user message (for previews) is kept in its row, which
# the append rewrites anyway, instead of a partial index over every user entry; and
# sessions by folder are indexed by folder alone (a folder has few sessions, sorted when
# read), not by (folder, activity), which moved on every append (see bench/bench_wal.py).
_V4 = """
UPDATE external_sessions SET first_user_seq = (SELECT MIN(e.seq) FROM entries e
    WHERE e.external_session_id = external_sessions.id AND e.role = 'user');
DROP INDEX IF EXISTS idx_entries_first_user;
DROP INDEX IF EXISTS idx_external_sessions_cwd;
CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd);
"""


def _v4(conn: sqlite3.Connection, backend=None) -> None:
    have = {row[1] for row in conn.execute("PRAGMA table_info(external_sessions)")}
    if "first_user_seq" not in have:
        conn.execute("ALTER TABLE external_sessions ADD COLUMN first_user_seq INTEGER")
    for statement in _statements(_V4):
        conn.execute(statement)


# Usage: one row per API response per session (`response_key` unique within a session),
# tied to the entry that holds it (`entry_seq`, and its `chain`/`depth`, so a branch's
# figures are a range scan of the path's pieces), priced when written (`cost_usd` NULL: no
# price; `price_basis` says which prices, 0 for a cost the agent logged), and `counted` 0
# for a copy of a response another session holds first (totals count a response once).
# `session_usage` holds each session's totals per model, moved as rows are written.
_V5_COLUMNS = (
    ("entry_seq", "INTEGER REFERENCES entries(seq) ON DELETE CASCADE"),
    ("chain", "INTEGER"),
    ("depth", "INTEGER"),
    ("response_key", "TEXT"),
    ("cache_creation_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cache_creation_1h_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cache_read_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("reasoning_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cost_usd", "REAL"),
    ("cost_logged", "INTEGER NOT NULL DEFAULT 0"),
    ("price_basis", "INTEGER NOT NULL DEFAULT 0"),
    ("fast", "INTEGER NOT NULL DEFAULT 0"),
    ("subagent", "INTEGER NOT NULL DEFAULT 0"),
    ("counted", "INTEGER NOT NULL DEFAULT 1"),
)
_V5 = """
CREATE UNIQUE INDEX IF NOT EXISTS idx_usage_response ON usage(external_session_id, response_key)
    WHERE response_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_key ON usage(response_key) WHERE response_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_entry ON usage(entry_seq) WHERE entry_seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_usage_path ON usage(chain, depth) WHERE chain IS NOT NULL;
CREATE TABLE IF NOT EXISTS session_usage (
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    responses INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    unpriced INTEGER NOT NULL DEFAULT 0,
    subagent_cost_usd REAL NOT NULL DEFAULT 0,
    subagent_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (external_session_id, model)
) WITHOUT ROWID;
"""


def _v5(conn: sqlite3.Connection, backend=None) -> None:
    have = {row[1] for row in conn.execute("PRAGMA table_info(usage)")}
    for column, declaration in _V5_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE usage ADD COLUMN {column} {declaration}")
    for statement in _statements(_V5):
        conn.execute(statement)
    from core.store.usage.rows import rebuild_from_entries  # only needed when migrating

    rebuild_from_entries(conn, backend.sql, backend)


# LangGraph's own records of the checkpoints its agents write through arbor's checkpointer
# (core.langgraph.ArborSaver). A thread's namespace is a session (`langgraph_threads`);
# each checkpoint is an entry and an arbor checkpoint of that session (`entry_seq`,
# `checkpoint_ref`) and keeps here what LangGraph needs back exactly: the checkpoint as
# the saver's serializer wrote it (`type`, `checkpoint`), its metadata (JSON) and where it
# came from; `messages`/`messages_digest` say which messages of its `messages` channel are
# already entries. `langgraph_writes` are the pending writes kept with their checkpoint.
_V6 = """
CREATE TABLE IF NOT EXISTS langgraph_threads (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    external_session_id INTEGER NOT NULL UNIQUE REFERENCES external_sessions(id) ON DELETE CASCADE,
    PRIMARY KEY (thread_id, checkpoint_ns)
);
CREATE TABLE IF NOT EXISTS langgraph_checkpoints (
    id INTEGER PRIMARY KEY,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    checkpoint_ref INTEGER REFERENCES checkpoints(id) ON DELETE SET NULL,
    entry_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    type TEXT NOT NULL,
    checkpoint BLOB NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    messages INTEGER NOT NULL DEFAULT 0,
    messages_digest TEXT NOT NULL DEFAULT '',
    UNIQUE (external_session_id, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_entry ON langgraph_checkpoints(entry_seq);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_ref ON langgraph_checkpoints(checkpoint_ref);
CREATE INDEX IF NOT EXISTS idx_langgraph_checkpoints_parent
    ON langgraph_checkpoints(external_session_id, parent_checkpoint_id);
CREATE TABLE IF NOT EXISTS langgraph_writes (
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (external_session_id, checkpoint_id, task_id, idx)
);
"""


# What `stat` said of an imported file when its record was written, in columns of its own:
# `arbor import` over thousands of files that have not changed compares them with `stat`
# and reads no JSON (the record's `state` holds a reader's state of up to tens of KB a
# file; extracting these fields from it cost more than the rest of that run together).
_V7_COLUMNS = (
    ("record_version", "INTEGER"),
    ("complete", "INTEGER NOT NULL DEFAULT 0"),
    ("mtime_ns", "INTEGER"),
    ("inode", "INTEGER"),
    ("device", "INTEGER"),
    ("lines", "INTEGER NOT NULL DEFAULT 0"),
)
_V7 = """
UPDATE import_sources SET
    record_version = json_extract(state, '$.version'),
    complete = COALESCE(json_extract(state, '$.complete'), 0),
    mtime_ns = json_extract(state, '$.mtime_ns'),
    inode = json_extract(state, '$.inode'),
    device = json_extract(state, '$.device'),
    lines = COALESCE(json_extract(state, '$.lines'), 0)
WHERE json_valid(state);
"""


def _v7(conn: sqlite3.Connection, backend=None) -> None:
    have = {row[1] for row in conn.execute("PRAGMA table_info(import_sources)")}
    for column, declaration in _V7_COLUMNS:
        if column not in have:
            conn.execute(f"ALTER TABLE import_sources ADD COLUMN {column} {declaration}")
    for statement in _statements(_V7):
        conn.execute(statement)


# The app's operations, undoable: one row per operation (branch, roll back, label, compact,
# archive, make current, rename, hide, checkpoint), with every value it changed (a head, the
# current branch, a label, a name, an archived or hidden flag) before and after, as JSON.
# Undoing appends a row that `undoes` it; nothing is deleted or rewritten. A branch or a
# checkpoint is hidden, never deleted: `is_hidden` (shown again with the archived toggle).
_V_OPLOG_COLUMNS = (
    ("internal_sessions", "is_hidden", "INTEGER NOT NULL DEFAULT 0"),
    ("checkpoints", "is_hidden", "INTEGER NOT NULL DEFAULT 0"),
)
_V_OPLOG = """
CREATE TABLE IF NOT EXISTS operation_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    external_session_id INTEGER REFERENCES external_sessions(id) ON DELETE CASCADE,
    description TEXT NOT NULL DEFAULT '',
    changes TEXT NOT NULL DEFAULT '[]',
    undoes INTEGER REFERENCES operation_log(seq) ON DELETE CASCADE,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_operation_log_undoes ON operation_log(undoes)
    WHERE undoes IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_operation_log_session ON operation_log(external_session_id);
"""


def _v_oplog(conn: sqlite3.Connection, backend=None) -> None:
    for table, column, declaration in _V_OPLOG_COLUMNS:
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
    for statement in _statements(_V_OPLOG):
        conn.execute(statement)


# Usage summed per (counted, UTC hour, session, model), kept by triggers on `usage` (every
# insert, update and delete, a session's deletion included), so `arbor usage` and the usage
# screen sum a few rows per session and hour instead of every response.
_BUCKET_KEY = "counted, hour, external_session_id, model"
_BUCKET_SUMS = ("responses, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, unpriced, subagent_cost_usd,"
                " subagent_tokens")


def _bucket_values(row: str, sign: str) -> str:
    tokens = (f"{row}.input_tokens + {row}.output_tokens + {row}.cache_creation_tokens"
              f" + {row}.cache_read_tokens")
    return (f"{row}.counted, substr({row}.timestamp, 1, 13), {row}.external_session_id,"
            f" {row}.model, {sign}1, {sign}{row}.input_tokens, {sign}{row}.output_tokens,"
            f" {sign}{row}.cache_creation_tokens, {sign}{row}.cache_read_tokens,"
            f" {sign}{row}.reasoning_tokens, {sign}COALESCE({row}.cost_usd, 0),"
            f" {sign}({row}.cost_usd IS NULL),"
            f" {sign}(CASE WHEN {row}.subagent = 1 THEN COALESCE({row}.cost_usd, 0) ELSE 0 END),"
            f" {sign}(CASE WHEN {row}.subagent = 1 THEN {tokens} ELSE 0 END)")


def _bucket_add(row: str, sign: str) -> str:
    sums = [c.strip() for c in _BUCKET_SUMS.split(",")]
    update = ", ".join(f"{c} = {c} + excluded.{c}" for c in sums)
    return (f"INSERT INTO usage_buckets({_BUCKET_KEY}, {_BUCKET_SUMS})"
            f" VALUES ({_bucket_values(row, sign)})"
            f" ON CONFLICT({_BUCKET_KEY}) DO UPDATE SET {update};")


def _bucket_drop(row: str) -> str:
    """An emptied bucket goes (its model would otherwise still be named in reports)."""
    return (f"DELETE FROM usage_buckets WHERE counted = {row}.counted"
            f" AND hour = substr({row}.timestamp, 1, 13)"
            f" AND external_session_id = {row}.external_session_id AND model = {row}.model"
            " AND responses = 0;")


_V9 = f"""
CREATE TABLE IF NOT EXISTS usage_buckets (
    counted INTEGER NOT NULL,
    hour TEXT NOT NULL,
    external_session_id INTEGER NOT NULL,
    model TEXT NOT NULL,
    responses INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    unpriced INTEGER NOT NULL DEFAULT 0,
    subagent_cost_usd REAL NOT NULL DEFAULT 0,
    subagent_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY ({_BUCKET_KEY})
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_usage_basis ON usage(price_basis);
CREATE TRIGGER IF NOT EXISTS usage_buckets_insert AFTER INSERT ON usage BEGIN
    {_bucket_add("NEW", "")}
END;
CREATE TRIGGER IF NOT EXISTS usage_buckets_delete AFTER DELETE ON usage BEGIN
    {_bucket_add("OLD", "-")}
    {_bucket_drop("OLD")}
END;
CREATE TRIGGER IF NOT EXISTS usage_buckets_update AFTER UPDATE OF counted, timestamp,
    external_session_id, model, input_tokens, output_tokens, cache_creation_tokens,
    cache_read_tokens, reasoning_tokens, cost_usd, subagent ON usage BEGIN
    {_bucket_add("OLD", "-")}
    {_bucket_drop("OLD")}
    {_bucket_add("NEW", "")}
END;
"""


def _v9(conn: sqlite3.Connection, backend=None) -> None:
    """The buckets, their triggers, and the sums of the responses already stored."""
    for statement in _statements(_V9):
        conn.execute(statement)
    tokens = "u.input_tokens + u.output_tokens + u.cache_creation_tokens + u.cache_read_tokens"
    conn.execute("DELETE FROM usage_buckets")   # (a migration run again: summed afresh)
    conn.execute(
        f"INSERT INTO usage_buckets({_BUCKET_KEY}, {_BUCKET_SUMS})"
        " SELECT u.counted, substr(u.timestamp, 1, 13), u.external_session_id, u.model, COUNT(*),"
        " SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),"
        " SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), SUM(COALESCE(u.cost_usd, 0)),"
        " SUM(u.cost_usd IS NULL),"
        " SUM(CASE WHEN u.subagent = 1 THEN COALESCE(u.cost_usd, 0) ELSE 0 END),"
        f" SUM(CASE WHEN u.subagent = 1 THEN {tokens} ELSE 0 END)"
        " FROM usage u GROUP BY 1, 2, 3, 4")


# What telling an unchanged file needs of every record (`Statements.IMPORT_STAMPS`), in an
# index that holds it all: the table's rows carry each reader's state (2 KB on average,
# up to 60 KB) before these columns, and a scan read through all of it (3,000 records:
# 7.8 ms, 3.6 ms from this index).
_V10 = """
CREATE INDEX IF NOT EXISTS idx_import_stamps ON import_sources(
    source_key, record_version, complete, size, mtime_ns, inode, device, lines);
"""


def _v11(conn: sqlite3.Connection, backend=None) -> None:
    from . import search_index as sqlite_search

    sqlite_search.start_stemmed_index(conn)


def _v12(conn: sqlite3.Connection, backend=None) -> None:
    """An import's usage rows are summed into their buckets one statement per batch
    (the statement USAGE_BUCKETS_OF_BATCH) instead of by the trigger, row by row: rows written
    with `bucketed = 0` are left alone by it (three times the insert's cost on its own).
    Every other insert keeps the default, 1, and the trigger."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(usage)")}
    if "bucketed" not in have:
        conn.execute("ALTER TABLE usage ADD COLUMN bucketed INTEGER NOT NULL DEFAULT 1")
    conn.execute("DROP TRIGGER IF EXISTS usage_buckets_insert")
    conn.execute(f"CREATE TRIGGER usage_buckets_insert AFTER INSERT ON usage"
                 f" WHEN NEW.bucketed = 1 BEGIN {_bucket_add('NEW', '')} END")


# (version, name, SQL or a function of the connection). Append only; never edit a
# released migration.
MIGRATIONS: list[tuple[int, str, str | Callable[[sqlite3.Connection], None]]] = [
    (1, "initial schema", schema_v1.V1),
    (2, "contentless search index without positions (a third of the size and insert time)",
     _v2),
    (3, "sessions know the session and entry they came from (sub-agents, forks)", _v3),
    (4, "an append touches fewer index pages (first user message kept in the session row)",
     _v4),
    (5, "tokens and cost of every response, and each session's totals (read from its entries)",
     _v5),
    (6, "LangGraph checkpoints and pending writes of agents that write through arbor", _V6),
    (7, "import records keep what stat said in columns (a no-change import reads no JSON)",
     _v7),
    (8, "an undo log of the app's operations; branches and checkpoints can be hidden",
     _v_oplog),
    (9, "usage summed per hour, session and model, kept by triggers, and responses found by"
        " the prices they were priced with (fast usage reports)", _v9),
    (10, "a no-change import reads the records' stamps from an index, not past each"
         " record's reader state", _V10),
    (11, "search stems English words, ranks its hits and finds quoted phrases (a big store's"
         " index is rebuilt in the background)", _v11),
    (12, "an import sums its usage rows into the hourly buckets a batch at a time", _v12),
]

CURRENT_VERSION = MIGRATIONS[-1][0]


def recorded_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded, 0 for a new file. Reads only."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def check_version(conn: sqlite3.Connection, path: str) -> int:
    version = recorded_version(conn)
    if version > CURRENT_VERSION:
        raise StoreTooNew(
            f"{path} was written by a newer arbor (schema {version}; this arbor knows up to "
            f"{CURRENT_VERSION}). Upgrade arbor to open it; the file was not changed."
        )
    return version


def apply_migrations(conn: sqlite3.Connection, path: str = "the store",
                     on_upgrade: Callable[[str], None] | None = None, backend=None) -> int:
    """Run pending migrations in order, in one transaction. Safe on every open. `backend`:
    the SQLite backend's class, for the migrations that write through it (the backend
    passes itself: this module is the backend's, never the other way round).

    `on_upgrade(name)` is told of each migration an existing store gets (not of those that
    create a new one), before it runs: some rebuild an index and take seconds."""
    version = check_version(conn, path)
    if version == CURRENT_VERSION:
        return version
    from core.model.clock import to_text

    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        version = check_version(conn, path)  # another process may have migrated meanwhile
        existing = version > 0
        for number, name, sql in MIGRATIONS:
            if number <= version:
                continue
            if existing and on_upgrade is not None:
                on_upgrade(name)
            if callable(sql):
                sql(conn, backend)
            else:
                for statement in _statements(sql):
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, to_text(None)),
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return CURRENT_VERSION


def make_new(conn: sqlite3.Connection, path: str = "the store", backend=None) -> int:
    """A new store (a file with no tables yet): the schema all the migrations give, made
    in one transaction from fresh_schema's statements, with the migrations recorded as
    applied. While fresh_schema is older than the migrations (one was added and the file
    not generated again), or once another process made the store meanwhile, the
    migrations run instead (apply_migrations)."""
    from . import fresh_schema

    if fresh_schema.VERSION != CURRENT_VERSION:
        return apply_migrations(conn, path, backend=backend)
    from core.model.clock import to_text

    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is not None:
            conn.execute("ROLLBACK")   # (another process made it first)
            return apply_migrations(conn, path, backend=backend)
        for statement in fresh_schema.STATEMENTS:
            conn.execute(statement)
        applied = to_text(None)
        conn.executemany(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
            [(number, name, applied) for number, name in fresh_schema.MIGRATIONS])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return CURRENT_VERSION


def _statements(sql: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    out, buf = [], []
    for line in sql.splitlines():
        if line.strip().startswith("--"):
            continue
        buf.append(line)
        candidate = "\n".join(buf)
        if candidate.strip().endswith(";") and sqlite3.complete_statement(candidate):
            out.append(candidate.strip())
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out
