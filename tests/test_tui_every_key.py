"""Every key of the app on every kind of row either acts or says, in one short notification,
why it does not apply there (issue 26, item 7). `m` on the "compacted context" row did
nothing, and the name typed next went to the app as keys (its `b` started a branch).

The sweep: for each kind of row (a session, a branch, an empty branch, a message, the
compacted context, a branch summary, a sub-agent's row, a message of a sub-agent shown in
place, an entry of the entry tree) and each key of the help screen, the key is pressed
once on that row; something must happen: a screen opens, a notification says something,
or what the app shows changes (a cursor, a fold, a view, a filter, the store)."""

from __future__ import annotations

import shutil

import pytest

from conftest import open_fixed, settle
from test_tui_keys import type_text
from core.demo import DEMO_NOW, build_demo
from core.model.entries import BRANCH_SUMMARY
from tui.app import ArborApp

SIZE = (120, 40)
LOGIN = "Fix flaky login test"
LONG = "Migrate orders table to new schema"
EMPTY = "A session with an empty branch"

# the keys of the help screen and the README's key table that act on what is highlighted
# (moving keys, tab, q and ctrl+p are left out: they always act, or quit)
KEYS = ["b", "r", "l", "m", "c", "enter", "a", "R", "u", "A", "y", "p", "o", "O", "t", "f",
        "space", "n", "N", "T", "v", "H", "d", "F", "ctrl+f", "slash", "dollar_sign",
        "question_mark"]


@pytest.fixture(scope="module")
def demo_path(tmp_path_factory):
    path = build_demo(tmp_path_factory.mktemp("every-key") / "demo.db")
    from core import open_store

    store = open_store(path)
    session = store.sessions.create(EMPTY)
    store.branches.create(session.id, name="nothing yet")
    store.close()
    return path


def app_on(demo_path, tmp_path) -> ArborApp:
    """The app on a copy of the module's demo store (each test changes its own)."""
    path = tmp_path / "demo.db"
    shutil.copy(demo_path, path)
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None,
                    store_label="demo.db")


async def reset(pilot) -> None:
    """Back to the plain browser: no screen over it, the default views."""
    app = pilot.app
    while len(app.screen_stack) > 1:
        app.pop_screen()
        await settle(pilot)
    if app.tree_mode:
        app.action_toggle_tree()
    if app.raw:
        app.action_toggle_view()
    if not app.messages_pane.show_thinking:
        app.messages_pane.set_show_thinking(True)
    if app.show_archived:
        app.action_toggle_archived()
    if app.sessions_pane.project is not None:
        app.sessions_pane.action_project_filter()
    while app._message_filter != "everything":
        app.action_cycle_message_filter()
    pane = app.messages_pane
    pane.opened.clear()
    pane.expanded.clear()
    await settle(pilot)


async def on_session(pilot, name: str) -> None:
    app = pilot.app
    index = next(i for i, row in enumerate(app.sessions_pane.rows) if row.session.name == name)
    app.set_focus(app.sessions_pane)
    app.sessions_pane.move_cursor(index)
    await settle(pilot)


async def on_message(pilot, session: str, where) -> None:
    """The messages pane of the session's shown branch, the cursor on the first row
    `where(item)` holds for."""
    await on_session(pilot, session)
    app = pilot.app
    pane = app.messages_pane
    app.set_focus(pane)
    index = next(i for i in range(pane.count) if where(pane.source.item(i)))
    pane.move_cursor(index)
    await settle(pilot)


async def ctx_session(pilot):
    await on_session(pilot, LOGIN)


async def ctx_plain_session(pilot):
    await on_session(pilot, "Refactor payment module")     # (no sub-agents under it)


async def ctx_branch(pilot):
    await on_session(pilot, LOGIN)
    pilot.app.set_focus(pilot.app.branches_pane)
    await settle(pilot)


async def ctx_empty_branch(pilot):
    await on_session(pilot, EMPTY)
    pilot.app.set_focus(pilot.app.branches_pane)
    await settle(pilot)


async def ctx_empty_messages(pilot):
    await on_session(pilot, EMPTY)
    pilot.app.set_focus(pilot.app.messages_pane)
    await settle(pilot)


async def ctx_message(pilot):
    await on_message(pilot, LOGIN, lambda item: item.kind == "entry" and
                     (item.entry.message or {}).get("role") == "user")


async def ctx_compacted(pilot):
    await on_message(pilot, LONG, lambda item: item.kind == "summary")


async def ctx_branch_summary(pilot):
    await on_message(pilot, LOGIN, lambda item: item.entry.type == BRANCH_SUMMARY)


async def ctx_subagent(pilot):
    await on_message(pilot, LOGIN, lambda item: item.kind == "spawn")


async def ctx_subagent_message(pilot):
    await ctx_subagent(pilot)
    pane = pilot.app.messages_pane
    pane.action_toggle_open()          # its thread, in place
    pane.move_cursor(pane.cursor + 1)
    await settle(pilot)
    assert pane.source.item(pane.cursor).nest == 1


async def ctx_entry_tree(pilot):
    await on_session(pilot, LOGIN)
    app = pilot.app
    app.action_toggle_tree()
    app.set_focus(app.entries_pane)
    await settle(pilot)
    app.entries_pane.move_cursor(3)
    await settle(pilot)


CONTEXTS = {
    "a session": ctx_session,
    "a session without sub-agents": ctx_plain_session,
    "a branch": ctx_branch,
    "an empty branch": ctx_empty_branch,
    "the messages of an empty branch": ctx_empty_messages,
    "a message": ctx_message,
    "the compacted context": ctx_compacted,
    "a branch summary": ctx_branch_summary,
    "a sub-agent's row": ctx_subagent,
    "a sub-agent's message shown in place": ctx_subagent_message,
    "an entry of the entry tree": ctx_entry_tree,
}


def state(app) -> tuple:
    """What the user sees change when a key acts (besides screens and notifications)."""
    messages, entries, sessions = app.messages_pane, app.entries_pane, app.sessions_pane
    return (type(app.focused).__name__, app.raw, app.tree_mode, app.show_archived,
            app.session_id, app.branch.id if app.branch else None,
            sessions.cursor, tuple(sorted(sessions.opened)), sessions.project,
            app.branches_pane.cursor,
            messages.cursor, tuple(sorted(messages.expanded)), tuple(sorted(messages.opened)),
            messages.show_thinking, getattr(messages, "filter", None),
            entries.cursor, entries.mode, tuple(sorted(entries.folded)),
            tuple(sorted(entries.folded_runs)), entries.show_times,
            app.store.data_version(), app.clipboard)


@pytest.fixture
def agents_home(tmp_path, monkeypatch):
    """`o` writes the branch as the agent's session: in homes under tmp, no agent on PATH."""
    for name, folder in (("HOME", "home"), ("CLAUDE_CONFIG_DIR", "claude"), ("CODEX_HOME", "codex"),
                         ("PI_CODING_AGENT_DIR", "pi")):
        monkeypatch.setenv(name, str(tmp_path / folder))
    monkeypatch.setenv("PATH", str(tmp_path / "no-agents"))


@pytest.mark.parametrize("context", list(CONTEXTS))
async def test_every_key_acts_or_says_why_not(demo_path, tmp_path, agents_home, context):
    app = app_on(demo_path, tmp_path)
    said: list[str] = []
    notify = app.notify

    def recording(message, *args, **kwargs):
        said.append(str(message))
        return notify(message, *args, **kwargs)

    app.notify = recording
    silent = []
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for key in KEYS:
            await reset(pilot)
            await CONTEXTS[context](pilot)
            before, screens, notes = state(app), len(app.screen_stack), len(said)
            await pilot.press(key)
            await settle(pilot)
            acted = len(app.screen_stack) != screens or state(app) != before
            if not acted and len(said) == notes:
                silent.append(key)
            elif not acted:                              # why not: in one short notification
                assert len(said) == notes + 1 and len(said[-1]) <= 160, (key, said[notes:])
    assert silent == [], f"on {context}, these keys did nothing and said nothing: {silent}"


# ------------------------------------------------------------ what the keys do there
async def test_m_on_the_compacted_context_marks_it_and_the_name_goes_into_the_dialog(demo_path,
                                                                                     tmp_path):
    """The issue's case: the name typed after m became keys of the app (b: a branch)."""
    app = app_on(demo_path, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ctx_compacted(pilot)
        compaction = app.messages_pane.highlighted.entry
        branches = len(app.store.branches.of_session(app.session_id))
        await pilot.press("m")
        await settle(pilot)
        assert app.screen.id == "checkpoint-dialog"
        await type_text(pilot, "before batch 950")      # (a b among the keys)
        await pilot.press("enter")
        await settle(pilot)
        marks = [c for c in app.store.annotations.checkpoints_of_session(app.session_id)
                 if c.checkpoint_name == "before batch 950"]
        assert [c.entry_seq for c in marks] == [compaction.seq]
        assert len(app.store.branches.of_session(app.session_id)) == branches


async def test_a_label_on_the_compacted_context_shows_on_its_row(demo_path, tmp_path):
    app = app_on(demo_path, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ctx_compacted(pilot)
        await pilot.press("l", *"start", "enter")     # (the field had no label: typed over)
        await settle(pilot)
        pane = app.messages_pane
        assert "⚑ start" in pane.item_strips(pane.cursor)[0].text


async def test_r_m_and_o_in_the_entry_tree_take_its_highlighted_entry(demo_path, tmp_path,
                                                                       agents_home):
    app = app_on(demo_path, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ctx_entry_tree(pilot)
        entry = app.entries_pane.highlighted
        await pilot.press("r")
        await settle(pilot)
        dialog = app.screen
        assert dialog.targets[0].entry_seq == entry.seq           # offered first
        assert entry.id[:8] in dialog.targets[0].label.plain
        app.pop_screen()
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        assert app.screen.id == "checkpoint-dialog"
        await pilot.press("enter")
        await settle(pilot)
        assert entry.seq in [c.entry_seq for c in app.store.annotations.checkpoints_of_session(app.session_id)]
        calls = []
        import tui.actions.agent_handoff as handoff

        original = handoff.open_in_agent
        handoff.open_in_agent = lambda app_, session, branch, at: calls.append(at)
        try:
            await pilot.press("o")
            await settle(pilot)
        finally:
            handoff.open_in_agent = original
        assert calls == [entry.seq]


async def test_keys_of_the_panes_do_not_act_unseen_under_the_whole_message(demo_path, tmp_path):
    """f shows a message full screen: r, t, v… would act on the panes under it."""
    app = app_on(demo_path, tmp_path)
    said: list[str] = []
    notify = app.notify
    app.notify = lambda message, *a, **k: (said.append(str(message)), notify(message, *a, **k))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ctx_message(pilot)
        await pilot.press("f")
        await settle(pilot)
        whole = app.screen
        before = state(app)
        for key in ("r", "t", "v", "l"):
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is whole and state(app) == before
            assert said[-1] == f"{key} acts in the panes: escape goes back to them."
        await pilot.press("escape")
        await settle(pilot)
        assert len(app.screen_stack) == 1
