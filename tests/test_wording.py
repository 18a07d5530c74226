"""Words that misled (issue 26, item 7): each says what it counts or names."""

from __future__ import annotations

import json

from conftest import settle
from core import open_store
from core.actions import operations
from core.history.summariser import builtin_summary
from test_tui_keys import LOGIN, SIZE, choose_session, make_app
from tui import cli


# ------------------------------------------------------------- roll back names
def test_a_roll_back_is_named_by_its_number_in_its_session(tmp_path):
    """Named by the branch's id it was "rollback #2", then "rollback #12" once other
    sessions had made branches in between."""
    store = open_store(tmp_path / "arbor.db")
    sessions = []
    for name in ("mine", "other"):
        session = store.sessions.create(name)
        branch = store.branches.create(session.id)
        entries = store.entries.append_messages(branch.id, [{"role": "user", "content": f"q{n}"}
                                                    for n in range(4)])
        sessions.append((branch, entries))
    (mine, my_entries), (other, other_entries) = sessions
    first = operations.rollback(store, mine.id, entry_id=my_entries[1].seq)
    for _ in range(9):                       # other branches of the store take ids
        operations.branch(store, other.id, other_entries[0].seq)
    second = operations.rollback(store, first.id, entry_id=my_entries[0].seq)
    assert (first.name, second.name) == ("rollback 1", "rollback 2")
    assert second.id - first.id > 9
    operations.rename_branch(store, mine.id, "rollback 3")   # a name taken is skipped
    assert operations.rollback(store, mine.id, entry_id=my_entries[2].seq).name == "rollback 4"
    assert operations.rollback(store, mine.id, entry_id=my_entries[2].seq,
                               name="try again").name == "try again"
    store.close()


# ------------------------------------------------------------------ summaries
def test_a_summary_has_no_goal_heading_over_no_goal():
    summary = builtin_summary([{"role": "assistant", "content": "Done: the tests pass."}])
    assert "## Goal" not in summary and "no user request" not in summary
    assert summary.endswith("(1 message summarised; no request of the user among them)")
    asked = builtin_summary([{"role": "user", "content": "Fix the flaky test"}])
    assert "## Goal\nFix the flaky test" in asked and "## Latest state" not in asked
    assert asked.endswith("(1 message summarised; no reply of the assistant)")


# ----------------------------------------------------------------- the CLI
def test_the_import_report_does_not_call_a_kept_line_skipped(tmp_path, capsys):
    path = tmp_path / "cycle.jsonl"
    lines = [{"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00Z",
              "cwd": "/w"},
             {"type": "message", "id": "a", "parentId": "b", "timestamp": "2026-01-01T00:00:01Z",
              "message": {"role": "user", "content": "one"}},
             {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z",
              "message": {"role": "user", "content": "two"}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert cli.main(["import", "--db", str(tmp_path / "arbor.db"), str(path)]) == 0
    out = capsys.readouterr().out
    assert "(kept, not dropped)" in out
    assert "Lines not imported as written (1):" in out and "Skipped lines" not in out


def test_export_counts_in_words_and_its_help_names_html(tmp_path, capsys):
    db = tmp_path / "arbor.db"
    store = open_store(db)
    session = store.sessions.create("one")
    branch = store.branches.create(session.id)
    store.entries.append_messages(branch.id, [{"role": "user", "content": "hello"}])
    store.close()
    assert cli.main(["export", "one", "--db", str(db), "-o", str(tmp_path / "one.md")]) == 0
    assert "wrote 1 entry to" in capsys.readouterr().err
    assert cli.main(["export", "one", "--db", str(db), "--format", "pi",
                     "-o", str(tmp_path / "one.jsonl")]) == 0
    assert "wrote 2 lines to" in capsys.readouterr().err
    try:
        cli.main(["export", "--help"])
    except SystemExit:
        pass
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Markdown, JSON or one self-contained HTML page" in help_text
    assert "html: a page to read in a browser" in help_text


# ----------------------------------------------------------------- the app
async def test_the_sessions_pane_and_the_status_line_count_the_same_sessions(demo_db):
    """A sub-agent listed under its session (opened) is part of it, in both counts."""
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("right")          # its sub-agent listed under it
        await settle(pilot)
        pane = app.sessions_pane
        assert len(pane.rows) == len(app.sessions)   # every row listed, the sub-agent too
        families = sum(1 for row in pane.rows if not row.depth)
        assert families < len(pane.rows)
        assert f"[{families}]" in pane._border_title.plain
        assert f"{families} sessions" in str(app.query_one("#status").render())


async def test_the_position_counter_counts_what_j_moves_over(demo_db):
    """j moves by message; a message of several entries (a reply and its tool results)
    shows the entries it covers, of the branch's entries."""
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        app.set_focus(app.messages_pane)
        pane = app.messages_pane
        await pilot.press("home")
        seen = []
        for _ in range(pane.count):
            first, last = pane._span(pane.cursor)
            seen.append((first, last, pane._border_subtitle.plain))
            await pilot.press("j")
            if pane._span(pane.cursor)[0] == first:
                break
        several = [(f, l, s) for f, l, s in seen if l > f]
        single = [(f, l, s) for f, l, s in seen if l == f]
        assert several and single
        for first, last, text in several:
            assert text == f"entries {first + 1}–{last + 1} of {pane.count}"
        for first, _, text in single:
            assert text == f"entry {first + 1} of {pane.count}"
        # j went from each message to the next: the entries are covered once, in order
        assert [f for f, _, _ in seen] == sorted({f for f, _, _ in seen})
        assert all(seen[i][1] + 1 == seen[i + 1][0] for i in range(len(seen) - 1))
