"""Import records and sources: how far each imported file got.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from .common import ENTRY_COLUMNS, ENTRY_FROM



class SQLite:
    IMPORT_RECORDS = "SELECT source_key, state FROM import_sources"
    IMPORT_ANY = "SELECT 1 FROM import_sources LIMIT 1"
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
    ENTRIES_OF_SESSION = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id"
                          " = ? AND e.seq > ? ORDER BY e.seq")
    ENTRIES_OF_SESSION_LIMIT = ENTRIES_OF_SESSION + " LIMIT ?"
    ENTRY_CHILDREN = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.parent_seq = ?"
                      " ORDER BY e.seq")
    ENTRY_LEAVES = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id = ?"
                    " AND NOT EXISTS (SELECT 1 FROM entries c WHERE c.parent_seq = e.seq)"
                    " ORDER BY e.seq")

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


class Postgres:
    IMPORT_RECORDS = "SELECT source_key, state FROM import_sources"
    IMPORT_ANY = "SELECT 1 FROM import_sources LIMIT 1"
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
    ENTRIES_OF_SESSION = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id"
                          " = %s AND e.seq > %s ORDER BY e.seq")
    ENTRIES_OF_SESSION_LIMIT = ENTRIES_OF_SESSION + " LIMIT %s"
    ENTRY_CHILDREN = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.parent_seq = %s"
                      " ORDER BY e.seq")
    ENTRY_LEAVES = (f"SELECT {ENTRY_COLUMNS} FROM {ENTRY_FROM} WHERE e.external_session_id = %s"
                    " AND NOT EXISTS (SELECT 1 FROM entries c WHERE c.parent_seq = e.seq)"
                    " ORDER BY e.seq")

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
