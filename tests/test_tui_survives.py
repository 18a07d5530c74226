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


def burst(app, *keys: str) -> None:
    """Queue keys all at once, as a terminal delivers a fast typist's keys: none is handled
    before the last is queued (pilot.press would wait for each one)."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_tab_tab_in_one_burst_moves_two_panes(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.focused is app.sessions_pane
        burst(app, "tab", "tab")
        await settle(pilot)
        assert app.focused is app.messages_pane
        burst(app, "tab", "tab", "tab", "tab", "tab")
        await settle(pilot)
        assert app.focused is app.branches_pane
        burst(app, "shift+tab", "shift+tab")
        await settle(pilot)
        assert app.focused is app.messages_pane


async def test_tab_tab_b_in_one_burst_branches_at_the_highlighted_message(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        await pilot.press("up", "up")
        entry = app.messages_pane.highlighted.entry
        app.sessions_pane.focus()
        await settle(pilot)
        burst(app, "tab", "tab", "b")
        await settle(pilot)
        await pilot.press("enter")        # accept the suggested branch name
        await settle(pilot)
        new = app.store.branches.current(app.session_id)
        # at the highlighted message (the messages pane's b), not at a branch head
        assert new.head_seq == entry.seq and new.fork_seq == entry.seq


async def test_tab_tab_r_in_one_burst_offers_the_highlighted_message_first(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        await pilot.press("up", "up")
        entry = app.messages_pane.highlighted.entry
        app.sessions_pane.focus()
        await settle(pilot)
        burst(app, "tab", "tab", "r")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "RollbackDialog"
        # the messages pane's r: the highlighted message is the first choice
        assert app.screen.targets[0].entry_seq == entry.seq
        assert app.screen.targets[0].checkpoint_id is None


async def test_tab_l_in_one_burst_labels_the_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.sessions_pane.focus()
        await settle(pilot)
        burst(app, "tab", "l")
        await settle(pilot)
        # l in the branches pane labels the branch (in the sessions pane it only warns)
        assert app.screen.id == "label-dialog"
        assert app.screen.title_text.plain.startswith("Label branch")


async def test_down_enter_b_in_one_burst_branches_in_the_newly_opened_session(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first, second = app.sessions[0], app.sessions[1]
        assert app.session_id == first.id
        burst(app, "down", "enter", "b")
        await settle(pilot)
        await pilot.press("enter")        # accept the suggested branch name
        await settle(pilot)
        assert app.focused is app.branches_pane
        # b acted in the session the cursor moved to, at its current branch's head
        new = app.store.branches.current(second.id)
        assert new.parent_session_id is not None
        parent = app.store.branches.get(new.parent_session_id)
        assert parent.external_session_id == second.id and new.head_seq == parent.head_seq
        assert len(app.store.branches.of_session(first.id)) == first.branch_count


async def test_down_tab_tab_b_in_one_burst_branches_at_the_new_sessions_message(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        second = app.sessions[1]
        head = app.store.branches.current(second.id)
        burst(app, "down", "tab", "tab", "b")
        await settle(pilot)
        await pilot.press("enter")        # accept the suggested branch name
        await settle(pilot)
        new = app.store.branches.current(second.id)
        assert new.id != head.id
        # the messages pane's b, on the last message of the second session's branch
        assert new.fork_seq == head.head_seq and new.parent_session_id == head.id


async def test_a_dialog_draws_the_dimmed_screen_below_it_once(demo_db, monkeypatch):
    from textual.renderables.background_screen import BackgroundScreen

    drawn = []
    original = BackgroundScreen.__rich_console__

    def counted(self, console, options):
        drawn.append(self)
        return original(self, console, options)

    monkeypatch.setattr(BackgroundScreen, "__rich_console__", counted)
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.messages_pane)
        await pilot.press("l")
        await settle(pilot)
        for char in "a label typed key by key":
            await pilot.press("space" if char == " " else char)
        await settle(pilot)
        assert app.screen.query_one("#prompt-input").value == "a label typed key by key"
        assert len(drawn) == 1  # not once per key (each used to redraw all 120x40 cells)
        await pilot.resize_terminal(100, 30)
        await settle(pilot)
        assert len(drawn) == 2  # again at a new size
        size, lines = app.screen._backdrop
        assert size == (100, 30) and len(lines.lines) == 30


async def test_l_and_the_label_typed_in_one_burst_label_the_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.sessions_pane)
        await settle(pilot)
        branch = app.branches_pane.highlighted
        # tab to the branches pane, l opens the prompt, the label goes into it, enter saves
        burst(app, "tab", "l", "ctrl+u", "k", "e", "e", "p", "enter")
        await settle(pilot)
        assert app.store.annotations.branch_labels(app.session_id)[branch.id] == "keep"
        assert app.screen is app.screen_stack[0]  # the prompt closed


async def test_keys_after_closing_a_dialog_in_one_burst_act_on_the_screen_below(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.messages_pane)
        await settle(pilot)
        head = app.branch
        last = app.messages_pane.highlighted.entry
        await pilot.press("c")  # the compaction dialog, with its summary (a text area) focused
        await settle(pilot)
        assert app.screen.__class__.__name__ == "CompactDialog"
        # close it, go up one message, branch there: keys read while the dialog is up, which
        # its text area would have taken as text
        burst(app, "escape", "up", "b", "enter")     # (enter accepts the branch's name)
        await settle(pilot)
        new = app.store.branches.current(app.session_id)
        assert new.id != head.id and new.parent_session_id == head.id
        assert new.head_seq == last.parent_seq  # the message above the last
        assert app.screen is app.screen_stack[0]


async def test_c_and_r_show_their_dialog_at_once_and_fill_it_when_the_plan_is_ready(demo_db, monkeypatch):
    """However long a plan takes, its dialog is up at once, saying it is working."""
    import threading

    from core.actions import operations

    release = threading.Event()
    for name in ("plan_compaction", "left_behind"):
        original = getattr(operations, name)

        def slow(*args, _original=original, **kwargs):
            release.wait(30)
            return _original(*args, **kwargs)

        monkeypatch.setattr(operations, name, slow)
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.messages_pane)
        await pilot.press("up")
        for key, busy, filled in (("c", "#compact-plan", "#compact-summary"),
                                  ("r", "#rollback-left", "#rollback-summary")):
            release.clear()
            await pilot.press(key)
            for _ in range(5):
                await pilot.pause()
            dialog = app.screen
            assert dialog is not app.screen_stack[0]  # the dialog is up while the plan runs
            working = str(dialog.query_one(busy).render()) + dialog.query_one(filled).placeholder
            assert "planning…" in working or "summarising" in working or "counting" in working
            assert dialog.query_one(filled).text == ""
            release.set()
            await settle(pilot)
            assert "messages summarised" in dialog.query_one(filled).text
            await pilot.press("escape")
            await settle(pilot)
