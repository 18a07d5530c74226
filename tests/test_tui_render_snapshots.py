"""Pictures of tool calls as people read them, long messages and the whole-message view
(fixed size, clock and ids; see tests/tool_store.py for the store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_tui_snapshots import app_for, session, steps
from tool_store import build_tool_store

CLAUDE = "Tool calls people can read"
CODEX = "Cap the retry delay"


@pytest.fixture
def tool_db(tmp_path) -> Path:
    return build_tool_store(tmp_path / "tools.db")


def messages(name: str):
    def go(pilot) -> None:
        session(name)(pilot)
        pilot.app.set_focus(pilot.app.messages_pane)

    return go


def open_rows(*rows: int):
    """Open the messages starting at these rows, then put the cursor on the first."""
    def go(pilot) -> None:
        pane = pilot.app.messages_pane
        for row in rows:
            pane.move_cursor(row)
            pane.action_toggle_open()
        pane.move_cursor(rows[0])
        pane.top, pane.top_line = rows[0], 0
        pane._changed()

    return go


def test_tool_calls_folded(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 40),
                        run_before=steps(messages(CLAUDE), "home"))


def test_plan_read_and_bash_opened(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 50),
                        run_before=steps(messages(CLAUDE), open_rows(1, 8)))


def test_edits_opened(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 50),
                        run_before=steps(messages(CLAUDE), open_rows(10, 13)))


def test_task_and_unknown_tool_opened(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 50),
                        run_before=steps(messages(CLAUDE), open_rows(17, 19)))


def test_hostile_tool_calls_opened(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 40),
                        run_before=steps(messages(CLAUDE), open_rows(21)))


def test_codex_plan_and_patch_opened(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 50),
                        run_before=steps(messages(CODEX), open_rows(1, 4, 6)))


def test_tool_calls_at_80_columns(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(80, 24),
                        run_before=steps(messages(CLAUDE), open_rows(10)))


def test_whole_message_view(snap_compare, tool_db):
    assert snap_compare(app_for(tool_db), terminal_size=(120, 40),
                        run_before=steps(messages(CLAUDE), open_rows(13), "f"))
