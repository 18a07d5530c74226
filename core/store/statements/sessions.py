"""External sessions and their lineage.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
from .common import POSTGRES_EXTERNAL_SELECT, SQLITE_EXTERNAL_SELECT, SUMMARY_SELECT



class SQLite:
    EXTERNAL_INSERT = (
        "INSERT INTO external_sessions(uid, user_id, session_name, created_at, updated_at,"
        " metadata, cwd, source, kind, parent_session, header_version)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    EXTERNAL_BY_ID = f"{SQLITE_EXTERNAL_SELECT} WHERE x.id = ?"
    EXTERNAL_BY_UID = f"{SQLITE_EXTERNAL_SELECT} WHERE x.uid = ?"
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
        sql = SQLITE_EXTERNAL_SELECT
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
        return (f"{SQLITE_EXTERNAL_SELECT} WHERE x.source = ?{equal}"
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
        sql = SUMMARY_SELECT
        if not include_archived:
            sql += " WHERE x.is_active = 1"
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return sql

    @staticmethod
    def sessions_with_ids(count: int) -> str:
        """The session list's rows of `count` sessions, by id (any order)."""
        return SUMMARY_SELECT + " WHERE x.id IN (" + ",".join(["?"] * count) + ")"

    # every session's name, for search to score (core/history/name_match.py)
    SESSION_NAMES = "SELECT id, session_name, uid FROM external_sessions ORDER BY updated_at DESC, id DESC"
    SESSION_NAMES_ACTIVE = ("SELECT id, session_name, uid FROM external_sessions WHERE is_active = 1"
                            " ORDER BY updated_at DESC, id DESC")

    # (core.history.lineage: sub-agents and forks under the session and entry they came from)
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


class Postgres:
    EXTERNAL_INSERT = (
        "INSERT INTO external_sessions(uid, user_id, session_name, created_at, updated_at,"
        " metadata, cwd, source, kind, parent_session, header_version)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (uid) DO NOTHING RETURNING id")
    EXTERNAL_BY_ID = f"{POSTGRES_EXTERNAL_SELECT} WHERE x.id = %s"
    EXTERNAL_BY_UID = f"{POSTGRES_EXTERNAL_SELECT} WHERE x.uid = %s"
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
        sql = POSTGRES_EXTERNAL_SELECT
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
        return (f"{POSTGRES_EXTERNAL_SELECT} WHERE x.source = %s{equal}"
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
        sql = SUMMARY_SELECT
        if not include_archived:
            sql += " WHERE x.is_active = 1"
        sql += " ORDER BY x.updated_at DESC, x.id DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return sql

    @staticmethod
    def sessions_with_ids(count: int) -> str:
        """The session list's rows of `count` sessions, by id (any order)."""
        return SUMMARY_SELECT + " WHERE x.id IN (" + ",".join(["%s"] * count) + ")"

    # every session's name, for search to score (core/history/name_match.py)
    SESSION_NAMES = "SELECT id, session_name, uid FROM external_sessions ORDER BY updated_at DESC, id DESC"
    SESSION_NAMES_ACTIVE = ("SELECT id, session_name, uid FROM external_sessions WHERE is_active = 1"
                            " ORDER BY updated_at DESC, id DESC")

    # (core.history.lineage: sub-agents and forks under the session and entry they came from)
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
