"""Snapshots of the browser at a fixed size, clock and store (pytest-textual-snapshot).

Every picture is taken after the app's workers finished; all key presses happen in
`run_before` so that dialogs that plan in a thread are complete when the picture is taken.
"""

from __future__ import annotations

from pathlib import Path

from conftest import open_fixed, settle
from core.demo import DEMO_NOW
from tui.app import ArborApp

SIZE = (120, 40)
LOGIN = "Fix flaky login test"
LONG = "Migrate orders table to new schema"
PAYMENTS = "Refactor payment module"


def app_for(path: Path) -> ArborApp:
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None,
                    store_label=path.name)


def steps(*actions):
    """A run_before that settles, then runs each action (keys, or a callable on the pilot)."""

    async def run(pilot) -> None:
        await settle(pilot)
        for action in actions:
            if callable(action):
                result = action(pilot)
                if result is not None:
                    await result
            else:
                for key in action.split(","):
                    await pilot.press(key)
            await settle(pilot)

    return run


def session(name: str):
    def go(pilot) -> None:
        app = pilot.app
        app.sessions_pane.move_cursor(next(i for i, s in enumerate(app.sessions) if s.name == name))

    return go


def test_demo_at_start(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE, run_before=steps())


def test_branches_focused(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab"))


def test_messages_focused(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab"))


def test_after_branch(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,up,up,b", "enter"))


def test_rollback_dialog(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,up,up,r"))


def test_after_rollback(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,up,up,r", "ctrl+s"))


def test_label_dialog(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,l", "n,o,t,e"))


def test_compaction_preview(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,c"))


def test_after_compaction(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,c", "ctrl+s"))


def test_raw_view(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(PAYMENTS), "tab,tab,v"))


def test_context_view_with_compaction(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LONG), "tab,tab,home"))


def test_help(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE, run_before=steps("question_mark"))


def test_search_results(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps("slash", "t,e,s,t"))


def test_empty_store(snap_compare, empty_db):
    assert snap_compare(app_for(empty_db), terminal_size=SIZE, run_before=steps())


def test_small_terminal(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(80, 24),
                        run_before=steps(session(LOGIN), "tab,tab"))


def test_hostile_content(snap_compare, hostile_db):
    assert snap_compare(app_for(hostile_db), terminal_size=SIZE, run_before=steps("tab,tab"))


def test_hostile_content_opened(snap_compare, hostile_db):
    # the 10 MB tool output, opened: a bounded preview and "… N more bytes"
    assert snap_compare(app_for(hostile_db), terminal_size=SIZE,
                        run_before=steps("tab,tab,up,up,space", "end"))


def test_narrow_terminal_status_line(snap_compare, demo_db):
    # 60 columns with a long store path: the counts and the view stay whole (in their short
    # form), the path keeps its start and its file name around an ellipsis
    app = ArborApp(open_fixed(demo_db), clock=lambda: DEMO_NOW, poll_interval=None,
                   store_label="~/.local/share/arbor/stores/team/arbor.db")
    assert snap_compare(app, terminal_size=(60, 20), run_before=steps())
