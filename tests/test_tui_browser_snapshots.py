"""Snapshots of the daily-driver keys (issue 12): naming a branch, undo, hiding a branch,
checkpoints. Fixed size, clock and ids (conftest.open_fixed), as test_tui_snapshots."""

from __future__ import annotations

from test_tui_snapshots import LOGIN, PAYMENTS, SIZE, app_for, session, steps


def test_branch_name_prompt(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,up,up,b"))


def test_after_undo_of_a_branch(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,up,up,up,b", "enter", "u"))


def test_hide_branch_question(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,up,a"))


def test_hidden_branch_shown_with_A(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,up,a", "y", "A"))


def test_checkpoint_prompt(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(PAYMENTS), "tab,tab,up,up,m"))


def test_small_terminal_branch_name_prompt(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(80, 24),
                        run_before=steps(session(LOGIN), "tab,b"))


# ---------------------------------------------------------------- the entry tree (t)
def test_entry_tree(snap_compare, demo_db):
    """The login session's entries: the split at the rollback, the branch heads named,
    the shown branch's path bright, labels as tags."""
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,t"))


def test_entry_tree_no_tools_with_label_times(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,t", "f", "T"))


def to_first_run(pilot) -> None:
    pane = pilot.app.entries_pane
    pane.move_cursor(next(i for i, row in enumerate(pane.rows) if row.run_start is not None))


def test_entry_tree_run_of_tool_steps_folded(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,t", to_first_run, "space"))


def test_entry_tree_found_word_highlighted(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,t", "ctrl+f",
                                         "f,a,s,t,e,r", "enter"))


def test_small_terminal_entry_tree(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=(80, 24),
                        run_before=steps(session(LOGIN), "tab,t"))


def test_thinking_hidden(snap_compare, demo_db):
    assert snap_compare(app_for(demo_db), terminal_size=SIZE,
                        run_before=steps(session(LOGIN), "tab,tab,home", "H"))
