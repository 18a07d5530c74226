"""The app's side of a hand-off (issue 31): the branch handed to another agent says where it
goes on, and a session whose log the agent deleted says arbor kept it."""

from __future__ import annotations

from pathlib import Path

from agent_logs import NOW, fixed_ids
from conftest import open_fixed, settle
from handoff_cases import import_source
from core import open_store
from core.handoff import prepare_handoff
from tui.app import ArborApp

SIZE = (200, 30)


def lines_of(pane, rows: int) -> list[str]:
    return ["".join(s.text for s in pane.render_line(y)) for y in range(rows)]


async def test_continued_in_codex_and_log_deleted_kept_in_arbor(tmp_path):
    cwd = tmp_path / "work"
    cwd.mkdir()
    (tmp_path / "codex").mkdir()
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    store = open_store(tmp_path / "arbor.db")
    claude, claude_log = import_source(store, "claude_code", tmp_path, str(cwd))
    branch = store.branches.current(claude.id)
    prepare_handoff(store, claude, target="codex", env=env, now=NOW, ids=fixed_ids(40))
    codex, codex_log = import_source(store, "codex", tmp_path, str(cwd))
    store.close()
    codex_log.unlink()              # the agent deleted it
    app = ArborApp(open_fixed(tmp_path / "arbor.db"), clock=lambda: NOW, poll_interval=None,
                   store_label="arbor.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sessions = lines_of(app.sessions_pane, 6)
        gone = next(i for i, line in enumerate(sessions) if "Add a --dry-run" in line)
        assert "codex log deleted, kept in arbor" in sessions[gone + 1]
        kept = next(i for i, line in enumerate(sessions) if "Flaky parser test" in line)
        assert "log deleted" not in sessions[kept + 1]
        app.show_session(claude.id)
        await settle(pilot)
        rows = app.branches_pane.rows
        handed = next(i for i, row in enumerate(rows) if row.branch.id == branch.id)
        assert rows[handed].continued == ("Codex",)
        assert all(not row.continued for row in rows if row.branch.id != branch.id)
        text = lines_of(app.branches_pane, 2 * len(rows))
        assert "↪ continued in Codex" in text[2 * handed + 1]
        # `u` undoes the hand-off's arbor side: the note goes
        await pilot.press("u")
        await settle(pilot)
        app.show_session(claude.id)
        await settle(pilot)
        assert not any(row.continued for row in app.branches_pane.rows)
