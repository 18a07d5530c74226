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

from ..errors import StoreDamaged, StoreNotFound, StoreUnavailable, StoreUnreachable
from ..paths import PostgresURL
from . import postgres_reconnect as reconnecting
from .migrations import postgres as migrations
from . import postgres_search
from .postgres_bulk import CopyWriter, Lexemes, search_text
from .postgres_reconnect import CONNECT_TIMEOUT, broke

LISTEN_RETRY_MAX = 5      # seconds between tries to listen again after the server went away
POOL_TIMEOUT = 30         # seconds to wait for a connection of the pool (all of it in use)
LOCK_TIMEOUT_MS = 60_000  # a writer waits this long for the store's write lock
CHANNEL = "arbor_changes"  # NOTIFY channel; the payload is the store's schema
# The store's write lock: one advisory lock per schema (two stores in one database do not
# wait on each other). 0x4152_424f is "ARBO".
WRITE_LOCK = "SELECT pg_advisory_xact_lock(1095910991, hashtext(current_schema()))"

_ENTRY_COLUMNS = (
    "e.seq, e.id, e.external_session_id, e.parent_seq, e.type, e.timestamp, e.depth, "
    "e.chain, e.msg_index, e.role, e.data, p.id"
)
_ENTRY_FROM = "entries e LEFT JOIN entries p ON p.seq = e.parent_seq"

_INTERNAL_COLUMNS = (
    "i.id, i.external_session_id, i.langgraph_session_id, i.name, i.state_data, i.created_at, "
    "i.updated_at, i.is_current, i.checkpoint_count, i.parent_session_id, "
    "i.branch_point_checkpoint_id, i.fork_seq, i.head_seq, i.tool_invocation_count, i.metadata, "
    "h.id, h.msg_index, f.id, i.is_hidden"
)
_INTERNAL_SELECT = (
    f"SELECT {_INTERNAL_COLUMNS} FROM internal_sessions i LEFT JOIN entries h ON h.seq = i.head_seq "
    "LEFT JOIN entries f ON f.seq = i.fork_seq"
)

_EXTERNAL_SELECT = (
    "SELECT x.id, x.uid, x.user_id, x.session_name, x.created_at, x.updated_at, x.is_active,"
    " x.metadata, x.total_checkpoints, x.cwd, x.source, x.kind, x.parent_session, x.message_count, "
    "(SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.parent_session_id IS NOT NULL), "
    "(SELECT i.langgraph_session_id FROM internal_sessions i "
    " WHERE i.external_session_id = x.id AND i.is_current = 1), "
    # and the session's branch keys, as EXTERNAL_BRANCH_IDS gives them (api._external_from_row)
    "(SELECT array_agg(i.langgraph_session_id ORDER BY i.id) FROM internal_sessions i"
    " WHERE i.external_session_id = x.id) FROM external_sessions x"
)

_CHECKPOINT_SELECT = (
    "SELECT c.id, c.external_session_id, c.internal_session_id, c.entry_seq, c.checkpoint_name,"
    " c.session_state, c.is_auto, c.created_at, c.metadata, c.tool_invocations, e.id, c.is_hidden"
    " FROM checkpoints c LEFT JOIN entries e ON e.seq = c.entry_seq"
)
_CHECKPOINT_ORDER = " ORDER BY c.created_at DESC, c.id DESC"

_OPLOG_COLUMNS = ("o.seq, o.kind, o.external_session_id, o.description, o.changes, o.undoes,"
                  " o.created_at")

_SUMMARY_SELECT = (
    "SELECT x.id, x.uid, x.session_name, x.source, x.cwd, x.kind, x.created_at, x.updated_at,"
    " x.is_active, x.message_count, x.entry_count,"
    " (SELECT COUNT(*) FROM internal_sessions i WHERE i.external_session_id = x.id"
    " AND i.is_hidden = 0),"
    " x.parent_id FROM external_sessions x"
)


class Statements:
    """Every statement of the store API, by name (the same names as `sqlite.Statements`).
    Parameters are positional (`%s`)."""

    # ------------------------------------------------------------------ meta
    META_GET = "SELECT value FROM store_meta WHERE key = %s"
    META_SET = ("INSERT INTO store_meta(key, value) VALUES (%s, %s) ON CONFLICT(key)"
                " DO UPDATE SET value = excluded.value")
    META_KEYS_WITH_PREFIX = "SELECT key FROM store_meta WHERE starts_with(key, %s)"
    META_DELETE = "DELETE FROM store_meta WHERE key = %s"

    # ----------------------------------------------------- external sessions
    EXTERNAL_INSERT = (
        "INSERT INTO external_sessions(uid, user_id, session_name, created_at, updated_at,"
        " metadata, cwd, source, kind, parent_session, header_version)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (uid) DO NOTHING RETURNING id")
    EXTERNAL_BY_ID = f"{_EXTERNAL_SELECT} WHERE x.id = %s"
    EXTERNAL_BY_UID = f"{_EXTERNAL_SELECT} WHERE x.uid = %s"
    EXTERNAL_BRANCH_IDS = ("SELECT langgraph_session_id FROM internal_sessions"
                           " WHERE external_session_id = %s ORDER BY id")
    EXTERNAL_UPDATE = (
        "UPDATE external_sessions SET session_name = %s, is_active = %s, metadata = %s,"
        " total_checkpoints = %s, user_id = %s, cwd = %s, updated_at = %s WHERE id = %s")
    EXTERNAL_RENAME = "UPDATE external_sessions SET session_name = %s WHERE id = %s"
    EXTERNAL_SET_ACTIVE = "UPDATE external_sessions SET is_active = %s WHERE id = %s"
    EXTERNAL_TOUCH = "UPDATE external_sessions SET updated_at = GREATEST(updated_at, %s) WHERE id = %s"
    EXTERNAL_COUNT_ENTRIES = (
        "UPDATE external_sessions SET entry_count = entry_count + %s,"
        " message_count = message_count + %s, updated_at = GREATEST(updated_at, %s),"
        " first_user_seq = COALESCE(first_user_seq, %s) WHERE id = %s")
    EXTERNAL_COUNT_CHECKPOINT = ("UPDATE external_sessions SET total_checkpoints ="
                                 " total_checkpoints + 1 WHERE id = %s")
    EXTERNAL_UID = "SELECT uid FROM external_sessions WHERE id = %s"
    EXTERNAL_NAME = "SELECT session_name FROM external_sessions WHERE id = %s"
    EXTERNAL_METADATA = "SELECT metadata FROM external_sessions WHERE id = %s"
    EXTERNAL_SET_METADATA = "UPDATE external_sessions SET metadata = %s WHERE id = %s"
    EXTERNAL_SET_CWD_IF_EMPTY = "UPDATE external_sessions SET cwd = %s WHERE id = %s AND cwd = ''"
    EXTERNAL_TOTALS = (
        "SELECT (SELECT COUNT(*) FROM entries WHERE external_session_id = %s),"
        " (SELECT COUNT(*) FROM internal_sessions WHERE external_session_id = %s)")
    EXTERNAL_KEPT_TOTALS = (
        "SELECT x.entry_count, (SELECT COUNT(*) FROM internal_sessions i"
        " WHERE i.external_session_id = x.id) FROM external_sessions x WHERE x.id = %s")
    EXTERNAL_COUNT = "SELECT COUNT(*) FROM external_sessions"
    EXTERNAL_COUNT_OF_USER = "SELECT COUNT(*) FROM external_sessions WHERE user_id = %s"
    EXTERNAL_COUNT_ARCHIVED = "SELECT COUNT(*) FROM external_sessions WHERE is_active = 0"
    EXTERNAL_DELETE = "DELETE FROM external_sessions WHERE id = %s"
    EXTERNAL_DETACH_BRANCHES = ("UPDATE internal_sessions SET head_seq = NULL, fork_seq = NULL"
                                " WHERE external_session_id = %s")
    EXTERNAL_DELETE_ENTRIES = "DELETE FROM entries WHERE external_session_id = %s"
    EXTERNAL_DELETE_EVENTS = (
        "DELETE FROM session_run_events WHERE session_id = %s",
        "DELETE FROM session_capability_events WHERE session_id = %s",
        "DELETE FROM session_capabilities WHERE session_id = %s",
    )

    @staticmethod
    def find_external_sessions(*, uid_prefix: str | None, cwd: str | None, kind: str | None,
                               active: bool | None, user_id: int | None, limit: int | None
                               ) -> tuple[str, list[Any]]:
        """Sessions matching the filters given (None: any), newest activity first."""
        where, args = [], []
        if uid_prefix is not None:
            where.append("x.uid >= %s AND x.uid < %s")
            args += [uid_prefix, uid_prefix + "\U0010ffff"]
        if cwd is not None:
            where.append("x.cwd = %s")
            args.append(cwd)
        if kind is not None:
            where.append("x.kind = %s")
            args.append(kind)
        if active is not None:
            where.append("x.is_active = %s")
            args.append(1 if active else 0)
        if user_id is not None:
            where.append("x.user_id = %s")
            args.append(user_id)
        sql = _EXTERNAL_SELECT
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return sql, args

    @staticmethod
    def sessions_by_metadata(count: int) -> str:
        """Sessions of a source whose metadata has `count` keys equal to values and one key
        unset (parameters: source, then key and value `count` times, then the unset key)."""
        equal = "".join(" AND (x.metadata::json ->> %s) = %s::text" for _ in range(count))
        return (f"{_EXTERNAL_SELECT} WHERE x.source = %s{equal}"
                " AND (x.metadata::json -> %s) IS NULL ORDER BY x.id")

    @staticmethod
    def session_listing(*, kind: str, cwd: str | None, preview: bool) -> tuple[str, list[Any]]:
        """(uid, name, cwd, updated_at, message count, first user message's data or NULL)
        of the sessions of a kind (and folder), newest activity first."""
        first_user = ("(SELECT u.data FROM entries u WHERE u.seq = x.first_user_seq)"
                      if preview else "NULL")
        sql = ("SELECT x.uid, x.session_name, x.cwd, x.updated_at, x.message_count, "
               f"{first_user} FROM external_sessions x WHERE x.kind = %s")
        args: list[Any] = [kind]
        if cwd is not None:
            sql += " AND x.cwd = %s"
            args.append(cwd)
        return sql + " ORDER BY x.updated_at DESC, x.id DESC", args

    @staticmethod
    def list_sessions(*, include_archived: bool, limit: int | None) -> str:
        sql = _SUMMARY_SELECT
        if not include_archived:
            sql += " WHERE x.is_active = 1"
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return sql

    @staticmethod
    def sessions_with_ids(count: int) -> str:
        """The session list's rows of `count` sessions, by id (any order)."""
        return _SUMMARY_SELECT + " WHERE x.id IN (" + ",".join(["%s"] * count) + ")"

    # every session's name, for search to score (core/name_match.py)
    SESSION_NAMES = "SELECT id, session_name, uid FROM external_sessions ORDER BY updated_at DESC, id DESC"
    SESSION_NAMES_ACTIVE = ("SELECT id, session_name, uid FROM external_sessions WHERE is_active = 1"
                            " ORDER BY updated_at DESC, id DESC")

    # --------------------------------------------------------------- lineage
    # (core.lineage: sub-agents and forks under the session and entry they came from)
    SPAWN_POINT_ADD = ("INSERT INTO spawn_points(spawn_key, external_session_id, seq)"
                       " VALUES (%s,%s,%s) ON CONFLICT DO NOTHING")
    # (a key may be in several sessions: a fork copies its source's tool calls; the one in
    # the session the child names, or in a sub-agent of it, comes first)
    SPAWN_POINT = ("SELECT sp.external_session_id, sp.seq FROM spawn_points sp"
                   " JOIN external_sessions x ON x.id = sp.external_session_id"
                   " WHERE sp.spawn_key = %s"
                   " ORDER BY COALESCE(x.uid = %s OR x.parent_session = %s, FALSE) DESC,"
                   " sp.external_session_id"
                   " LIMIT 1")
    LINEAGE_SET = ("UPDATE external_sessions SET kind = COALESCE(%s, kind),"
                   " parent_session = COALESCE(%s, parent_session),"
                   " spawn_ref = COALESCE(%s, spawn_ref) WHERE id = %s")
    LINEAGE_UNLINKED = ("SELECT id, kind, parent_session, spawn_ref, parent_id FROM external_sessions"
                        " WHERE parent_session IS NOT NULL AND (parent_id IS NULL"
                        " OR (spawn_ref IS NOT NULL AND spawn_seq IS NULL))")
    LINEAGE_PARENT_OF = "SELECT parent_id FROM external_sessions WHERE id = %s"
    LINEAGE_LINK = ("UPDATE external_sessions SET parent_id = %s, spawn_seq = COALESCE(%s, spawn_seq)"
                    " WHERE id = %s")
    LINEAGE_LAST_SHARED = (
        "SELECT p.seq FROM entries c JOIN entries p ON p.external_session_id = %s AND p.id = c.id"
        " WHERE c.external_session_id = %s ORDER BY c.depth DESC, c.seq DESC LIMIT 1")
    LINEAGE_CHILDREN = (
        "SELECT x.id, x.kind, x.session_name, x.spawn_seq, e.depth, x.message_count,"
        " x.updated_at, x.is_active, x.metadata FROM external_sessions x"
        " LEFT JOIN entries e ON e.seq = x.spawn_seq"
        " WHERE x.parent_id = %s ORDER BY x.created_at, x.id")
    SESSION_ID_BY_UID = "SELECT id FROM external_sessions WHERE uid = %s"
    SESSION_ID_BY_SOURCE_KEY = "SELECT external_session_id FROM import_sources WHERE source_key = %s"
    IMPORT_SOURCE_KEYS = "SELECT source_key, format FROM import_sources"

    # ----------------------------------------------------- internal sessions
    INTERNAL_BY_ID = f"{_INTERNAL_SELECT} WHERE i.id = %s"
    INTERNAL_BY_LANGGRAPH_ID = f"{_INTERNAL_SELECT} WHERE i.langgraph_session_id = %s"
    INTERNAL_OF_SESSION_NEWEST_FIRST = (f"{_INTERNAL_SELECT} WHERE i.external_session_id = %s"
                                        " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_OF_SESSION = f"{_INTERNAL_SELECT} WHERE i.external_session_id = %s ORDER BY i.id"
    INTERNAL_CHILDREN = (f"{_INTERNAL_SELECT} WHERE i.parent_session_id = %s"
                         " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_CURRENT = f"{_INTERNAL_SELECT} WHERE i.external_session_id = %s AND i.is_current = 1"
    INTERNAL_INSERT = (
        "INSERT INTO internal_sessions(external_session_id, langgraph_session_id, name, state_data,"
        " created_at, updated_at, is_current, checkpoint_count, parent_session_id,"
        " branch_point_checkpoint_id, fork_seq, head_seq, tool_invocation_count, metadata)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT (langgraph_session_id) DO NOTHING RETURNING id")
    INTERNAL_BY_LANGGRAPH_IN_SESSION = ("SELECT id FROM internal_sessions WHERE langgraph_session_id"
                                        " = %s AND external_session_id = %s")
    INTERNAL_COUNT = "SELECT COUNT(*) FROM internal_sessions WHERE external_session_id = %s"
    INTERNAL_SESSION_OF = "SELECT external_session_id FROM internal_sessions WHERE id = %s"
    INTERNAL_CLEAR_CURRENT = ("UPDATE internal_sessions SET is_current = 0"
                              " WHERE external_session_id = %s AND is_current = 1")
    INTERNAL_CLEAR_OTHER_CURRENT = ("UPDATE internal_sessions SET is_current = 0"
                                    " WHERE external_session_id = %s AND is_current = 1 AND id != %s")
    INTERNAL_SET_CURRENT = "UPDATE internal_sessions SET is_current = 1 WHERE id = %s"
    INTERNAL_UNSET_CURRENT = "UPDATE internal_sessions SET is_current = 0 WHERE id = %s"
    INTERNAL_HEADS = ("SELECT id, head_seq FROM internal_sessions WHERE external_session_id = %s"
                      " ORDER BY id")
    INTERNAL_KEY_TAKEN = "SELECT 1 FROM internal_sessions WHERE langgraph_session_id = %s"
    INTERNAL_ADD_TOOL_CALLS_TO_CURRENT = (
        "UPDATE internal_sessions SET tool_invocation_count = tool_invocation_count + %s"
        " WHERE external_session_id = %s AND is_current = 1")
    INTERNAL_CURRENT_ID = ("SELECT id FROM internal_sessions WHERE external_session_id = %s"
                           " AND is_current = 1")
    INTERNAL_DELETE = "DELETE FROM internal_sessions WHERE id = %s"
    # The head of a branch about to be moved, locked: appends to one branch from many
    # connections and hosts queue on this row and each reads the head the one before it left.
    INTERNAL_TARGET_FOR_UPDATE = ("SELECT external_session_id, head_seq FROM internal_sessions"
                                  " WHERE id = %s FOR UPDATE")
    INTERNAL_FOR_CHECKPOINT = ("SELECT external_session_id, head_seq, state_data FROM"
                               " internal_sessions WHERE id = %s")
    INTERNAL_MOVE_HEAD = "UPDATE internal_sessions SET head_seq = %s, updated_at = %s WHERE id = %s"
    INTERNAL_ADVANCE_HEAD = ("UPDATE internal_sessions SET head_seq = %s, updated_at = %s,"
                             " tool_invocation_count = tool_invocation_count + %s WHERE id = %s")
    INTERNAL_COUNT_CHECKPOINT = ("UPDATE internal_sessions SET checkpoint_count ="
                                 " checkpoint_count + 1 WHERE id = %s")
    _INTERNAL_FIELDS = {
        "session_state": "state_data", "metadata": "metadata", "checkpoint_count": "checkpoint_count",
        "name": "name", "tool_invocation_count": "tool_invocation_count", "updated_at": "updated_at",
    }

    @staticmethod
    def update_internal_fields(fields: Sequence[str]) -> str:
        """An UPDATE of these fields of a branch (parameters: their values, then the id)."""
        sets = ", ".join(f"{Statements._INTERNAL_FIELDS[name]} = %s" for name in fields)
        return f"UPDATE internal_sessions SET {sets} WHERE id = %s"

    REFLOG_INSERT = ("INSERT INTO reflog(internal_session_id, old_head_seq, new_head_seq, reason,"
                     " created_at) VALUES (%s,%s,%s,%s,%s)")
    REFLOG_OF_BRANCH = ("SELECT old_head_seq, new_head_seq, reason, created_at FROM reflog"
                        " WHERE internal_session_id = %s ORDER BY seq")
    INTERNAL_SET_HIDDEN = "UPDATE internal_sessions SET is_hidden = %s WHERE id = %s"

    # --------------------------------------------------------------- entries
    ENTRY_INSERT = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
                    " depth, chain, msg_index, role, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    ENTRY_BY_SEQ = f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.seq = %s"
    ENTRY_BY_ID = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = %s"
                   " AND e.id = %s")
    ENTRY_ID_OF = "SELECT id FROM entries WHERE seq = %s"
    ENTRY_SESSION_OF = "SELECT external_session_id FROM entries WHERE seq = %s"
    ENTRY_PARENT_OF = "SELECT parent_seq FROM entries WHERE seq = %s"
    ENTRY_TIMESTAMP_OF = "SELECT timestamp FROM entries WHERE seq = %s"
    ENTRY_SPAN_OF_SESSION = ("SELECT MIN(seq), MAX(seq), COUNT(*) FROM entries"
                             " WHERE external_session_id = %s")
    # a session's (seq, parent seq) in seq order (the planner picks the index itself)
    ENTRY_PARENTS_IN_SPAN = ("SELECT seq, parent_seq FROM entries WHERE seq BETWEEN %s AND %s"
                             " AND external_session_id = %s ORDER BY seq")
    ENTRY_PARENTS_OF_SESSION = ("SELECT seq, parent_seq FROM entries WHERE external_session_id = %s"
                                " ORDER BY seq")
    # the shape of a session's tree, for the entry tree view (no data: it is read per row)
    ENTRY_OUTLINE_OF_SESSION = ("SELECT seq, parent_seq, type, role FROM entries"
                                " WHERE external_session_id = %s ORDER BY seq")
    ENTRY_DATA_FIELD_OF_SESSION = ("SELECT seq, parent_seq, data::json -> %s"
                                   " FROM entries WHERE external_session_id = %s ORDER BY seq")
    ENTRY_ID_TAKEN = "SELECT 1 FROM entries WHERE external_session_id = %s AND id = %s"
    ENTRY_IDS_OF_SESSION = "SELECT id FROM entries WHERE external_session_id = %s"
    EXTERNAL_ENTRY_COUNT = "SELECT entry_count FROM external_sessions WHERE id = %s"
    ENTRY_PARENT_FACTS = (
        "SELECT depth, chain, msg_index, external_session_id,"
        " EXISTS(SELECT 1 FROM entries c WHERE c.parent_seq = entries.seq)"
        " FROM entries WHERE seq = %s")
    ENTRY_SEQS_WITH_ID = "SELECT seq FROM entries WHERE id = %s ORDER BY seq LIMIT %s"
    ENTRY_SEQS_OF_SESSION = "SELECT id, seq FROM entries WHERE external_session_id = %s"
    ENTRY_SEQ_OF_ID = "SELECT seq FROM entries WHERE external_session_id = %s AND id = %s"
    ENTRY_LINK = "SELECT id, parent_seq FROM entries WHERE seq = %s"
    ENTRY_NEWEST_CHILD = "SELECT MAX(seq) FROM entries WHERE parent_seq = %s"

    # ------------------------------------------------------- import records
    IMPORT_RECORDS = "SELECT source_key, state FROM import_sources"
    IMPORT_STAMPS = ("SELECT source_key, record_version, complete, size, mtime_ns, inode, device,"
                     " lines FROM import_sources")
    # the whole record (a cast of text that is not JSON would abort the transaction):
    # importers.unchanged.sessions_of takes its "sessions"
    IMPORT_RECORD_SESSIONS = "SELECT source_key, state FROM import_sources"

    @staticmethod
    def session_summaries(count: int) -> str:
        """uid, name, source, entries and branches of `count` sessions given by uid."""
        marks = ",".join(["%s"] * count)
        return ("SELECT x.uid, x.session_name, x.source, x.entry_count, (SELECT COUNT(*) FROM"
                " internal_sessions i WHERE i.external_session_id = x.id) FROM external_sessions"
                f" x WHERE x.uid IN ({marks})")
    ENTRIES_OF_SESSION = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id"
                          " = %s AND e.seq > %s ORDER BY e.seq")
    ENTRIES_OF_SESSION_LIMIT = ENTRIES_OF_SESSION + " LIMIT %s"
    ENTRY_CHILDREN = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.parent_seq = %s"
                      " ORDER BY e.seq")
    ENTRY_LEAVES = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = %s"
                    " AND NOT EXISTS (SELECT 1 FROM entries c WHERE c.parent_seq = e.seq)"
                    " ORDER BY e.seq")

    # ----------------------------------------------------------------- paths
    PATH_DEPTH_CHAIN = "SELECT depth, chain FROM entries WHERE seq = %s"
    PATH_CHAIN_START = "SELECT depth, parent_seq FROM entries WHERE seq = %s"
    PATH_PIECE = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.chain = %s AND e.depth"
                  " BETWEEN %s AND %s ORDER BY e.depth")
    PATH_SEQ_AT_DEPTH = "SELECT seq FROM entries WHERE chain = %s AND depth = %s"
    # plans over long paths: counted, or read at their ends, never all of it
    PATH_MSG_INDEX = "SELECT msg_index FROM entries WHERE chain = %s AND depth = %s"
    PATH_COMPACTION_COUNT = ("SELECT COUNT(*) FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                             " AND type = 'compaction'")
    PATH_FIRST = f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.chain = %s AND e.depth BETWEEN %s AND %s"
    PATH_FIRST_OF_TYPE = f"{PATH_FIRST} AND e.type = %s ORDER BY e.depth LIMIT 1"
    PATH_LAST_OF_TYPE = f"{PATH_FIRST} AND e.type = %s ORDER BY e.depth DESC LIMIT 1"
    PATH_FIRST_NOT_OF_TYPE = f"{PATH_FIRST} AND e.type != %s ORDER BY e.depth LIMIT 1"
    PATH_LAST_NOT_OF_TYPE = f"{PATH_FIRST} AND e.type != %s ORDER BY e.depth DESC LIMIT 1"
    # (a negative limit is none, as on SQLite)
    PATH_MESSAGES = ("SELECT data FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                     " AND type = 'message' ORDER BY depth LIMIT NULLIF(GREATEST(%s, -1), -1)")
    PATH_MESSAGES_NEWEST = ("SELECT data FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                            " AND type = 'message' ORDER BY depth DESC"
                            " LIMIT NULLIF(GREATEST(%s, -1), -1)")
    PATH_ROLE_MESSAGES = ("SELECT data FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                          " AND type = 'message' AND role = %s ORDER BY depth"
                          " LIMIT NULLIF(GREATEST(%s, -1), -1)")
    PATH_ROLE_MESSAGES_NEWEST = ("SELECT data FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                                 " AND type = 'message' AND role = %s ORDER BY depth DESC"
                                 " LIMIT NULLIF(GREATEST(%s, -1), -1)")

    @staticmethod
    def path_messages_at(count: int) -> str:
        """The messages at `count` given depths of one chain (chain, then the depths)."""
        return ("SELECT data FROM entries WHERE chain = %s AND type = 'message' AND depth IN"
                f" ({','.join(['%s'] * count)}) ORDER BY depth")
    PATH_NEWEST_COMPACTION = ("SELECT seq FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                              " AND type = 'compaction' ORDER BY depth DESC LIMIT 1")
    PATH_COMPACTIONS = ("SELECT seq FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                        " AND type = 'compaction' ORDER BY depth")

    # ---------------------------------------------------------------- labels
    LABEL_INSERT = ("INSERT INTO labels(external_session_id, target_seq, target_branch, label,"
                    " entry_seq, created_at) VALUES (%s,%s,%s,%s,%s,%s)")
    LABEL_LOG = (
        "SELECT l.label, l.created_at, t.id, l.target_branch, e.id FROM labels l"
        " LEFT JOIN entries t ON t.seq = l.target_seq LEFT JOIN entries e ON e.seq = l.entry_seq"
        " WHERE l.external_session_id = %s ORDER BY l.seq")
    LABELS_OF_ENTRIES = ("SELECT target_seq, label FROM labels WHERE external_session_id = %s"
                         " AND target_seq IS NOT NULL ORDER BY seq")
    LABELS_OF_ALL_ENTRIES = ("SELECT target_seq, label FROM labels WHERE target_seq IS NOT NULL"
                             " ORDER BY seq")
    LABELS_OF_BRANCHES = ("SELECT target_branch, label FROM labels WHERE external_session_id = %s"
                          " AND target_branch IS NOT NULL ORDER BY seq")

    # ----------------------------------------------------------- checkpoints
    CHECKPOINT_INSERT = (
        "INSERT INTO checkpoints(external_session_id, internal_session_id, entry_seq,"
        " checkpoint_name, session_state, is_auto, created_at, metadata, tool_invocations)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id")
    CHECKPOINT_BY_ID = f"{_CHECKPOINT_SELECT} WHERE c.id = %s{_CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_BRANCH = f"{_CHECKPOINT_SELECT} WHERE c.internal_session_id = %s{_CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_SESSION = f"{_CHECKPOINT_SELECT} WHERE c.external_session_id = %s{_CHECKPOINT_ORDER}"
    CHECKPOINT_DELETE = "DELETE FROM checkpoints WHERE id = %s"
    CHECKPOINT_SET_HIDDEN = "UPDATE checkpoints SET is_hidden = %s WHERE id = %s"
    CHECKPOINT_SESSION_OF = "SELECT external_session_id FROM checkpoints WHERE id = %s"
    CHECKPOINT_METADATA_FIELD_OF_SESSION = (
        "SELECT metadata::json -> %s FROM checkpoints WHERE external_session_id = %s")

    # ----------------------------------------------- LangGraph's checkpointer
    LANGGRAPH_THREAD_SESSION = ("SELECT external_session_id FROM langgraph_threads"
                                " WHERE thread_id = %s AND checkpoint_ns = %s")
    LANGGRAPH_THREAD_SESSIONS = ("SELECT thread_id, checkpoint_ns, external_session_id"
                                 " FROM langgraph_threads WHERE thread_id = %s ORDER BY checkpoint_ns")
    LANGGRAPH_THREAD_INSERT = ("INSERT INTO langgraph_threads(thread_id, checkpoint_ns,"
                               " external_session_id) VALUES (%s,%s,%s)")
    LANGGRAPH_THREAD_OF_SESSION = ("SELECT thread_id, checkpoint_ns FROM langgraph_threads"
                                   " WHERE external_session_id = %s")
    LANGGRAPH_CHECKPOINT_INSERT = (
        "INSERT INTO langgraph_checkpoints(external_session_id, checkpoint_id,"
        " parent_checkpoint_id, checkpoint_ref, entry_seq, type, checkpoint, metadata, messages,"
        " messages_digest) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    LANGGRAPH_CHECKPOINT_REWRITE = (
        "UPDATE langgraph_checkpoints SET type = %s, checkpoint = %s, metadata = %s"
        " WHERE external_session_id = %s AND checkpoint_id = %s")
    _LANGGRAPH_SELECT = (
        "SELECT c.external_session_id, t.thread_id, t.checkpoint_ns, c.checkpoint_id,"
        " c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata, c.checkpoint_ref, c.entry_seq,"
        " c.messages, c.messages_digest FROM langgraph_checkpoints c"
        " JOIN langgraph_threads t ON t.external_session_id = c.external_session_id")
    LANGGRAPH_CHECKPOINT_BY_ID = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = %s"
                                  " AND c.checkpoint_id = %s")
    LANGGRAPH_CHECKPOINT_AT_ENTRY = f"{_LANGGRAPH_SELECT} WHERE c.entry_seq = %s"
    LANGGRAPH_CHECKPOINT_NEWEST = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = %s"
                                   " ORDER BY c.checkpoint_id DESC LIMIT 1")
    LANGGRAPH_CHECKPOINT_HAS_CHILD = ("SELECT 1 FROM langgraph_checkpoints"
                                      " WHERE external_session_id = %s AND parent_checkpoint_id = %s"
                                      " LIMIT 1")
    LANGGRAPH_CHECKPOINTS_IN_ORDER = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = %s"
                                      " ORDER BY c.id")

    @staticmethod
    def langgraph_page(sessions: int | None, after: bool) -> str:
        """See sqlite.Statements.langgraph_page."""
        where = []
        if sessions is not None:
            where.append(f"c.external_session_id IN ({', '.join(['%s'] * sessions)})")
        if after:
            where.append("(c.checkpoint_id < %s OR (c.checkpoint_id = %s"
                         " AND c.external_session_id < %s))")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return (f"{Statements._LANGGRAPH_SELECT}{clause}"
                " ORDER BY c.checkpoint_id DESC, c.external_session_id DESC LIMIT %s")

    _LANGGRAPH_WRITE_COLUMNS = ("external_session_id, checkpoint_id, task_id, idx, task_path,"
                                " channel, type, value")
    LANGGRAPH_WRITE_KEEP = (f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS})"
                            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING")
    LANGGRAPH_WRITE_REPLACE = (
        f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT(external_session_id, checkpoint_id, task_id, idx) DO UPDATE SET"
        " task_path = excluded.task_path, channel = excluded.channel, type = excluded.type,"
        " value = excluded.value")
    LANGGRAPH_WRITES_OF = ("SELECT task_id, channel, type, value FROM langgraph_writes"
                           " WHERE external_session_id = %s AND checkpoint_id = %s"
                           " ORDER BY task_path, task_id, idx")
    LANGGRAPH_WRITES_COPY = (
        f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS}) SELECT %s, checkpoint_id,"
        " task_id, idx, task_path, channel, type, value FROM langgraph_writes"
        " WHERE external_session_id = %s ON CONFLICT DO NOTHING")
    # ------------------------------------------------------- operation log
    # (core.undo: the app's operations and what each changed, newest undone first)
    OPLOG_INSERT = ("INSERT INTO operation_log(kind, external_session_id, description, changes,"
                    " undoes, created_at) VALUES (%s,%s,%s,%s,%s,%s) RETURNING seq")
    OPLOG_LAST_UNDOABLE = (
        f"SELECT {_OPLOG_COLUMNS} FROM operation_log o WHERE o.undoes IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM operation_log u WHERE u.undoes = o.seq)"
        " ORDER BY o.seq DESC LIMIT 1")
    OPLOG_RECENT = f"SELECT {_OPLOG_COLUMNS} FROM operation_log o ORDER BY o.seq DESC LIMIT %s"

    # --------------------------------------------------------- import sources
    IMPORT_SOURCE_GET = ("SELECT external_session_id, format, size, mtime, state FROM import_sources"
                         " WHERE source_key = %s")
    IMPORT_SOURCE_SET = (
        "INSERT INTO import_sources(path, source_key, external_session_id, format, size, mtime,"
        " state, imported_at, record_version, complete, mtime_ns, inode, device, lines)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT(source_key) DO UPDATE SET"
        " path = excluded.path, external_session_id = excluded.external_session_id,"
        " format = excluded.format, size = excluded.size, mtime = excluded.mtime,"
        " state = excluded.state, imported_at = excluded.imported_at,"
        " record_version = excluded.record_version, complete = excluded.complete,"
        " mtime_ns = excluded.mtime_ns, inode = excluded.inode, device = excluded.device,"
        " lines = excluded.lines")
    IMPORT_SOURCES_FORGET = "DELETE FROM import_sources WHERE external_session_id = %s"

    # ---------------------------------------------------------------- search
    # An entry's search text as lexemes (postgres_search: the same for many rows at once
    # in postgres_bulk.SEARCH_INSERT_MANY)
    SEARCH_INSERT = postgres_search.SEARCH_INSERT

    # ----------------------------------------------------------------- usage
    USAGE_INSERT = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    USAGE_OF_SESSION = (
        "SELECT provider, protocol, model, input_tokens, output_tokens, total_tokens,"
        " duration_ms, timestamp FROM usage WHERE external_session_id = %s ORDER BY seq")
    # one row per response (core/store/usage_rows.py); the order of usage_rows._row
    USAGE_INSERT_RESPONSE = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp, entry_seq, chain, depth,"
        " response_key, cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens,"
        " reasoning_tokens, cost_usd, cost_logged, price_basis, fast, subagent, counted)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    USAGE_UPDATE_COPY = (
        "UPDATE usage SET input_tokens = %s, output_tokens = %s, cache_creation_tokens = %s,"
        " cache_creation_1h_tokens = %s, cache_read_tokens = %s, reasoning_tokens = %s,"
        " total_tokens = %s, cost_usd = %s, cost_logged = %s, price_basis = %s WHERE seq = %s")
    USAGE_SESSION_HAS_ROWS = "SELECT 1 FROM usage WHERE external_session_id = %s LIMIT 1"
    ENTRY_OF_SESSION_BEFORE = ("SELECT 1 FROM entries WHERE external_session_id = %s AND seq < %s"
                               " LIMIT 1")
    USAGE_CODEX_STATE = (
        "SELECT type, data FROM entries WHERE external_session_id = %s AND seq < %s AND type IN"
        " ('model_change', 'codex:turn_context', 'codex:event_msg.token_count') ORDER BY seq")
    USAGE_SOURCE_ENTRIES = (
        "SELECT seq, external_session_id, id, type, timestamp, data, chain, depth FROM entries"
        " WHERE type IN ('message', 'model_change', 'codex:turn_context',"
        " 'codex:event_msg.token_count') ORDER BY external_session_id, seq")
    USAGE_DROP_DERIVED = (
        "DELETE FROM usage WHERE entry_seq IS NOT NULL OR external_session_id IN"
        " (SELECT id FROM external_sessions WHERE source != 'arbor')")
    SESSION_USAGE_ADD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT(external_session_id, model) DO UPDATE SET"
        " responses = session_usage.responses + excluded.responses,"
        " input_tokens = session_usage.input_tokens + excluded.input_tokens,"
        " output_tokens = session_usage.output_tokens + excluded.output_tokens,"
        " cache_creation_tokens = session_usage.cache_creation_tokens + excluded.cache_creation_tokens,"
        " cache_read_tokens = session_usage.cache_read_tokens + excluded.cache_read_tokens,"
        " reasoning_tokens = session_usage.reasoning_tokens + excluded.reasoning_tokens,"
        " cost_usd = session_usage.cost_usd + excluded.cost_usd, unpriced = session_usage.unpriced + excluded.unpriced,"
        " subagent_cost_usd = session_usage.subagent_cost_usd + excluded.subagent_cost_usd,"
        " subagent_tokens = session_usage.subagent_tokens + excluded.subagent_tokens")
    # Rebuilt from the rows (after a migration, a repricing, a deletion of a session).
    SESSION_USAGE_CLEAR = "DELETE FROM session_usage"
    SESSION_USAGE_REBUILD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens)"
        " SELECT external_session_id, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),"
        " SUM(cache_creation_tokens), SUM(cache_read_tokens), SUM(reasoning_tokens),"
        " COALESCE(SUM(cost_usd), 0), SUM((cost_usd IS NULL)::int),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens"
        " + cache_creation_tokens + cache_read_tokens END), 0)"
        " FROM usage GROUP BY external_session_id, model")
    # the first row of each response across sessions is the one that counts in totals
    USAGE_RECOUNT = (
        "UPDATE usage SET counted = CASE WHEN response_key IS NULL OR seq = (SELECT MIN(u.seq)"
        " FROM usage u WHERE u.response_key = usage.response_key) THEN 1 ELSE 0 END")
    USAGE_RECOUNT_KEYS_OF = (
        "SELECT DISTINCT response_key FROM usage WHERE external_session_id = %s AND counted = 1"
        " AND response_key IS NOT NULL")
    USAGE_RECOUNT_KEY = (
        "UPDATE usage SET counted = 1 WHERE seq = (SELECT MIN(seq) FROM usage WHERE"
        " response_key = %s) AND NOT EXISTS (SELECT 1 FROM usage WHERE response_key = %s"
        " AND counted = 1)")
    USAGE_TO_PRICE = (
        "SELECT seq, model, provider, timestamp, input_tokens, cache_creation_tokens,"
        " cache_creation_1h_tokens, cache_read_tokens, output_tokens, reasoning_tokens, fast"
        " FROM usage WHERE cost_logged = 0 AND price_basis != %s")
    USAGE_SET_PRICE = "UPDATE usage SET cost_usd = %s, price_basis = %s WHERE seq = %s"
    USAGE_STALE_PRICES = "SELECT 1 FROM usage WHERE cost_logged = 0 AND price_basis != %s LIMIT 1"
    SESSION_USAGE_ALL = (
        "SELECT external_session_id, model, responses, input_tokens, output_tokens,"
        " cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced,"
        " subagent_cost_usd, subagent_tokens FROM session_usage")
    USAGE_SUBAGENT_PARENTS = (
        "SELECT x.id, COALESCE(x.parent_id, (SELECT p.id FROM external_sessions p"
        " WHERE p.uid = x.parent_session)) FROM external_sessions x"
        " WHERE x.kind = 'subagent'")
    USAGE_SESSION_NAMES = "SELECT id, uid, session_name FROM external_sessions"
    _USAGE_SUMS = (
        "COUNT(*), SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),"
        " SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), COALESCE(SUM(u.cost_usd), 0),"
        " SUM((u.cost_usd IS NULL)::int), COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.input_tokens + u.output_tokens"
        " + u.cache_creation_tokens + u.cache_read_tokens END), 0)")
    USAGE_OF_PATH_PIECE = (
        f"SELECT u.model, {_USAGE_SUMS} FROM usage u WHERE u.chain = %s AND u.depth BETWEEN %s AND %s"
        " GROUP BY u.model")
    USAGE_LAST_ON_PATH_PIECE = (
        "SELECT u.model, u.provider, u.timestamp FROM usage u WHERE u.chain = %s"
        " AND u.depth BETWEEN %s AND %s AND u.model <> '' ORDER BY u.depth DESC LIMIT 1")

    @staticmethod
    def usage_copies_in_session(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return ("SELECT response_key, seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, subagent FROM usage"
                f" WHERE external_session_id = %s AND response_key IN ({marks})")

    @staticmethod
    def usage_keys_elsewhere(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return (f"SELECT DISTINCT response_key FROM usage WHERE response_key IN ({marks})"
                " AND external_session_id != %s")

    @staticmethod
    def usage_of_entries(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return ("SELECT entry_seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, cost_logged FROM usage"
                f" WHERE entry_seq IN ({marks})")

    @staticmethod
    def usage_bucket_report(grain: str, *, counted_only: bool, since: str | None,
                            until: str | None, source: str | None) -> tuple[str, list[Any]]:
        """`usage_report` from the hourly buckets (migration 9); see sqlite.Statements."""
        group = {"hour": "b.hour", "model": "''", "project": "x.cwd",
                 "session": "b.external_session_id", "all": "''"}[grain]
        where, args = ["b.responses <> 0"], []
        if counted_only:
            where.append("b.counted = 1")
        if since:
            where.append("b.hour >= %s")
            args.append(since[:13])
        if until:
            where.append("b.hour < %s")
            args.append(until[:13])
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = b.external_session_id"
        if source:
            where.append("x.source = %s")
            args.append(source)
        sql = (f"SELECT {group}, b.model, SUM(b.responses), SUM(b.input_tokens),"
               " SUM(b.output_tokens), SUM(b.cache_creation_tokens), SUM(b.cache_read_tokens),"
               " SUM(b.reasoning_tokens), SUM(b.cost_usd), SUM(b.unpriced),"
               " SUM(b.subagent_cost_usd), SUM(b.subagent_tokens)"
               f" FROM usage_buckets b{join} WHERE " + " AND ".join(where) + " GROUP BY 1, 2")
        return sql, args

    @staticmethod
    def usage_report(grain: str, *, counted_only: bool, since: str | None, until: str | None,
                     source: str | None) -> tuple[str, list[Any]]:
        """Usage summed per (group, model): grain 'hour' and 'minute' group by the UTC hour or
        minute (the caller makes local days of them), 'model', 'project' (the session's cwd),
        'session', or 'all' (one group)."""
        group = {"hour": "substr(u.timestamp, 1, 13)", "minute": "substr(u.timestamp, 1, 16)",
                 "model": "''", "project": "x.cwd", "session": "u.external_session_id",
                 "all": "''"}[grain]
        where, args = [], []
        if counted_only:
            where.append("u.counted = 1")
        if since:
            where.append("u.timestamp >= %s")
            args.append(since)
        if until:
            where.append("u.timestamp < %s")
            args.append(until)
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = u.external_session_id"
        if source:
            where.append("x.source = %s")
            args.append(source)
        sql = (f"SELECT {group}, u.model, {Statements._USAGE_SUMS} FROM usage u{join}"
               + (" WHERE " + " AND ".join(where) if where else "") + " GROUP BY 1, 2")
        return sql, args

    # ------------------------------------------------ run and capability events
    RUN_EVENT_INSERT = (
        "INSERT INTO session_run_events(id, session_id, run_id, event_type, source, status, model,"
        " mode, timestamp, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    RUN_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, status, model, mode, timestamp,"
        " data FROM session_run_events WHERE session_id = %s AND seq > %s ORDER BY seq")
    RUN_EVENTS_AFTER_LIMIT = RUN_EVENTS_AFTER + " LIMIT %s"
    CAPABILITY_EVENT_INSERT = (
        "INSERT INTO session_capability_events(id, session_id, run_id, event_type, source, actor,"
        " capability, old_value, new_value, timestamp, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    CAPABILITY_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, actor, capability, old_value,"
        " new_value, timestamp, data FROM session_capability_events WHERE session_id = %s"
        " AND seq > %s ORDER BY seq")
    CAPABILITY_EVENTS_AFTER_LIMIT = CAPABILITY_EVENTS_AFTER + " LIMIT %s"
    CAPABILITIES_SET = (
        "INSERT INTO session_capabilities(session_id, mode, delegate_mode, multi_agent, workflows,"
        " web_search, browser, a2a_master, updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT(session_id) DO UPDATE SET mode = excluded.mode,"
        " delegate_mode = excluded.delegate_mode, multi_agent = excluded.multi_agent,"
        " workflows = excluded.workflows, web_search = excluded.web_search,"
        " browser = excluded.browser, a2a_master = excluded.a2a_master,"
        " updated_at = excluded.updated_at")
    CAPABILITIES_GET = (
        "SELECT session_id, mode, delegate_mode, multi_agent, workflows, web_search, browser,"
        " a2a_master, updated_at FROM session_capabilities WHERE session_id = %s")


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
