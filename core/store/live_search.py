"""Search as a person types (`/` in the app): one query per key, the stale one stopped.

A `LiveSearch` holds a connection of its own (`Store.searcher`), so the search a new key
makes stale is interrupted there (`stop`: SQLite's `interrupt()`, PostgreSQL's cancel)
without touching the app's other reads; and the session names, made ready once
(`NameIndex`), so each key only scores them. Each `run` answers what `search_all` answers:
sessions by name, labelled entries, message text, and how much of the history the index
covers.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from core.store.search import SearchResults
    from core.store.store import Store


# A word being typed is matched as a prefix from this many letters on ("ret" finds
# "retry"); a shorter one as a whole word at first ("b" as a prefix is nearly every entry of
# a big store: 100-250 ms), then as a prefix once typing pauses.
QUICK_PREFIX = 3


class LiveSearch:
    def __init__(self, store: Store, *, include_archived: bool = False):
        self.store = store.searcher()
        self.include_archived = include_archived
        self._names = None

    @property
    def errors(self) -> tuple[type[BaseException], ...]:
        return self.store.errors

    def names(self):
        """The session names, made ready for scoring on first use."""
        if self._names is None:
            from core.history.name_match import NameIndex

            sql = self.store._sql
            self._names = NameIndex(self.store._all(
                sql.SESSION_NAMES if self.include_archived else sql.SESSION_NAMES_ACTIVE))
        return self._names

    def run(self, query: str, *, quick: bool = False, names: int = 50, messages: int = 200
            ) -> SearchResults:
        """Everything `/` finds for `query` (core/store/search.py `search_all`). `quick`:
        the answer at each key: the newest matching messages rather than the best, a
        loose word of fewer than `QUICK_PREFIX` letters matched whole, and so is every word
        before the one being typed (SearchQuery's `typing`); the full answer follows when
        typing pauses."""
        from core.history.search_query import SearchQuery
        from core.store import search

        query = query.strip()
        if not query:
            return search.SearchResults(query, [], [], search.SearchCoverage(1.0, False))
        sessions = search.sessions_of(self.store, self.names().rank(query, names))
        labelled = self.store.search.labels(query)
        found = {hit.seq for hit in labelled}
        asked = SearchQuery(query, prefix_from=QUICK_PREFIX if quick else 1, typing=quick)
        hits = labelled + [hit for hit in search.search_messages(self.store, asked, limit=messages,
                                                                 ranked=not quick)
                           if hit.seq not in found]
        return search.SearchResults(query, sessions, hits[:max(messages, len(labelled))],
                                    search.coverage(self.store))

    def stop(self) -> None:
        """(any thread) Stop the search running now, if one is: it raises one of `errors`."""
        self.store.interrupt()

    def forget_names(self) -> None:
        """The names changed (a session renamed, imported): read them again next time."""
        self._names = None

    def close(self) -> None:
        self.store.close()
