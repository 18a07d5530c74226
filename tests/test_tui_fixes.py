"""Small things a daily user trips over: the list moving after `b`, the footer at 80
columns, the compaction dialog's arithmetic, summaries' markdown."""

from __future__ import annotations

from pathlib import Path

from conftest import open_fixed, settle
from core import open_store
from core.actions import operations
from core.demo import DEMO_NOW
from tui.app import ArborApp
from tui.components.key_footer import KeyFooter

SIZE = (120, 40)
PAYMENTS = "Refactor payment module"
NOTES = "Write release notes for 2.4"


def make_app(path: Path, **options) -> ArborApp:
    options.setdefault("poll_interval", None)
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, store_label=path.name, **options)


async def choose_session(pilot, name: str) -> None:
    app = pilot.app
    index = next(i for i, s in enumerate(app.sessions_pane.sessions) if s.name == name)
    app.sessions_pane.focus()
    app.sessions_pane.move_cursor(index)
    await settle(pilot)


async def test_branching_does_not_move_the_session_list(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, PAYMENTS)
        order = [s.id for s in app.sessions_pane.sessions]
        cursor = app.sessions_pane.cursor
        assert cursor > 0
        app.messages_pane.focus()
        await pilot.press("up", "b")
        await settle(pilot)
        await pilot.press("enter")       # accept the branch's name
        await settle(pilot)
        assert app.branch.name == "main alt 2"       # the new branch, named, is shown
        assert [s.id for s in app.sessions_pane.sessions] == order
        assert app.sessions_pane.cursor == cursor
        # (the session did become the newest: a fresh start lists it first)
        assert app.store.sessions.list()[0].name == PAYMENTS


async def test_footer_never_draws_a_key_under_another_at_80_columns(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        footer = app.query_one(KeyFooter)
        dropped = []
        for _pane in range(3):
            await pilot.press("tab")
            await settle(pilot)
            keys = list(footer.children)
            palette = [k for k in keys if k.has_class("-command-palette")]
            assert palette, "the palette key is shown"
            others = [k for k in keys if not k.has_class("-command-palette")]
            assert others, "some keys are shown"
            for key in others:
                assert key.region.right <= palette[0].region.x, key.key
            dropped += footer.dropped
        assert dropped, "at 80 columns some keys do not fit"
        await pilot.resize_terminal(160, 30)
        await settle(pilot)
        assert footer.dropped == []


def test_compaction_keeps_the_newest_reply_when_no_user_message_fits(demo_db):
    store = open_store(demo_db)
    branch = next(b for s in store.sessions.list() if s.name == NOTES
                  for b in store.branches.of_session(s.id))
    # the newest reply (48 tokens) fits in 66, the tool result before it does not
    plan = operations.plan_compaction(store, branch.id, keep_recent_tokens=66, summariser=None)
    assert plan.kept_count == 1
    assert plan.first_kept.message["role"] == "assistant"
    assert plan.summarised_count and plan.last_summarised.message["role"] == "toolResult"
    # a budget smaller than the newest message keeps nothing, and says so (below)
    plan = operations.plan_compaction(store, branch.id, keep_recent_tokens=10, summariser=None)
    assert plan.kept_count == 0
    store.close()


async def test_compaction_dialog_explains_a_plan_that_keeps_nothing(demo_db):
    from textual.widgets import Input, Static

    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, NOTES)
        app.messages_pane.focus()
        await pilot.press("c")
        await settle(pilot)
        plan_text = str(app.screen.query_one("#compact-plan", Static).render())
        assert "keeps 0" not in plan_text
        field = app.screen.query_one("#compact-keep", Input)
        field.focus()
        field.value = "10"
        await pilot.press("enter")
        await settle(pilot)
        plan_text = str(app.screen.query_one("#compact-plan", Static).render())
        assert "keeps 0" not in plan_text
        assert "keeps nothing verbatim" in plan_text
        assert "no user or assistant message fits in the newest 10 tokens" in plan_text


def test_summaries_keep_their_markdown():
    from rich.console import Console

    from tui.render.message_render import _summary

    console = Console(width=60, color_system=None)
    source = ("## Goal\nShip **2.4** with `uv` support.\n\n## Files touched\n- core/a.py\n"
              "- core/b.py\n\n1. first\n2. second")
    with console.capture() as captured:
        console.print(_summary(source))
    text = captured.get()
    assert "**" not in text and "`uv`" not in text and "##" not in text
    assert "Ship 2.4 with uv support." in text
    assert "• core/a.py" in text and "1 first" in text.replace(".", "")
    assert "\n\n" not in text.strip()      # compact: no blank lines between blocks


async def test_counts_in_a_narrow_sessions_pane_keep_whole_word_units(demo_db):
    """'3.0km' read as kilometres and '22m' as minutes: the narrow sessions pane writes
    '3.0k msg' and '22 msg'. (At 100 columns, the narrowest with three panes: at 80 the
    sessions pane, focused, has the room, tests/test_tui_narrow.py.)"""
    app = ArborApp(open_fixed(demo_db), clock=lambda: DEMO_NOW, poll_interval=None,
                   store_label=demo_db.name)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(pilot)
        pane = app.sessions_pane
        width = pane.scrollable_content_region.width
        assert width < 32                      # the narrow layout
        lines = [pane.render_row(i, width)[1].plain for i in range(pane.row_count)]
        long_one = next(line for line in lines if "3.0k" in line)
        assert "3.0k msg" in long_one and "3.0km" not in long_one
        assert all(line.rstrip().endswith("msg") for line in lines)
        assert not any(part.endswith("m") and part[:-1].replace(".", "").replace("k", "").isdigit()
                       for line in lines for part in line.split())


async def test_a_notification_leaves_the_status_line_readable(demo_db):
    """Textual puts toasts above the screen's last line: over arbor's status line (the
    import's summary hid its progress for 10 s)."""
    from textual.widgets._toast import Toast

    from tui.components.status_line import StatusLine

    app = make_app(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.notify("a long note " * 8, markup=False)
        await settle(pilot)
        toast = app.screen.query_one(Toast).region
        status = app.query_one(StatusLine).region
        assert toast.height and status.height
        assert toast.bottom <= status.y
