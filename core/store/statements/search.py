"""The full-text search.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from core.store.sqlite import search_index as sqlite_search

# PostgreSQL's search text: a text search configuration of the store's own
# (core/store/postgres/search_index.py), and an entry's text as the index holds it (`%s`:
# the text; `{text}` for many at once).
POSTGRES_CONFIG = "arbor_english"
POSTGRES_LEXEMES = ("to_tsvector('" + POSTGRES_CONFIG + "', regexp_replace(left({text}, 250000),"
                    " '[[:punct:]]+', ' ', 'g'))")


class SQLite:
    SEARCH_INSERT = sqlite_search.INSERT
    # what a search's scope (`arbor search --project/--source`) is chosen from
    SEARCH_SESSION_FACTS = "SELECT id, uid, source, cwd, is_active FROM external_sessions"

    @staticmethod
    def search_session_facts_of(count: int) -> str:
        return SQLite.SEARCH_SESSION_FACTS + " WHERE id IN (" + ",".join(["?"] * count) + ")"

    @staticmethod
    def search_session_facts_where(cwd_holding: bool, source: bool) -> str:
        """Those whose folder has a piece of text in it, of a source (the parameters in
        that order, the conditions asked for)."""
        where = (["instr(cwd, ?) > 0"] if cwd_holding else []) + (["source = ?"] if source else [])
        return SQLite.SEARCH_SESSION_FACTS + "".join(
            (" WHERE " if i == 0 else " AND ") + w for i, w in enumerate(where))


class Postgres:
    # An entry's search text as lexemes (the same for many rows at once in
    # core/store/postgres/bulk.py's SEARCH_INSERT_MANY)
    SEARCH_INSERT = ("INSERT INTO entries_search(seq, words) VALUES (%s, "
                     + POSTGRES_LEXEMES.format(text="%s") + ")")
    SEARCH_SESSION_FACTS = SQLite.SEARCH_SESSION_FACTS

    @staticmethod
    def search_session_facts_of(count: int) -> str:
        return SQLite.SEARCH_SESSION_FACTS + " WHERE id IN (" + ",".join(["%s"] * count) + ")"

    @staticmethod
    def search_session_facts_where(cwd_holding: bool, source: bool) -> str:
        where = (["strpos(cwd, %s) > 0"] if cwd_holding else []) + \
            (["source = %s"] if source else [])
        return SQLite.SEARCH_SESSION_FACTS + "".join(
            (" WHERE " if i == 0 else " AND ") + w for i, w in enumerate(where))
