"""A branch handed to another agent, loaded by that agent's OWN reader (issue 31): for every
ordered pair of the agents arbor writes (the registry's writable targets, 9 × 8 = 72 pairs,
one parametrized test), the file arbor writes is read by

* Claude Code: the Agent SDK's getSessionMessages / getSessionInfo (what `claude --resume`
  builds its history with);
* pi: SessionManager.open(file).buildSessionContext() (what `pi --session` uses);
* Codex: `codex app-server` thread/read and thread/resume (what `codex resume` does);
* Qwen Code: its SessionService.loadSession (what `qwen --resume <id>` loads) and the title
  it lists the session under;
* Gemini CLI: its SessionSelector.resolveSession (what `gemini --resume <id>` finds in the
  project's folder) and convertSessionToClientHistory (the history it sends the model);
* Kimi CLI: its Session.find and Context.restore (what `kimi -r <id>` loads), in its venv;
* droid: `droid search --json`, droid's own reader of its local session files (the session's
  title, every message by role, each call's tool, each result; droid is one compiled binary
  with no module to import, and what `droid --fork` sends is checked by the headless resume);
* opencode: its own `opencode import` of the file, then its own `opencode export`;
* Copilot CLI: its SDK (tests/agent_readers/copilot_read.mjs) resumes the session and
  returns the events its runtime loaded, and lists it (title, folder);

and must hold exactly the branch: its messages in order, tool calls under the target's own
tools with their arguments (tests/handoff_cases.py spells each pair out), their results, the
title, the working folder and where it came from. The source is the branch arbor's tests
build for Claude Code, Codex and pi (tests/agent_logs.py), and for the others a session the
agent wrote itself (tests/fixtures/agents): its first exchange.
Opt-in: ARBOR_AGENT_NODE_MODULES names a node_modules with @anthropic-ai/claude-agent-sdk,
@openai/codex, @mariozechner/pi-coding-agent, @qwen-code/qwen-code, @google/gemini-cli,
droid, opencode-ai and @github/copilot, and ARBOR_AGENT_VENVS the venvs with kimi-cli
(tests/agent_lab/install_agents.sh); without them each test is skipped, saying which.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_logs import NOW, fixed_ids
from handoff_cases import (AGENT_TITLES, EXPECTED, TITLES, agent_expected, claude_seen,
                           copilot_seen, droid_view, expected, gemini_seen, import_agent_source,
                           import_source, kimi_seen, opencode_seen, pi_seen, qwen_seen, with_cwd)
from test_agent_readers import HERE, MODULES, needs, node
from core import open_store
from core.handoff import prepare_handoff
from core.handoff.targets import writable

PACKAGES = {"claude_code": "@anthropic-ai/claude-agent-sdk", "codex": "@openai/codex",
            "pi": "@mariozechner/pi-coding-agent", "qwen": "@qwen-code/qwen-code",
            "gemini": "@google/gemini-cli", "droid": "droid", "opencode": "opencode-ai",
            "copilot": "@github/copilot-linux-x64"}
VENVS = Path(os.environ.get("ARBOR_AGENT_VENVS", "/nonexistent"))
KIMI_PYTHON = VENVS / "kimi" / "bin" / "python"


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "CODEX_HOME": str(tmp_path / "codex"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")}


def skip_unless_installed(*agents: str) -> None:
    for agent in agents:
        if agent == "kimi":
            if not KIMI_PYTHON.is_file():
                pytest.skip("set ARBOR_AGENT_VENVS to the venvs with kimi-cli")
        elif not (MODULES / PACKAGES[agent]).is_dir() or needs(PACKAGES[agent]).args[0]:
            pytest.skip(f"set ARBOR_AGENT_NODE_MODULES to a node_modules with {PACKAGES[agent]}")


def kimi_knows(cwd: str, env: dict[str, str]) -> None:
    """Kimi CLI's list of the work folders it ran in, naming this one (as `kimi` run there
    once writes it): Kimi finds sessions only there."""
    share = Path(env["HOME"]) / ".kimi"
    share.mkdir(parents=True, exist_ok=True)
    (share / "kimi.json").write_text(json.dumps({"work_dirs": [
        {"path": cwd, "kaos": "local", "last_session_id": None}]}))


def droid_search(cwd: str, env: dict[str, str]) -> dict:
    """What `droid search --json` finds in droid's local sessions, for every vowel (a query
    matches by substring: together they match every text of the branch), one session at
    most per vowel and one in all."""
    sys.path.insert(0, str(Path(__file__).parent / "agent_lab"))
    from fake_model_server import FakeModelServer
    from lab import new_lab, npm_bin

    hits: dict[str, dict] = {}
    found = {}
    with FakeModelServer([], model="fake-model") as server:   # (any request: 127.0.0.1)
        lab = new_lab(Path(env["HOME"]).parent / "droid-lab", server)
        child = {**lab.env(FACTORY_AIRGAP_ENABLED="1"), "HOME": env["HOME"]}
        for query in "aeiou":
            done = subprocess.run([str(npm_bin("droid")), "search", "--json", "--limit-hits",
                                   "500", "--context-chars", "5000", query], cwd=cwd,
                                  capture_output=True, text=True, env=child, timeout=120)
            assert done.returncode == 0, done.stderr
            sessions = json.loads(done.stdout)["sessions"]
            assert len(sessions) <= 1, sessions     # (a branch without an "a" matches none)
            for session in sessions:
                found = session
                for hit in session["hits"]:
                    hits[hit["docId"]] = hit
    assert found, "droid search found no session"
    return {"title": found["title"], "sessionId": found["sessionId"], "hits": hits}


def droid_matches(seen: list[tuple], rows: list[tuple]) -> bool:
    """droid's search shows a long text cut, ending with "…": the text must begin so."""
    def same(got, want) -> bool:
        if got[:2] != want[:2]:
            return False
        return got[2] == want[2] or (got[2].endswith("…") and want[2].startswith(got[2][:-1]))

    return len(seen) == len(rows) and all(same(g, w) for g, w in zip(seen, rows))


def droid_seen(hits: dict[str, dict]) -> list[tuple]:
    """droid's hits in the order of the session's messages (their ids: handed off with ids in
    order), reduced to droid_view's shape: a call's tool by its name, without arguments."""
    out = []
    for doc_id in sorted(hits, key=lambda d: (d.split(":")[2], d.split(":")[1] != "message_text",
                                               d.split(":")[3])):
        hit = hits[doc_id]
        kind = hit["kind"]
        text = "".join(hit["snippets"]).replace("<mark>", "").replace("</mark>", "")
        if kind == "message_text":
            out.append(("message_text", hit["messageRole"], text))
        elif kind == "tool_use":
            out.append(("tool_use", hit["toolName"], ""))
        elif kind == "tool_result":
            out.append(("tool_result", doc_id.split(":")[3], text))
    return out


def opencode_export(plan, cwd: str, env: dict[str, str]) -> dict:
    """opencode's own import of the file (what `o` runs first), then its own export of the
    session it holds."""
    child = {**os.environ, **env, "OPENCODE_DISABLE_AUTOUPDATE": "1",
             "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1"}
    binary = str(MODULES / ".bin" / "opencode")
    for argv in plan.before:
        done = subprocess.run([binary, *argv[1:]], cwd=cwd, env=child, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and plan.native_id in done.stdout, done.stderr
    done = subprocess.run([binary, "export", plan.native_id], cwd=cwd, env=child,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout[done.stdout.index("{"):])


COPILOT_ENV = {"COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
               "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:9/v1",   # (nothing is asked)
               "COPILOT_PROVIDER_API_KEY": "fake", "COPILOT_MODEL": "gpt-4.1"}


def read_back(target: str, plan, cwd: str, env: dict[str, str]) -> tuple[list[tuple], dict]:
    """What the target's own reader loads of the plan's session: the messages, reduced,
    and facts about the session (title, folder, origin)."""
    if target == "opencode":
        document = opencode_export(plan, cwd, env)
        written = json.loads(plan.file.read_text())     # (opencode keeps no such field)
        return opencode_seen(document), {"title": document["info"]["title"],
                                         "cwd": document["info"]["directory"],
                                         "origin": written["info"].get("handoff")}
    if target == "copilot":
        got = node("copilot_read.mjs", plan.native_id, cwd, env={**env, **COPILOT_ENV})
        [listed] = [s for s in got["sessions"] if s["sessionId"] == plan.native_id]
        return copilot_seen(got["events"]), {"title": listed["summary"],
                                             "cwd": listed["context"]["workingDirectory"],
                                             "origin": got["events"][0]["data"].get("handoff")}
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
    if target == "gemini":
        got = node("gemini_read.mjs", plan.native_id, cwd, env=env)
        header = json.loads(Path(got["path"]).read_text().splitlines()[0])
        return gemini_seen(got["history"]), {"title": got["summary"], "cwd": cwd,
                                             "origin": header.get("handoff")}
    if target == "kimi":
        done = subprocess.run([str(KIMI_PYTHON), str(HERE / "kimi_read.py"), plan.native_id, cwd],
                              capture_output=True, text=True, env={**os.environ, **env},
                              timeout=120)
        assert done.returncode == 0, done.stderr
        got = json.loads(done.stdout)
        return kimi_seen(got["history"]), {"title": got["title"], "cwd": cwd,
                                           "origin": got["metadata"].get("handoff")}
    if target == "droid":
        got = droid_search(cwd, env)
        assert got["sessionId"] == plan.native_id
        header = json.loads(plan.file.read_text().splitlines()[0])
        return droid_seen(got["hits"]), {"title": got["title"], "cwd": header["cwd"],
                                         "origin": header.get("handoff")}
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
    meta = json.loads(plan.file.read_text().splitlines()[0])["payload"]
    return said, {"title": thread["name"], "cwd": resumed["cwd"],
                  "forked": thread["forkedFromId"], "origin": meta.get("handoff")}


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


def view(target: str, rows: list[tuple]) -> list[tuple]:
    """EXPECTED as the target's reader shows it."""
    if target == "codex":
        return codex_view(rows)
    if target == "droid":
        return droid_view(rows)
    return rows


# Every ordered pair of the agents arbor writes, from the registry (a new writable agent joins
# the matrix by itself, and fails until its session and its rows are written out)
MATRIX = [(source, target) for source in writable() for target in writable() if source != target]


def source_branch(store, source: str, target: str, root: Path, cwd: str):
    """(the session, the entry handed off or None for the branch's head, the rows `target`'s
    reader must load, the title): Claude Code's, Codex's and pi's sessions (tests/agent_logs.py)
    whole; the others' own sessions (tests/fixtures/agents) up to their first answer."""
    if source in EXPECTED:
        session, _path = import_source(store, source, root, cwd)
        return session, None, with_cwd(expected(source, target, cwd), cwd), TITLES[source]
    session, answer = import_agent_source(store, source, root, cwd)
    return session, answer, agent_expected(source, target), AGENT_TITLES[source]


@pytest.mark.parametrize("source,target", MATRIX, ids=[f"{s}-to-{t}" for s, t in MATRIX])
def test_every_pair_the_targets_reader_loads_exactly_the_branch(tmp_path, source, target):
    """The branch handed from `source` to `target`, read back by `target`'s own reader: its
    messages in order, the calls under `target`'s own tools with their arguments, their
    results, the title, the folder, and where it came from where the target keeps it."""
    skip_unless_installed(target)
    cwd = str(tmp_path / "work dir ✓")
    Path(cwd).mkdir()
    env = env_for(tmp_path)
    if target == "kimi":
        kimi_knows(cwd, env)
    store = open_store(tmp_path / "arbor.db")
    session, at_seq, rows, title = source_branch(store, source, target, tmp_path, cwd)
    plan = prepare_handoff(store, session, target=target, at_seq=at_seq, env=env, now=NOW,
                           ids=fixed_ids(500))
    seen, facts = read_back(target, plan, cwd, env)
    rows = view(target, rows)
    assert droid_matches(seen, rows) if target == "droid" else seen == rows, (seen, rows)
    assert facts["title"] == title
    assert facts["cwd"] == cwd
    if "origin" in facts:   # (in the file's own first record: the agents ignore it)
        assert facts["origin"]["agent"] == source and facts["origin"]["via"] == "arbor"
        assert facts["origin"]["session"] == session.uid
    if target == "codex":   # (a thread id is a uuid: opencode's `ses_…` is named by `handoff` only)
        uuid = re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", session.uid)
        assert facts["forked"] == (session.uid if uuid else None)


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
