"""`o` in the app: the highlighted branch (or the branch up to the highlighted message) goes to
the agent that wrote it. Fake agents on PATH record how they were started and carry the
session on; the app's suspend is replaced by a no-op (a headless test has no terminal to hand
over), so the agent really runs, and the app must show what it added when it comes back."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

import fake_agent
from conftest import settle, wait_until
from test_tui_keys import LOGIN, LONG, SIZE, choose_session, make_app
from tui.app import ArborApp

RELEASE = "Write release notes for 2.4"
PAYMENTS = "Refactor payment module"


@pytest.fixture
def agents(tmp_path, monkeypatch):
    """Fake agents on PATH, the agents' homes and the demo's working directories under tmp."""
    home = tmp_path / "home"
    for folder in ("src/webapp", "src/shop", "src/cli-tool"):
        (home / folder).mkdir(parents=True)
    bin_dir = fake_agent.install(tmp_path / "bin")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    monkeypatch.setenv("FAKE_AGENT_APPEND", "1")
    suspended = []

    @contextlib.contextmanager
    def suspend(self):
        suspended.append(True)
        yield

    monkeypatch.setattr(ArborApp, "suspend", suspend)

    def calls() -> list[dict]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return {"home": home, "calls": calls, "suspended": suspended, "tmp": tmp_path}


def said(app) -> str:
    return "\n".join(n.message for n in app._notifications)


async def wait_for_return(pilot, agents, count: int = 1) -> None:
    assert await wait_until(pilot, lambda: len(agents["calls"]()) >= count
                     and "Back from" in said(pilot.app))
    await settle(pilot)


async def test_o_on_a_branch_runs_its_agent_and_shows_what_it_added(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab")
        branch = app.branches_pane.highlighted
        await pilot.press("o")
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert agents["suspended"] == [True]
        assert call["name"] == "claude" and call["argv"][0] == "--resume"
        assert call["cwd"] == call["pwd"] == str(agents["home"] / "src" / "webapp")
        new = app.store.sessions.by_uid(call["argv"][1])
        # named after the branch (its label in the demo), as Claude Code's picker lists it
        assert new is not None and new.session_name == f"{LOGIN} · waitForURL variant"
        # back in the app: the new session is shown with what the agent added
        assert app.session_id == new.id
        assert "Back from Claude Code: 2 new messages." in said(app)
        texts = [str(e.message.get("content")) for e in app.store.paths.entries(app.branch.head_seq)
                 if e.message]
        assert texts[-2:] == ["Carried on in the agent", "[{'type': 'text', 'text': \"The agent's reply\"}]"]
        # the branch itself, before the agent's lines, is the one that was highlighted
        # (its branch summary is a user message in Claude Code)
        path = app.store.paths.entries(branch.head_seq)
        source = [e for e in path if e.message or e.type == "branch_summary"]
        assert len(texts) == len(source) + 2 and any(e.type == "branch_summary" for e in path)


async def test_a_second_o_while_the_first_is_under_way_is_refused(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        import threading

        from tui.actions.agent_handoff import GROUP

        release = threading.Event()
        app.run_worker(lambda: release.wait(10), thread=True, group=GROUP)   # one under way
        await pilot.press("tab", "o")
        assert "Still opening the last one" in said(app)
        release.set()
        await settle(pilot)
        assert agents["calls"]() == []
        await pilot.press("o")                   # once it is done, o works again
        await wait_for_return(pilot, agents)
        assert len(agents["calls"]()) == 1


async def test_o_on_a_message_carries_on_from_that_message(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, RELEASE)
        app.messages_pane.focus()
        await pilot.press("up", "up")
        entry = app.messages_pane.highlighted.entry
        assert entry.seq != app.branch.head_seq
        await pilot.press("o")
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert call["name"] == "pi" and call["argv"][0] == "--session"
        written = [json.loads(line) for line in Path(call["argv"][1]).read_text().splitlines()]
        ids = [line.get("id") for line in written]
        # the branch up to the message, its name (pi's session_info), then what the agent added
        after = written[ids.index(entry.id) + 1:]
        assert [line["type"] for line in after] == ["session_info", "message", "message"]
        assert after[0]["name"] == f"{RELEASE} · main, up to {entry.id}"
        assert [line["id"] for line in after[1:]] == ["fa4e0001", "fa4e0002"]
        assert "Back from pi: 2 new messages." in said(app)


async def test_o_on_a_codex_session_without_a_rollout_writes_one(demo_db, agents):
    """The demo's Codex session has no rollout of its own: a new one is written, and what the
    agent adds to it comes back."""
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, PAYMENTS)
        await pilot.press("tab", "o")
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert call["name"] == "codex" and call["argv"][0] == "resume"
        assert call["cwd"] == str(agents["home"] / "src" / "shop")
        assert "Back from Codex: 2 new messages." in said(app)


async def test_o_resumes_a_codex_rollout_itself_when_the_branch_ends_there(demo_db, agents):
    from agent_logs import codex_session
    from core import open_store
    from core.importing import import_paths

    log = codex_session(str(agents["home"] / "src" / "shop"))
    rollout = log.write(agents["tmp"] / "codex")
    with open_store(demo_db, create=False) as store:
        import_paths(store, [rollout])
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, "Add a --dry-run flag to the deploy script")
        before = app.branch.message_count
        await pilot.press("tab", "o")
        await wait_for_return(pilot, agents)
        [call] = agents["calls"]()
        assert call["argv"] == ["resume", log.session_id]
        assert len(list((agents["tmp"] / "codex").rglob("*.jsonl"))) == 1   # nothing written
        assert "Back from Codex: 2 new messages." in said(app)
        assert app.store.sessions.by_uid(log.session_id).id == app.session_id
        assert app.branch.message_count == before + 2


async def test_an_agent_that_is_not_installed_puts_the_command_on_the_clipboard(demo_db, agents,
                                                                              monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab", "o")
        assert await wait_until(pilot, lambda: "not on PATH" in said(app))
        await settle(pilot)
        assert agents["calls"]() == [] and agents["suspended"] == []
        command = app.clipboard
        assert command.startswith(f"cd {agents['home'] / 'src' / 'webapp'} && claude --resume ")
        assert "Claude is not on PATH" in said(app) or "claude is not on PATH" in said(app)
        assert command in said(app)


async def test_a_terminal_that_cannot_be_handed_over(demo_db, agents, monkeypatch):
    """Headless Textual cannot suspend: the command is shown and copied instead."""
    monkeypatch.undo()
    for name, value in (("HOME", agents["home"]), ("PATH", f"{agents['tmp'] / 'bin'}:/usr/bin:/bin"),
                        ("CLAUDE_CONFIG_DIR", agents["tmp"] / "claude"),
                        ("FAKE_AGENT_LOG", agents["tmp"] / "calls.jsonl")):
        monkeypatch.setenv(name, str(value))
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        await pilot.press("tab", "o")
        assert await wait_until(pilot, lambda: "cannot be handed over" in said(app))
        assert agents["calls"]() == []
        assert "claude --resume" in app.clipboard


async def test_o_on_a_session_arbor_owns_makes_the_branch_current(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LONG)
        app.messages_pane.focus()
        await pilot.press("up")
        entry = app.messages_pane.highlighted.entry
        await pilot.press("o")
        assert await wait_until(pilot, lambda: "SessionManager.continue_recent" in app.clipboard)
        await settle(pilot)
        current = app.store.branches.current(app.session_id)
        assert current.head_seq == entry.seq and app.branch.id == current.id
        assert agents["calls"]() == []
        assert "on the clipboard" in said(app)


async def test_o_where_no_agent_can_resume(demo_db, agents):
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, "Trip planner agent (LangGraph)")
        await pilot.press("tab", "o")
        assert await wait_until(pilot, lambda: "LangGraph threads have no agent command" in said(app))
        assert agents["calls"]() == []


def test_o_is_in_the_palette_and_the_footer_of_both_panes():
    from tui.components.branches_pane import BranchesPane
    from tui.components.messages_pane import MessagesPane
    from tui.palette import COMMANDS

    assert ("Open in agent", "o") == next((c[0], c[1]) for c in COMMANDS if c[2] == "open_in_agent")
    for pane in (BranchesPane, MessagesPane):
        binding = next(b for b in pane.BINDINGS if b.key == "o")
        assert binding.action == "app.open_in_agent" and binding.show


# ------------------------------------------- what the agent added, with follow on
def agent_file(call: dict, tmp: Path) -> Path:
    """The file the fake agent appended to."""
    if call["name"] == "pi":
        return Path(call["argv"][1])
    pattern = f"{call['argv'][1]}.jsonl" if call["name"] == "claude" else \
        f"rollout-*-{call['argv'][1]}.jsonl"
    [path] = (tmp / call["name"]).rglob(pattern)
    return path


@pytest.fixture
def followed(agents, monkeypatch):
    """The app follows the agents' folders (as `arbor` does by default), and the stand-in for
    App.suspend returns only once the follower has imported all the agent wrote: a real
    agent runs for as long as a person types, and the follower reads its lines as they come,
    long before the agent exits."""
    for folder in ("claude/projects", "codex/sessions", "pi/sessions"):
        (agents["tmp"] / folder).mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def suspend(self):
        agents["suspended"].append(True)
        yield
        import time

        path = agent_file(agents["calls"]()[-1], agents["tmp"])
        size = path.stat().st_size
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            stamps = self.store.imports.stamps()
            if any(str(path) in key and stamp[2] == size for key, stamp in stamps.items()):
                return
            time.sleep(0.05)
        raise AssertionError(f"the follower did not import {path}")

    monkeypatch.setattr(ArborApp, "suspend", suspend)
    return agents


@pytest.mark.parametrize("name, agent, append, added", [
    (LOGIN, "Claude Code", "quit", 5),
    (RELEASE, "pi", "1", 2),
    (PAYMENTS, "Codex", "1", 2)])
@pytest.mark.parametrize("status", [0, 1])
async def test_what_the_agent_wrote_is_counted_when_the_follower_read_it_first(
        demo_db, followed, monkeypatch, name, agent, append, added, status):
    """The report: back from Claude Code, arbor said it added nothing, while Claude had
    appended 11 lines (5 of them messages) that the follower had already imported."""
    monkeypatch.setenv("FAKE_AGENT_APPEND", append)
    monkeypatch.setenv("FAKE_AGENT_EXIT", str(status))
    app = make_app(demo_db, follow={"home": followed["home"]})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert await wait_until(pilot, lambda: app.live_follow.mode in ("notify", "polling"))
        await choose_session(pilot, name)
        await pilot.press("tab", "o")
        await wait_for_return(pilot, followed)
        text = said(app)
        assert f"Back from {agent}: {added} new messages." in text, text
        executable = {"Claude Code": "claude", "pi": "pi", "Codex": "codex"}[agent]
        assert (f"({executable} exited with status 1.)" in text) == bool(status)
        # the session shown is the one the agent carried on, its lines at the end of the branch
        prompt = "Please say hello" if append == "quit" else "Carried on in the agent"
        from core.model.entries import content_text

        texts = [content_text(e.message.get("content")) for e in
                 app.store.paths.entries(app.branch.head_seq) if e.message]
        assert prompt in texts[-added:][:3]


async def test_o_again_on_the_unchanged_branch_resumes_the_same_session(demo_db, agents, monkeypatch):
    """Back from an agent that was opened and quit (it wrote its mode lines, nothing of the
    conversation), `o` on the same branch runs the agent on the session written the first
    time: no identical copy in the agent's picker or in arbor."""
    monkeypatch.setenv("FAKE_AGENT_APPEND", "opened")
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, LOGIN)
        sessions = len(app.store.sessions.list())
        await pilot.press("tab")
        branch = app.branches_pane.highlighted
        await pilot.press("o")
        await wait_for_return(pilot, agents)
        assert "Back from Claude Code; it added nothing to the session." in said(app)
        assert len(app.store.sessions.list()) == sessions + 1
        await choose_session(pilot, LOGIN)
        await pilot.press("tab")
        app.branches_pane.focus()
        assert app.branches_pane.highlighted.id == branch.id
        await pilot.press("o")
        await wait_for_return(pilot, agents, count=2)
        first, second = agents["calls"]()
        assert first["argv"] == second["argv"]
        assert len(app.store.sessions.list()) == sessions + 1
        assert len(list((agents["tmp"] / "claude").rglob("*.jsonl"))) == 1


async def test_o_on_the_session_shown_on_return_carries_it_on(demo_db, agents):
    """Back from Claude Code, the app shows the session it carried on; `o` there resumes that
    same session (its branch ends where the file ends), not a copy of a copy."""
    from agent_logs import claude_session
    from core import open_store
    from core.importing import import_paths

    log = claude_session(str(agents["home"] / "src" / "webapp"))
    with open_store(demo_db, create=False) as store:
        import_paths(store, [log.write(agents["tmp"] / "logs")])
    app = make_app(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await choose_session(pilot, "Flaky parser test")
        await pilot.press("tab", "o")
        await wait_for_return(pilot, agents)
        [first] = agents["calls"]()
        shown = app.store.sessions.get(app.session_id)
        assert shown.uid == first["argv"][1]
        assert shown.session_name == "Flaky parser test · Instead, run the test 50 times first."
        app.branches_pane.focus()
        await pilot.press("o")
        await wait_for_return(pilot, agents, count=2)
        assert agents["calls"]()[1]["argv"] == first["argv"]
        assert len(list((agents["tmp"] / "claude").rglob("*.jsonl"))) == 1
        assert await wait_until(pilot, lambda: said(app).count("Back from Claude Code: 2 new") == 2)
