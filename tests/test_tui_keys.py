"""Pilot tests: each key changes the store as it should, and the panes show it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import open_fixed, settle, wait_until
from core import open_store
from core.demo import DEMO_NOW
from core.model.entries import BRANCH_SUMMARY, COMPACTION
from tui.app import ArborApp
from tui.components.empty_state import EmptyState

REPO = Path(__file__).resolve().parent.parent
SIZE = (120, 40)


def make_app(path, **options) -> ArborApp:
    options.setdefault("poll_interval", None)
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW,
                    store_label=getattr(path, "name", "team store"), **options)


async def choose_session(pilot, name: str) -> None:
    app = pilot.app
    index = next(i for i, s in enumerate(app.sessions) if s.name == name)
    app.sessions_pane.focus()
    app.sessions_pane.move_cursor(index)
    await settle(pilot)
    assert app.session_id == app.sessions[index].id


async def type_text(pilot, text: str) -> None:
    for char in text:
        await pilot.press("space" if char == " " else char)


LOGIN = "Fix flaky login test"
TRIP = "Trip planner agent (LangGraph)"
LONG = "Migrate orders table to new schema"


async def test_start_lists_sessions_newest_first_without_archived(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listed = app.sessions_pane.sessions          # (the demo's sub-agent is folded away)
        names = [s.name for s in listed]
        assert "Old experiment: prompt caching" not in names
        assert len(names) == 5
        stamps = [s.updated_at for s in listed]
        assert stamps == sorted(stamps, reverse=True)
        # the first session is shown, with its current branch, at its end
        first = listed[0]
        assert app.session_id == first.id
        assert app.branch.is_current
        assert app.messages_pane.at_end


async def test_archived_shown_when_asked(demo_db):
    app = make_app(demo_db, show_archived=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Old experiment: prompt caching" in [s.name for s in app.sessions]


async def test_b_in_messages_branches_at_highlighted_message(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        await pilot.press("up", "up")
        entry = app.messages_pane.highlighted.entry
        before = len(app.store.branches.of_session(app.session_id))
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("enter")        # accept the suggested branch name
        await settle(pilot)
        branches = app.store.branches.of_session(app.session_id)
        assert len(branches) == before + 1
        new = next(b for b in branches if b.is_current)
        assert new.head_seq == entry.seq and new.fork_seq == entry.seq
        # the panes show it at once: cursor on the new branch, its messages shown
        assert app.branches_pane.highlighted.id == new.id
        assert app.branch.id == new.id
        assert app.messages_pane.highlighted.entry.seq == entry.seq


async def test_b_in_branches_branches_at_head(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab")
        source = app.branches_pane.highlighted
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("enter")        # accept the suggested branch name
        await settle(pilot)
        new = app.store.branches.current(app.session_id)
        assert new.id != source.id and new.parent_session_id == source.id
        assert new.head_seq == source.head_seq
        assert app.branches_pane.highlighted.id == new.id


async def test_r_rolls_back_to_highlighted_message_with_summary(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        old = app.branch
        app.messages_pane.focus()
        await pilot.press("up", "up", "up")
        target = app.messages_pane.highlighted.entry
        await pilot.press("r")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "RollbackDialog"
        summary = app.screen.query_one("#rollback-summary").text
        assert "messages summarised" in summary  # the built-in summary of what is left behind
        await pilot.press("ctrl+s")
        await settle(pilot)
        new = app.store.branches.current(app.session_id)
        assert new.id != old.id and new.parent_session_id == old.id
        head = app.store.entries.get(new.head_seq)
        assert head.type == BRANCH_SUMMARY and head.parent_seq == target.seq
        # the old branch is untouched
        assert app.store.branches.get(old.id).head_seq == old.head_seq
        assert app.branch.id == new.id


async def test_r_rolls_back_to_checkpoint(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, TRIP)
        await pilot.press("tab")  # branches pane: the checkpoints are the choices
        branch = app.branches_pane.highlighted
        await pilot.press("r")
        await settle(pilot)
        checkpoint = app.screen.targets[0]
        assert checkpoint.checkpoint_id is not None
        await pilot.press("tab", "space")  # untick the branch summary
        await pilot.press("ctrl+s")
        await settle(pilot)
        new = app.store.branches.current(app.session_id)
        assert new.parent_session_id == branch.id
        assert new.branch_point_checkpoint_id == checkpoint.checkpoint_id
        assert new.head_seq == checkpoint.entry_seq  # no summary entry appended


async def test_l_labels_and_clears_message(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        await pilot.press("up")
        seq = app.messages_pane.highlighted.entry.seq
        await pilot.press("l")
        await pilot.pause()
        await type_text(pilot, "look here")
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.annotations.entry_labels(app.session_id)[seq] == "look here"
        assert app.messages_pane.labels[seq] == "look here"
        assert app.messages_pane.highlighted.entry.seq == seq  # cursor kept
        await pilot.press("l")
        await pilot.pause()
        await pilot.press("ctrl+u", "enter")
        await settle(pilot)
        assert seq not in app.store.annotations.entry_labels(app.session_id)


async def test_l_labels_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab")
        branch = app.branches_pane.highlighted
        await pilot.press("l")
        await pilot.pause()
        await pilot.press("ctrl+u")
        await type_text(pilot, "keeper")
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.annotations.branch_labels(app.session_id)[branch.id] == "keeper"
        assert app.branches_pane.highlighted.id == branch.id
        assert app.branches_pane.rows[app.branches_pane.cursor].label == "keeper"


async def test_c_compacts_with_edited_summary(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        branch = app.branch
        app.messages_pane.focus()
        await pilot.press("c")
        await settle(pilot)
        dialog = app.screen
        assert dialog.plan is not None and dialog.plan.summarised
        dialog.query_one("#compact-summary").text = "edited summary"
        await pilot.press("ctrl+s")
        await settle(pilot)
        head = app.store.entries.get(app.store.branches.get(branch.id).head_seq)
        assert head.type == COMPACTION and head.data["summary"] == "edited summary"
        # the replayed context starts with the marker, and the cursor is on it
        assert app.messages_pane.source.compaction.seq == head.seq
        assert app.messages_pane.highlighted.kind == "summary"


async def test_enter_makes_branch_current(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab")
        rows = app.branches_pane.rows
        other = next(i for i, r in enumerate(rows) if not r.branch.is_current)
        app.branches_pane.move_cursor(other)
        await settle(pilot)
        branch_id = rows[other].branch.id
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.branches.current(app.session_id).id == branch_id
        assert app.branches_pane.highlighted.id == branch_id
        assert app.branches_pane.highlighted.is_current


async def test_a_archives_after_confirmation(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.sessions_pane.highlighted
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("n")
        await settle(pilot)
        assert app.store.sessions.get(session.id).is_active
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert not app.store.sessions.get(session.id).is_active
        assert session.id not in [s.id for s in app.sessions]
        assert app.sessions_pane.cursor == 0


async def test_R_renames(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        session = app.sessions_pane.highlighted
        await pilot.press("R")
        await pilot.pause()
        await pilot.press("ctrl+u")
        await type_text(pilot, "Lisbon trip")
        await pilot.press("enter")
        await settle(pilot)
        assert app.store.sessions.get(session.id).session_name == "Lisbon trip"
        assert app.sessions_pane.highlighted.name == "Lisbon trip"


async def test_v_toggles_raw_and_context(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LONG)
        context = app.messages_pane.source
        assert not context.raw and context.compaction is not None
        head_seq = app.messages_pane.highlighted.entry.seq
        await pilot.press("v")
        await settle(pilot)
        raw = app.messages_pane.source
        assert raw.raw and raw.count == raw.length > context.count
        assert app.messages_pane.highlighted.entry.seq == head_seq  # cursor kept
        await pilot.press("v")
        await settle(pilot)
        assert not app.messages_pane.source.raw


async def test_search_jumps_to_message(demo_location):   # on a file and on PostgreSQL
    app = make_app(demo_location)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.pause()
        await type_text(pilot, "Mouraria")
        await settle(pilot)
        results = app.screen.query_one("#search-results")
        assert results.row_count >= 1
        hit = results.hits[0]
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert app.session_id == hit.external_session_id
        assert app.messages_pane.highlighted.entry.seq == hit.seq
        assert app.focused is app.messages_pane


async def test_search_finds_session_by_name(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.pause()
        await type_text(pilot, "payment")
        await settle(pilot)
        results = app.screen.query_one("#search-results")
        assert results.sessions and results.sessions[0].name == "Refactor payment module"
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert app.sessions_pane.highlighted.name == "Refactor payment module"


async def test_second_process_writes_show_up(demo_location):
    demo_db = demo_location   # a file, or a PostgreSQL store (its commits come by NOTIFY)
    app = make_app(demo_db, poll_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        count = app.messages_pane.count
        branch = app.branch
        # an agent in another process appends to the shown branch and starts a new session
        script = (
            "import sys; sys.path.insert(0, %r)\n"
            "from core import open_store\n"
            "s = open_store(%r, create=False)\n"
            "s.entries.append_to_branch(%d, 'message', {'message': {'role': 'user', 'content': 'from outside'}})\n"
            "x = s.sessions.create('Written by an agent', source='pi')\n"
            "b = s.branches.create(x.id)\n"
            "s.entries.append_to_branch(b.id, 'message', {'message': {'role': 'user', 'content': 'hi'}})\n"
            "s.close()\n" % (str(REPO), str(demo_db), branch.id))
        subprocess.run([sys.executable, "-c", script], check=True)
        assert await wait_until(pilot, lambda: app.messages_pane.count == count + 1
                                and "Written by an agent" in [s.name for s in app.sessions])
        assert app.messages_pane.count == count + 1
        # the cursor followed the end (it was there) and stayed on the same session
        assert app.session_id == branch.external_session_id
        assert app.messages_pane.highlighted.entry.message["content"] == "from outside"
        assert "Written by an agent" in [s.name for s in app.sessions]
        assert app.sessions_pane.highlighted.id == branch.external_session_id


async def test_live_refresh_keeps_cursor_not_at_end(demo_location):
    demo_db = demo_location
    app = make_app(demo_db, poll_interval=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.messages_pane.focus()
        await pilot.press("up", "up")
        seq = app.messages_pane.highlighted.entry.seq
        length = app.messages_pane.source.length
        other = open_store(demo_db, create=False)  # a second connection, as another process has
        other.entries.append_to_branch(app.branch.id, "message", {"message": {"role": "user", "content": "x"}})
        other.close()
        assert await wait_until(pilot, lambda: app.messages_pane.source.length == length + 1)
        assert app.messages_pane.source.length == length + 1
        assert app.messages_pane.highlighted.entry.seq == seq


async def test_empty_store_shows_help(empty_db):
    app = make_app(empty_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        empty = app.query_one(EmptyState)
        assert empty.display
        assert not app.query_one("#panes").display
        text = str(empty.render())
        assert "arbor import" in text and "arbor --demo" in text
        await pilot.press("b", "tab", "c", "slash", "escape")  # nothing breaks
        await settle(pilot)


async def test_palette_lists_arbor_commands(demo_db):
    from tui.palette import ArborCommands

    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "roll back")
        await settle(pilot)
        provider = ArborCommands(app.screen)
        hits = [hit async for hit in provider.search("roll back")]
        assert hits and "Roll back" in str(hits[0].match_display)
        await pilot.press("escape")


@pytest.mark.parametrize("key", ["b", "r", "l", "c", "enter", "a", "R", "v", "question_mark",
                                 "u", "m", "A"])
async def test_keys_in_every_pane_never_crash(demo_db, key):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press(key)
            await settle(pilot)
            await pilot.press("escape")
            await settle(pilot)
            await pilot.press("tab")
            await settle(pilot)
        assert app.return_code is None or app.return_code == 0


FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.mark.skipif(not FIXTURES.exists(), reason="the shared fixtures are not here")
async def test_import_from_palette_fills_an_empty_store(empty_db):
    from textual.widgets import Input

    app = make_app(empty_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.query_one(EmptyState).display
        await pilot.press("ctrl+p")
        await pilot.pause()
        await type_text(pilot, "import agent")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen.__class__.__name__ == "ImportDialog"
        app.screen.query_one(Input).value = f'"{FIXTURES / "pi"}" "{FIXTURES / "codex"}"'
        await pilot.press("enter")
        await settle(pilot)
        for _ in range(100):
            if app.sessions:
                break
            await pilot.pause(0.05)
            await settle(pilot)
        assert app.sessions, "the imported sessions are listed"
        assert not app.query_one(EmptyState).display
        assert {s.source for s in app.sessions} >= {"pi", "codex"}
        assert len(app.store.sessions.list()) == len(app.sessions)
        assert app.branch is not None and app.messages_pane.count > 0


async def test_broken_compaction_shows_raw_entries_and_a_warning(tmp_path):
    from core.model.entries import COMPACTION

    path = tmp_path / "broken.db"
    store = open_store(path)
    session = store.sessions.create("broken replay")
    branch = store.branches.create(session.id, name="main")
    for text in ("one", "two", "three"):
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": text}})
    # stored as an import stores what a log says (append_to_branch refuses it)
    head = store.branches.get(branch.id).head_seq
    broken = store.entries.append(session.id, head, COMPACTION,
                                {"summary": "s", "firstKeptEntryId": "not-there"})
    store.branches.move_head(branch.id, broken.seq)
    store.close()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        source = app.messages_pane.source
        assert source.raw and source.warning and "not on this branch" in source.warning
        assert app.messages_pane.count == 4
        assert any("not on this branch" in n.message for n in app._notifications)


async def test_q_quits_and_question_mark_helps(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.__class__.__name__ != "HelpScreen"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_tab_cycles_the_three_panes(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = []
        for _ in range(3):
            seen.append(app.focused.id)
            await pilot.press("tab")
        assert seen == ["sessions", "branches", "messages"] and app.focused.id == "sessions"
        await pilot.press("shift+tab")
        assert app.focused.id == "messages"


async def test_the_app_opens_a_postgresql_store_and_names_it_without_the_password(postgres_server):
    url = postgres_server.new_store_url()
    # the test server trusts local users: the password is there to be kept off the screen
    store = open_store(url.replace("postgresql://postgres@", "postgresql://postgres:hunter2@"))
    session = store.sessions.create("On the team server")
    branch = store.branches.create(session.id)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "hi"}})
    app = ArborApp(store, clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.store_label == "arbor_test (local socket)"
        assert [s.name for s in app.sessions] == ["On the team server"]
        assert app.messages_pane.count == 1
    store.close()
