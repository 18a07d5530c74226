"""Paths from the root to a head, read by depth range along their chains.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from .common import ENTRY_COLUMNS, ENTRY_FROM



class SQLite:
    PATH_DEPTH_CHAIN = "SELECT depth, chain FROM entries WHERE seq = ?"
    PATH_CHAIN_START = "SELECT depth, parent_seq FROM entries WHERE seq = ?"
    PATH_PIECE = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.chain = ? AND e.depth"
                  " BETWEEN ? AND ? ORDER BY e.depth")
    PATH_SEQ_AT_DEPTH = "SELECT seq FROM entries WHERE chain = ? AND depth = ?"
    # plans over long paths: counted, or read at their ends, never all of it
    PATH_MSG_INDEX = "SELECT msg_index FROM entries WHERE chain = ? AND depth = ?"
    PATH_COMPACTION_COUNT = ("SELECT COUNT(*) FROM entries WHERE chain = ? AND depth BETWEEN ? AND ?"
                             " AND type = 'compaction'")
    PATH_FIRST = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.chain = ? AND e.depth BETWEEN ? AND ?"
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


class Postgres:
    PATH_DEPTH_CHAIN = "SELECT depth, chain FROM entries WHERE seq = %s"
    PATH_CHAIN_START = "SELECT depth, parent_seq FROM entries WHERE seq = %s"
    PATH_PIECE = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.chain = %s AND e.depth"
                  " BETWEEN %s AND %s ORDER BY e.depth")
    PATH_SEQ_AT_DEPTH = "SELECT seq FROM entries WHERE chain = %s AND depth = %s"
    # plans over long paths: counted, or read at their ends, never all of it
    PATH_MSG_INDEX = "SELECT msg_index FROM entries WHERE chain = %s AND depth = %s"
    PATH_COMPACTION_COUNT = ("SELECT COUNT(*) FROM entries WHERE chain = %s AND depth BETWEEN %s AND %s"
                             " AND type = 'compaction'")
    PATH_FIRST = f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.chain = %s AND e.depth BETWEEN %s AND %s"
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
