"""The messages pane's filter (F, issue 26, item 7): the entry tree's filters, by the same
names and the same predicate (tui.entry_tree.shows), on the shown branch. Claude Code's
bookkeeping lines (queue operations, attachments, skill listings, last prompt) fill a resumed
session's messages; the default filter leaves them out, as the entry tree's does."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from conftest import open_fixed, settle
from core import open_store
from tui.actions import tree as tree_actions
from tui.app import ArborApp
from tui.components.help_screen import KEYS
from tui.entry_tree import FILTERS
from tui.message_source import MessageSource
from tui.palette import COMMANDS
from test_tui_lineage import NOW, lineage_db, make_app  # noqa: F401 (a fixture)

README = Path(__file__).resolve().parent.parent / "README.md"
SIZE = (120, 40)


# (a Claude Code session as Claude Code wrote it: its lines beside the conversation too)
claude_db = lineage_db


def shown_entries(app) -> list:
    pane = app.messages_pane
    items = [pane.source.item(i) for i in range(pane.count)]
    return [item.entry for item in items if item is not None and item.kind == "entry"
            and not item.nest]


async def filter_to(pilot, mode: str) -> None:
    app = pilot.app
    for _ in range(len(FILTERS)):
        if app.messages_pane.filter == mode:
            return
        await pilot.press("F")
        await settle(pilot)
    raise AssertionError(f"F never reached {mode}")


async def test_the_default_filter_leaves_out_claude_codes_bookkeeping_lines(claude_db):
    app = make_app(claude_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.set_focus(app.messages_pane)
        everything = shown_entries(app)
        assert {e.type for e in everything} >= {"claude:queue-operation", "claude:attachment",
                                               "claude:last-prompt"}
        title = app.messages_pane._border_title.plain
        assert "filter" not in title
        await pilot.press("F")
        await settle(pilot)
        assert app.messages_pane.filter == "default"
        assert app.messages_pane._border_title.plain.endswith("context · filter: default")
        kept = shown_entries(app)
        assert kept and all(e.type == "message" for e in kept)
        assert [e.seq for e in kept] == [e.seq for e in everything if e.type == "message"]
        await filter_to(pilot, "user only")
        assert {e.message["role"] for e in shown_entries(app)} == {"user"}
        await filter_to(pilot, "labelled")
        assert shown_entries(app) == []
        assert "The filter labelled shows nothing here: F changes it." in \
            app.messages_pane.empty_text.plain
        await filter_to(pilot, "everything")
        assert [e.seq for e in shown_entries(app)] == [e.seq for e in everything]
        assert "filter" not in app.messages_pane._border_title.plain


@pytest.mark.parametrize("mode", FILTERS)
async def test_the_messages_pane_shows_what_the_entry_tree_shows_on_the_branch(demo_db, mode):
    """The same filter in both panes: on the shown branch's path, the messages pane (raw
    view: an entry a row) lists exactly the entries the tree's filter shows."""
    app = ArborApp(open_fixed(demo_db), clock=lambda: NOW, poll_interval=None,
                   store_label="demo.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.sessions_pane
        pane.move_cursor(next(i for i, row in enumerate(pane.rows)
                              if row.session.name == "Fix flaky login test"))
        await settle(pilot)
        operations_store = app.store
        first = shown_entries(app)[0]
        operations_store.annotations.add_label(app.session_id, "look here", target_seq=first.seq)
        app.show_session(app.session_id)
        await settle(pilot)
        app.set_focus(app.messages_pane)
        await pilot.press("v")                  # raw: every entry of the path a row
        await filter_to(pilot, mode)
        in_messages = [e.seq for e in shown_entries(app)]
        await pilot.press("t")
        await settle(pilot)
        tree = app.entries_pane
        for _ in range(len(FILTERS)):
            if tree.mode == mode:
                break
            tree.action_cycle_filter()
        on_path = [row.seq for row in tree.rows if row.seq in tree.current_path]
        assert in_messages == on_path
        assert in_messages or mode == "labelled"


async def test_a_big_session_is_filtered_when_its_tree_is_read(claude_db, monkeypatch):
    """Past FILTER_AT_ONCE entries the tree is read in a worker; the title says so meanwhile."""
    monkeypatch.setattr(tree_actions, "FILTER_AT_ONCE", 0)
    release = threading.Event()
    read = tree_actions.read_session_tree

    def slow(store, session_id):
        release.wait(10)
        return read(store, session_id)

    monkeypatch.setattr(tree_actions, "read_session_tree", slow)
    app = make_app(claude_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        everything = shown_entries(app)
        await pilot.press("F")
        for _ in range(5):
            await pilot.pause()
        assert app.messages_pane._border_title.plain.endswith("filter: default…")
        assert len(shown_entries(app)) == len(everything)       # shown as it was, meanwhile
        release.set()
        await settle(pilot)
        assert app.messages_pane._border_title.plain.endswith("filter: default")
        assert all(e.type == "message" for e in shown_entries(app))


def test_the_filter_is_in_the_help_the_palette_and_the_readme():
    assert any(key == "F" and "filter" in what for _, keys in KEYS for key, what in keys)
    assert any(key == "F" and action == "cycle_message_filter" for _, key, action, _ in COMMANDS)
    assert "| `F` |" in README.read_text()


# ------------------------------------------------------------ the rows it leaves out
def test_a_source_with_hidden_depths_maps_rows_and_depths_both_ways(tmp_path):
    store = open_store(tmp_path / "arbor.db")
    session = store.sessions.create("s")
    branch = store.branches.create(session.id)
    store.entries.append_messages(branch.id, [{"role": "user", "content": f"m{n}"} for n in range(60)])
    from core.actions import operations

    operations.compact(store, branch.id, summary="the start", keep_recent_tokens=120)
    store.entries.append_messages(branch.id, [{"role": "user", "content": f"n{n}"} for n in range(20)])
    branch = store.branches.get(branch.id)
    length = store.paths.length(branch.head_seq)
    rng = random.Random(7)
    for raw in (True, False):
        for _ in range(20):
            hidden = sorted(rng.sample(range(length), rng.randint(0, length)))
            plain = MessageSource(store, branch, raw=raw)
            source = MessageSource(store, branch, raw=raw, hidden=hidden)
            expect = [plain.item(i) for i in range(plain.count)]
            expect = [item for item in expect
                      if item.kind == "summary" or item.entry.depth not in hidden]
            got = [source.item(i) for i in range(source.count)]
            assert [(i.kind, i.entry.seq) for i in got] == [(i.kind, i.entry.seq) for i in expect]
            for index, item in enumerate(got):
                if item.kind == "entry":
                    assert source.index_of_seq(item.entry.seq) == index
                    assert source.index_near_depth(item.entry.depth) == index
            for depth in hidden:
                before = [i for i, item in enumerate(got)
                          if item.kind == "entry" and item.entry.depth < depth]
                near = source.index_near_depth(depth)
                assert near == (before[-1] if before else (0 if source.offset else None))
    store.close()
