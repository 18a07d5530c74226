"""`/` after an upgrade of a big store's index: it says how much it covers, and the app
indexes the rest in the background (issue 26, item 8)."""

from __future__ import annotations

import pytest

from conftest import open_fixed, settle, wait_until
from core import open_store
from core.demo import DEMO_NOW
from core.store.postgres import search_index as postgres_search
from core.store.sqlite import search_index as sqlite_search
from test_search import _back_to_schema_10
from tui.actions.store import search_indexing
from tui.app import ArborApp

SIZE = (120, 40)


@pytest.fixture
def upgraded_path(demo_location, monkeypatch):
    _back_to_schema_10(demo_location)
    for module in (sqlite_search, postgres_search):
        monkeypatch.setattr(module, "REINDEX_AT_ONCE", 10)
    open_store(demo_location, create=False).close()    # (migrated: the backlog is left)
    return demo_location


async def _search(pilot, text: str) -> None:
    await pilot.press("slash")
    await pilot.pause()
    for key in text:
        await pilot.press("space" if key == " " else key)
    await settle(pilot)


async def test_search_says_how_much_of_the_history_it_covers(upgraded_path, monkeypatch):
    monkeypatch.setattr(search_indexing, "start", lambda app: None)   # (not caught up yet)
    app = ArborApp(open_fixed(upgraded_path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _search(pilot, "migrate")
        status = str(app.screen.query_one("#search-status").render())
        assert "stemmed search covers 0% of history so far (indexing…)" in status, status
        assert app.screen.query_one("#search-results").hits   # the old index still finds


async def test_the_app_indexes_the_backlog_in_the_background(upgraded_path):
    app = ArborApp(open_fixed(upgraded_path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert await wait_until(pilot, lambda: not app.store.search.coverage().pending)
        await _search(pilot, "migration")
        results = app.screen.query_one("#search-results")
        assert results.sessions[0].name == "Migrate orders table to new schema"
        assert any(h.snippet.startswith("Migrate the orders data") for h in results.hits)
        assert "indexing" not in str(app.screen.query_one("#search-status").render())


async def test_each_key_searches_at_once_and_a_stale_answer_is_never_shown(demo_location, monkeypatch):
    """(issue 29) No debounce: every key starts a search and stops the one it made stale.
    The searches of the first keys are made slow here (they finish after later keys), and
    the screen must never show their answers."""
    import threading
    import time

    from core.store.live_search import LiveSearch
    from tui.components.search_screen import ResultList

    real_run = LiveSearch.run
    asked: list[tuple[str, bool]] = []
    answered: dict[int, str] = {}
    lock = threading.Lock()

    def run(self, query, *, quick=False, **kwargs):
        with lock:
            asked.append((query, quick))
        if query != "migrate":
            time.sleep(0.15)          # still running when the next keys come
        results = real_run(self, query, quick=quick, **kwargs)
        answered[id(results.sessions)] = query
        return results

    shown: list[tuple[str, str]] = []
    real_set = ResultList.set_results

    def set_results(self, sessions, hits):
        shown.append((answered.get(id(sessions), "?"), self.screen.query_one("#search-input").value))
        real_set(self, sessions, hits)

    monkeypatch.setattr(LiveSearch, "run", run)
    monkeypatch.setattr(ResultList, "set_results", set_results)
    app = ArborApp(open_fixed(demo_location), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.pause()
        for key in "migrate":
            await pilot.press(key)
        await settle(pilot)
        assert len({query for query, _quick in asked}) > 1, asked     # keys before the last searched
        assert shown, "no results were shown"
        for query, typed in shown:
            assert query == typed.strip(), shown                      # never a stale answer
        assert shown[-1][0] == "migrate"
        results = app.screen.query_one("#search-results")
        assert results.sessions[0].name == "Migrate orders table to new schema"
        assert "best first" in str(app.screen.query_one("#search-status").render())
        assert ("migrate", True) in asked and ("migrate", False) in asked


async def test_a_phrase_s_hits_are_said_to_come_newest_first(demo_location):
    """A query with a phrase is not ranked (core/store/search.py): the status line does not
    call its final answer "best first"."""
    app = ArborApp(open_fixed(demo_location), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.pause()
        names = {'"': "quotation_mark", " ": "space"}
        for key in '"orders data"':
            await pilot.press(names.get(key, key))
        await settle(pilot)
        status = str(app.screen.query_one("#search-status").render())
        assert "newest first" in status and "best first" not in status, status
        assert "ranking" not in status, status
