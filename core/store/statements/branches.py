"""Internal sessions (branches) and the reflog of their heads.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence
from .common import INTERNAL_SELECT



class SQLite:
    INTERNAL_BY_ID = f"{INTERNAL_SELECT} WHERE i.id = ?"
    INTERNAL_BY_LANGGRAPH_ID = f"{INTERNAL_SELECT} WHERE i.langgraph_session_id = ?"
    INTERNAL_OF_SESSION_NEWEST_FIRST = (f"{INTERNAL_SELECT} WHERE i.external_session_id = ?"
                                        " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_OF_SESSION = f"{INTERNAL_SELECT} WHERE i.external_session_id = ? ORDER BY i.id"
    INTERNAL_CHILDREN = (f"{INTERNAL_SELECT} WHERE i.parent_session_id = ?"
                         " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_CURRENT = f"{INTERNAL_SELECT} WHERE i.external_session_id = ? AND i.is_current = 1"
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
        sets = ", ".join(f"{SQLite._INTERNAL_FIELDS[name]} = ?" for name in fields)
        return f"UPDATE internal_sessions SET {sets} WHERE id = ?"

    REFLOG_INSERT = ("INSERT INTO reflog(internal_session_id, old_head_seq, new_head_seq, reason,"
                     " created_at) VALUES (?,?,?,?,?)")
    REFLOG_OF_BRANCH = ("SELECT old_head_seq, new_head_seq, reason, created_at FROM reflog"
                        " WHERE internal_session_id = ? ORDER BY seq")
    INTERNAL_SET_HIDDEN = "UPDATE internal_sessions SET is_hidden = ? WHERE id = ?"


class Postgres:
    INTERNAL_BY_ID = f"{INTERNAL_SELECT} WHERE i.id = %s"
    INTERNAL_BY_LANGGRAPH_ID = f"{INTERNAL_SELECT} WHERE i.langgraph_session_id = %s"
    INTERNAL_OF_SESSION_NEWEST_FIRST = (f"{INTERNAL_SELECT} WHERE i.external_session_id = %s"
                                        " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_OF_SESSION = f"{INTERNAL_SELECT} WHERE i.external_session_id = %s ORDER BY i.id"
    INTERNAL_CHILDREN = (f"{INTERNAL_SELECT} WHERE i.parent_session_id = %s"
                         " ORDER BY i.created_at DESC, i.id DESC")
    INTERNAL_CURRENT = f"{INTERNAL_SELECT} WHERE i.external_session_id = %s AND i.is_current = 1"
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
        sets = ", ".join(f"{Postgres._INTERNAL_FIELDS[name]} = %s" for name in fields)
        return f"UPDATE internal_sessions SET {sets} WHERE id = %s"

    REFLOG_INSERT = ("INSERT INTO reflog(internal_session_id, old_head_seq, new_head_seq, reason,"
                     " created_at) VALUES (%s,%s,%s,%s,%s)")
    REFLOG_OF_BRANCH = ("SELECT old_head_seq, new_head_seq, reason, created_at FROM reflog"
                        " WHERE internal_session_id = %s ORDER BY seq")
    INTERNAL_SET_HIDDEN = "UPDATE internal_sessions SET is_hidden = %s WHERE id = %s"
