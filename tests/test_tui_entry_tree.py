"""Pilot tests for the entry tree (t in the branches pane): splits, filters (f), folds
(space), enter, find (ctrl+f, n/N), label times (T), labelling and branching from it."""

from __future__ import annotations

from conftest import settle
from core import open_store
from core.actions import operations
from test_tui_history import LOGIN, SIZE, choose_session, keys, make_app, type_text


async def open_tree(pilot, name: str = LOGIN) -> None:
    await choose_session(pilot, name)
    await keys(pilot, "enter", "t")


def row_texts(app) -> list[str]:
    pane = app.entries_pane
    width = pane.scrollable_content_region.width
    return [pane.render_row(i, width)[0].plain for i in range(pane.row_count)]


async def test_t_switches_the_middle_pane_to_the_entry_tree_and_back(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        assert app.tree_mode and pane.display and not app.branches_pane.display
        assert app.focused is pane
        rows = row_texts(app)
        # the login session splits where the rollback was made: two children, guides drawn
        assert any("├─" in text for text in rows) and any("└─" in text for text in rows)
        assert "default" in str(pane.border_title)
        # the current branch's head is marked with its name
        assert any("[rollback 1]" in text for text in rows)
        await keys(pilot, "t")
        assert not app.tree_mode and app.branches_pane.display and not pane.display
        assert app.focused is app.branches_pane


async def test_f_cycles_the_filters_shown_in_the_title(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        counts = {}
        for mode in ("default", "no tools", "user only", "labelled", "everything"):
            assert pane.mode == mode
            assert mode in str(pane.border_title)
            counts[mode] = pane.row_count
            await keys(pilot, "f")
        assert pane.mode == "default"
        assert counts["everything"] > counts["default"] > counts["no tools"] > counts["user only"]
        # the demo's login session has labelled entries ("waitForURL", "compare")
        assert counts["labelled"] >= 1
        assert all(not text.lstrip(" ├└│─").startswith(("● result", "○ result"))
                   for text in row_texts(app) if pane.mode == "no tools")


async def test_space_folds_a_run_of_tool_steps_and_a_subtree(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        before = pane.row_count
        run_row = next(i for i, row in enumerate(pane.rows) if row.run_start is not None)
        pane.move_cursor(run_row)
        await keys(pilot, "space")
        folded = pane.rows[pane.cursor]
        assert folded.run >= 2 and pane.row_count == before - folded.run + 1
        assert "tool steps" in row_texts(app)[pane.cursor]
        await keys(pilot, "space")
        assert pane.row_count == before
        # a subtree: the first row with children that is not in a run of tool steps
        split = next(i for i, row in enumerate(pane.rows)
                     if row.has_children and row.run_start is None)
        pane.move_cursor(split)
        await keys(pilot, "left")
        assert pane.rows[pane.cursor].folded == before - split - 1
        assert pane.row_count == split + 1
        await keys(pilot, "right")
        assert pane.row_count == before


async def test_enter_on_an_entry_of_another_branch_shows_that_branch_at_it(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        shown = app.branch.id
        other = next(i for i, row in enumerate(pane.rows)
                     if row.seq not in pane.current_path)
        pane.move_cursor(other)
        await keys(pilot, "enter")
        seq = pane.rows[other].seq
        assert app.branch.id != shown
        assert seq in pane.current_path       # the shown path is now the one through it
        assert app.messages_pane.highlighted.entry.seq == seq
        assert app.focused is pane


async def test_ctrl_f_finds_words_and_labels_n_and_N_walk_the_hits(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        await keys(pilot, "ctrl+f")
        await type_text(pilot, "faster")
        await keys(pilot, "enter")
        assert pane.hits, "the demo says 'faster' in the login session"
        first = pane.highlighted_seq
        assert first in pane.hits
        assert "faster" in str(pane.border_title)
        entry = pane.highlighted
        assert "faster" in str(entry.data).lower()
        # the word is highlighted in the row
        width = pane.scrollable_content_region.width
        line = pane.render_row(pane.cursor, width)[0]
        assert any("faster" == line.plain[span.start:span.end].lower() for span in line.spans)
        await keys(pilot, "n")
        second = pane.highlighted_seq
        await keys(pilot, "N")
        assert pane.highlighted_seq == first
        assert second in pane.hits
        # a label is found by its text, like a message
        await keys(pilot, "ctrl+f", *["backspace"] * 10)
        await type_text(pilot, "compare")
        await keys(pilot, "enter")
        labels = pane.entry_tree.labels
        assert any(labels.get(seq) == "compare" for seq in pane.hits)


async def test_label_from_the_tree_and_T_shows_when_it_was_set(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        pane.move_cursor(0)
        await keys(pilot, "l")
        await type_text(pilot, "start")
        await keys(pilot, "enter")
        seq = pane.rows[0].seq
        assert pane.entry_tree.labels.get(seq) == "start"
        assert " start " in row_texts(app)[0]
        before = row_texts(app)[0]
        await keys(pilot, "T")
        after = row_texts(app)[0]
        assert after != before and seq in pane.label_times
        await keys(pilot, "f", "f", "f")
        assert pane.mode == "labelled" and seq in [row.seq for row in pane.rows]


async def test_b_in_the_tree_branches_at_the_highlighted_entry(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        pane.move_cursor(1)
        seq = pane.highlighted_seq
        await keys(pilot, "b", "enter")
        assert app.branch.head_seq == seq and app.branch.is_current
        store = open_store(demo_db)
        assert store.branches.get(app.branch.id).head_seq == seq
        # the new branch's head is marked in the tree
        assert any(row.seq == seq for row in pane.rows)
        assert app.branch.name in row_texts(app)[pane.index_of(seq)]


async def test_slash_finds_a_message_by_its_label(demo_db):
    from tui.components.search_screen import ResultList, SearchScreen

    store = open_store(demo_db)
    session = next(s for s in store.sessions.list() if s.name == LOGIN)
    seq = next(iter(store.annotations.entry_labels(session.id)))
    # the label's words are not in the message's own text: only the label finds it
    word = "zebracrossing"
    operations.set_label(store, seq, word)
    store.close()
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await keys(pilot, "slash")
        await type_text(pilot, word)
        await pilot.pause(0.4)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        results = screen.query_one(ResultList)
        assert [hit.seq for hit in results.hits] == [seq]
        assert results.hits[0].snippet.startswith(f"⚑ {word}")
        status = str(screen.query_one("#search-status").render())
        assert status.startswith("0 sessions by name · 1 message ·"), status
        await keys(pilot, "enter")
        await keys(pilot, "enter")
        assert app.messages_pane.highlighted.entry.seq == seq


async def test_the_messages_pane_follows_the_tree_cursor_on_the_shown_branch(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_tree(pilot)
        pane = app.entries_pane
        for index in (0, 3, 5):
            pane.move_cursor(index)
            await settle(pilot)
            seq = pane.highlighted_seq
            assert seq in pane.current_path
            messages = app.messages_pane       # the message under its cursor holds the entry
            first, last = messages._span(messages.cursor)   # (a reply with its results is one)
            assert seq in [messages.source.item(i).entry.seq for i in range(first, last + 1)]
        # an entry of another branch: the messages pane stays until enter
        before = app.messages_pane.highlighted.entry.seq
        other = next(i for i, row in enumerate(pane.rows) if row.seq not in pane.current_path)
        pane.move_cursor(other)
        await settle(pilot)
        assert app.messages_pane.highlighted.entry.seq == before


async def test_H_hides_and_shows_the_thinking_of_every_reply(demo_db):
    from tui.render.thinking import has_thinking

    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.messages_pane)
        pane = app.messages_pane
        source = pane.source
        index = next(i for i in range(source.count) if has_thinking(source.item(i)))
        thinking = next(b["thinking"] for b in source.item(index).entry.message["content"]
                        if b.get("type") == "thinking")

        def drawn() -> str:
            return "\n".join(strip.text for strip in pane.item_strips(index))

        first_words = thinking.split()[0]
        assert first_words in drawn()
        await keys(pilot, "H")
        assert not pane.show_thinking and "no thinking" in str(pane.border_title)
        assert first_words not in drawn() and "∴" not in drawn()
        # the stored entry keeps its thinking
        assert has_thinking(source.item(index))
        await keys(pilot, "H")
        assert pane.show_thinking and first_words in drawn()
