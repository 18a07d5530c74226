"""A store damaged on disk (pages of the entries table overwritten): the browser says so
and keeps running, showing what can still be read, never a traceback."""

from __future__ import annotations

import sqlite3

from conftest import settle, wait_until
from core import SessionManager, open_store
from core.seed.manager import close_root_dbs
from tui.app import ArborApp


def damaged_store(tmp_path):
    """Two sessions; then the second leaf page of the entries table (some of the first
    session's middle messages) is overwritten with garbage (plain file I/O while no
    connection has the file). The session's first and last entries are on other pages, so
    the app opens it and meets the damage only when it draws those messages."""
    folder = tmp_path / "agent"
    managers = []
    for name in ("first", "second"):
        manager = SessionManager.new("/w", folder)
        manager.init()
        for n in range(60):
            manager.append_message({"role": "user", "content": f"{name} message {n} " + "x" * 200})
        managers.append(manager)
    # the first session's head entry is on a page of its own, after the second's
    managers[0].append_message({"role": "assistant", "content": "last"})
    close_root_dbs()
    path = next(folder.glob("*.db"))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
    conn.close()
    with open(path, "r+b") as file:
        file.seek((root - 1) * page_size)
        page = file.read(page_size)
        assert page[0] == 0x05, "the entries table fits one page: no leaf to damage"
        second_cell = int.from_bytes(page[14:16], "big")       # cells in key order
        leaf = int.from_bytes(page[second_cell:second_cell + 4], "big")
        file.seek((leaf - 1) * page_size)
        file.write(b"\xde\xad\xbe\xef" * (page_size // 4))
    return path


async def test_messages_that_cannot_be_read_are_said_once_and_the_app_goes_on(tmp_path):
    path = damaged_store(tmp_path)
    app = ArborApp(open_store(path, create=False), poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        first = next(i for i, s in enumerate(app.sessions) if s.message_count == 61)
        app.sessions_pane.move_cursor(first)
        await settle(pilot)
        said = lambda: [n.message for n in app._notifications]   # noqa: E731
        assert await wait_until(pilot, lambda: any("could not be read" in m for m in said()))
        assert app.is_running
        messages = [m for m in said() if "could not be read" in m]
        assert len(messages) == 1 and "malformed" in messages[0]
        # the other keys still work, and a second look at the same branch says nothing new
        await pilot.press("down", "up", "tab", "tab", "end", "home", "v")
        await settle(pilot)
        assert app.is_running
        pane = app.messages_pane
        lines = [pane.render_line(y) for y in range(pane.size.height)]
        assert all(line.cell_length == pane.size.width for line in lines)
    assert app.return_value is None
