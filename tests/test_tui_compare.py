"""d: compare two branches of a session side by side (issue 12, "Compare two branches")."""

from __future__ import annotations

from pathlib import Path

from conftest import HOSTILE_NAME, HOSTILE_TEXT, open_fixed, settle
from core import open_store
from core.actions import operations as ops
from core.demo import DEMO_NOW
from tui.app import ArborApp
from textual.widgets import DataTable

from tui.components.branch_picker import BranchPicker
from tui.components.compare_files import CompareFiles, file_rows
from tui.components.compare_screen import CompareScreen, SidePane, SideSummary
from test_tui_safe_text import UNSAFE
from test_branch_compare import reply, say, user
from test_tui_snapshots import LOGIN, app_for, session, steps
from core.history.branch_compare import compare, scan_side

SIZE = (120, 40)


async def open_login(pilot) -> ArborApp:
    app = pilot.app
    await settle(pilot)
    session(LOGIN)(pilot)
    await settle(pilot)
    await pilot.press("tab")
    await settle(pilot)
    return app


def screen_text(screen) -> str:
    """Every line the screen's widgets draw, as text."""
    lines = []
    for widget in screen.query("*"):
        if widget.size.height and widget.display:
            for y in range(widget.size.height):
                try:
                    lines.append("".join(s.text for s in widget.render_line(y)))
                except Exception:     # containers draw through their children
                    break
    return "\n".join(lines)


def test_compare_login_attempts(snap_compare, demo_db):
    """The demo's two attempts at the flaky login test: web-first assertion (main) against
    waitForURL (the rollback branch)."""
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,d,enter"))


def test_compare_login_attempts_at_80_columns(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(80, 24),
                        run_before=steps(session(LOGIN), "tab,d,enter"))


def test_compare_picker(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,d"))


async def test_d_picks_the_other_branch_and_shows_both_sides(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_login(pilot)
        highlighted = app.branches_pane.highlighted
        await pilot.press("d")
        await settle(pilot)
        picker = app.screen
        assert isinstance(picker, BranchPicker)
        assert [row.branch.id for row in picker.rows] != [] and \
            all(row.branch.id != highlighted.id for row in picker.rows)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and not screen.busy
        a, b = screen.comparison.sides
        assert a.branch.id == highlighted.id and b.branch.id == picker.rows[0].branch.id
        panes = screen.panes
        # each pane lists its side's own entries, from after the shared entry (and a row
        # for the sub-agent that side started)
        assert [len(pane.source.children) for pane in panes] == [1, 0]
        for pane, side in zip(panes, (a, b)):
            assert pane.count == side.counts.entries + len(pane.source.children)
            assert pane.source.item(0).entry.depth == screen.comparison.fork_depth + 1
        text = screen_text(screen)
        assert "waitForURL" in text and "web-first" in text
        assert "tests/auth/login.spec.ts" in text and "parted after" in text
        # B against A: the main branch against the waitForURL attempt
        assert "4 fewer messages" in text and "1 fewer tool call " in text
        assert "$0.033 less (0.5×)" in text and "files changed: 1 in both" in text
        # tab goes to the other side, keys read there
        assert app.focused is panes[0]
        await pilot.press("tab")
        assert app.focused is panes[1]
        await pilot.press("down", "space")
        assert panes[1].cursor == 1 and panes[1].cursor_item.key in panes[1].expanded
        # the browser's keys do not act from here: no branch made, nothing rolled back
        before = len(app.store.branches.of_session(a.branch.external_session_id))
        await pilot.press("b", "r", "c", "l")
        await settle(pilot)
        assert app.screen is screen
        assert len(app.store.branches.of_session(a.branch.external_session_id)) == before
        # f: every file either side changed, what each did to it
        await pilot.press("f")
        await settle(pilot)
        files = app.screen
        assert isinstance(files, CompareFiles)
        assert file_rows(files.comparison) == [("tests/auth/login.spec.ts", a.work.files["tests/auth/login.spec.ts"],
                                                b.work.files["tests/auth/login.spec.ts"])]
        assert files.query_one(DataTable).row_count == 1
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        assert app.branches_pane.highlighted.id == highlighted.id


async def test_d_in_a_session_of_one_branch_says_so(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session("Write release notes for 2.4")(pilot)
        await settle(pilot)
        await pilot.press("tab", "d")
        await settle(pilot)
        assert not isinstance(app.screen, (BranchPicker, CompareScreen))
        assert any("nothing to compare" in n.message for n in app._notifications)


async def test_escape_in_the_picker_compares_nothing(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_login(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, (BranchPicker, CompareScreen))


def hostile_pair(path: Path) -> Path:
    """Two branches whose names, labels, replies and tool inputs hold markup and escapes."""
    store = open_store(path, clock=lambda: DEMO_NOW)
    session = store.sessions.create(HOSTILE_NAME)
    main = store.branches.create(session.id, name="[bold]main\x1b[31m")
    fork = store.entries.append_to_branch(main.id, "message", {"message": {"role": "user", "content": HOSTILE_TEXT}})
    for branch in (main, ops.branch(store, main.id, fork.seq, name="[@click=app.quit]other\x1b]0;t\x07")):
        ops.set_branch_label(store, branch.id, "[/]\x1b]52;c;eA==\x07")
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "assistant", "content": [
                {"type": "text", "text": HOSTILE_TEXT},
                {"type": "toolCall", "id": "c", "name": "Write\x1b[2J",
                 "arguments": {"file_path": "[red]x[/]\x1b]8;;http://e\x1b\\.py", "content": "a"}},
                {"type": "toolCall", "id": "d", "name": "bash",
                 "arguments": {"command": "echo x > '\x1b[2J[b]y.txt'"}}]}})
    store.close()
    return path


async def test_hostile_branches_compare_inertly(tmp_path):
    app = ArborApp(open_fixed(hostile_pair(tmp_path / "hostile.db")), clock=lambda: DEMO_NOW,
                   poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "d")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and not screen.busy
        assert screen.comparison.a.work.files and screen.comparison.b.work.files
        for pane in screen.panes:
            pane.focus()
            await pilot.press("space")
        await pilot.pause()
        for widget in [*screen.query(SideSummary), *screen.query(SidePane)]:
            for y in range(widget.size.height):
                for segment in widget.render_line(y):
                    assert not UNSAFE.search(segment.text), (widget, repr(segment.text))
                    if segment.style is not None:   # (Textual's own meta: the offset)
                        assert not segment.style.link and "@click" not in segment.style.meta
        text = screen_text(screen)
        assert "[red]x[/]" in text and "␛" in text
        assert "\x1b" not in app.export_screenshot()
        assert app.return_code is None


def test_files_of_both_sides_are_listed_both_first(tmp_path):
    store = open_store(tmp_path / "files.db")
    session = store.sessions.create("s")
    main = store.branches.create(session.id)
    fork = say(store, main.id, user("go"))[-1]
    say(store, main.id, reply("", ("Write", {"file_path": "z_both.py", "content": "x"}),
                              ("bash", {"command": "rm a_only.txt"})))
    other = ops.branch(store, main.id, fork.seq)
    say(store, other.id, reply("", ("Edit", {"file_path": "z_both.py", "old_string": "x", "new_string": "y"}),
                               ("Write", {"file_path": "b_only.py", "content": "1\n2"})))
    found = compare(store, store.branches.get(main.id), store.branches.get(other.id))
    for one in found.sides:
        list(scan_side(store, one))
    rows = [(path, a and a.last_action, b and b.last_action) for path, a, b in file_rows(found)]
    assert rows == [("z_both.py", "written", "edited"), ("a_only.txt", "deleted", None),
                    ("b_only.py", None, "written")]


async def test_enter_shows_the_message_on_its_branch_in_the_browser(demo_db):
    app = app_for(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_login(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        other = screen.comparison.b
        await pilot.press("tab", "down", "down")
        wanted = screen.panes[1].highlighted.entry
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        assert app.branch.id == other.branch.id
        assert app.branches_pane.highlighted.id == other.branch.id
        assert app.focused is app.messages_pane
        assert app.messages_pane.highlighted.entry.seq == wanted.seq


def test_compare_in_the_real_terminal_through_a_resize(tmp_path):
    """The real app in tmux: d, the picker, both sides; narrowed to 80 columns the sides
    stack, widened they stand side by side again; escape goes back to the browser."""
    from terminal import Terminal, arbor_command, tmux_or_skip

    tmux_or_skip()
    path = tmp_path / "demo.db"
    with Terminal([*arbor_command(), "--demo", "--db", str(path)], cwd=tmp_path,
                  config_dir=tmp_path) as term:
        # (generous deadlines: the demo is built and the app started under a loaded machine)
        term.wait_for(lambda screen: "of 6 ─" in screen, timeout=90)
        term.keys("End", "Tab")
        term.wait_for(lambda screen: "waitForURL" in screen and "Make current" in term.footer(),
                      timeout=45)
        term.keys("d")
        term.wait_for("with…", timeout=45)
        term.keys("Enter")
        screen = term.wait_for(lambda screen: "files changed: 1 in both" in screen, timeout=45)
        assert "parted after" in screen
        term.wait_for(lambda screen: "Other side" in term.footer(), timeout=45)  # drawn last
        top = next(line for line in screen.splitlines() if " A " in line and "╭" in line)
        assert " B " in top      # side by side: both titles on one line
        term.resize(80, 24)
        screen = term.wait_for(lambda screen: any(" B " in line and "╭" in line and " A " not in line
                                                  for line in screen.splitlines()), timeout=45)
        term.resize(120, 40)
        term.wait_for(lambda screen: any(" A " in line and " B " in line and "╭" in line
                                         for line in screen.splitlines()), timeout=45)
        term.keys("Escape")
        term.wait_for(lambda screen: "Branches" in screen and "Compare" in term.footer(), timeout=45)
        assert term.exited() is None
        assert "Traceback" not in term.history()
