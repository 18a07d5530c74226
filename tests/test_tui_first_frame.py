"""The browser's first frame: it lists sessions, and nothing the first screen does not
need is loaded before it (issue 11: the first screen with rows as fast as an empty app).

No timings here (bench/bench_first_frame_tmux.py measures them): what is checked is what
the first frame holds and which modules were imported by then, in a fresh process that
starts the app as `arbor --db PATH` does (following on, as by default)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.store.sqlite.backend import Statements

REPO = Path(__file__).resolve().parent.parent

# What the first screen does not need: rendering messages (markdown), following agents'
# logs, importing, pricing, exporting, PostgreSQL, writing entries.
NOT_BEFORE_FIRST_FRAME = (
    "rich.markdown", "markdown_it", "tui.render.message_render", "tui.message_source", "tui.render.tool_views",
    "core.importing.follow", "core.importing", "watchfiles", "core.usage.pricing", "core.export.formats",
    "tui.render.html_export", "psycopg", "core.store.postgres.backend", "core.store.writer", "core.seed.session_types",
    "tui.entry_tree",   # (the entry tree pane is laid out when t shows it)
)

CHILD = r"""
import gc, json, sys
from textual.app import App

seen = {"frames": 0}
original_display = App._display


def display(self, screen, renderable):
    original_display(self, screen, renderable)
    if renderable is None:
        return
    if "modules" in seen:
        if not self._starting:   # the first session shown, the whole list being read
            seen["collecting_later"] = gc.isenabled()
            self.exit()
        return
    pane = self.sessions_pane
    if pane.rows:
        seen["frames_before"] = seen["frames"]
        seen["first_row"] = pane.rows[0].session.name
        seen["first_line"] = pane.render_line(0).text
        seen["collecting"] = gc.isenabled()
        seen["modules"] = sorted(m for m in sys.modules
                                 if m.split(".")[0] in ("rich", "markdown_it", "core", "tui",
                                                        "watchfiles", "psycopg"))
    seen["frames"] += 1


App._display = display
original_run = App.run


def run(self, *args, **kwargs):
    kwargs.update(headless=True, size=(120, 40))
    return original_run(self, *args, **kwargs)


App.run = run
from tui.cli import main

status = main(["--db", sys.argv[1]])
print(json.dumps(seen))
sys.exit(status)
"""


def first_frame(db: Path, home: Path) -> dict:
    env = {**os.environ, "HOME": str(home), "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": str(REPO)}
    env.pop("ARBOR_DB", None)
    done = subprocess.run([sys.executable, "-c", CHILD, str(db)], capture_output=True, text=True,
                          cwd=str(REPO), env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_frame_lists_sessions_and_loads_nothing_it_does_not_show(demo_db, tmp_path):
    seen = first_frame(demo_db, tmp_path)
    # the very first frame drawn has the rows (not a "loading…" frame, then the rows)
    assert seen["frames_before"] == 0
    assert seen["first_row"][:12] in seen["first_line"]
    loaded = set(seen["modules"])
    early = [name for name in NOT_BEFORE_FIRST_FRAME
             if name in loaded or any(m.startswith(name + ".") for m in loaded)]
    assert early == []


def test_the_collector_waits_for_the_first_frame(demo_db, tmp_path):
    """Start-up's objects live as long as the app: the cyclic collector is off until the
    first screen is drawn (then on, with what start-up made frozen)."""
    seen = first_frame(demo_db, tmp_path)
    assert seen["collecting"] is False
    assert seen["collecting_later"] is True


def test_after_the_first_frame_the_highlighted_session_is_shown(demo_db, tmp_path):
    """What the first frame leaves out still comes: the highlighted session's branches and
    messages, the whole list with its costs."""
    import asyncio

    from conftest import open_fixed, settle
    from tui.app import ArborApp

    async def go() -> None:
        app = ArborApp(open_fixed(demo_db), poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert app.sessions and app.session_id == app.sessions_pane.highlighted.id
            assert app.branch is not None and app.messages_pane.source is not None
            assert app.sessions_pane.figures   # the costs, read with the whole list
            assert app._data_version is not None   # polling has a version to compare with
            assert not app.busy

    asyncio.run(go())


def test_the_first_page_of_sessions_is_read_through_an_index(tmp_path):
    """The first screenful is one query that walks the activity index in order and stops
    after the page (no sort of every session)."""
    from core import open_store

    sql = Statements.list_sessions(include_archived=False, limit=100)
    with open_store(tmp_path / "plan.db") as store:
        plan = " | ".join(str(row[-1]) for row in
                          store.connection.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall())
    assert "INDEX idx_external_sessions_activity" in plan
    assert "TEMP B-TREE" not in plan
    assert sql.endswith("LIMIT 100")


def test_a_list_that_cannot_be_read_is_said_once(demo_db, monkeypatch):
    """The first page is read before the first frame and the whole list after it: when the
    list cannot be read, the app says so once (not once for each read) and goes on."""
    import asyncio
    import sqlite3

    from conftest import open_fixed, settle
    from core.store.rooms.sessions import SessionsRoom
    from tui.app import ArborApp

    def fails(self, **_options):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(SessionsRoom, "list", fails)

    async def go() -> None:
        app = ArborApp(open_fixed(demo_db), poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            said = [n.message for n in app._notifications if "could not be read" in n.message]
            assert len(said) == 1 and "malformed" in said[0]
            assert app.is_running

    asyncio.run(go())
