"""The sessions pane's names: the project and uid under the pane, `y` copies the uid (which
`arbor export` takes), `p` lists one project's sessions, same-named sessions say where
they ran."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from conftest import HOSTILE_NAME, open_fixed, settle
from core import open_store
from core.demo import DEMO_NOW
from core.export.formats import resolve_session
from tui.app import ArborApp
from tui.components.sessions_pane import in_project

SIZE = (120, 40)


def make_app(path) -> ArborApp:
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None,
                    store_label=path.name)


def same_names_store(path: Path) -> Path:
    """Three sessions named "Start" in two projects, and one named otherwise."""
    moments = iter(DEMO_NOW - timedelta(hours=5) + timedelta(minutes=m) for m in range(1000))
    counter = iter(range(1, 1000))
    store = open_store(path, clock=lambda: next(moments), id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        made = {}
        for key, cwd in (("web1", "/home/u/src/webapp"), ("api", "/home/u/src/api"),
                         ("web2", "/home/u/src/webapp"), ("other", "/home/u/notes")):
            session = store.sessions.create("Start" if key != "other" else "Notes",
                                                    source="claude_code", cwd=cwd,
                                                    uid=f"{key}-0000-4000-8000-{len(made):012d}")
            branch = store.branches.create(session.id, name="main")
            store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user",
                                                                      "content": f"hi {key}"}})
            made[key] = session
    store.close()
    return path


def top_line(app, index: int) -> str:
    return app.sessions_pane.render_row(index, 34)[0].plain


async def test_the_line_under_the_pane_names_project_and_uid_and_y_copies_it(demo_db, monkeypatch):
    app = make_app(demo_db)
    copied = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.sessions_pane
        pane.focus()
        for index in (0, 2):
            pane.move_cursor(index)
            await settle(pilot)
            session = pane.highlighted
            subtitle = pane._border_subtitle.plain
            assert subtitle.endswith(session.uid) and session.cwd in subtitle
            await pilot.press("y")
            await settle(pilot)
            assert copied[-1] == session.uid
        with open_store(demo_db, create=False) as store:    # what the app shows, export takes
            assert resolve_session(store, pane._border_subtitle.plain.split(" · ")[-1]).uid == \
                copied[-1]


async def test_p_lists_only_the_highlighted_sessions_project_and_again_all(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.sessions_pane
        pane.focus()
        everything = [s.id for s in pane.sessions]
        shop = next(i for i, s in enumerate(pane.sessions) if s.cwd.endswith("/shop"))
        pane.move_cursor(shop)
        await settle(pilot)
        chosen = pane.highlighted
        await pilot.press("p")
        await settle(pilot)
        assert {s.cwd for s in pane.sessions} == {chosen.cwd} and len(pane.sessions) == 2
        assert pane.highlighted.id == chosen.id
        assert pane._border_title.plain == "Sessions · shop [2]"
        await pilot.press("p")
        await settle(pilot)
        assert [s.id for s in pane.sessions] == everything and pane.highlighted.id == chosen.id


async def test_sessions_of_the_same_name_say_where_they_ran(tmp_path):
    db = same_names_store(tmp_path / "same.db")
    app = make_app(db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        lines = [top_line(app, i) for i, s in enumerate(app.sessions) if s.name == "Start"]
        assert len(lines) == 3
        assert sum("Start · webapp" in line for line in lines) == 2
        assert sum("Start · api" in line for line in lines) == 1
        notes = next(i for i, s in enumerate(app.sessions) if s.name == "Notes")
        assert "·" not in top_line(app, notes)          # a name of its own: nothing added


def test_a_project_keeps_its_sub_agents_wherever_they_ran():
    from core.store import SessionSummary

    def summary(id_, cwd, parent=None):
        return SessionSummary(id_, f"u{id_}", "n", "pi", cwd, "session", "", "", True, 1, 1, 1,
                              parent)

    rows = [summary(1, "/p"), summary(2, "/q"), summary(3, "/elsewhere", 1),
            summary(4, "/elsewhere", 3), summary(5, "/elsewhere", 2), summary(6, "/p/sub")]
    assert [s.id for s in in_project(rows, "/p")] == [1, 3, 4]
    looped = [summary(7, "/x", 8), summary(8, "/y", 7)]     # a cycle ends, never hangs
    assert in_project(looped, "/p") == []


async def test_hostile_project_and_uid_are_shown_inert(hostile_db):
    app = make_app(hostile_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        subtitle = app.sessions_pane._border_subtitle   # (the getter gives markup)
        assert "\x1b" not in subtitle.plain and "/tmp/[bold]x" in subtitle.plain
        assert HOSTILE_NAME not in subtitle.plain


async def test_a_long_folder_and_uid_keep_the_projects_name_and_a_uid_prefix_export_takes(tmp_path):
    """Seen at 120 columns on a real tree: "/home… · f2d4e1c8-2f44-4e47…" (the uid took the
    line, the project's name was lost). Now the folder is cut in its middle and the uid to
    its start, which `arbor export` takes as a prefix."""
    path = tmp_path / "long.db"
    uid = "f2d4e1c8-2f44-4e47-9c0a-3b1d2e5f6a7b"
    with open_store(path) as store, store.transaction():
        session = store.sessions.create("Start", source="claude_code",
                                        cwd="/home/someone/code/clients/were-meixx", uid=uid)
        branch = store.branches.create(session.id, name="main")
        store.entries.append_to_branch(branch.id, "message",
                                       {"message": {"role": "user", "content": "hi"}})
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        subtitle = app.sessions_pane._border_subtitle.plain
        assert subtitle.endswith("/were-meixx · f2d4e1c8…"), subtitle
        with open_store(path, create=False) as store:
            assert resolve_session(store, subtitle.split(" · ")[-1].rstrip("…")).uid == uid
