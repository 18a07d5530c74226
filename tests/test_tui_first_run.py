"""The app's first import (tui/actions/first_run.py), without a terminal: on a store that has
not finished one, with agents' logs in their usual folders (a fake HOME), the app imports
them by itself and lists the sessions as they land; x stops it, and the next start goes on
to the store one uninterrupted import makes; a store that imported before only follows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import open_fixed, settle, wait_until
from core import open_store
from core.demo import DEMO_NOW
from core.importing import first_run, import_paths
from tui.app import ArborApp
from tui.components.status_line import status_text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_first_run import rounded  # noqa: E402
from test_import_parallel import meaning  # noqa: E402

SIZE = (120, 40)
REPO = Path(__file__).resolve().parent.parent
IMPORT_ONE = ("import sys; from core import open_store; from core.importing import import_paths; "
              "store = open_store(sys.argv[1], create=False); import_paths(store, sys.argv[2:]); "
              "store.close()")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=12, files=48, seed=41)
    return home


@pytest.fixture(scope="module")
def sessions_in_home(home, tmp_path_factory) -> tuple[int, dict]:
    """How many sessions the tree holds, and the store one uninterrupted import makes."""
    db = tmp_path_factory.mktemp("whole") / "whole.db"
    with open_store(db) as store:
        import_paths(store, [home], newest_first=True)
        count = len(store.sessions.list())
    return count, rounded(meaning(db))


def fresh(path: Path) -> Path:
    open_store(path).close()
    return path


def make_app(db: Path, home: Path) -> ArborApp:
    return ArborApp(open_fixed(db), clock=lambda: DEMO_NOW, poll_interval=0.2,
                    store_label=db.name, follow={"home": home})


async def soon(pilot, condition, timeout: float = 30.0) -> bool:
    """`wait_until` without its settling at the end (which waits for the app's workers, and
    while an import runs there is always a reload to wait for)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(0.01)
    return True


def status(app) -> str:
    return str(app.query_one("#status").render())


async def test_the_app_imports_a_new_store_by_itself_and_shows_the_rows(
        tmp_path, home, sessions_in_home):
    count, whole = sessions_in_home
    db = fresh(tmp_path / "store.db")
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        assert await wait_until(pilot, lambda: app.first_import is not None
                                and app.first_import.started.is_set())
        assert await soon(pilot, lambda: len(app.sessions) > 0)
        shown = status(app)
        if app.importing_first():                    # (a fast machine may be done already)
            assert "importing" in shown and "x stops" in shown
            assert app.check_action("stop_import", ()) is True
        assert await wait_until(pilot, lambda: app.first_import.ended.is_set(), timeout=120)
        assert await wait_until(pilot, lambda: len(app.sessions) == count)
        assert "importing" not in status(app)
        assert await wait_until(pilot, lambda: app.live_follow is not None)   # following after
        assert app.sessions_pane.highlighted is not None
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.DONE
    assert rounded(meaning(db)) == whole


async def test_the_first_rows_are_drawn_before_their_session_is_shown(tmp_path, home,
                                                                      monkeypatch):
    """The frame with the first rows is drawn before the highlighted session's branches
    and messages are read (they come a frame later): reading them first delayed the rows."""
    from tui.components.sessions_pane import SessionsPane

    seen: list[str] = []
    draw, show = SessionsPane.render_line, ArborApp.show_session

    def drawing(pane, y):
        if pane.highlighted is not None and (not seen or seen[-1] != "rows drawn"):
            seen.append("rows drawn")
        return draw(pane, y)

    def showing(app, session_id, **options):
        seen.append("session shown")
        return show(app, session_id, **options)

    monkeypatch.setattr(SessionsPane, "render_line", drawing)
    monkeypatch.setattr(SessionsPane, "DRAW_WAIT", 60.0)   # (no frame drawn in time: loaded)
    monkeypatch.setattr(ArborApp, "show_session", showing)
    app = make_app(fresh(tmp_path / "store.db"), home)
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: "session shown" in seen)
    assert seen[:2] == ["rows drawn", "session shown"], seen


async def test_rows_committed_after_the_mount_are_looked_for_from_the_first_frame_on(
        tmp_path, home, monkeypatch):
    """`arbor` started the first import's process before the app, and its first rows were
    committed after the app read its first page (at mount, empty): they are looked for from
    the first frame on, not once the rest of the start is done (here held back)."""
    from core.importing.first_run.process import FirstRunProcess

    rest: list[bool] = []
    monkeypatch.setattr(ArborApp, "_load_the_rest", lambda app: rest.append(True))
    db = fresh(tmp_path / "store.db")
    app = make_app(db, home)
    app.early_first_import = FirstRunProcess(str(db), home)   # (a stand-in, never started)
    app.first_import_due = True
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: rest)   # (the first screen drawn)
        assert not app.sessions
        subprocess.run([sys.executable, "-c", IMPORT_ONE, str(db),   # (as the child does)
                        str(sorted(home.rglob("*.jsonl"))[0])], check=True, cwd=REPO)
        assert await soon(pilot, lambda: len(app.sessions) > 0)
        assert app.query_one("#panes").display


async def test_the_app_tells_its_first_import_once_the_first_rows_are_drawn(tmp_path, home):
    """The first import's process yields to the app from its first commit until the app
    has drawn rows (core/importing/first_run/priority.py): the app tells it so."""
    app = make_app(fresh(tmp_path / "store.db"), home)
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: len(app.sessions) > 0)
        assert await soon(pilot, lambda: app.first_import is not None
                          and app.first_import.said_drawn)


async def test_the_first_import_is_told_in_the_frame_that_draws_the_first_rows(
        tmp_path, home, monkeypatch):
    """As that frame draws them, not after it (`_show_first_session`, a refresh later: ~75
    ms at load 5-7, all of it the yielding import's time lost)."""
    from core.importing.first_run.process import FirstRunProcess

    db = fresh(tmp_path / "store.db")
    subprocess.run([sys.executable, "-c", IMPORT_ONE, str(db),   # (rows in the first page)
                    str(sorted(home.rglob("*.jsonl"))[0])], check=True, cwd=REPO)
    events: list[str] = []
    after = ArborApp._show_first_session

    def show_first_session(app):
        events.append("after the frame")
        return after(app)

    monkeypatch.setattr(ArborApp, "_show_first_session", show_first_session)
    monkeypatch.setattr(ArborApp, "_load_the_rest", lambda app: None)   # (no child started)
    stand_in = FirstRunProcess(str(db), home)   # (never started)
    stand_in.tell_drawn = lambda: events.append("told")
    app = make_app(db, home)
    app.early_first_import = stand_in
    app.first_import_due = True
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: "after the frame" in events)
        assert app.sessions
    assert events[0] == "told", events


async def test_x_stops_the_first_import_and_the_next_start_goes_on(
        tmp_path, home, sessions_in_home):
    count, whole = sessions_in_home
    db = fresh(tmp_path / "store.db")
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: len(app.sessions) > 0)
        assert app.importing_first(), "done before x: the test proves nothing"
        assert app.check_action("stop_import", ()) is True     # in the footer now
        await pilot.press("x")
        assert await wait_until(pilot, lambda: app.first_import.ended.is_set())
        assert app.check_action("stop_import", ()) is False    # and gone again
        assert "Import stopped" in " ".join(str(n.message) for n in app._notifications)
        assert "importing" not in status(app)
        stopped_at = len(app.sessions)
    assert 0 < stopped_at < count
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.STARTED
    app = make_app(db, home)                          # started again: goes on
    async with app.run_test(size=SIZE) as pilot:
        assert await wait_until(pilot, lambda: app.first_import is not None
                                and app.first_import.ended.is_set(), timeout=120)
        assert app.first_import.started.is_set()
        assert await wait_until(pilot, lambda: len(app.sessions) == count)
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.DONE
    assert rounded(meaning(db)) == whole


async def test_quitting_mid_import_and_starting_again_goes_on(tmp_path, home, sessions_in_home):
    count, whole = sessions_in_home
    db = fresh(tmp_path / "store.db")
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        assert await soon(pilot, lambda: len(app.sessions) > 0)
        assert app.importing_first(), "done before q: the test proves nothing"
        await pilot.press("q")
    assert not app.first_import.thread.is_alive()     # stopped with the app, at a commit
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        assert await wait_until(pilot, lambda: app.first_import is not None
                                and app.first_import.ended.is_set(), timeout=120)
        assert await wait_until(pilot, lambda: len(app.sessions) == count)
    assert rounded(meaning(db)) == whole


async def test_a_store_that_imported_before_only_follows(tmp_path, home):
    db = tmp_path / "store.db"
    one = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    with open_store(db) as store:
        import_paths(store, [one])
        before = len(store.sessions.list())
    app = make_app(db, home)
    async with app.run_test(size=SIZE) as pilot:
        assert await wait_until(pilot, lambda: app.live_follow is not None)
        await settle(pilot)
        assert app.first_import is None               # no process was even started
        assert app.check_action("stop_import", ()) is False
        await pilot.pause(1.0)
        assert len(app.sessions) == before
        assert "importing" not in status(app)
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) is None


@pytest.mark.parametrize("width", [80, 100, 120, 160])
def test_the_status_line_fits_the_progress_and_the_counts(width):
    from tui.actions.first_run import progress_forms
    from core.importing.run_progress import RunProgress

    now = [0.0]
    run = RunProgress(clock=lambda: now[0])
    run.plan({i: 700 << 10 for i in range(1600)})
    for i in range(120):
        run.file_done(i)
    now[0] = 30.0
    forms = progress_forms(run, False)
    line = status_text("~/.local/share/arbor/arbor.db", 118, 40_123, "replayed context (v)",
                       width, "", progress=forms)
    text = line.plain
    assert line.cell_len <= width
    assert any(f" {form} " in text for form in forms)      # one of them, whole
    assert "x stops" in text and "118 sessions" in text
    if width >= 120:
        assert "importing 120/1,600 sessions · 82/1,093 MB · 6 min left · x stops" in text


async def test_rows_landing_above_leave_the_highlighted_row_on_its_line(tmp_path, home):
    """Sessions an import (or an agent) adds above the highlighted one push it down the
    list; the view moves with it: the same session stays highlighted on the same screen
    line (it used to move down a line per row landed)."""
    db = tmp_path / "store.db"
    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"),
                   key=lambda p: p.stat().st_mtime_ns)
    with open_store(db) as store:
        import_paths(store, files[:-3])           # all but the three newest
    app = ArborApp(open_fixed(db), clock=lambda: DEMO_NOW, poll_interval=0.2,
                   store_label=db.name, follow=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.sessions_pane
        pane.focus()
        await pilot.press("down", "down", "down")
        await settle(pilot)
        before = len(app.sessions)
        chosen = pane.highlighted.id
        line = pane.cursor * pane.ROW_HEIGHT - round(pane.scroll_offset.y)
        with open_store(db) as store:             # another process: newer sessions
            import_paths(store, files[-3:])
        assert await wait_until(pilot, lambda: len(app.sessions) > before)
        await settle(pilot)
        assert pane.highlighted.id == chosen
        assert pane.cursor > 3                     # it moved down the list ...
        assert pane.cursor * pane.ROW_HEIGHT - round(pane.scroll_offset.y) == line   # ... not on screen
