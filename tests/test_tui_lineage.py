"""Sub-agents in the app: listed under their parent (folded), their thread under the tool
call that started it (folded, opened with space, its session opened with enter)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import open_fixed, settle
from core import open_store
from core.demo import DEMO_NOW
from core.importing import import_paths
from tui.app import ArborApp

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lineage"
SIZE = (120, 40)
PARENT = "f130fd16-2a20-4cd2-819e-bb77ddb1f0a2"
CHILD = f"{PARENT}:agent-ae72423398c4cfc30"
NOW = datetime(2026, 12, 1, 1, 30, tzinfo=timezone.utc)


@pytest.fixture
def lineage_db(tmp_path) -> Path:
    """The Claude Code session with its sub-agent, as Claude Code wrote them."""
    folder = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude_code", folder)
    path = tmp_path / "lineage.db"
    store = open_store(path, clock=lambda: NOW)
    import_paths(store, [folder])
    store.close()
    return path


def make_app(path: Path) -> ArborApp:
    return ArborApp(open_fixed(path), clock=lambda: NOW, poll_interval=None,
                    store_label=path.name)


def spawn_index(app) -> int:
    pane = app.messages_pane
    return next(i for i in range(pane.count) if pane.source.item(i).kind == "spawn")


async def test_a_subagent_is_listed_only_under_its_parent_and_counted_in_it(lineage_db):
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        store = app.store
        parent = store.sessions.by_uid(PARENT)
        child = store.sessions.by_uid(CHILD)
        pane = app.sessions_pane
        assert [s.id for s in pane.sessions] == [parent.id]          # folded: only the parent
        assert pane.rows[0].messages == parent.message_count + child.message_count
        text = "".join(s.text for y in range(2) for s in pane.render_line(y))
        assert f"{parent.message_count + child.message_count} msg" in text
        assert "claude_code +1" in text
        pane.focus()
        await pilot.press("space")
        await settle(pilot)
        assert [s.id for s in pane.sessions] == [parent.id, child.id]
        await pilot.press("down")
        await settle(pilot)
        assert app.session_id == child.id
        await pilot.press("left")                                   # back to the parent
        await settle(pilot)
        assert app.session_id == parent.id
        await pilot.press("left")                                   # folds it
        await settle(pilot)
        assert [s.id for s in pane.sessions] == [parent.id]


async def test_the_subagent_thread_follows_the_tool_call_and_opens_with_space(lineage_db):
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        index = spawn_index(app)
        # right after the message of the call that spawned it, the call's result included
        first, last = pane.source.group_span(index - 1)
        assert last == index - 1
        message = [pane.source.item(i).entry.message for i in range(first, last + 1)]
        assert any(block.get("name") == "Agent" for m in message if m["role"] == "assistant"
                   for block in m["content"] if isinstance(block, dict))
        assert message[-1]["role"] == "toolResult"
        folded = pane.count
        pane.focus()
        pane.move_cursor(index)
        await pilot.press("space")
        await settle(pilot)
        child = app.store.sessions.by_uid(CHILD)
        opened = [pane.source.item(i) for i in range(index + 1, index + 1 + child.message_count)]
        assert pane.count > folded
        assert all(item.nest == 1 and item.entry.external_session_id == child.id
                   for item in opened)
        assert "SUBTASK-MARKER" in str(opened[0].entry.message["content"])
        after = pane.source.item(index + 1 + (pane.count - folded))
        assert after is None or after.nest == 0                      # then the parent goes on
        await pilot.press("space")                                  # folds it again
        await settle(pilot)
        assert pane.count == folded


async def test_enter_on_the_subagent_row_opens_its_session(lineage_db):
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.messages_pane.focus()
        app.messages_pane.move_cursor(spawn_index(app))
        await pilot.press("enter")
        await settle(pilot)
        child = app.store.sessions.by_uid(CHILD)
        assert app.session_id == child.id
        assert app.sessions_pane.highlighted.id == child.id          # its parent opened
        assert "sub-agent of" in str(app.branches_pane.border_subtitle)


async def test_a_branch_is_not_made_from_inside_an_opened_subagent(lineage_db):
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        pane.focus()
        pane.move_cursor(spawn_index(app))
        await pilot.press("space", "down")
        await settle(pilot)
        assert pane.highlighted.nest == 1
        before = app.store.connection.execute("SELECT COUNT(*) FROM internal_sessions").fetchone()
        await pilot.press("b")
        await settle(pilot)
        after = app.store.connection.execute("SELECT COUNT(*) FROM internal_sessions").fetchone()
        assert before == after


async def test_a_live_refresh_keeps_the_cursor_on_the_subagent_row(lineage_db):
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        pane.focus()
        index = spawn_index(app)
        pane.move_cursor(index)
        await pilot.press("space", "down", "down")
        await settle(pilot)
        inside = pane.highlighted
        app._live_session_refresh()
        await settle(pilot)
        assert pane.highlighted.key == inside.key and pane.cursor == index + 2
        pane.move_cursor(index)
        app._live_session_refresh()
        await settle(pilot)
        assert pane.cursor == index and pane.highlighted.kind == "spawn"


def test_subagent_opened_snapshot(snap_compare, lineage_db):
    async def run(pilot) -> None:
        await settle(pilot)
        app = pilot.app
        app.sessions_pane.focus()
        await pilot.press("space")
        await settle(pilot)
        app.messages_pane.focus()
        app.messages_pane.move_cursor(spawn_index(app))
        await pilot.press("space")
        await settle(pilot)

    assert snap_compare(make_app(lineage_db), terminal_size=SIZE, run_before=run)


async def test_open_in_agent_is_not_started_from_inside_an_opened_subagent(lineage_db, monkeypatch):
    calls = []
    monkeypatch.setattr("tui.actions.agent_handoff.open_in_agent", lambda *args: calls.append(args))
    app = make_app(lineage_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        pane.focus()
        pane.move_cursor(spawn_index(app))
        await pilot.press("space", "down")
        await settle(pilot)
        assert pane.highlighted.nest == 1
        await pilot.press("o")
        await settle(pilot)
        assert calls == []
        assert any("belongs to a sub-agent" in n.message for n in app._notifications)
        await pilot.press("up", "up", "o")          # the parent's own message: handed over
        await settle(pilot)
        assert len(calls) == 1
