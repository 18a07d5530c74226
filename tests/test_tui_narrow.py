"""Narrow terminals (issue 26, part 6): below 100 columns the pane with focus gets the room,
below 70 it is alone, z zooms it at any width; the help scrolls from the moment it opens.

Behaviour through the pilot (which panes show, where focus goes, what the footer offers),
and pictures at 80x24 and 60x20 (fixed clock, the demo store). The real terminal being
resized: tests/test_tui_terminal.py.
"""

from __future__ import annotations

import pytest

from conftest import settle
from test_tui_snapshots import LOGIN, app_for, session, steps
from tui.components.help_screen import KEYS, HelpScreen
from tui.components.key_footer import KeyFooter


def shown(app) -> list[str]:
    """The panes drawn, left to right, by id."""
    return [pane.id for pane in app.query(".pane") if pane.display and pane.region.width]


async def layout_after(app, pilot, *keys: str) -> list[str]:
    for key in keys:
        await pilot.press(key)
        await settle(pilot)
    return shown(app)


def screen_lines(app) -> list[str]:
    """The terminal's lines as the app draws them now."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def footer_keys(app) -> list[str]:
    footer = app.query_one(KeyFooter)
    return [key.key for key in footer.query("FooterKey")]


@pytest.mark.parametrize("size, expected", [
    ((120, 40), [["sessions", "branches", "messages"]] * 3),
    ((100, 30), [["sessions", "branches", "messages"]] * 3),
    ((99, 30), [["sessions", "branches"], ["branches", "messages"], ["messages"]]),
    ((80, 24), [["sessions", "branches"], ["branches", "messages"], ["messages"]]),
    ((70, 24), [["sessions", "branches"], ["branches", "messages"], ["messages"]]),
    ((69, 24), [["sessions"], ["branches"], ["messages"]]),
    ((60, 20), [["sessions"], ["branches"], ["messages"]]),
])
async def test_the_focused_pane_gets_the_room_tab_and_shift_tab_reach_every_pane(
        demo_db, size, expected):
    app = app_for(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        assert shown(app) == expected[0]
        assert await layout_after(app, pilot, "tab") == expected[1]
        assert app.focused is app.branches_pane
        assert await layout_after(app, pilot, "tab") == expected[2]
        assert app.focused is app.messages_pane
        # back: shift+tab reaches the panes folded away (the screen's own would skip them)
        assert await layout_after(app, pilot, "shift+tab") == expected[1]
        assert app.focused is app.branches_pane
        assert await layout_after(app, pilot, "shift+tab") == expected[0]
        assert app.focused is app.sessions_pane


async def test_the_focused_pane_is_the_wider_of_two(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.sessions_pane.region.width > app.branches_pane.region.width >= 28
        # every session's name whole, with its cost (cut to 8-14 cells before)
        text = "\n".join(screen_lines(app))
        for name in ("Migrate orders table to new schema", "Trip planner agent (LangGraph)",
                     "$81.82", "claude_code"):
            assert name in text
        await layout_after(app, pilot, "tab")
        assert app.branches_pane.region.width >= 30
        await layout_after(app, pilot, "tab")
        assert app.messages_pane.region.width == 80


async def test_z_zooms_the_focused_pane_at_any_width_and_z_again_restores(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert await layout_after(app, pilot, "tab", "tab", "z") == ["messages"]
        assert app.messages_pane.region.width == 120
        # zoomed, tab moves to the next pane, alone too
        assert await layout_after(app, pilot, "tab") == ["sessions"]
        assert await layout_after(app, pilot, "z") == ["sessions", "branches", "messages"]
        assert app.focused is app.sessions_pane


async def test_z_is_in_the_footer_where_panes_fold_and_hidden_where_it_changes_nothing(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "z" in footer_keys(app)            # sessions beside branches: z zooms
        await layout_after(app, pilot, "tab", "tab")
        assert "z" not in footer_keys(app)        # messages alone: z would change nothing
        assert await layout_after(app, pilot, "z") == ["messages"]
        await pilot.resize_terminal(120, 40)
        await settle(pilot)
        # three panes: z works (help, palette) but leaves the footer to the pane's own keys
        assert shown(app) == ["sessions", "branches", "messages"]
        assert "z" not in footer_keys(app)
        assert await layout_after(app, pilot, "z") == ["messages"]


async def test_the_entry_tree_takes_the_middle_place(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        session(LOGIN)(pilot)
        assert await layout_after(app, pilot, "tab", "t") == ["entries", "messages"]
        assert app.focused is app.entries_pane
        assert await layout_after(app, pilot, "shift+tab") == ["sessions", "entries"]
        assert await layout_after(app, pilot, "t") == ["sessions", "branches"]


async def test_a_jump_to_a_pane_folded_away_shows_it(demo_db):
    """Search's enter focuses the messages pane from the sessions pane: shown, not lost."""
    app = app_for(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert shown(app) == ["sessions", "branches"]
        app.set_focus(app.messages_pane)
        await settle(pilot)
        assert shown(app) == ["messages"] and app.focused is app.messages_pane


async def test_resizing_keeps_focus_and_cursor(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        session(LOGIN)(pilot)
        await layout_after(app, pilot, "tab", "tab", "up")
        cursor = app.messages_pane.cursor
        for size in ((80, 24), (60, 20), (120, 40), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert app.focused is app.messages_pane and app.messages_pane.cursor == cursor
            assert "messages" in shown(app)


# ------------------------------------------------------------------ the help screen
def help_lines(app) -> list[str]:
    """The help dialog's lines on screen now, inside its border."""
    assert isinstance(app.screen, HelpScreen)
    region = app.screen.query_one("#help-dialog").region
    return [line[region.x + 1: region.right - 1]
            for line in screen_lines(app)[region.y: region.bottom]]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
@pytest.mark.parametrize("scroll", [("pagedown",), ("j",), ("down",), ("space",)])
async def test_the_help_scrolls_from_the_moment_it_opens(demo_db, size, scroll):
    app = app_for(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        assert body.scroll_y == 0 and body.max_scroll_y > 0
        for key in scroll:
            await pilot.press(key)
        await settle(pilot)
        assert body.scroll_y > 0
        await pilot.press("end")
        await settle(pilot)
        assert body.scroll_y == body.max_scroll_y
        await pilot.press("home")
        await settle(pilot)
        assert body.scroll_y == 0


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_paging_through_the_help_shows_every_key(demo_db, size):
    app = app_for(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        seen: list[str] = []    # the lines shown, without the margin and the scroll bar
        for _ in range(20):
            seen += [line.rstrip("▁▂▃▄▅▆▇█▔│ ").strip() for line in help_lines(app)]
            if body.scroll_y >= body.max_scroll_y:
                break
            await pilot.press("pagedown")
            await settle(pilot)
        else:
            pytest.fail("the help never reached its end")
        def shown_key(key: str) -> bool:   # a line that starts with the key and its text
            return any(line.startswith(key + "  ") for line in seen)

        for _section, keys in KEYS:
            for key, _what in keys:
                assert shown_key(key), f"{key!r} never shown"
        for key in ("o", "t", "d", "$", "/", "z", "q"):   # (those the issue missed)
            assert shown_key(key)
        assert any("escape closes" in line for line in seen)


def test_every_key_the_app_binds_is_in_the_help():
    """Each key a pane or the app binds (as the help writes it) is in the help."""
    from tui.app import ArborApp
    from tui.components.branches_pane import BranchesPane
    from tui.components.entries_pane import EntriesPane
    from tui.components.messages_pane import MessagesPane
    from tui.components.row_list import RowList
    from tui.components.sessions_pane import SessionsPane

    names = {"slash": "/", "question_mark": "?", "dollar_sign": "$", "up": "↑", "down": "↓",
             "left": "←", "right": "→", "pageup": "pgup", "pagedown": "pgdn"}
    written = set()
    for _section, keys in KEYS:
        for key, _what in keys:
            written |= set(key.replace("/", " ").split()) | {key}
    written.add("/")
    missing = []
    for owner in (ArborApp, RowList, SessionsPane, BranchesPane, EntriesPane, MessagesPane):
        for binding in owner.BINDINGS:
            for key in binding.key.split(","):
                if names.get(key, key) not in written:
                    missing.append(f"{owner.__name__}: {key}")
    assert not missing


# ------------------------------------------------------------------ pictures
NARROW, SMALL = (80, 24), (60, 20)


def test_80x24_sessions_beside_branches(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=NARROW, run_before=steps())


def test_80x24_branches_beside_messages(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=NARROW,
                        run_before=steps(session(LOGIN), "tab"))


def test_60x20_branches_alone(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SMALL,
                        run_before=steps(session(LOGIN), "tab"))


def test_60x20_messages_alone(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SMALL,
                        run_before=steps(session(LOGIN), "tab,tab"))


def test_120x40_messages_zoomed(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(120, 40),
                        run_before=steps(session(LOGIN), "tab,tab,z"))


def test_80x24_help(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=NARROW,
                        run_before=steps("question_mark"))


def test_80x24_help_at_its_end(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=NARROW,
                        run_before=steps("question_mark", "end"))
