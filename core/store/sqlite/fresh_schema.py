"""A new SQLite store in one step: the schema that every migration of migrations.py gives an
empty store, as one list of statements run in one transaction (migrations.make_new), in
place of the migrations one by one (which create tables only to alter, rename and drop
them again: ~150 statements, about three times the CPU).

GENERATED from the migrations by fresh_schema_maker.py: after adding a migration, run

    python -m core.store.sqlite.fresh_schema_maker

to write this file again. Until then VERSION is below migrations.CURRENT_VERSION and new
stores are made by running the migrations (slower, never wrong);
tests/test_store_fresh_schema.py checks that what this file makes equals what migrating an
empty store makes.
"""

VERSION = 12

MIGRATIONS = (
    (1, 'initial schema'),
    (2, 'contentless search index without positions (a third of the size and insert time)'),
    (3, 'sessions know the session and entry they came from (sub-agents, forks)'),
    (4, 'an append touches fewer index pages (first user message kept in the session row)'),
    (5, "tokens and cost of every response, and each session's totals (read from its entries)"),
    (6, 'LangGraph checkpoints and pending writes of agents that write through arbor'),
    (7, 'import records keep what stat said in columns (a no-change import reads no JSON)'),
    (8, "an undo log of the app's operations; branches and checkpoints can be hidden"),
    (9, 'usage summed per hour, session and model, kept by triggers, and responses found by the prices they were priced with (fast usage reports)'),
    (10, "a no-change import reads the records' stamps from an index, not past each record's reader state"),
    (11, "search stems English words, ranks its hits and finds quoted phrases (a big store's index is rebuilt in the background)"),
    (12, 'an import sums its usage rows into the hourly buckets a batch at a time'),
)

STATEMENTS = (
    """CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)""",
    """CREATE TABLE external_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL DEFAULT 0,
    session_name TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    is_active INTEGER NOT NULL DEFAULT 1,
    metadata TEXT NOT NULL DEFAULT '{}',
    total_checkpoints INTEGER NOT NULL DEFAULT 0,
    cwd TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'arbor',
    kind TEXT NOT NULL DEFAULT 'session',
    parent_session TEXT,
    header_version INTEGER NOT NULL DEFAULT 3,
    message_count INTEGER NOT NULL DEFAULT 0,
    entry_count INTEGER NOT NULL DEFAULT 0
, parent_id INTEGER REFERENCES external_sessions(id) ON DELETE SET NULL, spawn_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL, spawn_ref TEXT, first_user_seq INTEGER)""",
    """CREATE INDEX idx_external_sessions_activity ON external_sessions(is_active, updated_at)""",
    """CREATE TABLE entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    parent_seq INTEGER REFERENCES entries(seq) ON DELETE CASCADE,
    type TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    depth INTEGER NOT NULL,
    chain INTEGER NOT NULL,
    msg_index INTEGER NOT NULL,
    role TEXT,
    data TEXT NOT NULL,
    UNIQUE (external_session_id, id)
)""",
    """CREATE INDEX idx_entries_parent ON entries(parent_seq)""",
    """CREATE INDEX idx_entries_chain ON entries(chain, depth)""",
    """CREATE INDEX idx_entries_compactions ON entries(chain, depth) WHERE type = 'compaction'""",
    """CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    internal_session_id INTEGER REFERENCES internal_sessions(id) ON DELETE SET NULL,
    entry_seq INTEGER REFERENCES entries(seq) ON DELETE CASCADE,
    checkpoint_name TEXT NOT NULL DEFAULT '',
    session_state TEXT NOT NULL DEFAULT '{}',
    is_auto INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    tool_invocations TEXT NOT NULL DEFAULT '[]'
, is_hidden INTEGER NOT NULL DEFAULT 0)""",
    """CREATE INDEX idx_checkpoints_internal ON checkpoints(internal_session_id)""",
    """CREATE INDEX idx_checkpoints_external ON checkpoints(external_session_id)""",
    """CREATE INDEX idx_checkpoints_entry ON checkpoints(entry_seq)""",
    """CREATE TABLE internal_sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    langgraph_session_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    state_data TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    is_current INTEGER NOT NULL DEFAULT 0,
    checkpoint_count INTEGER NOT NULL DEFAULT 0,
    parent_session_id INTEGER REFERENCES internal_sessions(id) ON DELETE SET NULL,
    branch_point_checkpoint_id INTEGER REFERENCES checkpoints(id) ON DELETE SET NULL,
    fork_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    head_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    tool_invocation_count INTEGER NOT NULL DEFAULT 0,
    metadata TEXT NOT NULL DEFAULT '{}'
, is_hidden INTEGER NOT NULL DEFAULT 0)""",
    """CREATE INDEX idx_internal_sessions_external ON internal_sessions(external_session_id)""",
    """CREATE INDEX idx_internal_sessions_parent ON internal_sessions(parent_session_id)""",
    """CREATE INDEX idx_internal_sessions_branch ON internal_sessions(branch_point_checkpoint_id)""",
    """CREATE INDEX idx_internal_sessions_head ON internal_sessions(head_seq)""",
    """CREATE UNIQUE INDEX idx_internal_sessions_one_current
    ON internal_sessions(external_session_id) WHERE is_current = 1""",
    """CREATE TABLE labels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    target_seq INTEGER REFERENCES entries(seq) ON DELETE CASCADE,
    target_branch INTEGER REFERENCES internal_sessions(id) ON DELETE CASCADE,
    label TEXT,
    entry_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    CHECK ((target_seq IS NULL) != (target_branch IS NULL))
)""",
    """CREATE INDEX idx_labels_session ON labels(external_session_id, seq)""",
    """CREATE INDEX idx_labels_target ON labels(target_seq)""",
    """CREATE INDEX idx_labels_branch ON labels(target_branch)""",
    """CREATE TABLE reflog (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    internal_session_id INTEGER NOT NULL REFERENCES internal_sessions(id) ON DELETE CASCADE,
    old_head_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    new_head_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
)""",
    """CREATE INDEX idx_reflog_session ON reflog(internal_session_id)""",
    """CREATE TABLE usage (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    provider TEXT NOT NULL DEFAULT '',
    protocol TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    total_tokens INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    timestamp TEXT NOT NULL
, entry_seq INTEGER REFERENCES entries(seq) ON DELETE CASCADE, chain INTEGER, depth INTEGER, response_key TEXT, cache_creation_tokens INTEGER NOT NULL DEFAULT 0, cache_creation_1h_tokens INTEGER NOT NULL DEFAULT 0, cache_read_tokens INTEGER NOT NULL DEFAULT 0, reasoning_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL, cost_logged INTEGER NOT NULL DEFAULT 0, price_basis INTEGER NOT NULL DEFAULT 0, fast INTEGER NOT NULL DEFAULT 0, subagent INTEGER NOT NULL DEFAULT 0, counted INTEGER NOT NULL DEFAULT 1, bucketed INTEGER NOT NULL DEFAULT 1)""",
    """CREATE INDEX idx_usage_session ON usage(external_session_id, seq)""",
    """CREATE TABLE session_run_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL DEFAULT '',
    event_type TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL DEFAULT '',
    timestamp TEXT NOT NULL,
    data TEXT
)""",
    """CREATE INDEX idx_run_events_session ON session_run_events(session_id, seq)""",
    """CREATE TABLE session_capability_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    run_id TEXT NOT NULL DEFAULT '',
    event_type TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    actor TEXT NOT NULL DEFAULT '',
    capability TEXT NOT NULL DEFAULT '',
    old_value TEXT NOT NULL DEFAULT '',
    new_value TEXT NOT NULL DEFAULT '',
    timestamp TEXT NOT NULL,
    data TEXT
)""",
    """CREATE INDEX idx_capability_events_session ON session_capability_events(session_id, seq)""",
    """CREATE TABLE session_capabilities (
    session_id TEXT PRIMARY KEY,
    mode TEXT NOT NULL DEFAULT '',
    delegate_mode INTEGER NOT NULL DEFAULT 0,
    multi_agent INTEGER NOT NULL DEFAULT 0,
    workflows INTEGER NOT NULL DEFAULT 0,
    web_search INTEGER NOT NULL DEFAULT 0,
    browser INTEGER NOT NULL DEFAULT 0,
    a2a_master INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
)""",
    """CREATE TABLE import_sources (
    path TEXT NOT NULL,
    source_key TEXT NOT NULL,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    format TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    mtime REAL NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT '{}',
    imported_at TEXT NOT NULL, record_version INTEGER, complete INTEGER NOT NULL DEFAULT 0, mtime_ns INTEGER, inode INTEGER, device INTEGER, lines INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (source_key)
)""",
    """CREATE INDEX idx_import_sources_session ON import_sources(external_session_id)""",
    """CREATE TABLE store_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
)""",
    """CREATE INDEX idx_external_sessions_parent ON external_sessions(parent_id)""",
    """CREATE INDEX idx_external_sessions_spawn ON external_sessions(spawn_seq)
    WHERE spawn_seq IS NOT NULL""",
    """CREATE INDEX idx_external_sessions_parent_ref ON external_sessions(parent_session)
    WHERE parent_session IS NOT NULL""",
    """CREATE TABLE spawn_points (
    spawn_key TEXT NOT NULL,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL REFERENCES entries(seq) ON DELETE CASCADE,
    PRIMARY KEY (spawn_key, external_session_id)
)""",
    """CREATE INDEX idx_spawn_points_session ON spawn_points(external_session_id)""",
    """CREATE INDEX idx_spawn_points_seq ON spawn_points(seq)""",
    """CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd)""",
    """CREATE UNIQUE INDEX idx_usage_response ON usage(external_session_id, response_key)
    WHERE response_key IS NOT NULL""",
    """CREATE INDEX idx_usage_key ON usage(response_key) WHERE response_key IS NOT NULL""",
    """CREATE INDEX idx_usage_entry ON usage(entry_seq) WHERE entry_seq IS NOT NULL""",
    """CREATE INDEX idx_usage_path ON usage(chain, depth) WHERE chain IS NOT NULL""",
    """CREATE TABLE session_usage (
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
) WITHOUT ROWID""",
    """CREATE TABLE langgraph_threads (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    external_session_id INTEGER NOT NULL UNIQUE REFERENCES external_sessions(id) ON DELETE CASCADE,
    PRIMARY KEY (thread_id, checkpoint_ns)
)""",
    """CREATE TABLE langgraph_checkpoints (
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
)""",
    """CREATE INDEX idx_langgraph_checkpoints_entry ON langgraph_checkpoints(entry_seq)""",
    """CREATE INDEX idx_langgraph_checkpoints_ref ON langgraph_checkpoints(checkpoint_ref)""",
    """CREATE INDEX idx_langgraph_checkpoints_parent
    ON langgraph_checkpoints(external_session_id, parent_checkpoint_id)""",
    """CREATE TABLE langgraph_writes (
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (external_session_id, checkpoint_id, task_id, idx)
)""",
    """CREATE TABLE operation_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    external_session_id INTEGER REFERENCES external_sessions(id) ON DELETE CASCADE,
    description TEXT NOT NULL DEFAULT '',
    changes TEXT NOT NULL DEFAULT '[]',
    undoes INTEGER REFERENCES operation_log(seq) ON DELETE CASCADE,
    created_at TEXT NOT NULL
)""",
    """CREATE INDEX idx_operation_log_undoes ON operation_log(undoes)
    WHERE undoes IS NOT NULL""",
    """CREATE INDEX idx_operation_log_session ON operation_log(external_session_id)""",
    """CREATE TABLE usage_buckets (
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
    PRIMARY KEY (counted, hour, external_session_id, model)
) WITHOUT ROWID""",
    """CREATE INDEX idx_usage_basis ON usage(price_basis)""",
    """CREATE TRIGGER usage_buckets_delete AFTER DELETE ON usage BEGIN
    INSERT INTO usage_buckets(counted, hour, external_session_id, model, responses, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced, subagent_cost_usd, subagent_tokens) VALUES (OLD.counted, substr(OLD.timestamp, 1, 13), OLD.external_session_id, OLD.model, -1, -OLD.input_tokens, -OLD.output_tokens, -OLD.cache_creation_tokens, -OLD.cache_read_tokens, -OLD.reasoning_tokens, -COALESCE(OLD.cost_usd, 0), -(OLD.cost_usd IS NULL), -(CASE WHEN OLD.subagent = 1 THEN COALESCE(OLD.cost_usd, 0) ELSE 0 END), -(CASE WHEN OLD.subagent = 1 THEN OLD.input_tokens + OLD.output_tokens + OLD.cache_creation_tokens + OLD.cache_read_tokens ELSE 0 END)) ON CONFLICT(counted, hour, external_session_id, model) DO UPDATE SET responses = responses + excluded.responses, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens, cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd, unpriced = unpriced + excluded.unpriced, subagent_cost_usd = subagent_cost_usd + excluded.subagent_cost_usd, subagent_tokens = subagent_tokens + excluded.subagent_tokens;
    DELETE FROM usage_buckets WHERE counted = OLD.counted AND hour = substr(OLD.timestamp, 1, 13) AND external_session_id = OLD.external_session_id AND model = OLD.model AND responses = 0;
END""",
    """CREATE TRIGGER usage_buckets_update AFTER UPDATE OF counted, timestamp,
    external_session_id, model, input_tokens, output_tokens, cache_creation_tokens,
    cache_read_tokens, reasoning_tokens, cost_usd, subagent ON usage BEGIN
    INSERT INTO usage_buckets(counted, hour, external_session_id, model, responses, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced, subagent_cost_usd, subagent_tokens) VALUES (OLD.counted, substr(OLD.timestamp, 1, 13), OLD.external_session_id, OLD.model, -1, -OLD.input_tokens, -OLD.output_tokens, -OLD.cache_creation_tokens, -OLD.cache_read_tokens, -OLD.reasoning_tokens, -COALESCE(OLD.cost_usd, 0), -(OLD.cost_usd IS NULL), -(CASE WHEN OLD.subagent = 1 THEN COALESCE(OLD.cost_usd, 0) ELSE 0 END), -(CASE WHEN OLD.subagent = 1 THEN OLD.input_tokens + OLD.output_tokens + OLD.cache_creation_tokens + OLD.cache_read_tokens ELSE 0 END)) ON CONFLICT(counted, hour, external_session_id, model) DO UPDATE SET responses = responses + excluded.responses, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens, cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd, unpriced = unpriced + excluded.unpriced, subagent_cost_usd = subagent_cost_usd + excluded.subagent_cost_usd, subagent_tokens = subagent_tokens + excluded.subagent_tokens;
    DELETE FROM usage_buckets WHERE counted = OLD.counted AND hour = substr(OLD.timestamp, 1, 13) AND external_session_id = OLD.external_session_id AND model = OLD.model AND responses = 0;
    INSERT INTO usage_buckets(counted, hour, external_session_id, model, responses, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced, subagent_cost_usd, subagent_tokens) VALUES (NEW.counted, substr(NEW.timestamp, 1, 13), NEW.external_session_id, NEW.model, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_creation_tokens, NEW.cache_read_tokens, NEW.reasoning_tokens, COALESCE(NEW.cost_usd, 0), (NEW.cost_usd IS NULL), (CASE WHEN NEW.subagent = 1 THEN COALESCE(NEW.cost_usd, 0) ELSE 0 END), (CASE WHEN NEW.subagent = 1 THEN NEW.input_tokens + NEW.output_tokens + NEW.cache_creation_tokens + NEW.cache_read_tokens ELSE 0 END)) ON CONFLICT(counted, hour, external_session_id, model) DO UPDATE SET responses = responses + excluded.responses, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens, cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd, unpriced = unpriced + excluded.unpriced, subagent_cost_usd = subagent_cost_usd + excluded.subagent_cost_usd, subagent_tokens = subagent_tokens + excluded.subagent_tokens;
END""",
    """CREATE INDEX idx_import_stamps ON import_sources(
    source_key, record_version, complete, size, mtime_ns, inode, device, lines)""",
    """CREATE VIRTUAL TABLE entries_fts USING fts5(text, content = '', tokenize = 'porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER usage_buckets_insert AFTER INSERT ON usage WHEN NEW.bucketed = 1 BEGIN INSERT INTO usage_buckets(counted, hour, external_session_id, model, responses, input_tokens, output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced, subagent_cost_usd, subagent_tokens) VALUES (NEW.counted, substr(NEW.timestamp, 1, 13), NEW.external_session_id, NEW.model, 1, NEW.input_tokens, NEW.output_tokens, NEW.cache_creation_tokens, NEW.cache_read_tokens, NEW.reasoning_tokens, COALESCE(NEW.cost_usd, 0), (NEW.cost_usd IS NULL), (CASE WHEN NEW.subagent = 1 THEN COALESCE(NEW.cost_usd, 0) ELSE 0 END), (CASE WHEN NEW.subagent = 1 THEN NEW.input_tokens + NEW.output_tokens + NEW.cache_creation_tokens + NEW.cache_read_tokens ELSE 0 END)) ON CONFLICT(counted, hour, external_session_id, model) DO UPDATE SET responses = responses + excluded.responses, input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens, cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens, cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens, reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd, unpriced = unpriced + excluded.unpriced, subagent_cost_usd = subagent_cost_usd + excluded.subagent_cost_usd, subagent_tokens = subagent_tokens + excluded.subagent_tokens; END""",
)
