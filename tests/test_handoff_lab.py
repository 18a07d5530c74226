"""A branch handed to another agent resumes there (issue 31), for every ordered pair of the
agents arbor writes (the registry's: Claude Code, Codex, pi, Gemini CLI, Qwen Code, Copilot
CLI, opencode, droid, Kimi CLI; 72 pairs), with the real agents against
tests/fake_model_server.py:

1. the source agent runs a first prompt headless ("list the files": the fake model calls
   the source's shell tool, the agent runs it, the model answers);
2. arbor imports that session and hands the branch to the target (`prepare_handoff`);
3. the target resumes the written session headless with a new prompt, and the FIRST request
   it sends holds the branch in order: the prompt, the tool call under the TARGET's own
   shell tool with the target's arguments, its result, the answer, then the new prompt.

Opt-in, as tests/test_agent_lab.py: ARBOR_AGENT_NODE_MODULES (and ARBOR_AGENT_VENVS for
Kimi CLI) from tests/agent_lab/install_agents.sh; each agent runs in a temp HOME on
127.0.0.1 only. droid goes on with `droid exec --fork <id>` (its `-s` asks Factory's
servers for the session); Kimi CLI finds sessions only in the work folders its kimi.json
lists, so a hand-off to it starts from a folder it knows (as after running `kimi` there once).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "agent_lab"))

from fake_model_server import FakeModelServer, Reply, ToolCall, contains  # noqa: E402
from lab import new_lab, npm_bin, venv_bin  # noqa: E402
from test_agent_lab import assert_resumed, claude_env, codex_env, dialogue, pi_env  # noqa: E402
from core.handoff.targets import writable  # noqa: E402
from make_qwen import MODEL as QWEN_MODEL, qwen_env as _qwen_env, settings as qwen_settings  # noqa: E402
from make_gemini import MODEL as GEMINI_MODEL, gemini_env as _gemini_env, settings as gemini_settings  # noqa: E402
from make_droid import EXECUTE, MODEL as DROID_MODEL, configure as droid_configure, droid_env as _droid_env  # noqa: E402
from make_kimi import configure as kimi_configure, kimi_env as _kimi_env  # noqa: E402
from make_opencode import opencode_env as _opencode_env, write_config as opencode_config  # noqa: E402
from make_copilot import copilot_env  # noqa: E402

BINARIES = {"claude_code": ("claude", "@anthropic-ai/claude-code"),
            "codex": ("codex", "@openai/codex"), "pi": ("pi", "@mariozechner/pi-coding-agent"),
            "qwen": ("qwen", "@qwen-code/qwen-code"), "gemini": ("gemini", "@google/gemini-cli"),
            "droid": ("droid", "droid"), "kimi": ("kimi", "kimi-cli"),
            "opencode": ("opencode", "opencode-ai"), "copilot": ("copilot", "@github/copilot")}
# each agent's shell tool as its model calls it, and as a hand-off must write it
SHELL = {"claude_code": ("Bash", {"command": "ls"}), "codex": ("exec_command", {"cmd": "ls"}),
         "pi": ("bash", {"command": "ls"}), "qwen": ("run_shell_command", {"command": "ls"}),
         "gemini": ("run_shell_command", {"command": "ls"}), "droid": ("Execute", EXECUTE),
         "kimi": ("Shell", {"command": "ls"}), "opencode": ("bash", {"command": "ls"}),
         "copilot": ("bash", {"command": "ls", "description": "list files"})}
# droid's Execute carries a summary of the command, Copilot's bash a description: the
# description of the targets' own shell where they have one
DESCRIBED = {"claude_code": "description", "qwen": "description", "gemini": "description",
             "copilot": "description"}


def qwen_env(lab) -> dict:
    qwen_settings(lab.home)
    return _qwen_env(lab)


def gemini_env(lab) -> dict:
    gemini_settings(lab.home)
    return _gemini_env(lab)


def droid_env(lab) -> dict:
    droid_configure(lab)
    return _droid_env(lab)


def kimi_env(lab) -> dict:
    kimi_configure(lab)
    return _kimi_env(lab)


def opencode_env(lab) -> dict:
    opencode_config(lab)
    return _opencode_env(lab)


def kimi_knows(lab) -> None:
    """kimi.json naming the project, as Kimi CLI writes it when it first runs there."""
    known = lab.home / ".kimi" / "kimi.json"
    if not known.exists():
        known.parent.mkdir(parents=True, exist_ok=True)
        known.write_text(json.dumps({"work_dirs": [{"path": str(lab.project), "kaos": "local",
                                                    "last_session_id": None}]}))


def npm_or_venv(agent: str):
    return venv_bin("kimi", "kimi") if agent == "kimi" else npm_bin(BINARIES[agent][0])


ENV = {"claude_code": claude_env, "codex": codex_env, "pi": pi_env, "qwen": qwen_env,
       "gemini": gemini_env, "droid": droid_env, "kimi": kimi_env, "opencode": opencode_env,
       "copilot": copilot_env}
COPILOT = ["--allow-all-tools", "--disable-client-telemetry"]
PROMPT, NEW_PROMPT = "list the files", "what did you find?"
ANSWER = "There is one file: notes.txt."


def first_run(agent: str, lab) -> Path:
    """Run the agent's first prompt; returns the session file it wrote."""
    binary = str(npm_or_venv(agent))
    env = ENV[agent](lab)
    if agent == "claude_code":
        argv = [binary, "-p", PROMPT, "--allowedTools", "Bash"]
    elif agent == "codex":
        argv = [binary, "exec", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", PROMPT]
    elif agent == "qwen":
        argv = [binary, "-m", QWEN_MODEL, "--yolo", "-p", PROMPT]
    elif agent == "gemini":
        argv = [binary, "-m", GEMINI_MODEL, "--yolo", "-p", PROMPT]
    elif agent == "droid":
        argv = [binary, "exec", "-m", DROID_MODEL, PROMPT]
    elif agent == "kimi":
        argv = [binary, "--print", "-y", "-p", PROMPT]
    elif agent == "opencode":
        argv = [binary, "run", PROMPT]
    elif agent == "copilot":
        argv = [binary, *COPILOT, "-p", PROMPT]
    else:
        argv = [binary, "--model", "fake/fake-model", "-p", PROMPT]
    done = lab.run(argv, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    if agent == "opencode":     # (its sessions are in its database)
        return lab.home / ".local" / "share" / "opencode" / "opencode.db"
    folder = {"claude_code": lab.home / ".claude-config" / "projects",
              "codex": lab.home / ".codex" / "sessions",
              "pi": lab.home / ".pi" / "agent" / "sessions",
              "qwen": lab.home / ".qwen" / "projects",
              "gemini": lab.home / ".gemini" / "tmp",
              "droid": lab.home / ".factory" / "sessions",
              "kimi": lab.home / ".kimi" / "sessions",
              "copilot": lab.home / ".copilot" / "session-state"}[agent]
    files = [p for p in folder.rglob("*.jsonl") if "subagents" not in p.parts and
             (agent != "kimi" or p.name == "wire.jsonl")]
    assert len(files) == 1, files
    return files[0]


def resume_argv(agent: str, plan) -> list[str]:
    binary = str(npm_or_venv(agent))
    if agent == "claude_code":
        return [binary, "-p", NEW_PROMPT, "--resume", plan.native_id, "--allowedTools", "Bash"]
    if agent == "codex":
        return [binary, "exec", "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox", "resume", plan.native_id, NEW_PROMPT]
    if agent == "qwen":
        return [binary, "-m", QWEN_MODEL, "--yolo", "--resume", plan.native_id, "-p", NEW_PROMPT]
    if agent == "gemini":
        return [binary, "-m", GEMINI_MODEL, "--yolo", "--resume", plan.native_id, "-p", NEW_PROMPT]
    if agent == "droid":
        return [binary, "exec", "-m", DROID_MODEL, "--fork", plan.native_id, NEW_PROMPT]
    if agent == "kimi":
        return [binary, "--print", "-y", "-r", plan.native_id, "-p", NEW_PROMPT]
    if agent == "opencode":
        return [binary, "run", "--session", plan.native_id, NEW_PROMPT]
    if agent == "copilot":
        return [binary, *COPILOT, f"--resume={plan.native_id}", "-p", NEW_PROMPT]
    return [binary, "--model", "fake/fake-model", "--session", str(plan.file), "-p", NEW_PROMPT]


def without_agent_context(said: list[tuple]) -> list[tuple]:
    """The dialogue less what an agent adds of its own to a turn: Codex's environment
    context and droid's reminders (its skills, its tools), each sent as a user message of
    its own before a new prompt (docs/agents/headless-resume.md). (Claude Code and Qwen Code
    put their reminders in the prompt's own message: kept.)"""
    said = [(entry[0], entry[1][1:-1], *entry[2:])
            if entry[0] == "user" and entry[1].startswith('"') and entry[1].endswith('"') else entry
            for entry in said]     # (`opencode run` quotes a prompt that holds a space)
    return [entry for entry in said
            if not (entry[0] == "user" and
                    entry[1].lstrip().startswith(("<environment_context", "<system-reminder>"))
                    and PROMPT not in entry[1] and NEW_PROMPT not in entry[1])]


def target_call(source: str, target: str) -> tuple[str, dict]:
    """The source's `ls` call as the target's shell must hold it."""
    name, args = SHELL[target]
    if target == "droid":        # (its summary: Copilot's description, where it had one)
        return name, {"command": "ls", **({"summary": SHELL["copilot"][1]["description"]}
                                           if source == "copilot" else {})}
    if target == "copilot":      # (its description: only where the source's call had one)
        args = {"command": "ls"}
    if source in ("droid", "copilot") and target in DESCRIBED:
        summary = EXECUTE["summary"] if source == "droid" else SHELL["copilot"][1]["description"]
        return name, {**args, DESCRIBED[target]: summary}
    return name, args


# every ordered pair of the writable agents (the registry's: a new one joins by itself)
ALL_PAIRS = [(s, t) for s in writable() for t in writable() if s != t]


@pytest.mark.parametrize("source,target", ALL_PAIRS, ids=[f"{s}-to-{t}" for s, t in ALL_PAIRS])
def test_a_handed_off_branch_resumes_in_the_target(tmp_path, source, target):
    for agent in (source, target):
        if npm_or_venv(agent) is None:
            pytest.skip(f"{BINARIES[agent][1]} not installed: run tests/agent_lab/install_agents.sh "
                        "DIR and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules "
                        "(ARBOR_AGENT_VENVS=DIR/venvs for Kimi CLI)")
    from core import open_store
    from core.handoff import prepare_handoff
    from core.importing import import_paths

    name, args = SHELL[source]
    rules = [(lambda r: not r.tool_names, Reply('{"title": "Listing files"}')),
             (contains(NEW_PROMPT), Reply("Resumed.")),
             (lambda r: any(m["role"] == "tool" and "notes.txt" in m["text"]
                            for m in r.conversation()), Reply(ANSWER)),
             (contains(PROMPT), Reply("Listing.", [ToolCall(name, args)]))]
    with FakeModelServer(rules=rules, model=QWEN_MODEL if "qwen" in (source, target)
                         else "fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        written = first_run(source, lab)
        if target == "kimi":
            kimi_knows(lab)
        store = open_store(tmp_path / "arbor.db")
        import_paths(store, [written])
        session = store.sessions.get(next(s.id for s in store.sessions.list() if s.source == source))
        plan = prepare_handoff(store, session, target=target, env=ENV[target](lab))
        assert plan.imported_id is not None
        for argv in plan.before:       # (opencode's import of the file, first)
            ran = lab.run([str(npm_or_venv(target)), *argv[1:]], env=ENV[target](lab),
                          cwd=Path(plan.cwd))
            assert ran.returncode == 0, ran.stdout + ran.stderr
        asked = len(server.model_requests)
        done = lab.run(resume_argv(target, plan), env=ENV[target](lab), cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stdout + done.stderr
    assert "Resumed." in done.stdout
    resumed = [r for r in server.model_requests[asked:] if r.tool_names]
    first = resumed[0]
    assert SHELL[target][0] in first.tool_names
    target_name, target_args = target_call(source, target)
    assert_resumed(without_agent_context(dialogue(first)), prompt=PROMPT,
                   call=(target_name, tuple(sorted(target_args.items()))),
                   result="notes.txt", answer=ANSWER, new_prompt=NEW_PROMPT)
    # the written session names where it came from, and arbor nests it under the original
    new = store.sessions.get(plan.imported_id)
    assert new.metadata["handoff"]["agent"] == source
    assert [c.id for c in store.sessions.children(session.id)] == [new.id]
    assert re.search(r"from .*: \d+ messages", plan.notes[0])
