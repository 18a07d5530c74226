"""Search: message text through the full-text index, session names by a score of their own,
and the index's backlog after an upgrade. The store's `search*` methods call these; the
statements of each backend's index are its `search_index` module (sqlite_search,
postgres_search), which share the names used here.

Hits are ranked by the index (bm25 on SQLite, ts_rank on PostgreSQL) among the newest
`WINDOW` entries that match: ranking every match of a word found in most entries takes
seconds on a million, and the newest mentions are the likeliest wanted among so many. On
SQLite a word with a window of whole-word matches is ranked among those, not widened to
the words it begins (sqlite_search.ranked: FTS5 reads a prefix's entries whole).

An upgrade that changes how words are indexed (migration 11) does not rebuild a big index
while holding the store: the new index starts with what is written from then on, and the
history below a mark is indexed a short transaction at a time (`index_backlog`, run by the
app in the background), newest first. Until it is done, search finds that part through the
index from before (word prefixes, newest first) and says how much the new one covers.
"""

from __future__ import annotations

import time

from core.model.entries import search_text
from core.history.search_query import SearchQuery
from core.model.values import Frozen

TYPE_CHECKING = False   # (`typing` is ~4.5 ms of `arbor search`'s start; only annotations use it)
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

    from core.store.records import SearchHit, SessionSummary
    from core.store.store import Store

WINDOW = 2000          # newest matches ranked (see above)
# ... in a scope (a project's or an agent's sessions): the index's matches outside it are
# read too, and they are most of the time (a project of 250 sessions among 10,000: 40 ms
# for the newest 2,000 matches in it on the 1M-entry store, 11 ms for 200)
SCOPED_WINDOW = 200
BUDGET_MS = 100.0      # a backlog step's write transaction aims at this
FIRST_STEP = 2000      # entries in the first backlog step; later ones follow the budget


class SearchCoverage(Frozen):
    """How much of the history the index covers: `fraction` of the entries (by position in
    the history), `pending` while a backlog is left."""

    __slots__ = _fields = ("fraction", "pending")
    fraction: float
    pending: bool

    def __init__(self, fraction: float, pending: bool):
        object.__setattr__(self, "fraction", fraction)
        object.__setattr__(self, "pending", pending)

    def describe(self) -> str:
        if not self.pending:
            return "all messages"
        return f"{self.percent}% of messages (indexing…)"

    @property
    def percent(self) -> int:
        """Rounded down, and never 100 while something is left."""
        return min(99, int(self.fraction * 100)) if self.pending else 100


class BacklogStep(Frozen):
    """What one `index_backlog` call did: entries `indexed`, whether the backlog is `done`,
    and how long its write transaction held the store (`write_ms`)."""

    __slots__ = _fields = ("indexed", "done", "write_ms")
    indexed: int
    done: bool
    write_ms: float

    def __init__(self, indexed: int, done: bool, write_ms: float):
        object.__setattr__(self, "indexed", indexed)
        object.__setattr__(self, "done", done)
        object.__setattr__(self, "write_ms", write_ms)


def search_messages(store: Store, query: str | SearchQuery, *, limit: int = 200,
                    external_session_id: int | None = None,
                    sessions: Collection[int] | None = None, ranked: bool = True
                    ) -> list[SearchHit]:
    """Entries whose text has every word of `query` (stemmed, as prefixes) and every quoted
    phrase as written, best first; then, while the index has a backlog, those of the
    history it does not cover yet (through the word index, newest first). `sessions`: only
    in these sessions (ids; `external_session_id`: in that one). Not `ranked`: newest
    first, much sooner for a word in most entries (search as a person types).

    A query with a quoted phrase is not ranked either: its hits (every one has the words
    as written) come newest first. Ranking them is bm25 reading every entry that holds the
    phrase a second time (a phrase of three common words: 25 ms more on the 1M-entry
    store, after the 30 ms of finding them)."""
    from core.store.records import SearchHit, _loads

    query = query if isinstance(query, SearchQuery) else SearchQuery(query)
    if not query or limit <= 0 or (sessions is not None and not sessions):
        return []
    index = store._backend.search_index
    hits: list[SearchHit] = []

    def take(conn: Any, seqs: list[int]) -> None:
        """Hits of these entries, in this order, until there are `limit` (a phrase is
        checked in the text: the index only narrows the entries down)."""
        step = max(limit, 50)
        for start in range(0, len(seqs), step):
            chunk = seqs[start:start + step]
            rows = {row[0]: row for row in index.hit_rows(conn, chunk)}
            for seq in chunk:
                row = rows.get(seq)
                if row is None:
                    continue
                text = search_text(row[4], _loads(row[7], {}))
                if not query.phrases_in(text):
                    continue
                hits.append(SearchHit(row[0], row[1], row[2], row[3], row[4], row[5], row[6],
                                      snippet(text, query.all_words)))
                if len(hits) >= limit:
                    return

    ranked = ranked and not query.phrases
    if not ranked:   # (a phrase is checked as written in the text: some may not be)
        window = limit if not query.phrases else limit * 2 + 50
    else:
        window = max(WINDOW if sessions is None else SCOPED_WINDOW, limit)
    with store.reading() as conn:
        scored = index.ranked(conn, query, external_session_id=external_session_id,
                              window=window, sessions=sessions, scored=ranked)
        scored.sort(key=lambda pair: (-pair[1], -pair[0]))
        take(conn, [seq for seq, _score in scored])
        state = index.backlog(conn)
        if state is not None and len(hits) < limit:
            take(conn, index.by_words(conn, query, below=state[0],
                                      external_session_id=external_session_id,
                                      limit=max(WINDOW, limit), sessions=sessions))
    return hits


def search_names(store: Store, text: str, *, include_archived: bool = False,
                 limit: int | None = None) -> list[SessionSummary]:
    """Sessions whose name matches `text` as a person types it (core/history/name_match.py), best
    first; or whose uid has it."""
    from core.history.name_match import rank_names

    sql = store._sql
    names = store._all(sql.SESSION_NAMES if include_archived else sql.SESSION_NAMES_ACTIVE)
    return sessions_of(store, rank_names(text, names, limit))


def sessions_of(store: Store, ranked: list[tuple[int, float]]) -> list[SessionSummary]:
    """The sessions of ranked (id, score) pairs, in their order."""
    from core.store.records import SessionSummary

    if not ranked:
        return []
    ids = [key for key, _score in ranked]
    rows = {r[0]: r for r in store._all(store._sql.sessions_with_ids(len(ids)), ids)}
    return [SessionSummary(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9],
                           r[10], r[11], r[12]) for r in (rows.get(i) for i in ids) if r]


def coverage(store: Store) -> SearchCoverage:
    with store.reading() as conn:
        state = store._backend.search_index.backlog(conn)
        if state is None:
            return SearchCoverage(1.0, False)
        low, high = conn.execute("SELECT MIN(seq), MAX(seq) FROM entries").fetchone()
    if high is None or low is None or state[0] <= low:
        return SearchCoverage(1.0, True)
    return SearchCoverage(max(0.0, (high - state[0] + 1) / (high - low + 1)), True)


def index_backlog(store: Store, budget_ms: float = BUDGET_MS) -> BacklogStep:
    """Index the newest part of the backlog in one short write transaction (its entries'
    texts are read and made before it). Safe in several processes at once: a step whose
    part another one took meanwhile does nothing."""
    index = store._backend.search_index
    count = getattr(store, "_backlog_step", FIRST_STEP)
    with store.reading() as conn:
        state = index.backlog(conn)
        if state is None:
            return BacklogStep(0, True, 0.0)
        below = state[0]
        rows = index.backlog_rows(conn, below, count)
    texts = index.texts_of(rows)
    done = len(rows) < count
    low = 0 if done else rows[-1][0]
    started = time.perf_counter()
    with store.transaction() as conn:
        state = index.backlog(conn)
        if state is None or state[0] != below:
            return BacklogStep(0, state is None, 0.0)
        indexed = index.add_rows(conn, texts, low, below, done)
    write_ms = (time.perf_counter() - started) * 1000
    # the next step's size: as many entries as the budget allows at this one's pace
    pace = max(write_ms, 1.0) / max(len(rows), 1)
    store._backlog_step = int(min(50_000, max(200, budget_ms / pace)))
    return BacklogStep(indexed, done, write_ms)



class SearchResults(Frozen):
    """What `/` shows for a query: sessions by name, then labelled entries and message text
    (the labelled ones first, each entry once), and how much of the history was searched."""

    __slots__ = _fields = ("query", "sessions", "hits", "coverage")
    query: str
    sessions: list
    hits: list
    coverage: SearchCoverage

    def __init__(self, query: str, sessions: list, hits: list, coverage: SearchCoverage):
        object.__setattr__(self, "query", query)
        object.__setattr__(self, "sessions", sessions)
        object.__setattr__(self, "hits", hits)
        object.__setattr__(self, "coverage", coverage)


def search_all(store: Store, query: str, *, include_archived: bool = False, names: int = 50,
               messages: int = 200) -> SearchResults:
    """Everything `/` finds for `query`: one call, so a search that runs as the user types
    asks the same as one run on enter."""
    query = query.strip()
    if not query:
        return SearchResults(query, [], [], SearchCoverage(1.0, False))
    sessions = search_names(store, query, include_archived=include_archived, limit=names)
    labelled = store.search.labels(query)
    found = {hit.seq for hit in labelled}
    hits = labelled + [hit for hit in search_messages(store, query, limit=messages)
                       if hit.seq not in found]
    return SearchResults(query, sessions, hits[:max(messages, len(labelled))], coverage(store))


def snippet(text: str | None, words: list[str], width: int = 160) -> str:
    """A one-line excerpt around the first matched word."""
    if not text:
        return ""
    from core.history.search_query import stem_hint

    flat = " ".join(text.split())
    lowered = flat.casefold()
    position = min((p for p in (lowered.find(w.casefold()) for w in words) if p >= 0), default=-1)
    if position < 0:   # matched through its stem ("migration" on "Migrate")
        position = min((p for p in (lowered.find(h) for w in words for h in stem_hint(w)[1:])
                        if p >= 0), default=0)
    start = max(0, position - width // 3)
    excerpt = flat[start:start + width]
    return ("…" if start else "") + excerpt + ("…" if start + width < len(flat) else "")
