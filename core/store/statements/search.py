"""The full-text search.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

from core.store.sqlite import search_index as sqlite_search
from core.store.postgres import search_index as postgres_search



class SQLite:
    SEARCH_INSERT = sqlite_search.INSERT
    # what a search's scope (`arbor search --project/--source`) is chosen from
    SEARCH_SESSION_FACTS = "SELECT id, uid, source, cwd, is_active FROM external_sessions"

    @staticmethod
    def search_session_facts_of(count: int) -> str:
        return SQLite.SEARCH_SESSION_FACTS + " WHERE id IN (" + ",".join(["?"] * count) + ")"


class Postgres:
    # An entry's search text as lexemes (postgres_search: the same for many rows at once
    # in postgres_bulk.SEARCH_INSERT_MANY)
    SEARCH_INSERT = postgres_search.SEARCH_INSERT
    SEARCH_SESSION_FACTS = SQLite.SEARCH_SESSION_FACTS

    @staticmethod
    def search_session_facts_of(count: int) -> str:
        return SQLite.SEARCH_SESSION_FACTS + " WHERE id IN (" + ",".join(["%s"] * count) + ")"
