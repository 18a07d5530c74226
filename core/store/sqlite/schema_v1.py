"""The SQLite store's first schema (migration 1): every table as arbor first made it.
The migrations after it (migrations.py) change it step by step; the schema of today is
this and those steps, applied in order."""

V1 = """
CREATE TABLE external_sessions (
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
);
CREATE INDEX idx_external_sessions_activity ON external_sessions(is_active, updated_at);
CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd, updated_at);

-- The entry tree. `seq` is the insertion cursor; `id` the entry's own id within its session.
-- `chain` is the seq of the first entry of the linear run this entry belongs to: an entry
-- whose parent had no child yet continues its parent's chain, any other starts a new one.
-- A root-to-head path is then a handful of (chain, depth range) pieces, so windows of a
-- 100,000-deep branch are index range scans rather than a walk of every parent.
CREATE TABLE entries (
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
);
CREATE INDEX idx_entries_parent ON entries(parent_seq);
CREATE INDEX idx_entries_chain ON entries(chain, depth);
CREATE INDEX idx_entries_compactions ON entries(chain, depth) WHERE type = 'compaction';
CREATE INDEX idx_entries_first_user ON entries(external_session_id, seq) WHERE role = 'user';

CREATE TABLE checkpoints (
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
);
CREATE INDEX idx_checkpoints_internal ON checkpoints(internal_session_id);
CREATE INDEX idx_checkpoints_external ON checkpoints(external_session_id);
CREATE INDEX idx_checkpoints_entry ON checkpoints(entry_seq);

CREATE TABLE internal_sessions (
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
);
CREATE INDEX idx_internal_sessions_external ON internal_sessions(external_session_id);
CREATE INDEX idx_internal_sessions_parent ON internal_sessions(parent_session_id);
CREATE INDEX idx_internal_sessions_branch ON internal_sessions(branch_point_checkpoint_id);
CREATE INDEX idx_internal_sessions_head ON internal_sessions(head_seq);
CREATE UNIQUE INDEX idx_internal_sessions_one_current
    ON internal_sessions(external_session_id) WHERE is_current = 1;

-- Labels are an append-only annotation log: the newest row for a target wins, NULL clears.
CREATE TABLE labels (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    target_seq INTEGER REFERENCES entries(seq) ON DELETE CASCADE,
    target_branch INTEGER REFERENCES internal_sessions(id) ON DELETE CASCADE,
    label TEXT,
    entry_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    CHECK ((target_seq IS NULL) != (target_branch IS NULL))
);
CREATE INDEX idx_labels_session ON labels(external_session_id, seq);
CREATE INDEX idx_labels_target ON labels(target_seq);
CREATE INDEX idx_labels_branch ON labels(target_branch);

-- Every head move that is not a plain append (rollback-style moves, diverging updates),
-- so that an entry no branch points at any more can still be found.
CREATE TABLE reflog (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    internal_session_id INTEGER NOT NULL REFERENCES internal_sessions(id) ON DELETE CASCADE,
    old_head_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    new_head_seq INTEGER REFERENCES entries(seq) ON DELETE SET NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_reflog_session ON reflog(internal_session_id);

CREATE TABLE usage (
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
);
CREATE INDEX idx_usage_session ON usage(external_session_id, seq);

CREATE TABLE session_run_events (
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
);
CREATE INDEX idx_run_events_session ON session_run_events(session_id, seq);

CREATE TABLE session_capability_events (
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
);
CREATE INDEX idx_capability_events_session ON session_capability_events(session_id, seq);

CREATE TABLE session_capabilities (
    session_id TEXT PRIMARY KEY,
    mode TEXT NOT NULL DEFAULT '',
    delegate_mode INTEGER NOT NULL DEFAULT 0,
    multi_agent INTEGER NOT NULL DEFAULT 0,
    workflows INTEGER NOT NULL DEFAULT 0,
    web_search INTEGER NOT NULL DEFAULT 0,
    browser INTEGER NOT NULL DEFAULT 0,
    a2a_master INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);

-- Records which source file an external session was imported from and how far, so that a
-- second import adds only what is new.
CREATE TABLE import_sources (
    path TEXT NOT NULL,
    source_key TEXT NOT NULL,
    external_session_id INTEGER NOT NULL REFERENCES external_sessions(id) ON DELETE CASCADE,
    format TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    mtime REAL NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT '{}',
    imported_at TEXT NOT NULL,
    PRIMARY KEY (source_key)
);
CREATE INDEX idx_import_sources_session ON import_sources(external_session_id);

-- Facts about the store itself (for example that it is the generated demo store).
CREATE TABLE store_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE VIRTUAL TABLE entries_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
"""
