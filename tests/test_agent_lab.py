"""Real agents, run headless against tests/fake_model_server.py: a session with a tool call,
then a headless resume of it; the first request of the resume must hold the session's
messages in order (the prompt, the tool call, its result, the answer) and the new prompt.

Opt-in: the agents come from tests/agent_lab/install_agents.sh; set ARBOR_AGENT_NODE_MODULES
(npm agents) and ARBOR_AGENT_VENVS (Python agents). Without them each test is skipped, saying
which agent is missing. Each agent runs in a temp HOME with no real key and every network
setting on 127.0.0.1 (tests/agent_lab/lab.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "agent_lab"))

from fake_model_server import FakeModelServer, Reply, ToolCall  # noqa: E402
from lab import new_lab, npm_bin, venv_bin  # noqa: E402


def needs_npm(binary: str, package: str):
    return pytest.mark.skipif(
        npm_bin(binary) is None,
        reason=f"{package} not installed: run tests/agent_lab/install_agents.sh DIR and set "
               "ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")


def needs_venv(venv: str, binary: str, package: str):
    return pytest.mark.skipif(
        venv_bin(venv, binary) is None,
        reason=f"{package} not installed: run tests/agent_lab/install_agents.sh DIR and set "
               "ARBOR_AGENT_VENVS=DIR/venvs")


def dialogue(request) -> list[tuple]:
    """(role, text, calls) of a request's messages without the system prompt, consecutive
    repeats collapsed (an agent may send one tool result twice: see docs/agents/gemini-cli.md)."""
    out: list[tuple] = []
    for message in request.conversation():
        if message["role"] == "system":
            continue
        entry = (message["role"], message["text"].strip(),
                 tuple((name, tuple(sorted(args.items())) if isinstance(args, dict) else args)
                       for name, args in message["tool_calls"]))
        if not out or out[-1] != entry:
            out.append(entry)
    return out


def assert_resumed(dialogue_: list[tuple], *, prompt: str, call: tuple, result: str,
                   answer: str, new_prompt: str) -> None:
    """The session in order, then the new prompt, as the last entries of the dialogue."""
    start = max(i for i, entry in enumerate(dialogue_) if entry[0] == "user" and prompt in entry[1])
    tail = dialogue_[start:]
    assert [entry[0] for entry in tail] == ["user", "assistant", "tool", "assistant", "user"], \
        [(e[0], e[1][:300]) for e in dialogue_]
    assert call in tail[1][2]
    assert result in tail[2][1]
    assert tail[3][1] == answer
    assert tail[4][1].endswith(new_prompt), tail[4][1]


# ---------------------------------------------------------------- Gemini CLI
@needs_npm("gemini", "@google/gemini-cli")
def test_gemini_cli_resume_sends_the_session_then_the_new_prompt(tmp_path):
    from make_gemini import MODEL, gemini_env, settings

    script = [Reply("Listing.", [ToolCall("run_shell_command", {"command": "ls"})]),
              Reply("There is one file: notes.txt."),
              Reply("Resumed.")]
    with FakeModelServer(script, model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello\n")
        base = [npm_bin("gemini"), "-m", MODEL, "--yolo"]
        first = lab.run(base + ["-p", "list the files"], env=gemini_env(lab))
        assert first.returncode == 0, first.stderr
        asked = len(server.model_requests)
        second = lab.run(base + ["--resume", "latest", "-p", "what did you find?"],
                         env=gemini_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    resume = server.model_requests[asked]
    assert_resumed(dialogue(resume), prompt="list the files",
                   call=("run_shell_command", (("command", "ls"),)), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")
    # Gemini CLI 0.61.0 sends the function response twice after a resume (once rebuilt from
    # the call's stored result, once from the stored user turn)
    results = [m for m in resume.conversation() if m["role"] == "tool"]
    assert len({m["tool_call_id"] for m in results}) == 1


# ---------------------------------------------------------------- opencode
@needs_npm("opencode", "opencode-ai")
def test_opencode_continue_sends_the_session_then_the_new_prompt(tmp_path):
    from make_opencode import MODEL, TITLE, opencode_env, write_config

    script = [Reply("Listing.", [ToolCall("bash", {"command": "ls", "description": "list"})]),
              Reply("There is one file: notes.txt."),
              Reply("Resumed.")]
    with FakeModelServer(script, rules=[(TITLE, Reply("Files"))], model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        write_config(lab)
        (lab.project / "notes.txt").write_text("hello\n")
        opencode = npm_bin("opencode")
        first = lab.run([opencode, "run", "list the files"], env=opencode_env(lab))
        assert first.returncode == 0, first.stderr
        asked = len([r for r in server.model_requests if r.scripted])
        second = lab.run([opencode, "run", "--continue", "what did you find?"],
                         env=opencode_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    resume = [r for r in server.model_requests if r.scripted][asked]
    assert_resumed(dialogue(resume), prompt="list the files",
                   call=("bash", (("command", "ls"), ("description", "list"))),
                   result="notes.txt", answer="There is one file: notes.txt.",
                   # `opencode run` quotes each argument that holds a space
                   new_prompt='"what did you find?"')


# ---------------------------------------------------------------- GitHub Copilot CLI
@needs_npm("copilot", "@github/copilot")
def test_copilot_cli_resume_sends_the_session_then_the_new_prompt(tmp_path):
    from make_copilot import MODEL, copilot_env

    script = [Reply("Listing.", [ToolCall("bash", {"command": "ls", "description": "list"})]),
              Reply("There is one file: notes.txt."),
              Reply("Resumed.")]
    with FakeModelServer(script, model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        base = [npm_bin("copilot"), "--allow-all-tools", "--disable-client-telemetry"]
        first = lab.run(base + ["-p", "list the files"], env=copilot_env(lab))
        assert first.returncode == 0, first.stderr
        session = next(p.name for p in (lab.home / ".copilot/session-state").iterdir()
                       if not p.name.startswith("."))
        asked = len(server.model_requests)
        second = lab.run(base + [f"--resume={session}", "-p", "what did you find?"],
                         env=copilot_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("bash", (("command", "ls"), ("description", "list"))),
                   result="notes.txt", answer="There is one file: notes.txt.",
                   new_prompt="what did you find?")


# ---------------------------------------------------------------- Qwen Code
@needs_npm("qwen", "@qwen-code/qwen-code")
def test_qwen_code_continue_sends_the_session_then_the_new_prompt(tmp_path):
    from fake_model_server import last_says
    from make_qwen import MODEL, qwen_env, settings

    rules = [(last_says("what did you find?"), Reply("Resumed.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("run_shell_command", {"command": "ls"})])),
             (last_says("Command: ls\n"), Reply("There is one file: notes.txt."))]
    with FakeModelServer(rules=rules, model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello\n")
        base = [npm_bin("qwen"), "-m", MODEL, "--yolo"]
        first = lab.run(base + ["-p", "list the files"], env=qwen_env(lab))
        assert first.returncode == 0, first.stderr
        asked = len(server.model_requests)
        second = lab.run(base + ["--continue", "-p", "what did you find?"], env=qwen_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("run_shell_command", (("command", "ls"),)), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")


# ---------------------------------------------------------------- Claude Code (issue 31)
def claude_env(lab) -> dict:
    """Claude Code on the fake server: an API key it accepts without asking (its last 20
    characters approved in .claude.json), onboarding done, no non-essential traffic."""
    from lab import FAKE_KEY
    import json

    config = lab.home / ".claude-config"
    config.mkdir(parents=True, exist_ok=True)
    key = "sk-ant-api03-" + FAKE_KEY.replace(".", "-") + "-0123456789"
    (config / ".claude.json").write_text(json.dumps({
        "hasCompletedOnboarding": True,
        "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        "projects": {str(lab.project): {"hasTrustDialogAccepted": True,
                                        "hasCompletedProjectOnboarding": True}}}))
    return lab.env(CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_BASE_URL=lab.server.url,
                   ANTHROPIC_API_KEY=key, DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                   DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")


@needs_npm("claude", "@anthropic-ai/claude-code")
def test_claude_code_resume_sends_the_session_then_the_new_prompt(tmp_path):
    import uuid

    def main_loop(request) -> bool:   # title and other side requests carry no tools
        return "Bash" in request.tool_names

    rules = [(lambda r: not main_loop(r), Reply('{"title": "Listing files"}'))]
    script = [Reply("Listing.", [ToolCall("Bash", {"command": "ls", "description": "list"})],
                    when=main_loop),
              Reply("There is one file: notes.txt.", when=main_loop),
              Reply("Resumed.", when=main_loop)]
    with FakeModelServer(script, rules=rules, model="claude-sonnet-4-5") as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        session = str(uuid.uuid4())
        env = claude_env(lab)
        claude = npm_bin("claude")
        first = lab.run([claude, "-p", "list the files", "--session-id", session,
                         "--allowedTools", "Bash"], env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        asked = len([r for r in server.model_requests if main_loop(r)])
        second = lab.run([claude, "-p", "what did you find?", "--resume", session,
                          "--allowedTools", "Bash"], env=env)
        assert second.returncode == 0, second.stdout + second.stderr
    assert "Resumed." in second.stdout
    resume = [r for r in server.model_requests if main_loop(r)][asked]
    assert_resumed(dialogue(resume), prompt="list the files",
                   call=("Bash", (("command", "ls"), ("description", "list"))),
                   result="notes.txt", answer="There is one file: notes.txt.",
                   new_prompt="what did you find?")


# ---------------------------------------------------------------- Codex (issue 31)
def codex_env(lab) -> dict:
    """Codex on the fake server: a model provider of its own in $CODEX_HOME/config.toml
    (Responses API), its key in an environment variable."""
    from lab import FAKE_KEY

    home = lab.home / ".codex"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "gpt-5-codex"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
        f'name = "fake"\nbase_url = "{lab.server.url}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_MODEL_KEY"\n')
    return lab.env(CODEX_HOME=str(home), FAKE_MODEL_KEY=FAKE_KEY)


@needs_npm("codex", "@openai/codex")
def test_codex_exec_resume_sends_the_session_then_the_new_prompt(tmp_path):
    import re

    script = [Reply("Listing.", [ToolCall("exec_command", {"cmd": "ls"})]),
              Reply("There is one file: notes.txt."),
              Reply("Resumed.")]
    with FakeModelServer(script, model="gpt-5-codex") as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        codex = [npm_bin("codex"), "exec", "--skip-git-repo-check",
                 "--dangerously-bypass-approvals-and-sandbox"]
        first = lab.run(codex + ["list the files"], env=codex_env(lab))
        assert first.returncode == 0, first.stderr
        session = re.search(r"session id: (\S+)", first.stderr + first.stdout).group(1)
        asked = len(server.model_requests)
        second = lab.run(codex + ["resume", session, "what did you find?"], env=codex_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("exec_command", (("cmd", "ls"),)), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")


# ---------------------------------------------------------------- pi (issue 31)
def pi_env(lab) -> dict:
    """pi on the fake server: a provider of its own in ~/.pi/agent/models.json (OpenAI Chat
    Completions)."""
    import json
    from lab import FAKE_KEY

    agent = lab.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": f"{lab.server.url}/v1", "api": "openai-completions", "apiKey": FAKE_KEY,
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model"}]}}}))
    return lab.env(PI_OFFLINE="1")


@needs_npm("pi", "@mariozechner/pi-coding-agent")
def test_pi_continue_sends_the_session_then_the_new_prompt(tmp_path):
    script = [Reply("Listing.", [ToolCall("bash", {"command": "ls"})]),
              Reply("There is one file: notes.txt."),
              Reply("Resumed.")]
    with FakeModelServer(script, model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        pi = [npm_bin("pi"), "--model", "fake/fake-model"]
        first = lab.run(pi + ["-p", "list the files"], env=pi_env(lab))
        assert first.returncode == 0, first.stderr
        asked = len(server.model_requests)
        second = lab.run(pi + ["--continue", "-p", "what did you find?"], env=pi_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("bash", (("command", "ls"),)), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")


# ---------------------------------------------------------------- Factory droid
@needs_npm("droid", "droid")
def test_droid_fork_sends_the_session_then_the_new_prompt(tmp_path):
    """`droid exec -s ID` asks api.factory.ai for the session (blocked in airgap mode), so
    the headless way to go on from a local session is `--fork ID`."""
    from fake_model_server import last_says
    from make_droid import EXECUTE, MODEL, configure, droid_env

    rules = [(last_says("what did you find?"), Reply("Resumed.")),
             (last_says("list the files"), Reply("Listing.", [ToolCall("Execute", EXECUTE)])),
             (last_says("Process exited"), Reply("There is one file: notes.txt."))]
    with FakeModelServer(rules=rules, model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        configure(lab)
        (lab.project / "notes.txt").write_text("hello\n")
        droid = [npm_bin("droid"), "exec", "-m", MODEL]
        first = lab.run(droid + ["list the files"], env=droid_env(lab))
        assert first.returncode == 0, first.stderr
        session = next((lab.home / ".factory/sessions").rglob("*.jsonl")).stem
        asked = len(server.model_requests)
        second = lab.run(droid + ["--fork", session, "what did you find?"], env=droid_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("Execute", tuple(sorted(EXECUTE.items()))), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")


# ---------------------------------------------------------------- Kimi CLI
@needs_venv("kimi", "kimi", "kimi-cli")
def test_kimi_cli_continue_sends_the_session_then_the_new_prompt(tmp_path):
    from fake_model_server import last_says
    from lab import venv_bin
    from make_kimi import configure, kimi_env

    rules = [(last_says("what did you find?"), Reply("Resumed.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("Shell", {"command": "ls"})])),
             (last_says("notes.txt"), Reply("There is one file: notes.txt."))]
    with FakeModelServer(rules=rules, model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        configure(lab)
        (lab.project / "notes.txt").write_text("hello\n")
        kimi = [venv_bin("kimi", "kimi"), "--print", "-y"]
        first = lab.run(kimi + ["-p", "list the files"], env=kimi_env(lab))
        assert first.returncode == 0, first.stderr
        asked = len(server.model_requests)
        second = lab.run(kimi + ["-C", "-p", "what did you find?"], env=kimi_env(lab))
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    assert_resumed(dialogue(server.model_requests[asked]), prompt="list the files",
                   call=("Shell", (("command", "ls"),)), result="notes.txt",
                   answer="There is one file: notes.txt.", new_prompt="what did you find?")


# ---------------------------------------------------------------- Aider
@needs_venv("aider", "aider", "aider-chat")
def test_aider_restore_chat_history_sends_the_chat_then_the_new_prompt(tmp_path):
    """Aider has no tool calls: the model's SEARCH/REPLACE block is its action. Restored from
    .aider.chat.history.md, the earlier prompt and that answer come back before the new one."""
    from fake_model_server import last_says
    from lab import venv_bin
    from make_aider import EDIT, aider_argv, aider_env, first_says, init_project

    rules = [(first_says("Git commit messages"), Reply("Add a line")),
             (last_says("what did you change?"), Reply("Resumed.")),
             (last_says("add a line to notes.txt"), Reply(EDIT))]
    with FakeModelServer(rules=rules, model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        init_project(lab)
        aider = aider_argv(venv_bin("aider", "aider"), server.url)
        first = lab.run(aider + ["notes.txt", "--message", "add a line to notes.txt"],
                        env=aider_env(lab), input="")
        assert first.returncode == 0, first.stderr
        assert "second line from the model" in (lab.project / "notes.txt").read_text()
        asked = len(server.model_requests)
        second = lab.run(aider + ["--restore-chat-history", "--message", "what did you change?"],
                         env=aider_env(lab), input="")
        assert second.returncode == 0, second.stderr
    assert "Resumed." in second.stdout
    resume = next(r for r in server.model_requests[asked:] if r.reply and r.reply.text == "Resumed.")
    said = [(role, text) for role, text, _ in dialogue(resume)]
    prompt = max(i for i, (role, text) in enumerate(said) if text == "add a line to notes.txt")
    assert said[prompt + 1][0] == "assistant" and "<<<<<<< SEARCH" in said[prompt + 1][1]
    # (Aider appends its SEARCH/REPLACE rules to the last user message it sends)
    assert said[-1][0] == "user" and said[-1][1].startswith("what did you change?")
