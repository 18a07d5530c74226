"""The column lists that several concerns read, and the store's own key-value table.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations



ENTRY_COLUMNS = (
    "e.seq, e.id, e.external_session_id, e.parent_seq, e.type, e.timestamp, e.depth, "
    "e.chain, e.msg_index, e.role, e.data, p.id"
)

ENTRY_FROM = "entries e LEFT JOIN entries p ON p.seq = e.parent_seq"

INTERNAL_COLUMNS = (
    "i.id, i.external_session_id, i.langgraph_session_id, i.name, i.state_data, i.created_at, "
    "i.updated_at, i.is_current, i.checkpoint_count, i.parent_session_id, "
    "i.branch_point_checkpoint_id, i.fork_seq, i.head_seq, i.tool_invocation_count, i.metadata, "
    "h.id, h.msg_index, f.id, i.is_hidden"
)

INTERNAL_SELECT = (
    f"SELECT {INTERNAL_COLUMNS} FROM internal_sessions i LEFT JOIN entries h ON h.seq = i.head_seq "
    "LEFT JOIN entries f ON f.seq = i.fork_seq"
)

SQLITE_EXTERNAL_SELECT = (
    "SELECT x.id, x.uid, x.user_id, x.session_name, x.created_at, x.updated_at, x.is_active,"
    " x.metadata, x.total_checkpoints, x.cwd, x.source, x.kind, x.parent_session, x.message_count, "
    "(SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.parent_session_id IS NOT NULL), "
    "(SELECT i.langgraph_session_id FROM internal_sessions i "
    " WHERE i.external_session_id = x.id AND i.is_current = 1) FROM external_sessions x"
)

POSTGRES_EXTERNAL_SELECT = (
    "SELECT x.id, x.uid, x.user_id, x.session_name, x.created_at, x.updated_at, x.is_active,"
    " x.metadata, x.total_checkpoints, x.cwd, x.source, x.kind, x.parent_session, x.message_count, "
    "(SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.parent_session_id IS NOT NULL), "
    "(SELECT i.langgraph_session_id FROM internal_sessions i "
    " WHERE i.external_session_id = x.id AND i.is_current = 1), "
    # and the session's branch keys, as EXTERNAL_BRANCH_IDS gives them (api.sessions._from_row)
    "(SELECT array_agg(i.langgraph_session_id ORDER BY i.id) FROM internal_sessions i"
    " WHERE i.external_session_id = x.id) FROM external_sessions x"
)

CHECKPOINT_SELECT = (
    "SELECT c.id, c.external_session_id, c.internal_session_id, c.entry_seq, c.checkpoint_name,"
    " c.session_state, c.is_auto, c.created_at, c.metadata, c.tool_invocations, e.id, c.is_hidden"
    " FROM checkpoints c LEFT JOIN entries e ON e.seq = c.entry_seq"
)

CHECKPOINT_ORDER = " ORDER BY c.created_at DESC, c.id DESC"

OPLOG_COLUMNS = ("o.seq, o.kind, o.external_session_id, o.description, o.changes, o.undoes,"
                  " o.created_at")

SUMMARY_SELECT = (
    "SELECT x.id, x.uid, x.session_name, x.source, x.cwd, x.kind, x.created_at, x.updated_at,"
    " x.is_active, x.message_count, x.entry_count,"
    " (SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.is_hidden = 0),"
    " x.parent_id FROM external_sessions x"
)

# A session's totals per model, added to (the one-row path and the scratch merge alike).
SESSION_USAGE_ON_CONFLICT = (
    " ON CONFLICT(external_session_id, model) DO UPDATE SET"
    " responses = responses + excluded.responses,"
    " input_tokens = input_tokens + excluded.input_tokens,"
    " output_tokens = output_tokens + excluded.output_tokens,"
    " cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens,"
    " cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,"
    " reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,"
    " cost_usd = cost_usd + excluded.cost_usd, unpriced = unpriced + excluded.unpriced,"
    " subagent_cost_usd = subagent_cost_usd + excluded.subagent_cost_usd,"
    " subagent_tokens = subagent_tokens + excluded.subagent_tokens")




class SQLite:
    META_GET = "SELECT value FROM store_meta WHERE key = ?"
    META_SET = ("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT(key)"
                " DO UPDATE SET value = excluded.value")
    META_KEYS_WITH_PREFIX = "SELECT key FROM store_meta WHERE substr(key, 1, length(?1)) = ?1"
    META_DELETE = "DELETE FROM store_meta WHERE key = ?"


class Postgres:
    META_GET = "SELECT value FROM store_meta WHERE key = %s"
    META_SET = ("INSERT INTO store_meta(key, value) VALUES (%s, %s) ON CONFLICT(key)"
                " DO UPDATE SET value = excluded.value")
    META_KEYS_WITH_PREFIX = "SELECT key FROM store_meta WHERE starts_with(key, %s)"
    META_DELETE = "DELETE FROM store_meta WHERE key = %s"
