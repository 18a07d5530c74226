"""Pilot tests for the keys on history: a named branch (b), undo (u), hide a branch (a),
show hidden (A), rename a branch (R), checkpoint (m)."""

from __future__ import annotations

from pathlib import Path

from conftest import open_fixed, settle
from core import open_store
from core.actions import operations
from core.demo import DEMO_NOW
from tui.app import ArborApp

SIZE = (120, 40)
LOGIN = "Fix flaky login test"
PAYMENTS = "Refactor payment module"


def make_app(path: Path, **options) -> ArborApp:
    options.setdefault("poll_interval", None)
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, store_label=path.name, **options)


async def choose_session(pilot, name: str) -> None:
    app = pilot.app
    index = next(i for i, s in enumerate(app.sessions_pane.sessions) if s.name == name)
    app.sessions_pane.focus()
    app.sessions_pane.move_cursor(index)
    await settle(pilot)


async def keys(pilot, *names: str) -> None:
    for name in names:
        await pilot.press(name)
        await settle(pilot)


async def type_text(pilot, text: str) -> None:
    for char in text:
        await pilot.press("space" if char == " " else char)


async def test_b_asks_for_a_name_and_escape_makes_no_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        before = len(app.store.branches.of_session(app.session_id))
        await keys(pilot, "tab", "b")
        assert app.screen.id == "branch-name-dialog"
        from textual.widgets import Input
        assert app.screen.query_one(Input).value == "rollback 1 alt 1"
        await keys(pilot, "escape")
        assert len(app.store.branches.of_session(app.session_id)) == before
        await keys(pilot, "b")
        field = app.screen.query_one(Input)
        field.value = ""
        await type_text(pilot, "try fixtures")
        await keys(pilot, "enter")
        current = app.store.branches.current(app.session_id)
        assert current.name == "try fixtures"
        assert app.branches_pane.highlighted.id == current.id


async def test_u_undoes_the_branch_then_the_label_before_it(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        session_id = app.session_id
        old_current = app.store.branches.current_id(session_id)
        await keys(pilot, "tab", "tab", "up", "l")
        await type_text(pilot, "look here")
        await keys(pilot, "enter")
        labelled = app.messages_pane.highlighted.entry.seq
        assert app.store.annotations.entry_labels(session_id)[labelled] == "look here"
        await keys(pilot, "b", "enter")
        new = app.store.branches.current_id(session_id)
        assert new != old_current
        await keys(pilot, "u")
        assert app.store.branches.current_id(session_id) == old_current
        assert app.store.branches.get(new).is_hidden
        assert new not in [row.branch.id for row in app.branches_pane.rows]
        assert app.branches_pane.highlighted.id == old_current
        await keys(pilot, "u")
        assert labelled not in app.store.annotations.entry_labels(session_id)
        assert labelled not in app.messages_pane.labels
        await keys(pilot, "u")      # the demo's own history is not the app's: nothing more
        assert app.store.oplog.last_undoable() is None


async def test_u_works_after_a_restart(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, PAYMENTS)
        session_id = app.session_id
        await keys(pilot, "R")
        from textual.widgets import Input
        app.screen.query_one(Input).value = "Payments, refactored"
        await keys(pilot, "enter")
        assert app.store.sessions.get(session_id).session_name == "Payments, refactored"
    again = make_app(demo_db)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "u")
        assert again.store.sessions.get(session_id).session_name == PAYMENTS
        assert PAYMENTS in [s.name for s in again.sessions_pane.sessions]


async def test_u_does_not_move_a_branch_an_agent_wrote_to_and_can_leave_it(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        session_id = app.session_id
        await keys(pilot, "tab", "tab", "up", "l")
        await type_text(pilot, "first")
        await keys(pilot, "enter", "c")
        await keys(pilot, "ctrl+s")
        branch = app.store.branches.current(session_id)
        compacted_head = branch.head_seq
        # another process appends to the compacted branch
        other = open_store(demo_db)
        appended = other.entries.append_to_branch(branch.id, "message",
                                          {"message": {"role": "user", "content": "go on"}})
        other.close()
        await keys(pilot, "u")
        assert app.store.branches.get(branch.id).head_seq == appended.seq
        notes = [n.message for n in app._notifications]
        assert any("Cannot undo" in n and "changed since" in n for n in notes)
        await keys(pilot, "u")       # leave the compaction, undo the label before it
        assert app.store.branches.get(branch.id).head_seq == appended.seq
        assert "first" not in app.store.annotations.entry_labels(session_id).values()
        assert app.store.entries.get(compacted_head) is not None


async def test_a_hides_a_branch_after_confirming_and_A_shows_it(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await keys(pilot, "tab")
        rows = [row.branch for row in app.branches_pane.rows]
        main = next(b for b in rows if not b.is_current)
        app.branches_pane.move_cursor(rows.index(main))
        await settle(pilot)
        await keys(pilot, "a")
        assert app.screen.__class__.__name__ == "ConfirmDialog"
        await keys(pilot, "n")
        assert not app.store.branches.get(main.id).is_hidden
        await keys(pilot, "a", "y")
        assert app.store.branches.get(main.id).is_hidden
        assert main.id not in [row.branch.id for row in app.branches_pane.rows]
        assert "+1 hidden" in str(app.branches_pane.border_title)
        listed = [s.id for s in app.sessions_pane.sessions]
        await keys(pilot, "A")
        assert main.id in [row.branch.id for row in app.branches_pane.rows]
        assert app.sessions_pane.sessions[app.sessions_pane.cursor].name == LOGIN
        # the archived session joins the list; the others keep their order
        now = [s.id for s in app.sessions_pane.sessions]
        assert len(now) == len(listed) + 1 and [i for i in now if i in listed] == listed
        index = [row.branch.id for row in app.branches_pane.rows].index(main.id)
        app.branches_pane.move_cursor(index)
        await settle(pilot)
        await keys(pilot, "a")       # on a hidden branch: shown again, no question
        assert not app.store.branches.get(main.id).is_hidden


async def test_the_current_branch_is_not_hidden(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await keys(pilot, "tab")
        assert app.branches_pane.highlighted.is_current
        await keys(pilot, "a")
        assert app.screen is app.screen_stack[0]
        assert not app.branches_pane.highlighted.is_hidden


async def test_R_in_branches_renames_the_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await keys(pilot, "tab", "R")
        assert app.screen.id == "rename-branch-dialog"
        from textual.widgets import Input
        app.screen.query_one(Input).value = "url wait"
        await keys(pilot, "enter")
        assert app.branches_pane.highlighted.name == "url wait"
        assert app.store.sessions.get(app.session_id).session_name == LOGIN


async def test_m_makes_a_named_checkpoint_that_r_offers(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, PAYMENTS)
        await keys(pilot, "tab", "tab", "m")
        assert app.screen.id == "checkpoint-dialog"
        from textual.widgets import Input
        # named after what the message says (its words, not its tool calls)
        assert app.screen.query_one(Input).value == "at: Three webhook tests fail: they patch"
        await keys(pilot, "escape", "up", "m")   # one up: the reply running the suite (one message with its result)
        assert app.screen.query_one(Input).value.startswith("checkpoint at ")
        app.screen.query_one(Input).value = "before the suite"
        entry = app.messages_pane.highlighted.entry
        await keys(pilot, "enter")
        checkpoints = app.store.annotations.checkpoints_of_session(app.session_id)
        made = next(c for c in checkpoints if c.checkpoint_name == "before the suite")
        assert made.entry_seq == entry.seq
        await keys(pilot, "r")
        assert any(t.checkpoint_id == made.id for t in app.screen.targets)
        await keys(pilot, "escape", "u")
        assert app.store.annotations.get_checkpoint(made.id).is_hidden
        await keys(pilot, "r")
        assert not any(t.checkpoint_id == made.id for t in app.screen.targets)


def test_families_keep_their_places_and_new_ones_come_after_their_neighbour():
    from core.history.lineage import FamilyRow
    from tui.components.sessions_pane import in_previous_order

    def rows(*ids):
        return [FamilyRow(type("S", (), {"id": i})(), 0, 0, 0, "", False) for i in ids]

    previous = rows(1, 2, 3)
    # 3 became the newest; 9 (archived, now shown) sorts between 1 and 2
    fresh = rows(3, 1, 9, 2)
    assert [r.session.id for r in in_previous_order(fresh, previous)] == [1, 9, 2, 3]
    assert [r.session.id for r in in_previous_order(rows(8, 3, 1, 2), previous)] == [8, 1, 2, 3]
