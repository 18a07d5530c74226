"""Searching: message text through the full-text index, labels, session names."""

from __future__ import annotations

import re

from core.model.entries import search_text

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor

    from core.store.search import BacklogStep, SearchCoverage, SearchResults

from core.store.records import SessionSummary, SearchHit
from . import Room


class SearchRoom(Room):
    def messages(self, query: str, *, limit: int = 200, external_session_id: int | None = None,
                 sessions=None) -> list[SearchHit]:
        """Message text through the search index, best match first. Any text is a valid
        query: words are matched by their stems and as prefixes, "quoted phrases" as
        written (core/store/search.py). `sessions`: only in these sessions (ids)."""
        from core.store import search

        return search.search_messages(self._store, query, limit=limit,
                                      external_session_id=external_session_id, sessions=sessions)

    def session_facts(self, ids=None, *, cwd_holding: str | None = None,
                      source: str | None = None) -> dict[int, tuple[str, str, str, bool]]:
        """(uid, source, cwd, active) of every session by id (or of those `ids`; or of
        those whose folder has the text `cwd_holding` in it, of the `source` given): what a
        search is scoped by (a project, an agent) and what a hit names its session by."""
        if cwd_holding is not None or source is not None:
            args = [value for value in (cwd_holding, source) if value is not None]
            rows = self._all(self._sql.search_session_facts_where(
                cwd_holding is not None, source is not None), args)
        elif ids is None:
            rows = self._all(self._sql.SEARCH_SESSION_FACTS)
        else:
            ids = sorted(ids)
            if not ids:
                return {}
            rows = self._all(self._sql.search_session_facts_of(len(ids)), ids)
        return {row[0]: (row[1], row[2], row[3], bool(row[4])) for row in rows}

    def labels(self, query: str, *, limit: int = 50) -> list[SearchHit]:
        """Labelled entries whose current label has every word of `query` (anywhere in it,
        any case), newest label first, as search hits whose snippet starts with the label."""
        from core.store import search

        words = [w.lower() for w in re.findall(r"\w+", query, flags=re.UNICODE)]
        if not words:
            return []
        current: dict[int, str] = {}
        for target, label in self._all(self._sql.LABELS_OF_ALL_ENTRIES):
            if label is None:
                current.pop(target, None)
            else:
                current.pop(target, None)
                current[target] = label       # newest last
        hits: list[SearchHit] = []
        for seq, label in reversed(current.items()):
            if not all(word in label.lower() for word in words):
                continue
            entry = self._store.entries.get(seq)
            if entry is None:
                continue
            text = search_text(entry.type, entry.data)
            hits.append(SearchHit(seq, entry.id, entry.external_session_id,
                                  self._store.sessions.name(entry.external_session_id) or "", entry.type,
                                  entry.role, entry.timestamp,
                                  f"⚑ {label} · {search.snippet(text, words) if text else ''}"))
            if len(hits) >= limit:
                break
        return hits

    def session_names(self, text: str, *, include_archived: bool = False,
                      limit: int | None = None) -> list[SessionSummary]:
        """Sessions whose name matches `text` as typed (prefixes, pieces of words, stems,
        typos), best first; or whose uid has it."""
        from core.store import search

        return search.search_names(self._store, text, include_archived=include_archived, limit=limit)

    def everything(self, query: str, *, include_archived: bool = False, names: int = 50,
                   messages: int = 200) -> SearchResults:
        """Sessions by name, labelled entries and message text for one query, with how much
        of the history the index covers: what `/` shows (core/store/search.py)."""
        from core.store import search

        return search.search_all(self._store, query, include_archived=include_archived, names=names,
                                 messages=messages)

    def coverage(self) -> SearchCoverage:
        """How much of the history the search index covers (all of it but after an upgrade
        of a big store, until `index_search_backlog` has caught up)."""
        from core.store import search

        return search.coverage(self._store)

    def index_backlog(self, budget_ms: float = 100.0) -> BacklogStep:
        """Index the newest part of what the search index does not cover yet, in one write
        transaction of about `budget_ms`; call again until the step says it is done."""
        from core.store import search

        return search.index_backlog(self._store, budget_ms)
