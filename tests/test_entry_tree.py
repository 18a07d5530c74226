"""The entry tree's layout (tui/entry_tree.py): splits, filters, folds, depth cap."""

from __future__ import annotations

from tui.entry_tree import MAX_INDENT, EntryTree, OutlineEntry


def chain(tree: list, start: int, parent: int | None, roles: list[str]) -> int:
    """Append entries with these roles one under the other; return the last seq."""
    seq = start
    for role in roles:
        tree.append(OutlineEntry(seq, parent, "message", role))
        parent, seq = seq, seq + 1
    return parent


def drawn(tree: EntryTree, **options) -> list[str]:
    return [f"{row.guide()}{row.seq}" for row in tree.rows(**options)]


def test_a_straight_conversation_stays_at_one_level():
    outline: list[OutlineEntry] = []
    chain(outline, 1, None, ["user", "assistant"] * 1000)
    rows = EntryTree(outline).rows()
    assert len(rows) == 2000
    assert {row.depth for row in rows} == {0}


def test_splits_indent_their_children_oldest_first():
    outline: list[OutlineEntry] = []
    fork = chain(outline, 1, None, ["user", "assistant"])         # 1, 2
    chain(outline, 10, fork, ["user", "assistant"])                # 10, 11 (older)
    chain(outline, 20, fork, ["user"])                             # 20 (newer)
    assert drawn(EntryTree(outline)) == ["1", "2", "├─10", "│ 11", "└─20"]


def test_filters_keep_the_shape():
    outline: list[OutlineEntry] = []
    fork = chain(outline, 1, None, ["user", "assistant", "toolResult", "assistant"])  # 1..4
    outline.append(OutlineEntry(5, fork, "model_change", None))
    chain(outline, 6, 5, ["user"])
    chain(outline, 7, fork, ["user", "assistant"])
    tree = EntryTree(outline, labels={7: "try B"})
    assert drawn(tree) == ["1", "2", "3", "4", "├─6", "└─7", "  8"]
    assert drawn(tree, mode="everything") == ["1", "2", "3", "4", "├─5", "│ 6", "└─7", "  8"]
    # 2 is a tool call (a tool result answers it), 3 its result
    assert drawn(tree, mode="no tools") == ["1", "4", "├─6", "└─7", "  8"]
    assert drawn(tree, mode="user only") == ["1", "├─6", "└─7"]
    assert drawn(tree, mode="labelled") == ["7"]


def test_folding_a_subtree_hides_what_is_under_it_and_counts_it():
    outline: list[OutlineEntry] = []
    fork = chain(outline, 1, None, ["user", "assistant"])
    chain(outline, 10, fork, ["user", "assistant", "user"])
    chain(outline, 20, fork, ["user"])
    rows = EntryTree(outline).rows(folded={10})
    assert [row.seq for row in rows] == [1, 2, 10, 20]
    assert rows[2].folded == 2
    rows = EntryTree(outline).rows(folded={2})
    assert [(row.seq, row.folded) for row in rows] == [(1, 0), (2, 4)]


def test_a_run_of_tool_steps_folds_into_one_row():
    outline: list[OutlineEntry] = []
    chain(outline, 1, None, ["user"] + ["assistant", "toolResult"] * 3 + ["assistant", "user"])
    tree = EntryTree(outline)
    rows = tree.rows()
    assert [row.run_start for row in rows] == [None, 2, 2, 2, 2, 2, 2, None, None]
    rows = tree.rows(folded_runs={2})
    assert [(row.seq, row.run) for row in rows] == [(1, 0), (2, 6), (8, 0), (9, 0)]


def test_indentation_is_capped_with_the_depth_written():
    outline: list[OutlineEntry] = []
    parent = chain(outline, 1, None, ["user"])
    seq = 2
    for _ in range(MAX_INDENT + 4):          # each level: an abandoned try and a new one
        outline.append(OutlineEntry(seq, parent, "message", "user"))
        outline.append(OutlineEntry(seq + 1, parent, "message", "user"))
        parent, seq = seq + 1, seq + 2
    rows = EntryTree(outline).rows()
    deepest = rows[-1]
    assert deepest.depth == MAX_INDENT + 4
    guide = deepest.guide()
    assert guide.startswith(f"┄{MAX_INDENT + 4} ")
    assert len(guide) == 2 * MAX_INDENT        # the number where the outer guides were
    assert {len(row.guide()) for row in rows if row.depth >= MAX_INDENT} == {2 * MAX_INDENT}


def test_thousands_of_rewinds_and_a_long_chain_lay_out_without_recursion():
    outline: list[OutlineEntry] = []
    parent = chain(outline, 1, None, ["user"])
    seq = 2
    for _ in range(3000):                    # 3,000 nested splits
        outline.append(OutlineEntry(seq, parent, "message", "user"))
        outline.append(OutlineEntry(seq + 1, parent, "message", "user"))
        parent, seq = seq + 1, seq + 2
    chain(outline, seq, parent, ["assistant", "toolResult"] * 20_000)
    tree = EntryTree(outline)
    rows = tree.rows()
    assert len(rows) == len(outline)
    assert max(row.depth for row in rows) == 3000
    assert len(rows[-1].guide()) < 40


def test_a_tool_call_that_also_says_something_is_no_tool_step():
    outline: list[OutlineEntry] = []
    chain(outline, 1, None, ["user", "assistant", "toolResult", "assistant", "toolResult",
                             "assistant"])
    plain = EntryTree(outline)
    assert [row.seq for row in plain.rows(mode="no tools")] == [1, 6]
    worded = EntryTree(outline, worded={2})
    assert [row.seq for row in worded.rows(mode="no tools")] == [1, 2, 6]
    # a run of tool steps holds worded calls too (folding it hides their words)
    assert [row.run_start for row in worded.rows()] == [None, 2, 2, 2, 2, None]
