"""Prices that come after the rows: the first run's import writes the newest sessions'
responses waiting for their price and prices them once those sessions are in, while the app
already shows them. Seen: after the import, the open session's branch still said "2.0M tok"
and its messages "no price" until the app was started again (the branch's figure and each
message's drawn lines were cached by keys that a price does not change)."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import open_fixed, settle, wait_until
from core import open_store
from core.demo import DEMO_NOW
from core.importing.driver import import_paths
from tui.app import ArborApp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402


def branch_text(app) -> str:
    pane = app.branches_pane
    return pane.render_row(pane.cursor, pane.size.width)[0].plain


def headers(app) -> list[str]:
    """The first line of each message drawn on the screen."""
    pane = app.messages_pane
    out = []
    for index in range(pane.top, min(pane.count, pane.top + pane.size.height)):
        strips = pane.item_strips(index)
        if strips:
            out.append(strips[0].text)
    return out


async def test_prices_set_after_the_rows_are_shown_replace_no_price(tmp_path):
    home = tmp_path / "home"
    claude_tree.generate(home, mb=0.2, files=1, seed=5)
    db = tmp_path / "store.db"
    with open_store(db) as store:
        store.usage.prices_later = True
        import_paths(store, sorted((home / ".claude" / "projects").rglob("*.jsonl")))
        store.usage.prices_later = False
        assert store.usage.waiting()
    app = ArborApp(open_fixed(db), clock=lambda: DEMO_NOW, poll_interval=0.2,
                   store_label=db.name)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.messages_pane.focus()
        await settle(pilot)
        assert "tok" in branch_text(app) and "$" not in branch_text(app)
        assert any("no price" in line for line in headers(app)), headers(app)
        with open_store(db, create=False) as other:   # (as the first run's child does)
            assert other.usage.price_waiting() > 0
        assert await wait_until(pilot, lambda: "$" in branch_text(app), timeout=10), \
            branch_text(app)
        shown = headers(app)
        assert not any("no price" in line for line in shown), shown
        assert any("$" in line for line in shown if "assistant" in line), shown
