"""The app following running agents (tui/actions/live_follow.py), without a terminal: what an
agent appends shows, the view stays put, the following thread stops with the app."""

from __future__ import annotations

from pathlib import Path

from agent_writers import agent_home
from conftest import open_fixed, settle, wait_until
from core import open_store
from core.demo import DEMO_NOW
from core.importing import import_paths
from tui.app import ArborApp

SIZE = (120, 40)


def long_session(tmp_path: Path, lines: int = 60):
    home = tmp_path / "home"
    writer = agent_home(home)["claude_code"]
    writer.start("line 0")
    for n in range(1, lines):
        writer.append("assistant" if n % 2 else "user", f"line {n}")
    db = tmp_path / "store.db"
    store = open_store(db)
    import_paths(store, [writer.path])
    store.close()
    return home, writer, db


def make_app(db: Path, home: Path) -> ArborApp:
    return ArborApp(open_fixed(db), clock=lambda: DEMO_NOW, poll_interval=0.2,
                    store_label=db.name, follow={"home": home})


async def test_an_appended_line_shows_and_the_view_stays_where_it_was(tmp_path):
    home, writer, db = long_session(tmp_path)
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert await wait_until(pilot, lambda: app.live_follow.mode == "notify")
        pane = app.messages_pane
        pane.focus()
        for _ in range(12):                            # well up from the end
            await pilot.press("up")
        await settle(pilot)
        pane._scroll_lines(-2)                         # and the view scrolled a little more
        cursor, top, top_line = pane.highlighted.key, pane.top, pane.top_line
        count = pane.count
        writer.append("assistant", "a reply written while the app is open")
        assert await wait_until(pilot, lambda: pane.count == count + 1)
        assert pane.highlighted.key == cursor
        assert (pane.top, pane.top_line) == (top, top_line)
        # at the end, the cursor moves on with what arrives
        await pilot.press("end")
        await settle(pilot)
        writer.append("user", "and one more")
        assert await wait_until(pilot, lambda: pane.count == count + 2)
        assert pane.at_end and "and one more" in str(pane.highlighted.entry.message["content"])
    assert not app.live_follow.thread.is_alive()       # stopped with the app


async def test_not_following_when_asked_not_to(tmp_path):
    home, writer, db = long_session(tmp_path, lines=3)
    app = ArborApp(open_fixed(db), clock=lambda: DEMO_NOW, poll_interval=0.2, store_label=db.name)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.live_follow is None
        count = app.messages_pane.count
        writer.append("assistant", "not followed")
        await pilot.pause(1.0)
        assert app.messages_pane.count == count
