"""`O` in the app (issue 31): open the highlighted branch in another agent, picked from those
arbor writes sessions for, the one that wrote the branch first. The same core path as
`arbor resume --in` (core/handoff); then, as `o` does, the app is suspended (replaced by a
no-op here: a headless test has no terminal to hand over), the fake agent on PATH carries
the session on, and the app shows what it added when it comes back."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text

from conftest import open_fixed, settle, wait_until
from core.demo import DEMO_NOW
from test_tui_keys import LOGIN, LONG, SIZE, choose_session, make_app
from test_tui_open_in_agent import agents, said, wait_for_return  # noqa: F401  (a fixture)
from tui.app import ArborApp
from tui.components.agent_picker import AgentPicker
from tui.components.confirm_dialog import ConfirmDialog

RELEASE = "Write release notes for 2.4"


async def open_picker(pilot, session: str) -> AgentPicker:
    await choose_session(pilot, session)
    await pilot.press("tab")            # the branches pane
    await pilot.press("O")
    await settle(pilot)
    assert isinstance(pilot.app.screen, AgentPicker)
    return pilot.app.screen


def choices(picker: AgentPicker) -> list[str]:
    return [c.source for c in picker.choices]


async def test_O_offers_the_agent_that_wrote_the_branch_first_and_hands_it_to_the_one_picked(
        demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = await open_picker(pilot, LOGIN)
        original = app.session_id
        branch = app.branches_pane.highlighted
        # every agent arbor writes, the one that wrote it first (core/handoff/targets.py)
        assert choices(picker) == ["claude_code", "codex", "pi", "gemini", "qwen", "copilot",
                                   "opencode", "droid", "kimi"]
        assert [c.wrote_it for c in picker.choices][:4] == [True, False, False, False]
        await pilot.press("down", "enter")                      # Codex
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert agents["suspended"] == [True]
        assert call["name"] == "codex" and call["argv"][0] == "resume"
        new = app.store.sessions.by_uid(call["argv"][1])
        assert new is not None and new.source == "codex"
        # nested under the original, a fork across agents, with where it came from
        assert new.id in [child.id for child in app.store.sessions.children(original)]
        handoff = new.metadata["handoff"]
        assert handoff["agent"] == "claude_code" and handoff["branchId"] == branch.id
        # back in the app: the new session, and what the agent added
        assert app.session_id == new.id
        assert "Back from Codex: 2 new messages." in said(app)
        assert "From Claude Code:" in said(app)
        # u undoes arbor's side of the hand-off (the copy is archived), as for arbor resume --in
        await pilot.press("u")
        await settle(pilot)
        assert "Undid: hand-off to Codex." in said(app)
        assert not app.store.sessions.get(new.id).is_active


async def test_O_then_the_writer_itself_is_o(demo_db, agents):
    """The agent that wrote the branch, picked without masking: `o`'s own resume."""
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_picker(pilot, RELEASE)
        await pilot.press("enter")                              # pi, which wrote it
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert call["name"] == "pi"
        new = app.store.sessions.get(app.session_id)
        assert "handoff" not in (new.metadata or {})            # a resume, not a hand-off


async def test_r_in_the_picker_masks_secrets_in_what_is_written(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = await open_picker(pilot, RELEASE)
        assert "[ ] Mask secrets" in picker.query_one("#agent-redact").render().plain
        await pilot.press("r")
        assert picker.redact
        assert "[x] Mask secrets" in picker.query_one("#agent-redact").render().plain
        await pilot.press("down", "enter")                      # Claude Code, masked
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert call["name"] == "claude"
        # the redaction ran (the demo has no secret: the note says so), on the hand-off
        assert "No secrets found to mask." in said(app)
        assert app.store.sessions.by_uid(call["argv"][1]).metadata["handoff"]["agent"] == "pi"


async def test_escape_in_the_picker_writes_nothing(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_picker(pilot, LOGIN)
        sessions = len(app.store.sessions.list(include_archived=True))
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, AgentPicker)
        assert agents["calls"]() == []
        assert len(app.store.sessions.list(include_archived=True)) == sessions


async def test_a_branch_too_large_for_the_agent_is_offered_compacted_first(demo_db, agents,
                                                                          monkeypatch):
    monkeypatch.setenv("ARBOR_HANDOFF_CONTEXT", "2000")
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_picker(pilot, LONG)                          # 3,000 messages, arbor's own
        await pilot.press("down", "down", "enter")              # pi
        assert await wait_until(pilot, lambda: isinstance(app.screen, ConfirmDialog))
        await settle(pilot)
        offer = app.screen.question.plain
        assert "more than pi can load (about 2,000)" in offer
        assert "Summarises" in offer and "Tokens (estimate):" in offer   # c's preview
        assert agents["calls"]() == []                          # nothing written yet
        await pilot.press("y")
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        written = [json.loads(line) for line in Path(call["argv"][1]).read_text().splitlines()]
        # the branch's own compaction, and the one made for pi's context
        assert [line["type"] for line in written].count("compaction") == 2
        assert "Compacted for pi's context" in said(app)


async def test_O_on_an_empty_branch_says_there_is_nothing(demo_db, agents):
    from core import open_store

    store = open_store(demo_db)
    session = store.sessions.create("Nothing yet")
    store.branches.create(session.id, name="empty")
    store.close()
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, "Nothing yet")
        await pilot.press("tab", "O")
        await settle(pilot)
        assert not isinstance(app.screen, AgentPicker)
        assert "nothing to open in an agent" in said(app)


# ------------------------------------------------------------------ the picture
def test_the_picker(snap_compare, demo_db, tmp_path, monkeypatch):
    """No agent on PATH (each says so), Claude Code first (it wrote the branch), secrets
    masked."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-agents"))
    app = ArborApp(open_fixed(demo_db), clock=lambda: DEMO_NOW, poll_interval=None,
                   store_label=demo_db.name)

    async def run_before(pilot) -> None:
        await settle(pilot)
        await open_picker(pilot, LOGIN)
        await pilot.press("down", "r")
        await settle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_the_picker_title_names_the_entry_it_opens_up_to():
    from tui.components.agent_picker import what_text

    assert what_text("main", None).plain == "main"
    assert what_text("main", "3f2a9c1d77").plain == "main up to 3f2a9c1d"
    assert isinstance(what_text("[b]x[/b]", None), Text)
