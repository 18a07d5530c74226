"""A branch handed to another agent, loaded by that agent's OWN reader (issue 31): for each
ordered pair of Claude Code, Codex and pi, the file arbor writes is read by

* Claude Code: the Agent SDK's getSessionMessages / getSessionInfo (what `claude --resume`
  builds its history with);
* pi: SessionManager.open(file).buildSessionContext() (what `pi --session` uses);
* Codex: `codex app-server` thread/read and thread/resume (what `codex resume` does);
* Qwen Code: its SessionService.loadSession (what `qwen --resume <id>` loads) and the title
  it lists the session under;

and must hold exactly the branch: its messages in order, tool calls under the target's own
tools (tests/handoff_cases.py spells each pair out), their results, the title, the working
folder and where it came from. Opt-in: ARBOR_AGENT_NODE_MODULES names a node_modules with
@anthropic-ai/claude-agent-sdk, @openai/codex and @mariozechner/pi-coding-agent
(tests/agent_lab/install_agents.sh); without it each test is skipped.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from agent_logs import NOW, fixed_ids
from handoff_cases import (PAIRS, TITLES, claude_seen, expected, import_source, pi_seen,
                           qwen_seen)
from test_agent_readers import HERE, MODULES, needs, node
from core import open_store
from core.handoff import prepare_handoff

PACKAGES = {"claude_code": "@anthropic-ai/claude-agent-sdk", "codex": "@openai/codex",
            "pi": "@mariozechner/pi-coding-agent", "qwen": "@qwen-code/qwen-code"}
# the pairs with Qwen Code as the target (Qwen Code as the source: test_handoff_lab.py,
# whose first run is a session the real Qwen Code wrote)
TO_QWEN = [(source, "qwen") for source in ("claude_code", "codex", "pi")]


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "CODEX_HOME": str(tmp_path / "codex"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")}


def read_back(target: str, plan, cwd: str, env: dict[str, str]) -> tuple[list[tuple], dict]:
    """What the target's own reader loads of the plan's session: the messages, reduced,
    and facts about the session (title, folder, origin)."""
    if target == "claude_code":
        got = node("claude_read.mjs", plan.native_id, cwd, env=env)
        return claude_seen(got["messages"]), {"title": got["info"]["customTitle"],
                                              "cwd": got["info"]["cwd"]}
    if target == "qwen":
        got = node("qwen_read.mjs", plan.native_id, cwd, env=env)
        return qwen_seen(got["records"]), {"title": got["title"]["title"],
                                           "cwd": got["records"][0]["cwd"],
                                           "forked": got["sessionId"] == plan.native_id}
    if target == "pi":
        got = node("pi_read.mjs", str(plan.file), env=env)
        return pi_seen(got["messages"]), {"title": got["name"], "cwd": got["header"]["cwd"],
                                          "origin": got["header"].get("handoff")}
    sys.path.insert(0, str(HERE))
    from codex_read import read_thread

    codex = str(MODULES / ".bin" / "codex")
    child = {**os.environ, **env}
    thread = read_thread(codex, plan.native_id, env=child)["thread"]
    resumed = read_thread(codex, plan.native_id, "thread/resume", env=child)["thread"]
    assert resumed["id"] == plan.native_id
    said = []
    for turn in thread["turns"]:
        for item in turn["items"]:
            if item["type"] == "userMessage":
                said.append(("user", item["content"][0]["text"]))
            elif item["type"] == "agentMessage":
                said.append(("agent", item["text"]))
            elif item["type"] == "reasoning":
                said.append(("reasoning", "\n".join(item["summary"])))
    return said, {"title": thread["name"], "cwd": resumed["cwd"],
                  "forked": thread["forkedFromId"]}


def codex_view(rows: list[tuple]) -> list[tuple]:
    """What Codex's thread/read shows of EXPECTED: the user's and the agent's words and
    the reasoning (tool calls are not among its items; the headless resume checks them)."""
    out = []
    for row in rows:
        if row[0] == "user":
            out.append(("user", row[1]))
        elif row[0] == "assistant":
            if row[3]:
                out.append(("reasoning", row[3]))
            if row[1]:
                out.append(("agent", row[1]))
    return out


@pytest.mark.parametrize("source,target", PAIRS + TO_QWEN,
                         ids=[f"{s}-to-{t}" for s, t in PAIRS + TO_QWEN])
def test_the_targets_reader_loads_exactly_the_branch(tmp_path, source, target):
    if not (MODULES / PACKAGES[target]).is_dir() or needs(PACKAGES[target]).args[0]:
        pytest.skip(f"set ARBOR_AGENT_NODE_MODULES to a node_modules with {PACKAGES[target]}")
    cwd = str(tmp_path / "work dir ✓")
    Path(cwd).mkdir()
    env = env_for(tmp_path)
    store = open_store(tmp_path / "arbor.db")
    session, _path = import_source(store, source, tmp_path, cwd)
    plan = prepare_handoff(store, session, target=target, env=env, now=NOW, ids=fixed_ids(500))
    seen, facts = read_back(target, plan, cwd, env)
    rows = expected(source, target, cwd)
    assert seen == (codex_view(rows) if target == "codex" else rows)
    assert facts["title"] == TITLES[source]
    assert facts["cwd"] == cwd
    if target == "pi":
        assert facts["origin"]["agent"] == source and facts["origin"]["session"] == session.uid
    if target == "codex":
        assert facts["forked"] == session.uid


@pytest.mark.parametrize("agent", ["claude_code", "codex", "pi"])
def test_a_session_whose_log_was_deleted_resumes_from_the_store(tmp_path, agent):
    """Import, delete the agent's log, resume (`o`): the agent's own reader loads the
    session arbor writes from its copy."""
    from core.agents import prepare_resume

    if not (MODULES / PACKAGES[agent]).is_dir():
        pytest.skip(f"set ARBOR_AGENT_NODE_MODULES to a node_modules with {PACKAGES[agent]}")
    cwd = str(tmp_path / "work")
    Path(cwd).mkdir()
    env = env_for(tmp_path)
    store = open_store(tmp_path / "arbor.db")
    session, path = import_source(store, agent, tmp_path, cwd)
    branch = store.branches.current(session.id)
    middle = store.paths.entries(branch.head_seq)[-3]    # not the file's end (Codex: a new rollout)
    path.unlink()
    plan = prepare_resume(store, session, branch, at_seq=middle.seq, env=env, now=NOW,
                          ids=fixed_ids(600))
    assert plan.file is not None and plan.file.is_file()
    if agent == "claude_code":
        got = node("claude_read.mjs", plan.native_id, cwd, env=env)
        assert got["messages"] and got["info"]["cwd"] == cwd
        texts = json_text(got["messages"])
    elif agent == "pi":
        got = node("pi_read.mjs", str(plan.file), env=env)
        assert got["path"][-1] == middle.id or middle.id in got["path"]
        texts = json_text(got["messages"])
    else:
        _said, facts = read_back("codex", plan, cwd, env)
        assert facts["cwd"] == cwd
        texts = json_text(_said)
    first_prompt = next(e for e in store.paths.entries(middle.seq)
                        if e.message and e.message.get("role") == "user")
    from core.model.entries import content_text

    assert content_text(first_prompt.message["content"])[:20] in texts


def json_text(value) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
