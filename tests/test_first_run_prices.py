"""A first import prices later (`import_paths(price_later=True)`, the first import's
process): the newest sessions' responses are written waiting for their price, so nothing of
the price table is loaded before the first rows are in, and are priced in one go once the
newest sessions are in; the costs come out as an import that priced as it went makes them,
on SQLite and on PostgreSQL. A stopped import leaves its responses waiting: they are among
the stale prices meanwhile (`arbor usage` and the usage screen price them), and the next
first import prices them once its own newest sessions are in."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from core import open_store
from core.importing import driver
from core.importing.driver import import_paths
from core.importing.newest import is_subagent
from core.importing.run_progress import RunProgress
from core.store.usage.rows import WAITING
from core.usage import pricing

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """More sessions than the head holds (so some are read after it), sub-agents among
    them."""
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=3, files=36, seed=31)
    return home


def costs(store) -> tuple:
    """What the store says responses cost: each session's figure, and by day."""
    def figure(f) -> tuple:
        return (f.input_tokens, f.output_tokens, f.cache_creation_tokens, f.cache_read_tokens,
                round(f.cost_usd, 9), f.responses, sorted(f.models), sorted(f.unpriced),
                round(f.subagent_cost_usd, 9), f.subagent_tokens)

    uids = {s.id: s.uid for s in store.sessions.list(include_archived=True)}
    sessions = sorted((uids[number], figure(f)) for number, f in store.usage.by_session().items())
    report = store.usage.report("day")
    days = [(key, figure(f)) for key, _label, f in report.rows]
    return sessions, days, figure(report.totals)


def waiting(store) -> int:
    with store.reading() as conn:
        return conn.execute(store._sql.USAGE_WAITING, (WAITING,)).fetchall().__len__()


def priced_by_table(store) -> int:
    """Responses priced with today's table (not logged, not waiting)."""
    with store.reading() as conn:
        return len(conn.execute(store._sql.USAGE_TO_PRICE, (WAITING,)).fetchall())


@pytest.fixture
def plain_costs(home, tmp_path_factory) -> tuple:
    with open_store(tmp_path_factory.mktemp("plain") / "plain.db") as store:
        import_paths(store, [home], newest_first=True)
        assert waiting(store) == 0
        return costs(store)


def test_the_newest_sessions_are_priced_once_they_are_in(store_location, home, plain_costs,
                                                         monkeypatch):
    """Until the head is in, no response is priced and the price table is not asked; then
    all of them in one go, before any file after the head is read."""
    monkeypatch.setattr(driver, "HEAD_FILES", 6)
    asked: list[str] = []
    real_book = pricing.price_book

    def book(*args, **kwargs):
        asked.append("book")
        return real_book(*args, **kwargs)

    monkeypatch.setattr(pricing, "price_book", book)
    seen: dict = {}
    with open_store(store_location) as store:
        asked.clear()   # (a new store's migrations price what it holds: nothing)
        room = store.usage
        real = room.price_waiting

        def price_waiting():
            seen["waiting"] = waiting(store)
            seen["priced"] = priced_by_table(store)
            seen["asked"] = list(asked)
            seen["sessions"] = store.sessions.count()
            return real()

        room.price_waiting = price_waiting
        report = import_paths(store, [home], newest_first=True, price_later=True)
        assert not report.stopped and not report.failed_files
        assert seen["waiting"] > 0 and seen["priced"] == 0 and seen["asked"] == []
        sessions = [p for p in (home / ".claude" / "projects").rglob("*.jsonl")
                    if not is_subagent(p)]
        assert 6 <= seen["sessions"] < len(sessions)   # the head, not the rest
        assert asked, "the price table was never asked: nothing was priced"
        assert waiting(store) == 0 and not room.prices_later
        assert costs(store) == plain_costs


def test_a_stopped_import_leaves_prices_waiting_and_the_next_one_prices_them(
        store_location, home, plain_costs, monkeypatch):
    monkeypatch.setattr(driver, "HEAD_FILES", 6)
    stop = threading.Event()

    def after_two(run: RunProgress) -> None:
        if run.snapshot()[0] >= 2:
            stop.set()

    with open_store(store_location) as store:
        report = import_paths(store, [home], newest_first=True, price_later=True, stop=stop,
                              run=RunProgress(after_two, interval=0))
        assert report.stopped > 0
        assert waiting(store) > 0 and not store.usage.prices_later
        assert store.usage.waiting() and store.usage.prices_stale()   # (the safety net)
        before = costs(store)
        assert any(figure[7] for _uid, figure in before[0])   # shown: tokens, not priced yet
    with open_store(store_location) as store:
        report = import_paths(store, [home], newest_first=True, price_later=True)
        assert not report.stopped
        assert waiting(store) == 0 and not store.usage.waiting()
        assert costs(store) == plain_costs


def test_reprice_prices_what_waits_too(tmp_path, home, plain_costs, monkeypatch):
    """Should no first import come again, `reprice` (arbor usage, the usage screen) prices
    the responses left waiting."""
    monkeypatch.setattr(driver, "HEAD_FILES", 6)
    stop = threading.Event()
    with open_store(tmp_path / "store.db") as store:
        import_paths(store, [home], newest_first=True, price_later=True, stop=stop,
                     run=RunProgress(lambda run: run.snapshot()[0] >= 2 and stop.set(),
                                     interval=0))
        assert waiting(store) > 0
        store.usage.reprice()
        assert waiting(store) == 0
        import_paths(store, [home])
        assert costs(store) == plain_costs


def test_a_discover_import_leaves_the_price_table_to_its_workers(store_location, home, plain_costs,
                                                                 monkeypatch):
    """`arbor import --discover` (newest first, without `price_later`) writes the responses
    it reads itself waiting until its workers' first batch brings in the rates they learned,
    and prices them then: this process, the store's only writer, never loads the price table
    (the workers do); the costs come out the same."""
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(driver, "HEAD_FILES", 6)
    asked: list[str] = []
    real_book = pricing.price_book

    def book(*args, **kwargs):
        asked.append("book")
        return real_book(*args, **kwargs)

    monkeypatch.setattr(pricing, "price_book", book)
    with open_store(store_location) as store:
        if not store.imports.takes_scratch:
            pytest.skip("workers move their batches into SQLite stores only")
        asked.clear()
        report = import_paths(store, [home], newest_first=True)
        assert not report.stopped and not report.failed_files and report.converted > 0
        assert asked == []
        assert waiting(store) == 0 and not store.usage.prices_later
        assert costs(store) == plain_costs


def test_a_big_discover_import_loads_the_price_table_itself(tmp_path, home, monkeypatch):
    """Above PRICES_APART_BELOW the importing process prices as it goes (one table load here
    rather than one a worker: the memory of a 1 GB import is near its ceiling)."""
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(driver, "HEAD_FILES", 6)
    monkeypatch.setattr(driver, "PRICES_APART_BELOW", 1 << 20)
    asked: list[str] = []
    real_book = pricing.price_book

    def book(*args, **kwargs):
        asked.append("book")
        return real_book(*args, **kwargs)

    monkeypatch.setattr(pricing, "price_book", book)
    with open_store(tmp_path / "store.db") as store:
        asked.clear()
        report = import_paths(store, [home], newest_first=True)
        assert not report.stopped and not report.failed_files and report.converted > 0
        assert asked and waiting(store) == 0
