"""Labels and checkpoints.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from .common import CHECKPOINT_ORDER, CHECKPOINT_SELECT



class SQLite:
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

    CHECKPOINT_INSERT = (
        "INSERT INTO checkpoints(external_session_id, internal_session_id, entry_seq,"
        " checkpoint_name, session_state, is_auto, created_at, metadata, tool_invocations)"
        " VALUES (?,?,?,?,?,?,?,?,?)")
    CHECKPOINT_BY_ID = f"{CHECKPOINT_SELECT} WHERE c.id = ?{CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_BRANCH = f"{CHECKPOINT_SELECT} WHERE c.internal_session_id = ?{CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_SESSION = f"{CHECKPOINT_SELECT} WHERE c.external_session_id = ?{CHECKPOINT_ORDER}"
    CHECKPOINT_DELETE = "DELETE FROM checkpoints WHERE id = ?"
    CHECKPOINT_SET_HIDDEN = "UPDATE checkpoints SET is_hidden = ? WHERE id = ?"
    CHECKPOINT_SESSION_OF = "SELECT external_session_id FROM checkpoints WHERE id = ?"
    CHECKPOINT_METADATA_FIELD_OF_SESSION = (
        "SELECT json_extract(metadata, '$.' || ?) FROM checkpoints WHERE external_session_id = ?")


class Postgres:
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

    CHECKPOINT_INSERT = (
        "INSERT INTO checkpoints(external_session_id, internal_session_id, entry_seq,"
        " checkpoint_name, session_state, is_auto, created_at, metadata, tool_invocations)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id")
    CHECKPOINT_BY_ID = f"{CHECKPOINT_SELECT} WHERE c.id = %s{CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_BRANCH = f"{CHECKPOINT_SELECT} WHERE c.internal_session_id = %s{CHECKPOINT_ORDER}"
    CHECKPOINTS_OF_SESSION = f"{CHECKPOINT_SELECT} WHERE c.external_session_id = %s{CHECKPOINT_ORDER}"
    CHECKPOINT_DELETE = "DELETE FROM checkpoints WHERE id = %s"
    CHECKPOINT_SET_HIDDEN = "UPDATE checkpoints SET is_hidden = %s WHERE id = %s"
    CHECKPOINT_SESSION_OF = "SELECT external_session_id FROM checkpoints WHERE id = %s"
    CHECKPOINT_METADATA_FIELD_OF_SESSION = (
        "SELECT metadata::json -> %s FROM checkpoints WHERE external_session_id = %s")
