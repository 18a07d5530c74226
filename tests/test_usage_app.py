"""Usage in the app: the usage screen (snapshots at 80x24 and 120x40 with the demo's fixed
clock), enter opens a session, and the price table is not imported at app start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_tui_snapshots import app_for, steps

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")   # days are local: make them the same on every machine


def test_usage_screen_80x24(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(80, 24), run_before=steps("dollar_sign"))


def test_usage_screen_120x40(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(120, 40), run_before=steps("dollar_sign"))


async def test_enter_on_the_most_expensive_session_opens_it(demo_db):
    from conftest import settle

    app = app_for(demo_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("dollar_sign")
        await settle(pilot)
        screen = app.screen
        ranked = screen.query_one("#usage-sessions").rows
        costs = [figure.cost_usd for _name, figure, _sid in ranked]
        assert costs == sorted(costs, reverse=True) and costs[0] > 0
        first = ranked[0][2]
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is not screen
        assert app.session_id == first


def test_the_price_table_is_not_imported_at_app_start(demo_db):
    script = (
        "import sys, asyncio; sys.path.insert(0, %r); sys.path.insert(0, %r)\n"
        "from test_tui_snapshots import app_for\n"
        "from conftest import settle\n"
        "async def main():\n"
        "    app = app_for(__import__('pathlib').Path(%r))\n"
        "    async with app.run_test(size=(120, 40)) as pilot:\n"
        "        await settle(pilot)\n"
        "        shown = app.sessions_pane.figures\n"
        "        assert shown and any(f.cost_usd > 0 for f in shown.values()), shown\n"
        "        print('genai_prices' in sys.modules)\n"
        "asyncio.run(main())\n" % (str(REPO), str(REPO / "tests"), str(demo_db)))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"
