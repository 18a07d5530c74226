"""Entries: the rows of the tree.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from .common import ENTRY_COLUMNS, ENTRY_FROM



class SQLite:
    ENTRY_INSERT = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
                    " depth, chain, msg_index, role, data) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
    ENTRY_BY_SEQ = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.seq = ?"
    ENTRY_BY_ID = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id = ?"
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


class Postgres:
    ENTRY_INSERT = ("INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp,"
                    " depth, chain, msg_index, role, data) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    ENTRY_BY_SEQ = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.seq = %s"
    ENTRY_BY_ID = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id = %s"
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
