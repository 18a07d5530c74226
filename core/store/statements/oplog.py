"""The operation log (undo).

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from .common import OPLOG_COLUMNS



class SQLite:
    # (core.actions.undo: the app's operations and what each changed, newest undone first)
    OPLOG_INSERT = ("INSERT INTO operation_log(kind, external_session_id, description, changes,"
                    " undoes, created_at) VALUES (?,?,?,?,?,?)")
    OPLOG_LAST_UNDOABLE = (
        f"SELECT {OPLOG_COLUMNS} FROM operation_log o WHERE o.undoes IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM operation_log u WHERE u.undoes = o.seq)"
        " ORDER BY o.seq DESC LIMIT 1")
    OPLOG_RECENT = f"SELECT {OPLOG_COLUMNS} FROM operation_log o ORDER BY o.seq DESC LIMIT ?"


class Postgres:
    # (core.actions.undo: the app's operations and what each changed, newest undone first)
    OPLOG_INSERT = ("INSERT INTO operation_log(kind, external_session_id, description, changes,"
                    " undoes, created_at) VALUES (%s,%s,%s,%s,%s,%s) RETURNING seq")
    OPLOG_LAST_UNDOABLE = (
        f"SELECT {OPLOG_COLUMNS} FROM operation_log o WHERE o.undoes IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM operation_log u WHERE u.undoes = o.seq)"
        " ORDER BY o.seq DESC LIMIT 1")
    OPLOG_RECENT = f"SELECT {OPLOG_COLUMNS} FROM operation_log o ORDER BY o.seq DESC LIMIT %s"
