"""Big data: a 100,000-message branch opens at its end at once and scrolls to its start by
windows; a deep branch tree is one row per branch with bounded indentation."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import open_fixed, settle
from core.demo import DEMO_NOW
from core.seed.models import InternalSession
from tui.app import ArborApp
from tui.components.branches_pane import DEPTH_MARK, MAX_INDENT, flatten

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.make_big_store import BIG_NAME, build  # noqa: E402


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.db"
    build(path, sessions=3, entries=100_400, big=100_000)
    return path


async def open_big_session(pilot) -> None:
    app = pilot.app
    await settle(pilot)
    app.sessions_pane.move_cursor(next(i for i, s in enumerate(app.sessions) if s.name == BIG_NAME))
    await settle(pilot)


async def test_100k_branch_opens_at_end_and_scrolls_to_start(big_db):
    app = ArborApp(open_fixed(big_db), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_big_session(pilot)
        pane = app.messages_pane
        assert pane.count == 100_000 and pane.at_end
        assert pane.highlighted.entry.depth == 99_999
        assert len(pane.source._windows) <= 2  # only the last window was read
        pane.focus()
        await pilot.press("pageup", "up")
        assert pane.cursor < 99_995
        await pilot.press("home")
        await settle(pilot)
        assert pane.cursor == 0 and pane.highlighted.entry.depth == 0
        assert pane.highlighted.entry.message["content"].startswith("Step 0:")
        assert len(pane.source._windows) <= 4
        await pilot.press("end")
        assert pane.highlighted.entry.depth == 99_999


async def test_c_and_r_on_the_100k_branch_fill_their_dialogs_reading_what_they_keep(big_db):
    from test_plans import ReadCounter

    from core.history.summariser import RECENT_WINDOW

    app = ArborApp(open_fixed(big_db), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_big_session(pilot)
        app.set_focus(app.messages_pane)
        frames = []  # what each frame drawn showed: the dialog, its plan line, its summary
        display = app._display

        def record(screen, renderable):
            display(screen, renderable)
            dialog = app.screen
            if renderable is not None and dialog.__class__.__name__ == "CompactDialog":
                frames.append((str(dialog.query_one("#compact-plan").render()),
                               dialog.query_one("#compact-summary").text))

        app._display = record
        with pytest.MonkeyPatch.context() as patch:
            counter = ReadCounter(app.store, patch)
            await pilot.press("c")
            await settle(pilot)
            dialog = app.screen
            assert dialog.__class__.__name__ == "CompactDialog"
            # drawn before or once filled (test_tui_survives: shown at once, whatever the plan
            # takes), and filled in the end
            assert frames[0] == ("planning…", "") or frames[0] == frames[-1]
            assert frames[-1][0].startswith("Summarises 99,") and "## Goal" in frames[-1][1]
            plan = dialog.plan
            assert plan is not None and plan.messages_summarised + plan.kept_count == 100_000
            text = dialog.query_one("#compact-summary").text
            assert "Step 0:" in text and "(99," in text  # the goal, and how many it summarises
            assert "99," in str(dialog.query_one("#compact-plan").render())
            assert counter.read < 3000  # not the 100,000 entries of the path
            await pilot.press("escape")
            await pilot.press("home")
            await settle(pilot)
            counter.read = 0
            await pilot.press("r")
            await settle(pilot)
            dialog = app.screen
            assert dialog.__class__.__name__ == "RollbackDialog"
            assert "99,999 messages are left behind" in str(dialog.query_one("#rollback-left").render())
            text = dialog.query_one("#rollback-summary").text
            assert "(99,999 messages summarised)" in text and "Step 3:" in text
            assert counter.read < RECENT_WINDOW + 200 + 10


def _branch(number: int, parent: int | None) -> InternalSession:
    return InternalSession(id=number, parent_session_id=parent, name=f"b{number}",
                           created_at=datetime(2026, 1, 1, tzinfo=timezone.utc), is_current=number == 1,
                           head_id=f"{number:08x}", message_count=number)


def test_deep_branch_tree_is_flat_and_bounded():
    # a chain of 3,000 branches, each forked from the one before: no recursion, one row each
    branches = [_branch(1, None)] + [_branch(n, n - 1) for n in range(2, 3001)]
    rows = flatten(branches, {}, [])
    assert [r.branch.id for r in rows] == list(range(1, 3001))
    assert rows[-1].depth == 2999
    # every row past MAX_INDENT levels as wide as the deepest row drawn in full (a depth of
    # four digits takes one cell more)
    widths = {len(r.guide) for r in rows[MAX_INDENT + 1:999]}
    assert widths == {2 * MAX_INDENT + 2}
    assert max(len(r.guide) for r in rows) == 2 * MAX_INDENT + 3
    assert rows[1500].guide.startswith("┄1500") and rows[1500].guide.endswith("└─")


def test_tree_puts_each_branch_under_its_parent():
    branches = [_branch(1, None), _branch(2, 1), _branch(3, 1), _branch(4, 2), _branch(5, 99)]
    rows = flatten(branches, {3: "label"}, [])
    order = [(r.branch.id, r.depth) for r in rows]
    # 5's parent is unknown: it becomes a root after 1's subtree
    assert order == [(1, 0), (2, 1), (4, 2), (3, 1), (5, 0)]
    assert rows[0].guide == "" and rows[1].guide == "├─" and rows[2].guide == "│ └─"
    assert rows[3].guide == "└─" and rows[3].label == "label"


def test_deep_rows_go_straight_down_and_their_guides_meet():
    # rewinds, each forked from the one before, with side branches along the way
    branches = [_branch(1, None)] + [_branch(n, n - 1) for n in range(2, 40)]
    branches += [_branch(100, 3), _branch(101, 6), _branch(102, 20), _branch(103, 102)]
    rows = flatten(branches, {}, [])
    deep = [r for r in rows if r.depth > MAX_INDENT + 1]
    assert deep and {len(r.guide) for r in deep} == {2 * MAX_INDENT + 2}
    assert all(r.guide.startswith(f"┄{r.depth}") for r in deep)
    for above, row in zip(rows, rows[1:]):
        if row.depth:                # the line above comes down to its connector
            column = len(row.guide) - 2
            assert above.guide_next[column] == "│", (above.branch.id, row.branch.id)
        for column, cell in enumerate(above.guide_next):
            if cell == "│" and column >= DEPTH_MARK:   # and every line goes on below
                assert row.guide[column] in "│├└", (above.branch.id, row.branch.id, column)
