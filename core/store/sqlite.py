"""The SQLite backend: every SQL statement the store runs on SQLite, and how it opens a file.

`Statements` names each statement the store API runs; a PostgreSQL backend defines the
same names (`%s` for `?`, `GREATEST` for the two-argument `MAX`, `tsvector` for FTS5,
`FOR UPDATE` where a branch head is read to be moved), so the two can be read side by
side. `SQLiteBackend` holds what is not one statement: opening and checking a file,
transactions, the search index, the bulk writer of imports.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

from ..errors import (StoreBusy, StoreDamaged, StoreError, StoreNotFound, StoreOutdated,
                      StoreUnavailable)
from ..paths import can_create_in, can_read
from . import sqlite_search
from .migrations import sqlite as migrations

TYPE_CHECKING = False   # `arbor import` with nothing changed reads the records through
if TYPE_CHECKING:       # `peek_import_stamps` here: it loads neither typing nor the bulk writer
    from typing import Any, Callable, Sequence

    from . import sqlite_bulk

BUSY_TIMEOUT_MS = 10_000
WRITE_POLL = 0.001      # seconds between tries while another process holds the write lock
BULK_CACHE_SIZE = -32 * 1024  # KiB, while an import's bulk writer runs
PAGE_SIZE = 4096  # bytes, for new stores (SQLite's own default)
# The WAL is written back into the file when it holds this much (SQLite counts it in pages:
# its 1000 pages were 16 MiB with the 16 KiB pages stores had; kept at that in bytes, an
# import of a 4 KiB-page store takes as long as it did, see bench/bench_wal.py).
CHECKPOINT_BYTES = 16 * 1024 * 1024
SQLITE_NOTADB = 26  # the result code of a file that is not a SQLite database
SQLITE_FULL = 13  # the disk (or the file system's quota) is full
SQLITE_IOERR = 10  # a read or write failed (the low byte of every extended I/O code)

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
    " WHERE i.external_session_id = x.id AND i.is_current = 1) FROM external_sessions x"
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


class Statements:
    """Every statement of the store API, by name. Parameters are positional (`?`)."""

    # ------------------------------------------------------------------ meta
    META_GET = "SELECT value FROM store_meta WHERE key = ?"
    META_SET = ("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT(key)"
                " DO UPDATE SET value = excluded.value")
    META_KEYS_WITH_PREFIX = "SELECT key FROM store_meta WHERE substr(key, 1, length(?1)) = ?1"
    META_DELETE = "DELETE FROM store_meta WHERE key = ?"

    # ----------------------------------------------------- external sessions
    EXTERNAL_INSERT = (
        "INSERT INTO external_sessions(uid, user_id, session_name, created_at, updated_at,"
        " metadata, cwd, source, kind, parent_session, header_version)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    EXTERNAL_BY_ID = f"{_EXTERNAL_SELECT} WHERE x.id = ?"
    EXTERNAL_BY_UID = f"{_EXTERNAL_SELECT} WHERE x.uid = ?"
    EXTERNAL_BRANCH_IDS = ("SELECT langgraph_session_id FROM internal_sessions"
                           " WHERE external_session_id = ? ORDER BY id")
    EXTERNAL_UPDATE = (
        "UPDATE external_sessions SET session_name = ?, is_active = ?, metadata = ?,"
        " total_checkpoints = ?, user_id = ?, cwd = ?, updated_at = ? WHERE id = ?")
    EXTERNAL_RENAME = "UPDATE external_sessions SET session_name = ? WHERE id = ?"
    EXTERNAL_SET_ACTIVE = "UPDATE external_sessions SET is_active = ? WHERE id = ?"
    EXTERNAL_TOUCH = "UPDATE external_sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?"
    EXTERNAL_COUNT_ENTRIES = (
        "UPDATE external_sessions SET entry_count = entry_count + ?,"
        " message_count = message_count + ?, updated_at = MAX(updated_at, ?),"
        " first_user_seq = COALESCE(first_user_seq, ?) WHERE id = ?")
    EXTERNAL_COUNT_CHECKPOINT = ("UPDATE external_sessions SET total_checkpoints ="
                                 " total_checkpoints + 1 WHERE id = ?")
    EXTERNAL_UID = "SELECT uid FROM external_sessions WHERE id = ?"
    EXTERNAL_NAME = "SELECT session_name FROM external_sessions WHERE id = ?"
    EXTERNAL_METADATA = "SELECT metadata FROM external_sessions WHERE id = ?"
    EXTERNAL_SET_METADATA = "UPDATE external_sessions SET metadata = ? WHERE id = ?"
    EXTERNAL_SET_CWD_IF_EMPTY = "UPDATE external_sessions SET cwd = ? WHERE id = ? AND cwd = ''"
    EXTERNAL_TOTALS = (
        "SELECT (SELECT COUNT(*) FROM entries WHERE external_session_id = ?),"
        " (SELECT COUNT(*) FROM internal_sessions WHERE external_session_id = ?)")
    EXTERNAL_KEPT_TOTALS = (
        "SELECT x.entry_count, (SELECT COUNT(*) FROM internal_sessions i"
        " WHERE i.external_session_id = x.id) FROM external_sessions x WHERE x.id = ?")
    EXTERNAL_COUNT = "SELECT COUNT(*) FROM external_sessions"
    EXTERNAL_COUNT_OF_USER = "SELECT COUNT(*) FROM external_sessions WHERE user_id = ?"
    EXTERNAL_COUNT_ARCHIVED = "SELECT COUNT(*) FROM external_sessions WHERE is_active = 0"
    EXTERNAL_DELETE = "DELETE FROM external_sessions WHERE id = ?"
    EXTERNAL_DETACH_BRANCHES = ("UPDATE internal_sessions SET head_seq = NULL, fork_seq = NULL"
                                " WHERE external_session_id = ?")
    EXTERNAL_DELETE_ENTRIES = "DELETE FROM entries WHERE external_session_id = ?"
    EXTERNAL_DELETE_EVENTS = (
        "DELETE FROM session_run_events WHERE session_id = ?",
        "DELETE FROM session_capability_events WHERE session_id = ?",
        "DELETE FROM session_capabilities WHERE session_id = ?",
    )

    @staticmethod
    def find_external_sessions(*, uid_prefix: str | None, cwd: str | None, kind: str | None,
                               active: bool | None, user_id: int | None, limit: int | None
                               ) -> tuple[str, list[Any]]:
        """Sessions matching the filters given (None: any), newest activity first."""
        where, args = [], []
        if uid_prefix is not None:
            where.append("x.uid >= ? AND x.uid < ?")
            args += [uid_prefix, uid_prefix + "\U0010ffff"]
        if cwd is not None:
            where.append("x.cwd = ?")
            args.append(cwd)
        if kind is not None:
            where.append("x.kind = ?")
            args.append(kind)
        if active is not None:
            where.append("x.is_active = ?")
            args.append(1 if active else 0)
        if user_id is not None:
            where.append("x.user_id = ?")
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
        equal = "".join(" AND json_extract(x.metadata, '$.' || ?) = ?" for _ in range(count))
        return (f"{_EXTERNAL_SELECT} WHERE x.source = ?{equal}"
                " AND json_extract(x.metadata, '$.' || ?) IS NULL ORDER BY x.id")

    @staticmethod
    def session_listing(*, kind: str, cwd: str | None, preview: bool) -> tuple[str, list[Any]]:
        """(uid, name, cwd, updated_at, message count, first user message's data or NULL)
        of the sessions of a kind (and folder), newest activity first."""
        first_user = ("(SELECT u.data FROM entries u WHERE u.seq = x.first_user_seq)"
                      if preview else "NULL")
        sql = ("SELECT x.uid, x.session_name, x.cwd, x.updated_at, x.message_count, "
               f"{first_user} FROM external_sessions x WHERE x.kind = ?")
        args: list[Any] = [kind]
        if cwd is not None:
            sql += " AND x.cwd = ?"
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
        return _SUMMARY_SELECT + " WHERE x.id IN (" + ",".join(["?"] * count) + ")"

    # every session's name, for search to score (core/name_match.py)
    SESSION_NAMES = "SELECT id, session_name, uid FROM external_sessions ORDER BY updated_at DESC, id DESC"
    SESSION_NAMES_ACTIVE = ("SELECT id, session_name, uid FROM external_sessions WHERE is_active = 1"
                            " ORDER BY updated_at DESC, id DESC")

    # --------------------------------------------------------------- lineage
    # (core.lineage: sub-agents and forks under the session and entry they came from)
    SPAWN_POINT_ADD = ("INSERT OR IGNORE INTO spawn_points(spawn_key, external_session_id, seq)"
                       " VALUES (?,?,?)")
    # (a key may be in several sessions: a fork copies its source's tool calls; the one in
    # the session the child names, or in a sub-agent of it, comes first)
    SPAWN_POINT = ("SELECT sp.external_session_id, sp.seq FROM spawn_points sp"
                   " JOIN external_sessions x ON x.id = sp.external_session_id"
                   " WHERE sp.spawn_key = ?"
                   " ORDER BY (x.uid = ? OR x.parent_session = ?) DESC, sp.external_session_id"
                   " LIMIT 1")
    LINEAGE_SET = ("UPDATE external_sessions SET kind = COALESCE(?, kind),"
                   " parent_session = COALESCE(?, parent_session),"
                   " spawn_ref = COALESCE(?, spawn_ref) WHERE id = ?")
    LINEAGE_UNLINKED = ("SELECT id, kind, parent_session, spawn_ref, parent_id FROM external_sessions"
                        " WHERE parent_session IS NOT NULL AND (parent_id IS NULL"
                        " OR (spawn_ref IS NOT NULL AND spawn_seq IS NULL))")
    LINEAGE_PARENT_OF = "SELECT parent_id FROM external_sessions WHERE id = ?"
    LINEAGE_LINK = ("UPDATE external_sessions SET parent_id = ?, spawn_seq = COALESCE(?, spawn_seq)"
                    " WHERE id = ?")
    LINEAGE_LAST_SHARED = (
        "SELECT p.seq FROM entries c JOIN entries p ON p.external_session_id = ? AND p.id = c.id"
        " WHERE c.external_session_id = ? ORDER BY c.depth DESC, c.seq DESC LIMIT 1")
    LINEAGE_CHILDREN = (
        "SELECT x.id, x.kind, x.session_name, x.spawn_seq, e.depth, x.message_count,"
        " x.updated_at, x.is_active, x.metadata FROM external_sessions x"
        " LEFT JOIN entries e ON e.seq = x.spawn_seq"
        " WHERE x.parent_id = ? ORDER BY x.created_at, x.id")
    SESSION_ID_BY_UID = "SELECT id FROM external_sessions WHERE uid = ?"
    SESSION_ID_BY_SOURCE_KEY = "SELECT external_session_id FROM import_sources WHERE source_key = ?"
    IMPORT_SOURCE_KEYS = "SELECT source_key, format FROM import_sources"

    # ----------------------------------------------------- internal sessions
    INTERNAL_BY_ID = f"{_INTERNAL_SELECT} WHERE i.id = ?"
    INTERNAL_BY_LANGGRAPH_ID = f"{_INTERNAL_SELECT} WHERE i.langgraph_session_id = ?"
    INTERNAL_OF_SESSION_NEWEST_FIRST = (f"{_INTERNAL_SELECT} WHERE i.external_session_id = ?"
                                        " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_OF_SESSION = f"{_INTERNAL_SELECT} WHERE i.external_session_id = ? ORDER BY i.id"
    INTERNAL_CHILDREN = (f"{_INTERNAL_SELECT} WHERE i.parent_session_id = ?"
                         " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_CURRENT = f"{_INTERNAL_SELECT} WHERE i.external_session_id = ? AND i.is_current = 1"
    INTERNAL_INSERT = (
        "INSERT INTO internal_sessions(external_session_id, langgraph_session_id, name, state_data,"
        " created_at, updated_at, is_current, checkpoint_count, parent_session_id,"
        " branch_point_checkpoint_id, fork_seq, head_seq, tool_invocation_count, metadata)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    INTERNAL_BY_LANGGRAPH_IN_SESSION = ("SELECT id FROM internal_sessions WHERE langgraph_session_id"
                                        " = ? AND external_session_id = ?")
    INTERNAL_COUNT = "SELECT COUNT(*) FROM internal_sessions WHERE external_session_id = ?"
    INTERNAL_SESSION_OF = "SELECT external_session_id FROM internal_sessions WHERE id = ?"
    INTERNAL_CLEAR_CURRENT = ("UPDATE internal_sessions SET is_current = 0"
                              " WHERE external_session_id = ? AND is_current = 1")
    INTERNAL_CLEAR_OTHER_CURRENT = ("UPDATE internal_sessions SET is_current = 0"
                                    " WHERE external_session_id = ? AND is_current = 1 AND id != ?")
    INTERNAL_SET_CURRENT = "UPDATE internal_sessions SET is_current = 1 WHERE id = ?"
    INTERNAL_UNSET_CURRENT = "UPDATE internal_sessions SET is_current = 0 WHERE id = ?"
    INTERNAL_HEADS = ("SELECT id, head_seq FROM internal_sessions WHERE external_session_id = ?"
                      " ORDER BY id")
    INTERNAL_KEY_TAKEN = "SELECT 1 FROM internal_sessions WHERE langgraph_session_id = ?"
    INTERNAL_ADD_TOOL_CALLS_TO_CURRENT = (
        "UPDATE internal_sessions SET tool_invocation_count = tool_invocation_count + ?"
        " WHERE external_session_id = ? AND is_current = 1")
    INTERNAL_CURRENT_ID = ("SELECT id FROM internal_sessions WHERE external_session_id = ?"
                           " AND is_current = 1")
    INTERNAL_DELETE = "DELETE FROM internal_sessions WHERE id = ?"
    # The head of a branch about to be moved (PostgreSQL: `FOR UPDATE`, so that appends to
    # one branch from many connections queue on the row; SQLite's BEGIN IMMEDIATE already
    # serialises every writer).
    INTERNAL_TARGET_FOR_UPDATE = ("SELECT external_session_id, head_seq FROM internal_sessions"
                                  " WHERE id = ?")
    INTERNAL_FOR_CHECKPOINT = ("SELECT external_session_id, head_seq, state_data FROM"
                               " internal_sessions WHERE id = ?")
    INTERNAL_MOVE_HEAD = "UPDATE internal_sessions SET head_seq = ?, updated_at = ? WHERE id = ?"
    INTERNAL_ADVANCE_HEAD = ("UPDATE internal_sessions SET head_seq = ?, updated_at = ?,"
                             " tool_invocation_count = tool_invocation_count + ? WHERE id = ?")
    INTERNAL_COUNT_CHECKPOINT = ("UPDATE internal_sessions SET checkpoint_count ="
                                 " checkpoint_count + 1 WHERE id = ?")
    _INTERNAL_FIELDS = {
        "session_state": "state_data", "metadata": "metadata", "checkpoint_count": "checkpoint_count",
        "name": "name", "tool_invocation_count": "tool_invocation_count", "updated_at": "updated_at",
    }

    @staticmethod
    def update_internal_fields(fields: Sequence[str]) -> str:
        """An UPDATE of these fields of a branch (parameters: their values, then the id)."""
        sets = ", ".join(f"{Statements._INTERNAL_FIELDS[name]} = ?" for name in fields)
        return f"UPDATE internal_sessions SET {sets} WHERE id = ?"

    REFLOG_INSERT = ("INSERT INTO reflog(internal_session_id, old_head_seq, new_head_seq, reason,"
                     " created_at) VALUES (?,?,?,?,?)")
    REFLOG_OF_BRANCH = ("SELECT old_head_seq, new_head_seq, reason, created_at FROM reflog"
                        " WHERE internal_session_id = ? ORDER BY seq")
    INTERNAL_SET_HIDDEN = "UPDATE internal_sessions SET is_hidden = ? WHERE id = ?"

    # --------------------------------------------------------------- entries
    ENTRY_INSERT = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
                    " depth, chain, msg_index, role, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    ENTRY_BY_SEQ = f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.seq = ?"
    ENTRY_BY_ID = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = ?"
                   " AND e.id = ?")
    ENTRY_ID_OF = "SELECT id FROM entries WHERE seq = ?"
    ENTRY_SESSION_OF = "SELECT external_session_id FROM entries WHERE seq = ?"
    ENTRY_PARENT_OF = "SELECT parent_seq FROM entries WHERE seq = ?"
    ENTRY_TIMESTAMP_OF = "SELECT timestamp FROM entries WHERE seq = ?"
    ENTRY_SPAN_OF_SESSION = ("SELECT MIN(seq), MAX(seq), COUNT(*) FROM entries"
                             " WHERE external_session_id = ?")
    # a session's (seq, parent seq) in seq order: over a seq range that is mostly the
    # session's own rows a range scan of the table beats the session index
    ENTRY_PARENTS_IN_SPAN = ("SELECT seq, parent_seq FROM entries WHERE seq BETWEEN ? AND ?"
                             " AND +external_session_id = ? ORDER BY seq")
    ENTRY_PARENTS_OF_SESSION = ("SELECT seq, parent_seq FROM entries WHERE external_session_id = ?"
                                " ORDER BY seq")
    # the shape of a session's tree, for the entry tree view (no data: it is read per row)
    ENTRY_OUTLINE_OF_SESSION = ("SELECT seq, parent_seq, type, role FROM entries"
                                " WHERE external_session_id = ? ORDER BY seq")
    ENTRY_DATA_FIELD_OF_SESSION = ("SELECT seq, parent_seq, json_extract(data, '$.' || ?)"
                                   " FROM entries WHERE external_session_id = ? ORDER BY seq")
    ENTRY_ID_TAKEN = "SELECT 1 FROM entries WHERE external_session_id = ? AND id = ?"
    ENTRY_IDS_OF_SESSION = "SELECT id FROM entries WHERE external_session_id = ?"
    EXTERNAL_ENTRY_COUNT = "SELECT entry_count FROM external_sessions WHERE id = ?"
    ENTRY_PARENT_FACTS = (
        "SELECT depth, chain, msg_index, external_session_id,"
        " EXISTS(SELECT 1 FROM entries c WHERE c.parent_seq = entries.seq)"
        " FROM entries WHERE seq = ?")
    ENTRY_SEQS_WITH_ID = "SELECT seq FROM entries WHERE id = ? ORDER BY seq LIMIT ?"
    ENTRY_SEQS_OF_SESSION = "SELECT id, seq FROM entries WHERE external_session_id = ?"
    ENTRY_SEQ_OF_ID = "SELECT seq FROM entries WHERE external_session_id = ? AND id = ?"
    ENTRY_LINK = "SELECT id, parent_seq FROM entries WHERE seq = ?"
    ENTRY_NEWEST_CHILD = "SELECT MAX(seq) FROM entries WHERE parent_seq = ?"

    # ------------------------------------------------------- import records
    IMPORT_RECORDS = "SELECT source_key, state FROM import_sources"
    # what telling an unchanged file from `stat` needs, from columns (no JSON is read)
    IMPORT_STAMPS = ("SELECT source_key, record_version, complete, size, mtime_ns, inode, device,"
                     " lines FROM import_sources")
    IMPORT_RECORD_SESSIONS = ("SELECT source_key, json_extract(state, '$.sessions')"
                              " FROM import_sources WHERE json_valid(state)")

    @staticmethod
    def session_summaries(count: int) -> str:
        """uid, name, source, entries and branches of `count` sessions given by uid."""
        marks = ",".join("?" * count)
        return ("SELECT x.uid, x.session_name, x.source, x.entry_count, (SELECT COUNT(*) FROM"
                " internal_sessions i WHERE i.external_session_id = x.id) FROM external_sessions"
                f" x WHERE x.uid IN ({marks})")
    ENTRIES_OF_SESSION = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id"
                          " = ? AND e.seq > ? ORDER BY e.seq")
    ENTRIES_OF_SESSION_LIMIT = ENTRIES_OF_SESSION + " LIMIT ?"
    ENTRY_CHILDREN = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.parent_seq = ?"
                      " ORDER BY e.seq")
    ENTRY_LEAVES = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.external_session_id = ?"
                    " AND NOT EXISTS (SELECT 1 FROM entries c WHERE c.parent_seq = e.seq)"
                    " ORDER BY e.seq")

    # ----------------------------------------------------------------- paths
    PATH_DEPTH_CHAIN = "SELECT depth, chain FROM entries WHERE seq = ?"
    PATH_CHAIN_START = "SELECT depth, parent_seq FROM entries WHERE seq = ?"
    PATH_PIECE = (f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.chain = ? AND e.depth"
                  " BETWEEN ? AND ? ORDER BY e.depth")
    PATH_SEQ_AT_DEPTH = "SELECT seq FROM entries WHERE chain = ? AND depth = ?"
    # plans over long paths: counted, or read at their ends, never all of it
    PATH_MSG_INDEX = "SELECT msg_index FROM entries WHERE chain = ? AND depth = ?"
    PATH_COMPACTION_COUNT = ("SELECT COUNT(*) FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                             " AND type = 'compaction'")
    PATH_FIRST = f"SELECT {_ENTRY_COLUMNS} FROM {_ENTRY_FROM} WHERE e.chain = ? AND e.depth BETWEEN ? AND ?"
    PATH_FIRST_OF_TYPE = f"{PATH_FIRST} AND e.type = ? ORDER BY e.depth LIMIT 1"
    PATH_LAST_OF_TYPE = f"{PATH_FIRST} AND e.type = ? ORDER BY e.depth DESC LIMIT 1"
    PATH_FIRST_NOT_OF_TYPE = f"{PATH_FIRST} AND e.type != ? ORDER BY e.depth LIMIT 1"
    PATH_LAST_NOT_OF_TYPE = f"{PATH_FIRST} AND e.type != ? ORDER BY e.depth DESC LIMIT 1"
    PATH_MESSAGES = ("SELECT data FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                     " AND type = 'message' ORDER BY depth LIMIT ?")
    PATH_MESSAGES_NEWEST = ("SELECT data FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                            " AND type = 'message' ORDER BY depth DESC LIMIT ?")
    # the same, of one role only (a comparison reads only the assistant's replies)
    PATH_ROLE_MESSAGES = ("SELECT data FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                          " AND type = 'message' AND role = ? ORDER BY depth LIMIT ?")
    PATH_ROLE_MESSAGES_NEWEST = ("SELECT data FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                                 " AND type = 'message' AND role = ? ORDER BY depth DESC LIMIT ?")

    @staticmethod
    def path_messages_at(count: int) -> str:
        """The messages at `count` given depths of one chain (chain, then the depths)."""
        return ("SELECT data FROM entries WHERE chain = ? AND type = 'message' AND depth IN"
                f" ({','.join('?' * count)}) ORDER BY depth")
    PATH_NEWEST_COMPACTION = ("SELECT seq FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                              " AND type = 'compaction' ORDER BY depth DESC LIMIT 1")
    PATH_COMPACTIONS = ("SELECT seq FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                        " AND type = 'compaction' ORDER BY depth")

    # ---------------------------------------------------------------- labels
    LABEL_INSERT = ("INSERT INTO labels(external_session_id, target_seq, target_branch, label,"
                    " entry_seq, created_at) VALUES (?,?,?,?,?,?)")
    LABEL_LOG = (
        "SELECT l.label, l.created_at, t.id, l.target_branch, e.id FROM labels l"
        " LEFT JOIN entries t ON t.seq = l.target_seq LEFT JOIN entries e ON e.seq = l.entry_seq"
        " WHERE l.external_session_id = ? ORDER BY l.seq")
    LABELS_OF_ENTRIES = ("SELECT target_seq, label FROM labels WHERE external_session_id = ?"
                         " AND target_seq IS NOT NULL ORDER BY seq")
    LABELS_OF_ALL_ENTRIES = ("SELECT target_seq, label FROM labels WHERE target_seq IS NOT NULL"
                             " ORDER BY seq")
    LABELS_OF_BRANCHES = ("SELECT target_branch, label FROM labels WHERE external_session_id = ?"
                          " AND target_branch IS NOT NULL ORDER BY seq")

    # ----------------------------------------------------------- checkpoints
    CHECKPOINT_INSERT = (
        "INSERT INTO checkpoints(external_session_id, internal_session_id, entry_seq,"
        " checkpoint_name, session_state, is_auto, created_at, metadata, tool_invocations)"
        " VALUES (?,?,?,?,?,?,?,?,?)")
    CHECKPOINT_BY_ID = f"{_CHECKPOINT_SELECT} WHERE c.id = ?{_CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_BRANCH = f"{_CHECKPOINT_SELECT} WHERE c.internal_session_id = ?{_CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_SESSION = f"{_CHECKPOINT_SELECT} WHERE c.external_session_id = ?{_CHECKPOINT_ORDER}"
    CHECKPOINT_DELETE = "DELETE FROM checkpoints WHERE id = ?"
    CHECKPOINT_SET_HIDDEN = "UPDATE checkpoints SET is_hidden = ? WHERE id = ?"
    CHECKPOINT_SESSION_OF = "SELECT external_session_id FROM checkpoints WHERE id = ?"
    CHECKPOINT_METADATA_FIELD_OF_SESSION = (
        "SELECT json_extract(metadata, '$.' || ?) FROM checkpoints WHERE external_session_id = ?")

    # ----------------------------------------------- LangGraph's checkpointer
    LANGGRAPH_THREAD_SESSION = ("SELECT external_session_id FROM langgraph_threads"
                                " WHERE thread_id = ? AND checkpoint_ns = ?")
    LANGGRAPH_THREAD_SESSIONS = ("SELECT thread_id, checkpoint_ns, external_session_id"
                                 " FROM langgraph_threads WHERE thread_id = ? ORDER BY checkpoint_ns")
    LANGGRAPH_THREAD_INSERT = ("INSERT INTO langgraph_threads(thread_id, checkpoint_ns,"
                               " external_session_id) VALUES (?,?,?)")
    LANGGRAPH_THREAD_OF_SESSION = ("SELECT thread_id, checkpoint_ns FROM langgraph_threads"
                                   " WHERE external_session_id = ?")
    LANGGRAPH_CHECKPOINT_INSERT = (
        "INSERT INTO langgraph_checkpoints(external_session_id, checkpoint_id,"
        " parent_checkpoint_id, checkpoint_ref, entry_seq, type, checkpoint, metadata, messages,"
        " messages_digest) VALUES (?,?,?,?,?,?,?,?,?,?)")
    LANGGRAPH_CHECKPOINT_REWRITE = (
        "UPDATE langgraph_checkpoints SET type = ?, checkpoint = ?, metadata = ?"
        " WHERE external_session_id = ? AND checkpoint_id = ?")
    _LANGGRAPH_SELECT = (
        "SELECT c.external_session_id, t.thread_id, t.checkpoint_ns, c.checkpoint_id,"
        " c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata, c.checkpoint_ref, c.entry_seq,"
        " c.messages, c.messages_digest FROM langgraph_checkpoints c"
        " JOIN langgraph_threads t ON t.external_session_id = c.external_session_id")
    LANGGRAPH_CHECKPOINT_BY_ID = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = ?"
                                  " AND c.checkpoint_id = ?")
    LANGGRAPH_CHECKPOINT_AT_ENTRY = f"{_LANGGRAPH_SELECT} WHERE c.entry_seq = ?"
    LANGGRAPH_CHECKPOINT_NEWEST = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = ?"
                                   " ORDER BY c.checkpoint_id DESC LIMIT 1")
    LANGGRAPH_CHECKPOINT_HAS_CHILD = ("SELECT 1 FROM langgraph_checkpoints"
                                      " WHERE external_session_id = ? AND parent_checkpoint_id = ?"
                                      " LIMIT 1")
    LANGGRAPH_CHECKPOINTS_IN_ORDER = (f"{_LANGGRAPH_SELECT} WHERE c.external_session_id = ?"
                                      " ORDER BY c.id")

    @staticmethod
    def langgraph_page(sessions: int | None, after: bool) -> str:
        """One page of checkpoints, newest id first (ties: the higher session first), of
        these sessions (None: every session), after a cursor (id, session) when `after`;
        parameters: the sessions, the cursor (id, id, session) if any, the page's size."""
        where = []
        if sessions is not None:
            where.append(f"c.external_session_id IN ({', '.join('?' * sessions)})")
        if after:
            where.append("(c.checkpoint_id < ? OR (c.checkpoint_id = ?"
                         " AND c.external_session_id < ?))")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return (f"{Statements._LANGGRAPH_SELECT}{clause}"
                " ORDER BY c.checkpoint_id DESC, c.external_session_id DESC LIMIT ?")

    _LANGGRAPH_WRITE_COLUMNS = ("external_session_id, checkpoint_id, task_id, idx, task_path,"
                                " channel, type, value")
    LANGGRAPH_WRITE_KEEP = (f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS})"
                            " VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING")
    LANGGRAPH_WRITE_REPLACE = (
        f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)"
        " ON CONFLICT(external_session_id, checkpoint_id, task_id, idx) DO UPDATE SET"
        " task_path = excluded.task_path, channel = excluded.channel, type = excluded.type,"
        " value = excluded.value")
    LANGGRAPH_WRITES_OF = ("SELECT task_id, channel, type, value FROM langgraph_writes"
                           " WHERE external_session_id = ? AND checkpoint_id = ?"
                           " ORDER BY task_path, task_id, idx")
    LANGGRAPH_WRITES_COPY = (
        f"INSERT INTO langgraph_writes({_LANGGRAPH_WRITE_COLUMNS}) SELECT ?, checkpoint_id,"
        " task_id, idx, task_path, channel, type, value FROM langgraph_writes"
        " WHERE external_session_id = ? ON CONFLICT DO NOTHING")
    # ------------------------------------------------------- operation log
    # (core.undo: the app's operations and what each changed, newest undone first)
    OPLOG_INSERT = ("INSERT INTO operation_log(kind, external_session_id, description, changes,"
                    " undoes, created_at) VALUES (?,?,?,?,?,?)")
    OPLOG_LAST_UNDOABLE = (
        f"SELECT {_OPLOG_COLUMNS} FROM operation_log o WHERE o.undoes IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM operation_log u WHERE u.undoes = o.seq)"
        " ORDER BY o.seq DESC LIMIT 1")
    OPLOG_RECENT = f"SELECT {_OPLOG_COLUMNS} FROM operation_log o ORDER BY o.seq DESC LIMIT ?"

    # --------------------------------------------------------- import sources
    IMPORT_SOURCE_GET = ("SELECT external_session_id, format, size, mtime, state FROM import_sources"
                         " WHERE source_key = ?")
    IMPORT_SOURCE_SET = (
        "INSERT INTO import_sources(path, source_key, external_session_id, format, size, mtime,"
        " state, imported_at, record_version, complete, mtime_ns, inode, device, lines)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(source_key) DO UPDATE SET"
        " path = excluded.path, external_session_id = excluded.external_session_id,"
        " format = excluded.format, size = excluded.size, mtime = excluded.mtime,"
        " state = excluded.state, imported_at = excluded.imported_at,"
        " record_version = excluded.record_version, complete = excluded.complete,"
        " mtime_ns = excluded.mtime_ns, inode = excluded.inode, device = excluded.device,"
        " lines = excluded.lines")
    IMPORT_SOURCES_FORGET = "DELETE FROM import_sources WHERE external_session_id = ?"

    # ---------------------------------------------------------------- search
    SEARCH_INSERT = sqlite_search.INSERT

    # ----------------------------------------------------------------- usage
    USAGE_INSERT = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp) VALUES (?,?,?,?,?,?,?,?,?)")
    USAGE_OF_SESSION = (
        "SELECT provider, protocol, model, input_tokens, output_tokens, total_tokens,"
        " duration_ms, timestamp FROM usage WHERE external_session_id = ? ORDER BY seq")
    # one row per response (core/store/usage_rows.py); the order of usage_rows._row
    USAGE_INSERT_RESPONSE = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp, entry_seq, chain, depth,"
        " response_key, cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens,"
        " reasoning_tokens, cost_usd, cost_logged, price_basis, fast, subagent, counted)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    USAGE_UPDATE_COPY = (
        "UPDATE usage SET input_tokens = ?, output_tokens = ?, cache_creation_tokens = ?,"
        " cache_creation_1h_tokens = ?, cache_read_tokens = ?, reasoning_tokens = ?,"
        " total_tokens = ?, cost_usd = ?, cost_logged = ?, price_basis = ? WHERE seq = ?")
    USAGE_SESSION_HAS_ROWS = "SELECT 1 FROM usage WHERE external_session_id = ? LIMIT 1"
    ENTRY_OF_SESSION_BEFORE = ("SELECT 1 FROM entries WHERE external_session_id = ? AND seq < ?"
                               " LIMIT 1")
    USAGE_CODEX_STATE = (
        "SELECT type, data FROM entries WHERE external_session_id = ? AND seq < ? AND type IN"
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
        " unpriced, subagent_cost_usd, subagent_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        + SESSION_USAGE_ON_CONFLICT)
    # Rebuilt from the rows (after a migration, a repricing, a deletion of a session).
    SESSION_USAGE_CLEAR = "DELETE FROM session_usage"
    SESSION_USAGE_REBUILD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens)"
        " SELECT external_session_id, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),"
        " SUM(cache_creation_tokens), SUM(cache_read_tokens), SUM(reasoning_tokens),"
        " COALESCE(SUM(cost_usd), 0), SUM(cost_usd IS NULL),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens"
        " + cache_creation_tokens + cache_read_tokens END), 0)"
        " FROM usage GROUP BY external_session_id, model")
    # the first row of each response across sessions is the one that counts in totals
    USAGE_RECOUNT = (
        "UPDATE usage SET counted = CASE WHEN response_key IS NULL OR seq = (SELECT MIN(u.seq)"
        " FROM usage u WHERE u.response_key = usage.response_key) THEN 1 ELSE 0 END")
    USAGE_RECOUNT_KEYS_OF = (
        "SELECT DISTINCT response_key FROM usage WHERE external_session_id = ? AND counted = 1"
        " AND response_key IS NOT NULL")
    USAGE_RECOUNT_KEY = (
        "UPDATE usage SET counted = 1 WHERE seq = (SELECT MIN(seq) FROM usage WHERE"
        " response_key = ?) AND NOT EXISTS (SELECT 1 FROM usage WHERE response_key = ?"
        " AND counted = 1)")
    USAGE_TO_PRICE = (
        "SELECT seq, model, provider, timestamp, input_tokens, cache_creation_tokens,"
        " cache_creation_1h_tokens, cache_read_tokens, output_tokens, reasoning_tokens, fast"
        " FROM usage WHERE cost_logged = 0 AND price_basis != ?")
    USAGE_SET_PRICE = "UPDATE usage SET cost_usd = ?, price_basis = ? WHERE seq = ?"
    # (< or >, not !=: each side is a range of idx_usage_basis, so nothing stale costs no scan)
    USAGE_STALE_PRICES = ("SELECT 1 FROM usage WHERE (price_basis < ?1 OR price_basis > ?1)"
                          " AND cost_logged = 0 LIMIT 1")
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
        " SUM(u.cost_usd IS NULL), COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.input_tokens + u.output_tokens"
        " + u.cache_creation_tokens + u.cache_read_tokens END), 0)")
    USAGE_OF_PATH_PIECE = (
        f"SELECT u.model, {_USAGE_SUMS} FROM usage u WHERE u.chain = ? AND u.depth BETWEEN ? AND ?"
        " GROUP BY u.model")
    USAGE_LAST_ON_PATH_PIECE = (
        "SELECT u.model, u.provider, u.timestamp FROM usage u WHERE u.chain = ?"
        " AND u.depth BETWEEN ? AND ? AND u.model <> '' ORDER BY u.depth DESC LIMIT 1")

    @staticmethod
    def usage_copies_in_session(count: int) -> str:
        marks = ",".join("?" * count)
        return ("SELECT response_key, seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, subagent FROM usage"
                f" WHERE external_session_id = ? AND response_key IN ({marks})")

    @staticmethod
    def usage_keys_elsewhere(count: int) -> str:
        marks = ",".join("?" * count)
        return (f"SELECT DISTINCT response_key FROM usage WHERE response_key IN ({marks})"
                " AND external_session_id != ?")

    @staticmethod
    def usage_of_entries(count: int) -> str:
        marks = ",".join("?" * count)
        return ("SELECT entry_seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, cost_logged FROM usage"
                f" WHERE entry_seq IN ({marks})")

    @staticmethod
    def usage_bucket_report(grain: str, *, counted_only: bool, since: str | None,
                            until: str | None, source: str | None) -> tuple[str, list[Any]]:
        """`usage_report` from the hourly buckets (migration 9): the same rows, for grains
        of an hour or more ('hour', 'model', 'project', 'session', 'all') and bounds on
        whole hours."""
        group = {"hour": "b.hour", "model": "''", "project": "x.cwd",
                 "session": "b.external_session_id", "all": "''"}[grain]
        where, args = ["b.responses <> 0"], []
        if counted_only:
            where.append("b.counted = 1")
        if since:
            where.append("b.hour >= ?")
            args.append(since[:13])
        if until:
            where.append("b.hour < ?")
            args.append(until[:13])
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = b.external_session_id"
        if source:
            where.append("x.source = ?")
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
            where.append("u.timestamp >= ?")
            args.append(since)
        if until:
            where.append("u.timestamp < ?")
            args.append(until)
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = u.external_session_id"
        if source:
            where.append("x.source = ?")
            args.append(source)
        sql = (f"SELECT {group}, u.model, {Statements._USAGE_SUMS} FROM usage u{join}"
               + (" WHERE " + " AND ".join(where) if where else "") + " GROUP BY 1, 2")
        return sql, args

    # ------------------------------------------------ run and capability events
    RUN_EVENT_INSERT = (
        "INSERT INTO session_run_events(id, session_id, run_id, event_type, source, status, model,"
        " mode, timestamp, data) VALUES (?,?,?,?,?,?,?,?,?,?)")
    RUN_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, status, model, mode, timestamp,"
        " data FROM session_run_events WHERE session_id = ? AND seq > ? ORDER BY seq")
    RUN_EVENTS_AFTER_LIMIT = RUN_EVENTS_AFTER + " LIMIT ?"
    CAPABILITY_EVENT_INSERT = (
        "INSERT INTO session_capability_events(id, session_id, run_id, event_type, source, actor,"
        " capability, old_value, new_value, timestamp, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    CAPABILITY_EVENTS_AFTER = (
        "SELECT seq, id, session_id, run_id, event_type, source, actor, capability, old_value,"
        " new_value, timestamp, data FROM session_capability_events WHERE session_id = ?"
        " AND seq > ? ORDER BY seq")
    CAPABILITY_EVENTS_AFTER_LIMIT = CAPABILITY_EVENTS_AFTER + " LIMIT ?"
    CAPABILITIES_SET = (
        "INSERT INTO session_capabilities(session_id, mode, delegate_mode, multi_agent, workflows,"
        " web_search, browser, a2a_master, updated_at) VALUES (?,?,?,?,?,?,?,?,?)"
        " ON CONFLICT(session_id) DO UPDATE SET mode = excluded.mode,"
        " delegate_mode = excluded.delegate_mode, multi_agent = excluded.multi_agent,"
        " workflows = excluded.workflows, web_search = excluded.web_search,"
        " browser = excluded.browser, a2a_master = excluded.a2a_master,"
        " updated_at = excluded.updated_at")
    CAPABILITIES_GET = (
        "SELECT session_id, mode, delegate_mode, multi_agent, workflows, web_search, browser,"
        " a2a_master, updated_at FROM session_capabilities WHERE session_id = ?")


def _full(path: Path) -> bool:
    """Whether the file system of `path` has no room left for a store's shared-memory file
    (SQLite reports that as an I/O error, not as a full disk)."""
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 64 * 1024


_OWN_FILES = (("", "store"), ("-wal", "write-ahead log (-wal)"),
              ("-shm", "shared-memory index (-shm)"), ("-journal", "rollback journal (-journal)"))


class SQLiteBackend:
    """One SQLite file: opening it, its transactions, and what is not a plain statement."""

    name = "sqlite"
    sql = Statements
    search_index = sqlite_search   # the full-text index's statements (core/store/search.py)
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    takes_scratch = True   # sessions of a worker's scratch store move in (sqlite_merge.py)

    def __init__(self, path: Path):
        self.path = path   # what `Store.path` gives back: the store's name
        self.location = str(path)
        self._bulk_supported: bool | None = None
        self._bulk_cache = -2000
        self._opened: tuple[int, int] | None = None   # the file's (device, inode) once open
        self._bases: tuple[str, ...] | None = None    # its path as given and resolved

    # ---------------------------------------------------------------- opening
    def identity(self) -> tuple:
        """What tells this store from others in the process: the file's device and inode
        (the same file by any path), or its resolved path while there is no file yet."""
        try:
            info = os.stat(self.path)
        except OSError:
            return ("sqlite", "path", str(Path(os.path.abspath(self.path)).resolve()))
        return ("sqlite", info.st_dev, info.st_ino)

    def _remember_file(self) -> None:
        try:
            info = os.stat(self.path)
        except OSError:
            return
        self._opened = (info.st_dev, info.st_ino)

    def held_files(self) -> dict[tuple[int, int], tuple[str, str]]:
        """(device, inode) of the store and of its -wal, -shm and -journal, those that exist,
        each with its suffix ("" for the store) and what it is (`core.held_files`). SQLite
        puts the side files beside the file a symbolic link to the store points at: both
        places are looked at."""
        out: dict[tuple[int, int], tuple[str, str]] = {}
        if self._opened is not None:
            out[self._opened] = ("", f"the store {self.location} itself")
        if self._bases is None:   # (resolved once: a path of many parts costs an lstat each)
            self._bases = tuple(dict.fromkeys((os.path.abspath(self.path),
                                               os.path.realpath(self.path))))
        for base in self._bases:
            for suffix, what in _OWN_FILES:
                try:
                    info = os.stat(base + suffix)
                except OSError:
                    continue
                out.setdefault((info.st_dev, info.st_ino), (suffix, (
                    f"the {what} of the store {self.location}" if suffix else
                    f"the store {self.location} itself")))
        return out

    def connect(self, *, create: bool, on_upgrade: Callable[[str], None] | None = None
                ) -> sqlite3.Connection:
        """A connection to the file, checked to be an arbor store and migrated.

        Only SQLite reads the file: opening, reading and closing a store with plain file
        I/O would drop the process's POSIX locks on it (a connection of this process may
        hold them), and whether a file is SQLite at all is SQLite's to say."""
        path = self.path
        shown = self.location
        try:
            info = os.stat(path)
        except FileNotFoundError:
            info = None
        except OSError as error:
            raise StoreUnavailable(f"cannot read {shown}: {error.strerror or error}") from None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                raise StoreUnavailable(f"{shown} is a folder, not an arbor store")
            if not stat.S_ISREG(info.st_mode):
                raise StoreUnavailable(f"{shown} is not a regular file, not an arbor store")
            if not can_read(path):
                raise StoreUnavailable(f"cannot read {shown}: permission denied")
        else:
            if not create:
                raise StoreNotFound(f"there is no arbor store at {shown}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreUnavailable(
                    f"cannot create the folder for {shown}: {error.strerror or error}") from None
            if not can_create_in(path.parent):
                raise StoreUnavailable(f"cannot create {shown}: its folder is not writable")
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {shown}: {error}") from None
        try:
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "schema_migrations" not in tables:
                raise StoreDamaged(
                    f"{shown} is a SQLite database but not an arbor store; it was not changed")
            migrations.check_version(conn, shown)
            if not tables:
                # A new file: 4 KiB pages. Every append writes each page it touches to the
                # WAL (about 13): 16 KiB pages made that 213 KB for a 40-byte message, 4
                # KiB pages a quarter of it, and imports take as long (bench/bench_wal.py).
                # An existing store keeps the size it has (WAL cannot change it).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"cannot use {shown} in WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = NORMAL")
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA wal_autocheckpoint = {max(1000, CHECKPOINT_BYTES // page_size)}")
            migrations.apply_migrations(conn, shown, on_upgrade)
        except sqlite3.DatabaseError as error:
            conn.close()
            raise _opening_error(error, path, shown, writing=True) from None
        except BaseException:
            conn.close()
            raise
        self._remember_file()
        return conn

    def connect_read_only(self) -> sqlite3.Connection:
        """A connection that cannot write (SQLite's read-only mode), for the commands that
        only read (`arbor list`, `usage`, `export`, push's source): it never creates a store,
        never turns an empty or foreign file into one, and works where the store cannot be
        written (a read-only folder, file system or mount).

        A WAL store needs its -shm to be read. SQLite's rule (wal.html, "Read-Only
        Databases"; walformat.html): a read-only connection can read a WAL database when
        its -wal and -shm exist, or when it may create them in the folder, or when it is
        opened `immutable`. So in a folder it cannot write, with neither a -wal nor a -shm
        there, the store is opened `immutable=1`: nobody can be writing it (a writer would
        have to create the -wal beside it first). With a -wal there but no -shm that can be
        made, the store cannot be read safely (the -wal's changes are found through the
        -shm), and that is said. StoreOutdated: an older arbor's store, to be updated
        first."""
        path = self.path
        shown = self.location
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise StoreNotFound(f"there is no arbor store at {shown}") from None
        except OSError as error:
            raise StoreUnavailable(f"cannot read {shown}: {error.strerror or error}") from None
        if stat.S_ISDIR(info.st_mode):
            raise StoreUnavailable(f"{shown} is a folder, not an arbor store")
        if not stat.S_ISREG(info.st_mode):
            raise StoreUnavailable(f"{shown} is not a regular file, not an arbor store")
        wal, shm = (os.path.lexists(f"{os.path.realpath(path)}{suffix}") for suffix in
                    ("-wal", "-shm"))
        if info.st_size == 0 and not wal:
            raise StoreNotFound(f"there is no arbor store at {shown} (the file is empty; "
                                "it was left as it is)")
        if not can_read(path):
            raise StoreUnavailable(f"cannot read {shown}: permission denied")
        folder_writable = can_create_in(os.path.dirname(os.path.realpath(path)))
        if wal and not shm and not folder_writable:
            raise StoreUnavailable(
                f"cannot read {shown}: its -wal holds changes that are read through a -shm "
                "file, and there is none beside it nor can one be made (its folder is "
                "read-only)")
        immutable = not wal and not shm and not folder_writable
        uri = f"file:{_uri_path(path)}?mode=ro" + ("&immutable=1" if immutable else "")
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {shown}: {error}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                raise StoreNotFound(f"there is no arbor store at {shown} (an empty SQLite "
                                    "database is there; it was left as it is)")
            if "schema_migrations" not in tables:
                raise StoreDamaged(
                    f"{shown} is a SQLite database but not an arbor store; it was not changed")
            if migrations.check_version(conn, shown) < migrations.CURRENT_VERSION:
                raise StoreOutdated(f"{shown} was written by an older arbor")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise _opening_error(error, path, shown, writing=False) from None
        except BaseException:
            conn.close()
            raise
        self._remember_file()
        return conn

    # ----------------------------------------------------------- transactions
    @staticmethod
    def begin_write(conn: sqlite3.Connection) -> None:
        """Take the store's write lock now (so that a transaction never fails half-way on it),
        asking again every millisecond while another process writes.

        SQLite's own busy handler sleeps longer and longer between tries (up to 100 ms), so
        a writer that waits behind an import keeps missing the short gaps between the
        import's transactions; asking often, within the same overall timeout, gets it in at
        the first gap."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as error:
                    message = str(error)
                    if "locked" not in message and "busy" not in message:
                        raise
                    if time.monotonic() >= deadline:
                        raise StoreBusy(
                            f"another program has been writing to the store for "
                            f"{BUSY_TIMEOUT_MS / 1000:g} s; nothing was changed, try again when "
                            "it is done") from None
                time.sleep(WRITE_POLL)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    @staticmethod
    def begin_read(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN")

    @staticmethod
    def commit(conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")

    @staticmethod
    def rollback(conn: sqlite3.Connection) -> None:
        # (none is open when the write lock could not be taken again after a commit, in
        # `Store.commit_and_continue`: the error that says so is the one to raise)
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    # ---------------------------------------------------------------- writing
    @staticmethod
    def executemany(conn: sqlite3.Connection, sql: str, rows: Any) -> None:
        conn.executemany(sql, rows)

    @staticmethod
    def executemany_text(conn: sqlite3.Connection, sql: str, rows: list[tuple]) -> None:
        """Rows whose last field is UTF-8 bytes, written as text. (Not with `sqlite_bulk.as_text`:
        that module loads threading and queue, which a small import writing inline need not.)"""
        conn.executemany(sql, [(*row[:-1], row[-1].decode("utf-8")) for row in rows])

    @staticmethod
    def inserted_id(cursor: sqlite3.Cursor) -> int:
        """The id the INSERT just run gave its row. (PostgreSQL: the statement ends with
        `RETURNING id` and this reads it. SQLite has RETURNING too, but a transaction that
        uses it takes twice as long here: its rows go through a temporary table.)"""
        return cursor.lastrowid

    @classmethod
    def insert_unless_taken(cls, conn: sqlite3.Connection, sql: str, args: Sequence[Any],
                            column: str) -> int | None:
        """Run an INSERT: the new row's id, or None when `column`'s value is taken (the
        transaction goes on). Any other failure raises."""
        try:
            return conn.execute(sql, args).lastrowid
        except sqlite3.IntegrityError as error:
            if cls.is_unique_violation(error, column):
                return None
            raise

    @staticmethod
    def is_unique_violation(error: BaseException, column: str | None = None) -> bool:
        """Whether `error` is a UNIQUE constraint failing (on `column`, when given)."""
        if not isinstance(error, sqlite3.IntegrityError):
            return False
        message = str(error)
        return "UNIQUE" in message and (column is None or column in message)

    @staticmethod
    def first_free_entry_seq(conn: sqlite3.Connection) -> int:
        """The seq the next entry written in this transaction gets; the write lock is held.

        `entries.seq` is AUTOINCREMENT, so it is above both max(seq) and sqlite_sequence."""
        row = conn.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'entries'), 0),"
            " COALESCE((SELECT MAX(seq) FROM entries), 0))").fetchone()
        return int(row[0] or 0) + 1

    @staticmethod
    def forget_session_entries(conn: sqlite3.Connection, external_session_id: int) -> None:
        """Before a session's entries are deleted: take them out of the search index (the
        FTS5 index is contentless: it is told each text to remove)."""
        sqlite_search.forget_session(conn, external_session_id)

    # ------------------------------------------------------------ bulk writes
    def start_bulk(self, conn: sqlite3.Connection,
                   explain: Callable[[BaseException], BaseException]
                   ) -> sqlite_bulk.BulkWriter | None:
        """A thread that writes entry batches for the open write transaction (None: this
        SQLite lacks the JSON functions it needs, and batches are written inline)."""
        from . import sqlite_bulk

        if self._bulk_supported is None:
            self._bulk_supported = sqlite_bulk.supported(conn)
        if not self._bulk_supported:
            return None
        # A big write touches index pages all over; a larger page cache for its length
        # keeps them from being written out and read back (restored after).
        self._bulk_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute(f"PRAGMA cache_size = {BULK_CACHE_SIZE}")
        return sqlite_bulk.BulkWriter(conn, explain=explain, row_statements=(
            Statements.ENTRY_INSERT, Statements.SEARCH_INSERT, Statements.USAGE_INSERT))

    def stop_bulk(self, conn: sqlite3.Connection, bulk: sqlite_bulk.BulkWriter, *,
                  discard: bool = False) -> None:
        try:
            bulk.stop(discard=discard)
        finally:
            conn.execute(f"PRAGMA cache_size = {int(self._bulk_cache)}")

    # ---------------------------------------------------------------- reading
    @staticmethod
    def data_version(conn: sqlite3.Connection) -> int:
        """Changes whenever another connection commits to the file."""
        return conn.execute("PRAGMA data_version").fetchone()[0]

    @staticmethod
    def integrity_check(conn: sqlite3.Connection) -> str:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]

    @staticmethod
    def checkpoint_log(conn: sqlite3.Connection) -> None:
        """Move the write-ahead log into the file and empty it (a store about to be copied)."""
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @staticmethod
    def schema_version(conn: sqlite3.Connection) -> int:
        return migrations.recorded_version(conn)


def _opening_error(error: sqlite3.DatabaseError, path: Path, shown: str, *,
                   writing: bool) -> StoreError:
    """The sentence for what failed while a store was opened (`writing`: by an ordinary
    opening, which may write; else by `connect_read_only`)."""
    message = str(error)
    code = getattr(error, "sqlite_errorcode", None) or 0
    if code == SQLITE_NOTADB or "file is not a database" in message:
        return StoreDamaged(f"{shown} is not an arbor store (it is not a SQLite database)")
    io_error = code & 0xFF == SQLITE_IOERR
    if writing and (code == SQLITE_FULL or "disk is full" in message or
                    (io_error and _full(path))):
        return StoreUnavailable(f"cannot write {shown}: the disk is full")
    if io_error:   # the file system's fault, not the file's
        return StoreUnavailable(f"cannot {'read or write' if writing else 'read'} {shown}: "
                                f"{message}")
    if writing and "unable to open" in message and not can_create_in(path.parent):
        return StoreUnavailable(
            f"cannot open {shown}: its folder is read-only, and a store needs to write "
            "its -wal and -shm files beside it")
    if "readonly" in message or "unable to open" in message or "locked" in message:
        return StoreUnavailable(f"cannot {'open' if writing else 'read'} {shown}: {message}")
    return StoreDamaged(f"{shown} is damaged or not an arbor store ({message})")


def peek_import_stamps(path: Path) -> dict[str, tuple] | None:
    """`Statements.IMPORT_STAMPS` of the store at `path`, read through a read-only
    connection that is closed before this returns; None when that cannot answer (no
    store there, not an arbor store of exactly this version, locked, damaged): the caller
    then opens the store the ordinary way, which says what is wrong or migrates it.

    Only for a process holding no other connection to this store: closing this one drops
    every POSIX lock the process holds on the file. `arbor import` asks it before it opens
    the store, so that a run where nothing changed needs neither the store's API nor a
    write: one query and a `stat` a file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    try:
        conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True,
                               isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return None
    try:
        if migrations.recorded_version(conn) != migrations.CURRENT_VERSION:
            return None
        return {row[0]: row[1:] for row in conn.execute(Statements.IMPORT_STAMPS)}
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _uri_path(path: Path) -> str:
    """A file path as the path of a `file:` URI: the characters a URI gives meaning to
    (%, ? and #) escaped."""
    return os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
