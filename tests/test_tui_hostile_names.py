"""Issue 27, part 1: names hold escape sequences and markup, and every screen shows them
literally (see tests/hostile_names.py for the store and the walk).

The headless walk (Pilot) opens every pane, screen and dialog on the hostile store; after
each step the app still runs, no text of the data went through a markup parser, the full
redraw the terminal would get holds none of the data's sequences, and the names are on the
screen as text (`SESS␛[1;31m[/x]`). The same walk in a real terminal is in
test_tui_hostile_terminal.py, which also walks a plain-named copy of the store (so a step
that fails here on the hostile store is the names' doing, not the walk's).
"""

from __future__ import annotations

import pytest

from conftest import open_fixed
from core.demo import DEMO_NOW
from hostile_names import (STEPS, MarkupGuard, build_hostile_names_store, expected, hostile,
                           on_screen, plain, rendered, sequences_in)
from tui.app import ArborApp


@pytest.fixture
def no_agents(tmp_path, monkeypatch):
    """`o` with no agent on PATH, and agents' folders in tmp_path (the hand-over writes one)."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


async def settle(app, pilot) -> None:
    for _ in range(60):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if not getattr(app, "busy", False) and not any(
                not worker.is_finished for worker in app.workers):
            break
    await pilot.pause(0.05)


async def press(pilot, keys: tuple[str, ...]) -> None:
    for key in keys:
        if key.startswith("type:"):
            await pilot.press(*key[5:])
        else:
            await pilot.press(key)


async def walk(path, name, monkeypatch) -> list[str]:
    """Every step of the walk; what went wrong, one line a fault."""
    guard = MarkupGuard(monkeypatch)
    faults: list[str] = []
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        for step, keys, shows in STEPS:
            await press(pilot, keys)
            await settle(app, pilot)
            if app.return_code is not None or not app.is_running:
                faults.append(f"{step}: the app ended ({app.return_code})")
                break
            text, raw = rendered(app)
            found = {k: n for k, n in sequences_in(raw).items() if n}
            if found:
                faults.append(f"{step}: the terminal got the data's {found}")
            wrong = [want for want in expected(shows, name) if not on_screen(want, text)]
            if wrong:
                faults.append(f"{step}: not as expected: {wrong}\n{text}")
            for markup, where in guard.parsed:
                faults.append(f"{step}: parsed as markup: {markup!r}\n{where}")
            guard.parsed.clear()
            app.clear_notifications()   # (each step sees its own)
    return faults


async def test_every_screen_shows_hostile_names_literally(tmp_path, no_agents, monkeypatch):
    path = build_hostile_names_store(tmp_path / "names.db")
    faults = await walk(path, hostile, monkeypatch)
    assert not faults, "\n\n".join(faults)


PASTED = ("pasted \x1b]52;c;SEFDS0VE\x07 \x1b[2J \x1b]8;;https://evil.example/osc8\x1b\\l"
          "\x1b]8;;\x1b\\ \u202eend")


@pytest.mark.parametrize("opens, field", [
    (("R",), "#prompt-input"), (("slash",), "Input"), (("tab", "ctrl+f"), "#prompt-input"),
    (("tab", "c"), "#compact-summary"), (("tab", "r"), "#rollback-summary"),
    (("ctrl+p", *"Import agent", "enter"), "#import-paths")])
async def test_what_is_pasted_into_a_field_is_shown_not_sent(tmp_path, opens, field):
    """Textual's Input and TextArea draw what they hold as it is: an ESC pasted into a
    field (a name copied from somewhere, say) went to the terminal."""
    from textual import events

    path = build_hostile_names_store(tmp_path / "names.db", name=plain)
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await press(pilot, opens)
        await settle(app, pilot)
        focused = app.screen.query_one(field)
        focused.focus()
        await pilot.pause()
        app.post_message(events.Paste(PASTED))   # (as the terminal's paste arrives)
        await settle(app, pilot)
        text, raw = rendered(app)
        for sequence in (b"\x1b]52;", b"\x1b]8;", b"\x1b[2J", "\u202e".encode()):
            assert sequence not in raw, (field, sequence)
        assert "␛[2J" in text, (field, text)
        held = focused.text if hasattr(focused, "text") else focused.value
        assert ("pasted ␛]52;c;SEFDS0VE␇ ␛[2J ␛]8;;https://evil.example/osc8␛\\l"
                "␛]8;;␛\\ \\u202eend") in held, (field, held)


async def test_a_name_left_as_it_was_is_kept_as_it_was(tmp_path):
    """The rename and label fields show a name with its controls made visible (`␛`);
    enter without an edit keeps the name as it is, not as it was shown (it was renamed to
    what the field showed), and does nothing."""
    from core import open_store
    from hostile_names import TAGS

    path = build_hostile_names_store(tmp_path / "names.db")
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for keys in (("R",), ("tab", "l"), ("R",), ("tab", "l")):   # session, branch, entry
            await press(pilot, keys)
            await settle(app, pilot)
            await press(pilot, ("enter",))
            await settle(app, pilot)
        await press(pilot, ("u",))          # and nothing was done
        await settle(app, pilot)
        assert [n.message for n in app._notifications][-1].startswith("Nothing to undo")
    store = open_store(path, create=False)
    try:
        session = next(s for s in store.sessions.list() if s.name.startswith("SESS"))
        assert session.name == hostile(TAGS["session"])
        branches = store.branches.of_session(session.id)
        assert {b.name for b in branches} == {hostile(TAGS["branch"]), hostile(TAGS["fork"])}
        assert set(store.annotations.branch_labels(session.id).values()) == {
            hostile(TAGS["branch_label"]), hostile(TAGS["branch_label"]) + "-2"}
        assert set(store.annotations.entry_labels(session.id).values()) == {hostile(TAGS["entry_label"])}
    finally:
        store.close()


def test_the_hand_over_lines_show_names_literally(tmp_path, capsys):
    """`o` hands the terminal to the agent and says what it runs: the summary names the
    branch and the file, the command the session's folder. Printed as they were, their
    escapes reached the terminal the agent was about to use."""
    from core.agents import ResumePlan
    from tui.actions.agent_handoff import run_in_terminal

    folder = tmp_path / "w\x1b[2J\x1b]52;c;SEFDS0VE\x07\u202e"
    folder.mkdir()
    plan = ResumePlan(agent="Claude Code", argv=["true"], cwd=str(folder),
                      summary="Wrote \x1b]8;;https://evil.example/osc8\x1b\\branch\x1b]8;;\x1b\\")
    assert run_in_terminal(plan) == 0
    said = capsys.readouterr().err
    assert "\x1b" not in said and "\u202e" not in said and "\x07" not in said
    # the command as a shell reads it back (core/util/shell_words: escapes, not the bytes)
    assert "running cd $'" in said and "w\\x1b[2J\\x1b]52;c;SEFDS0VE\\x07\\xe2\\x80\\xae'" in said
    assert "Wrote ␛]8;;https://evil.example/osc8␛\\branch" in said


@pytest.mark.parametrize("empty", [False, True])
async def test_a_store_in_a_folder_with_a_hostile_name(tmp_path, empty, monkeypatch):
    """The status line and the empty store's page show the store's path: a folder name
    holding escapes and markup (a checkout of someone else's repository) shows literally."""
    from core import open_store

    folder = tmp_path / "st\x1b[2J\x1b]52;c;SEFDS0VE\x07[bold]x[@click=app.quit]\u202e"
    folder.mkdir()
    if empty:
        open_store(folder / "names.db").close()
        path = folder / "names.db"
    else:
        path = build_hostile_names_store(folder / "names.db", name=plain)
    guard = MarkupGuard(monkeypatch)
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None,
                   store_label=str(path))
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(app, pilot)
        text, raw = rendered(app)
        assert "st␛[2J␛]52;c;SEFDS0VE␇[bold]x[@click=app.quit]\\u202e" in text, text
        assert b"\x1b]52;" not in raw and b"\x1b[2J" not in raw and "\u202e".encode() not in raw
        assert not guard.parsed and app.return_code is None


async def test_long_paths_in_the_files_changed_list_keep_their_ends_and_columns(tmp_path):
    """Two files in a folder with a long name: each row shows where its path ends (the file
    name), and what A and B did to it stays in sight (the path column took 70 cells and
    pushed B's column out of the dialog)."""
    path = build_hostile_names_store(tmp_path / "names.db")
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for keys in (("tab", "d"), ("enter",), ("f",)):
            await press(pilot, keys)
            await settle(app, pilot)
        text, _ = rendered(app)
        rows = [line for line in text.splitlines() if "PATH" in line and "—" in line]
        assert len(rows) == 2, text
        assert any("/main.py" in row for row in rows) and any("/fork.py" in row for row in rows), text
        assert all(row.count("+1 written") == 1 and "—" in row for row in rows), rows
