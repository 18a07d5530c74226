"""Search as users type it (issue 26, item 8): stems, phrases, ranking, tolerant names, and
the upgrade of an existing store's index in the background. Each runs on a file and on
PostgreSQL."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from core import open_store
from core.model.entries import search_text
from core.history.search_query import SearchQuery
from core.store.postgres import search_index as postgres_search
from core.store.sqlite import search_index as sqlite_search

MIGRATE = "Migrate orders table to new schema"
LOGIN = "Fix flaky login test"
FIRST_ASK = "Migrate the orders data to the v2 schema"


def _is_postgres(store) -> bool:
    return store._backend.name == "postgresql"


# ------------------------------------------------------------------ the demo
@pytest.mark.parametrize("query", ["migration", "migrat", "migrations", "Migrate", "MIGRATING"])
def test_a_word_finds_the_demo_s_migration_by_its_stem(demo_location, query):
    with open_store(demo_location, create=False) as store:
        hits = store.search.messages(query)
        assert any(h.snippet.startswith(FIRST_ASK) for h in hits), [h.snippet for h in hits]
        assert {h.session_name for h in hits} == {MIGRATE}
        names = store.search.session_names(query)
        assert names and names[0].name == MIGRATE


@pytest.mark.parametrize("query, found", [
    ("flaky logn", LOGIN),          # a typo
    ("flak login", LOGIN),          # a word being typed
    ("zebra", None),                # nothing like it
    ("ogin tes", LOGIN),            # pieces of words
    ("migration schema", MIGRATE),  # a stem and a word
    ("shcema", MIGRATE),            # letters swapped
    ("trip planer", "Trip planner agent (LangGraph)"),
])
def test_session_names_are_matched_as_typed(demo_location, query, found):
    with open_store(demo_location, create=False) as store:
        names = [s.name for s in store.search.session_names(query)]
    if found is None:
        assert names == []
    else:
        assert names and names[0] == found, names


def test_an_exact_name_ranks_above_a_typo_of_it(store_location):
    with open_store(store_location) as store:
        for name in ("deploy the logn service", "login page", "fix login flow"):
            store.sessions.create(name)
        names = [s.name for s in store.search.session_names("login")]
    assert names[:2] == ["fix login flow", "login page"] and names[2] == "deploy the logn service"


# --------------------------------------------------------------- message text
def _session_with(store, texts: list[str], name: str = "s") -> list[int]:
    moments = iter(datetime(2026, 3, 1, tzinfo=timezone.utc) + timedelta(minutes=m)
                   for m in range(1000))
    session = store.sessions.create(name)
    branch = store.branches.create(session.id, name="main")
    return [store.entries.append_to_branch(branch.id, "message",
                                   {"message": {"role": "user", "content": text}},
                                   timestamp=next(moments)).seq for text in texts]


def test_the_better_match_comes_first_not_the_newest(store_location):
    with open_store(store_location) as store:
        best, weak, other = _session_with(store, [
            "migration plan: the migration runs in batches; migration checked",
            "we talked about lunch, the weather, a long list of other things, and at the very"
            " end of it, briefly, a migration, among many words that are not about it at all",
            "nothing to do with it",
        ])
        assert [h.seq for h in store.search.messages("migrations")] == [best, weak]
        # two words: the entry with both first, however old
        both, one = _session_with(store, ["orders schema orders schema", "orders only here"])
        assert [h.seq for h in store.search.messages("orders schema")] == [both]
        assert store.search.messages("orders")[0].seq in (both, one)


def test_a_word_with_a_window_of_whole_word_matches_is_ranked_among_them(tmp_path, monkeypatch):
    # SQLite reads a prefix's entries whole, twice (to match, then to weigh it for bm25): a
    # word found whole in a window's worth of entries is ranked among those (a third of the
    # time on a million entries); with fewer, its prefix widens the search as always
    from core.store import search

    monkeypatch.setattr(search, "WINDOW", 4)
    with open_store(tmp_path / "store.db") as store:
        whole = _session_with(store, ["the handler failed", "a handler", "handlers, again",
                                      "the handler"])
        (prefix_only,) = _session_with(store, ["handlerregistry rebuilt"], "newer")
        found = {h.seq for h in store.search.messages("handler", limit=4)}
        assert found == set(whole)
        assert {h.seq for h in store.search.messages("handl", limit=4)} >= {prefix_only}
        assert {h.seq for h in store.search.messages("handlerreg")} == {prefix_only}
        # the newest first (as a person types) still reads the prefixes
        assert prefix_only in {h.seq for h in search.search_messages(store, "handler", limit=4,
                                                                    ranked=False)}


def test_a_quoted_phrase_is_matched_as_written(store_location):
    with open_store(store_location) as store:
        exact, apart, stem, cased = _session_with(store, [
            "copy the orders data first",
            "orders and then data",
            "the order data is elsewhere",
            "ORDERS, data!",
        ])
        assert {h.seq for h in store.search.messages('"orders data"')} == {exact, cased}
        assert {h.seq for h in store.search.messages("orders data")} == {exact, apart, stem, cased}
        assert {h.seq for h in store.search.messages('"order data"')} == {stem}
        assert {h.seq for h in store.search.messages('copy "orders data"')} == {exact}
        # a quote not closed yet (the query being typed): plain words
        assert {h.seq for h in store.search.messages('"orders dat')} == {exact, apart, stem, cased}


@pytest.mark.parametrize("query", ['"', '""', "AND", "NEAR(a b)", "a OR b", "*", "'", "x:*",
                                   "(", "a <-> b", '"a" "', "-", "^a", "\\", "日本語"])
def test_any_text_is_a_query(store_location, query):
    with open_store(store_location) as store:
        _session_with(store, ["a b and or near", "日本語 text"])
        assert isinstance(store.search.messages(query), list)
        assert isinstance(store.search.session_names(query), list)


def test_find_in_one_session_keeps_to_it(store_location):
    with open_store(store_location) as store:
        first = _session_with(store, ["refactor the parser", "refactoring again"], "one")
        _session_with(store, ["refactored elsewhere"], "two")
        session = store.entries.get(first[0]).external_session_id
        assert {h.seq for h in store.search.messages("refactor", external_session_id=session)} == set(first)
        assert len(store.search.messages("refactor")) == 3


def test_the_query_parser():
    query = SearchQuery('fix "the login" test "')
    assert query.words == ["fix", "test"] and query.phrases == [["the", "login"]]
    assert query.phrases_in("We fix THE   login, test.") and not query.phrases_in("login the")
    assert SearchQuery('"Café"').phrases_in("a cafe b")
    assert not SearchQuery('   " " ')


# --------------------------------------------------- the upgrade of an index
def _back_to_schema_10(location) -> None:
    """Put the store's search index back the way schema 10 kept it and forget migration 11,
    as a store written by the arbor before this one is."""
    with open_store(location, create=False) as store:
        conn = store.connection
        rows = conn.execute("SELECT seq, type, data FROM entries").fetchall()
        texts = [(seq, search_text(kind, json.loads(data))) for seq, kind, data in rows]
        texts = [(seq, text) for seq, text in texts if text]
        if _is_postgres(store):
            conn.execute("DROP TABLE entries_search")
            conn.execute("DROP TEXT SEARCH CONFIGURATION arbor_english")
            conn.execute("DROP TEXT SEARCH DICTIONARY arbor_english_stem")
            conn.execute("CREATE TABLE entries_search (seq BIGINT PRIMARY KEY REFERENCES"
                         " entries(seq) ON DELETE CASCADE, words tsvector NOT NULL)")
            conn.execute("CREATE INDEX idx_entries_search ON entries_search USING gin (words)")
            for seq, text in texts:
                conn.execute("INSERT INTO entries_search(seq, words) VALUES (%s, strip(to_tsvector("
                             "'simple', regexp_replace(left(%s, 250000), '[[:punct:]]+', ' ',"
                             " 'g'))))", (seq, text.replace("\x00", " ")))
            conn.execute("DELETE FROM schema_migrations WHERE version >= 11")
        else:
            conn.execute("DROP TABLE entries_fts")
            conn.execute(sqlite_search.CREATE_WORDS)
            conn.executemany(sqlite_search.INSERT, texts)
            conn.execute("DELETE FROM schema_migrations WHERE version >= 11")


@pytest.fixture
def upgraded(demo_location, monkeypatch):
    """The demo as an arbor of schema 10 left it, opened by this one as if it were big: its
    index's backlog is left to `index_search_backlog`."""
    _back_to_schema_10(demo_location)
    for module in (sqlite_search, postgres_search):
        monkeypatch.setattr(module, "REINDEX_AT_ONCE", 10)
    store = open_store(demo_location, create=False)
    yield store
    store.close()


def _index_is_exact(store) -> None:
    """The index holds exactly the words of every entry there is, once: what a new index
    made from the entries holds."""
    conn = store.connection
    rows = conn.execute("SELECT seq, type, data FROM entries").fetchall()
    texts = [(seq, search_text(kind, json.loads(data))) for seq, kind, data in rows]
    texts = [(seq, text) for seq, text in texts if text]
    if _is_postgres(store):
        held = conn.execute("SELECT seq, words::text FROM entries_search ORDER BY seq").fetchall()
        wanted = [(seq, conn.execute("SELECT (" + postgres_search.LEXEMES.format(text="%s")
                                     + ")::text", (text,)).fetchone()[0])
                  for seq, text in sorted(texts)]
        assert held == wanted
        return
    conn.execute(sqlite_search.CREATE.replace("entries_fts", "temp.fresh"))
    conn.executemany("INSERT INTO temp.fresh(rowid, text) VALUES (?, ?)", texts)
    conn.execute("CREATE VIRTUAL TABLE temp.fresh_terms USING fts5vocab(temp, fresh, instance)")
    conn.execute("CREATE VIRTUAL TABLE temp.held_terms USING fts5vocab(main, entries_fts, instance)")
    held = conn.execute("SELECT doc, term, offset FROM temp.held_terms ORDER BY 1, 2, 3").fetchall()
    fresh = conn.execute("SELECT doc, term, offset FROM temp.fresh_terms ORDER BY 1, 2, 3").fetchall()
    assert held == fresh and held
    conn.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')")
    for name in ("fresh", "fresh_terms", "held_terms"):
        conn.execute(f"DROP TABLE temp.{name}")


def _tables(store) -> set[str]:
    if _is_postgres(store):
        return {r[0] for r in store.connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
    return {r[0] for r in store.connection.execute("SELECT name FROM sqlite_master")}


def _catch_up(store) -> int:
    steps = 0
    while not store.search.index_backlog().done:
        steps += 1
        assert steps < 10_000
    return steps


def test_an_upgrade_leaves_the_old_history_to_the_background(upgraded):
    store = upgraded
    coverage = store.search.coverage()
    assert coverage.pending and coverage.percent == 0
    assert coverage.describe() == "0% of messages (indexing…)"
    # meanwhile the history is found as before (word prefixes, through the old index)...
    assert any(h.snippet.startswith(FIRST_ASK) for h in store.search.messages("migrate"))
    assert store.search.messages("migration") == []
    # ...and what is written now is in the new index at once
    (fresh,) = _session_with(store, ["a migration written after the upgrade"])
    assert [h.seq for h in store.search.messages("migrations")] == [fresh]
    assert 0 < store.search.coverage().fraction < 0.01

    store._backlog_step = 500
    step = store.search.index_backlog()
    assert step.indexed > 0 and not step.done
    assert 0 < store.search.coverage().fraction < 1
    _catch_up(store)
    assert not store.search.coverage().pending and store.search.coverage().describe() == "all messages"
    words_index = "entries_search_words" if _is_postgres(store) else "entries_fts_words"
    assert words_index not in _tables(store)
    found = store.search.messages("migration")
    assert found[0].seq == fresh or any(h.snippet.startswith(FIRST_ASK) for h in found)
    assert any(h.snippet.startswith(FIRST_ASK) for h in found)
    _index_is_exact(store)


def test_deleting_a_session_during_the_backlog_leaves_both_indexes_exact(upgraded):
    store = upgraded
    store._backlog_step = 300
    store.search.index_backlog()       # the newest part of the history is in the new index
    below = store._backend.search_index.backlog(store.connection)[0]
    sessions = {s.id: s for s in store.sessions.list(include_archived=True)}
    on_both_sides = [sid for sid in sessions if store.connection.execute(
        "SELECT MIN(seq), MAX(seq) FROM entries WHERE external_session_id = "
        + ("%s" if _is_postgres(store) else "?"), (sid,)).fetchone()[1] >= below]
    doomed = on_both_sides[0]
    store.sessions.delete(doomed)
    if not _is_postgres(store):
        store.connection.execute(
            "INSERT INTO entries_fts_words(entries_fts_words) VALUES ('integrity-check')")
    gone = sessions[doomed].name
    assert all(h.session_name != gone for h in store.search.messages("the"))
    _catch_up(store)
    _index_is_exact(store)


def test_two_indexers_at_once_index_each_entry_once(upgraded, monkeypatch):
    # Another process (here the reader's connection) takes the part this step read before
    # this step writes: this one then writes nothing.
    store = upgraded
    other = store.reader()
    module = store._backend.search_index
    real = module.backlog_rows
    raced = []

    def rows_then_race(conn, below, count):
        rows = real(conn, below, count)
        if not raced:
            raced.append(None)
            raced.append(other.search.index_backlog())
        return rows

    monkeypatch.setattr(module, "backlog_rows", rows_then_race)
    step = store.search.index_backlog()
    assert raced[1].indexed > 0 and step.indexed == 0
    monkeypatch.setattr(module, "backlog_rows", real)
    _catch_up(store)
    _index_is_exact(store)


def test_a_new_or_small_store_needs_no_backlog(demo_location):
    with open_store(demo_location, create=False) as store:
        assert not store.search.coverage().pending
        assert store.search.index_backlog().done
    _back_to_schema_10(demo_location)      # the demo is small: indexed by the migration
    with open_store(demo_location, create=False) as store:
        assert not store.search.coverage().pending
        assert "entries_fts_words" not in _tables(store)
        assert "entries_search_words" not in _tables(store)
        assert any(h.snippet.startswith(FIRST_ASK) for h in store.search.messages("migration"))
        _index_is_exact(store)


# ------------------------------------------------------------------ issue 29: as you type
def test_a_word_finished_while_typing_is_matched_whole(store_location):
    """At each key only the word being typed is a prefix: the words before it were
    finished (FTS5 reads every word a prefix begins, whole: `the*` is most of the index).
    The quick answer is then part of the full one, which takes them as prefixes."""
    from core.store.live_search import LiveSearch

    with open_store(store_location) as store:
        whole, longer = _session_with(store, ["the cache is warm", "then the caches"])
        _session_with(store, ["theory of caching"], "other")
        assert sqlite_search.match(SearchQuery("the cac", typing=True)) == '"the" "cac"*'
        assert sqlite_search.match(SearchQuery("the cac")) == '"the"* "cac"*'
        live = LiveSearch(store)
        try:
            quick = {h.seq for h in live.run("the cac", quick=True).hits}
            full = {h.seq for h in live.run("the cac").hits}
        finally:
            live.close()
        assert quick == {whole, longer} and len(full) == 3   # "theory" is only a "the*"


def test_a_phrase_comes_newest_first(store_location):
    """A query with a phrase is not ranked (bm25 would read every entry holding the phrase
    a second time): every hit has the phrase as written, the newest first."""
    with open_store(store_location) as store:
        older, newer = _session_with(store, [
            "cache is warm, the cache is warm, cache is warm again: the cache is warm",
            "at last the cache is warm",
        ])
        assert [h.seq for h in store.search.messages('"cache is warm"')] == [newer, older]
        assert [h.seq for h in store.search.messages("cache warm")][0] == older   # ranked


def test_names_found_through_the_sorted_vocabulary_are_those_every_word_finds():
    """NameIndex finds the words that begin with or hold what is typed in its vocabulary
    sorted and joined; each word's scores are those `word_scores` gives comparing every
    word, for words of every kind (prefixes, pieces, stems, typos, numbers, odd text)."""
    from core.history.name_match import NameIndex, word_scores

    names = [(n, name, f"uid-{n:04d}") for n, name in enumerate([
        "Migrate orders table", "Fix flaky login test", "Session 04242: the handler",
        "migration of logs", "Café crème", "handlers and handles", "a\nb", "日本語 テスト",
        "x", "Orders, orders"])]
    index = NameIndex(names)
    for word in ["m", "mi", "mig", "migr", "migration", "migrat", "ord", "orders", "login",
                 "logn", "ession", "04242", "0424", "handl", "handle", "cafe", "e", "x", "b",
                 "日本", "テスト", "zzz", "an", "les", "ta"]:
        index._lookup = None
        index._scores(word)
        assert word_scores(word, index.vocabulary, lookup=index._lookup) == \
            word_scores(word, index.vocabulary), word
    for typed in ["mig", "migration ord", "ession", "flaky logn", "0424", "uid-000", "orders"]:
        fresh = NameIndex(names)
        assert index.rank(typed, 3) == fresh.rank(typed)[:3] == \
            [(key, score) for key, score in fresh.rank(typed)][:3]
