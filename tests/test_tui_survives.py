"""The browser survives what users do: resizing the terminal both ways with messages
opened, and keys typed faster than the app draws (each key acts on the state the keys
before it left)."""

from __future__ import annotations

from textual import events

from conftest import settle
from tui.components.status_line import StatusLine
from test_tui_keys import LOGIN, LONG, SIZE, choose_session, make_app

SIZES = [(200, 60), (120, 40), (60, 20), (200, 60), (80, 24), (240, 70), (120, 40)]


async def test_resizing_both_ways_with_messages_open_never_crashes(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        pane = app.messages_pane
        pane.focus()
        # open every message, so that items have many lines and wrap differently per width
        for _ in range(pane.count):
            await pilot.press("space", "up")
        await pilot.press("end")
        await settle(pilot)
        for _ in range(3):
            for width, height in SIZES:
                await pilot.resize_terminal(width, height)
                await pilot.pause()
                # the whole pane is painted at its new size, every row
                lines = [pane.render_line(y) for y in range(pane.size.height)]
                assert all(line.cell_length == pane.size.width for line in lines)
                # the status line is laid out for the new width (counts on its right edge)
                status = app.query_one(StatusLine).content
                assert status.plain.rstrip().endswith("(v)")
                if width >= 100:  # (narrower, the line is cut at the right edge)
                    assert status.cell_len == width
        await settle(pilot)
        assert app.is_running and app.return_value is None
        assert pane.at_end  # the cursor stays on the last message through it all
        text = "".join(seg.text for y in range(pane.size.height) for seg in pane.render_line(y))
        assert "▌" in text  # the cursor's item is on screen


async def test_resizing_a_long_branch_scrolled_into_an_open_message(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LONG)
        pane = app.messages_pane
        pane.focus()
        await pilot.press("pageup", "pageup", "space")
        # scroll down inside the opened item, so that lines of it are off the top
        for _ in range(4):
            await pilot.press("down")
        for _ in range(2):
            for width, height in SIZES:
                await pilot.resize_terminal(width, height)
                await pilot.pause()
                assert pane.top_line < max(1, len(pane.item_strips(pane.top)))
        await settle(pilot)
        assert app.is_running and app.return_value is None
