"""What arbor's LangGraph checkpointer keeps.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations




class SQLite:
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
        return (f"{SQLite._LANGGRAPH_SELECT}{clause}"
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


class Postgres:
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
        """See sqlite.Postgres.langgraph_page."""
        where = []
        if sessions is not None:
            where.append(f"c.external_session_id IN ({', '.join(['%s'] * sessions)})")
        if after:
            where.append("(c.checkpoint_id < %s OR (c.checkpoint_id = %s"
                         " AND c.external_session_id < %s))")
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        return (f"{Postgres._LANGGRAPH_SELECT}{clause}"
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
