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
