"""Text typed at paste speed right after the key that opens a dialog (issue 26, item 7): the
key and the text go to the real app in tmux in ONE send-keys, and the dialog's field must
hold all of the text. The first character used to be lost: the field's focus was queued
behind the keys already typed (see tui/components/focus.py)."""

from __future__ import annotations

import re

import pytest

from terminal import Terminal, arbor_command, tmux_or_skip

TRIP = "Trip planner agent (LangGraph)"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmux_or_skip()
    folder = tmp_path_factory.mktemp("type-ahead")
    with Terminal([*arbor_command(), "--demo", "--db", str(folder / "demo.db")], cwd=folder,
                  config_dir=folder) as term:
        term.wait_for(TRIP[:20])
        term.wait_for(lambda screen: "of 6 ─" in screen)
        yield term


def field_text(screen: str) -> str:
    """What the dialog's one-line field holds (the row between its ▊ borders)."""
    rows = [re.search(r"▊  (.*?)\s*▎", line) for line in screen.splitlines()]
    found = [row.group(1) for row in rows if row and row.group(1).strip()]
    return found[0] if found else ""


@pytest.mark.parametrize(("focus", "key", "title"), [
    ([], "R", "Rename session"),
    (["Tab"], "R", "Rename branch"),
    (["Tab", "Tab"], "l", "Label entry"),
    (["Tab", "Tab"], "b", "New branch at"),
    (["Tab", "Tab"], "m", "Checkpoint at"),
    (["Tab"], "l", "Label branch"),
    ([], "/", "Search sessions"),
    ([], "C-f", "Find in this session"),
])
def test_text_typed_in_one_burst_with_the_key_that_opens_the_dialog_is_all_in_it(demo, focus, key,
                                                                                   title):
    term = demo
    if focus:
        term.keys(*focus)
        term.wait_for(lambda screen: True)
    term.keys(key, "new name")            # one burst: the key, then the text
    screen = term.wait_for(title)
    screen = term.wait_for(lambda screen: "new name" in field_text(screen) or
                           "ew name" in screen, timeout=10)
    try:
        assert field_text(screen) == "new name", screen
    finally:
        term.keys("Escape")
        term.wait_for(lambda screen: title not in screen)
        if focus:                          # back to the sessions pane for the next case
            term.keys(*(["BTab"] * len(focus)))
            term.wait_for(lambda screen: True)
