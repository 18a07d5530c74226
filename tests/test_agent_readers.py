"""The files `arbor resume` writes, loaded by the agents' OWN readers (not arbor's importer):

* Claude Code: the Agent SDK's `getSessionMessages` / `getSessionInfo` (the same chain
  building as `claude --resume`), compared with the same reader on the original transcript
  and with the branch in arbor;
* pi: pi's `SessionManager.open(file).buildSessionContext()` (what `pi --session` uses);
* Codex: `codex app-server` `thread/read` and `thread/resume` (what `codex resume` does), offline.

They need node and the agents' npm packages, which a clean CI machine does not install
quickly: set ARBOR_AGENT_NODE_MODULES to a node_modules folder holding
@anthropic-ai/claude-agent-sdk, @mariozechner/pi-coding-agent and @openai/codex
(`npm install` them under /tmp, never in the repository). Without it they are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_logs import (NOW, ClaudeLog, claude_session, codex_session, fixed_ids, pi_session, seen,
                        text)
from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.model.entries import content_text
from core.importing import import_paths

HERE = Path(__file__).parent / "agent_readers"
MODULES = Path(os.environ.get("ARBOR_AGENT_NODE_MODULES", "/nonexistent"))
NODE = shutil.which("node")
IDS = fixed_ids()


def needs(package: str):
    reason = ("set ARBOR_AGENT_NODE_MODULES to a node_modules folder with "
              f"{package} (and node on PATH) to load the files in the agent's own reader")
    return pytest.mark.skipif(NODE is None or not (MODULES / package).is_dir(), reason=reason)


def node(script: str, *args: str, env: dict[str, str]) -> dict:
    done = subprocess.run([NODE, str(HERE / script), str(MODULES), *args], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------------------- Claude Code
def claude_seen(message: dict) -> tuple:
    """A Claude API message (as the SDK returns it) reduced as `seen` reduces arbor's."""
    role = message["role"]
    content = message["content"]
    if isinstance(content, str):
        return (role, content, ())
    results = [b for b in content if b.get("type") == "tool_result"]
    if results:
        result = results[0]
        body = result.get("content")
        body = body if isinstance(body, str) else "\n".join(b.get("text", "") for b in body)
        return ("toolResult", result["tool_use_id"], body, bool(result.get("is_error")))
    texts = "\n".join(b.get("text") or b.get("thinking") or "" for b in content
                      if b.get("type") in ("text", "thinking") and (b.get("text") or b.get("thinking")))
    calls = tuple((b["id"], b["name"], json.dumps(b["input"], sort_keys=True))
                  for b in content if b.get("type") == "tool_use")
    return (role, texts, calls)


def expected_claude(store, head_seq: int) -> list[tuple]:
    """What Claude Code loads for a branch: from the newest compaction on (its summary, the
    messages it keeps, then the rest); a call without a result gets Claude Code's
    interrupted result."""
    path = store.paths.entries(head_seq)
    start = 0
    kept: list = []
    for index in range(len(path) - 1, -1, -1):
        if path[index].type == "compaction":
            start = index + 1
            kept_id = path[index].data.get("firstKeptEntryId")
            ids = [e.id for e in path]
            if kept_id in ids:
                kept = path[ids.index(kept_id):index]
            summary_entry = path[start] if start < len(path) else None
            if summary_entry is not None and summary_entry.message and \
                    summary_entry.data.get("claude", {}).get("isCompactSummary"):
                kept = [summary_entry, *kept]
                start += 1
            break
    out = [seen(e.message) for e in [*kept, *path[start:]] if e.type == "message"]
    if out and out[-1][0] == "assistant" and out[-1][2]:
        out.append(("toolResult", out[-1][2][0][0], "[Request interrupted by user for tool use]", True))
    return out


@needs("@anthropic-ai/claude-agent-sdk")
def test_claude_codes_reader_loads_exactly_the_branch(tmp_path):
    cwd = str(tmp_path / "work dir" / "données ✓")
    Path(cwd).mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    log = claude_session(cwd)
    # the original lives where Claude Code keeps it, so the SDK can read it too
    from core.agents.claude_code.writer import transcript_dir

    original = log.write(transcript_dir(cwd, env))
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [original])
    session = store.sessions.by_uid(log.session_id)
    for branch in store.branches.of_session(session.id):
        plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS)
        got = node("claude_read.mjs", plan.native_id, cwd, env=env)
        # named after the branch, as Claude Code's picker lists it
        assert got["info"]["customTitle"] == f"Flaky parser test · {branch.name}"
        assert got["info"]["cwd"] == cwd
        assert [claude_seen(m["message"]) for m in got["messages"]] == \
            expected_claude(store, branch.head_seq)
        if branch.is_current:
            # the newest branch is what Claude Code itself loads from the original
            mine = node("claude_read.mjs", log.session_id, cwd, env=env)
            assert [claude_seen(m["message"]) for m in mine["messages"]] == \
                [claude_seen(m["message"]) for m in got["messages"]][:len(mine["messages"])]


@needs("@anthropic-ai/claude-agent-sdk")
def test_claude_codes_reader_across_compactions(tmp_path):
    cwd = str(tmp_path)
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    from core.agents.claude_code.writer import transcript_dir

    log = ClaudeLog("c0ffee00-0000-4000-8000-0000000000c1", cwd)
    for n in range(6):
        log.user(f"question {n} " + "x" * 300)
        kept_tail = log.assistant(text(f"answer {n}"), msg_id=f"msg_01C{n:023d}")
        if n == 3:
            kept_head = log.lines[-2]["uuid"]
            log.compact("Summary of the first four.", kept=[kept_head, kept_tail])
    original = log.write(transcript_dir(cwd, env))
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [original])
    session = store.sessions.by_uid(log.session_id)
    branch = store.branches.current(session.id)
    plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS)
    mine = node("claude_read.mjs", log.session_id, cwd, env=env)
    got = node("claude_read.mjs", plan.native_id, cwd, env=env)
    assert [claude_seen(m["message"]) for m in got["messages"]] == \
        [claude_seen(m["message"]) for m in mine["messages"]] == expected_claude(store, branch.head_seq)
    # and a compaction made in arbor on top of it
    operations.compact(store, branch.id, summary="All six.", keep_recent_tokens=120)
    branch = store.branches.get(branch.id)
    plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS)
    got = [claude_seen(m["message"]) for m in node("claude_read.mjs", plan.native_id, cwd, env=env)["messages"]]
    assert got[0][0] == "user" and got[0][1].endswith("All six.\n\nRecent messages are preserved verbatim.")
    replay = store.paths.replay(branch.head_seq).messages
    assert got[1:] == [seen(m) for m in replay[1:]]


@needs("@anthropic-ai/claude-code")
def test_claude_code_itself_resumes_the_file_on_the_branch(tmp_path):
    """`claude --resume <id> -p …` with no login: Claude Code loads the session, stops at the
    API call ("Not logged in") and records its turn below the leaf it resumed from, which
    must be the branch's last line (here the interrupted result of the branch's last tool
    call, so the call was kept)."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    log = claude_session(str(cwd))
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [log.write(tmp_path / "source")])
    session = store.sessions.by_uid(log.session_id)
    branch = store.branches.current(session.id)
    plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS)
    ours = [json.loads(line) for line in plan.file.read_text().splitlines()]
    leaf = [line for line in ours if "uuid" in line][-1]
    assert leaf["message"]["content"][0]["content"] == "[Request interrupted by user for tool use]"
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    child_env.update(env)
    done = subprocess.run([str(MODULES / ".bin" / "claude"), "--resume", plan.native_id, "-p", "hello",
                           "--output-format", "json"], cwd=cwd, env=child_env, capture_output=True,
                          text=True, timeout=120)
    assert plan.native_id in done.stdout, done.stdout + done.stderr   # found and resumed
    after = [json.loads(line) for line in plan.file.read_text().splitlines()][len(ours):]
    added = [line for line in after if line.get("uuid")]
    assert added and added[0]["parentUuid"] == leaf["uuid"]
    assert all(line.get("sessionId") in (None, plan.native_id) for line in after)


# -------------------------------------------------------------------------- pi
@needs("@mariozechner/pi-coding-agent")
def test_pis_loader_lands_on_the_branch_with_its_labels(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")}
    log = pi_session("/srv/app ✓")
    source = log.write(tmp_path / "source")
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [source])
    session = store.sessions.by_uid(log.session_id)
    branch = store.branches.current(session.id)
    operations.set_label(store, store.paths.entries(branch.head_seq)[1].seq, "goal")
    for branch in store.branches.of_session(session.id):
        plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS)
        got = node("pi_read.mjs", str(plan.file), env=env)
        head = store.entries.get(branch.head_seq)
        assert got["header"]["parentSession"] == str(source) and got["header"]["cwd"] == "/srv/app ✓"
        assert got["path"][:len(store.paths.entries(branch.head_seq))] == \
            [e.id for e in store.paths.entries(branch.head_seq)]
        messages = [m for m in got["messages"]]
        replay = store.paths.replay(head.seq).messages
        assert len(messages) == len(replay)
        for mine, theirs in zip(replay, messages):
            if mine.get("kind") == "compaction_summary":
                assert theirs["role"] == "compactionSummary" and theirs["summary"] == mine["content"]
            elif theirs["role"] == "branchSummary":
                assert mine.get("kind") == "branch_summary" and theirs["summary"] == mine["content"]
            else:
                assert theirs == mine
        on_path = {e.seq for e in store.paths.entries(branch.head_seq)}
        assert got["labels"] == {store.entries.get(seq).id: label for seq, label
                                 in store.annotations.entry_labels(session.id).items() if seq in on_path}
        # named after the branch (pi's session list shows the latest session_info)
        assert got["name"] == f"Rename the config module · {branch.name}"


# ----------------------------------------------------------------------- Codex
@needs("@openai/codex")
def test_codexs_own_reader_and_resume_load_the_forked_rollout(tmp_path):
    sys.path.insert(0, str(HERE))
    from codex_read import read_thread

    codex = str(MODULES / ".bin" / "codex")
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    log = codex_session(str(tmp_path))
    source = log.write(Path(env["CODEX_HOME"]))
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [source])
    session = store.sessions.by_uid(log.session_id)
    branch = store.branches.current(session.id)
    middle = [e for e in store.paths.entries(branch.head_seq) if e.type == "message"][4]
    plan = prepare_resume(store, session, branch, at_seq=middle.seq, env=env, now=NOW, ids=IDS)
    child_env = {**os.environ, **env}
    thread = read_thread(codex, plan.native_id, env=child_env)["thread"]
    assert thread["forkedFromId"] == session.uid and thread["path"] == str(plan.file)
    items = [item for turn in thread["turns"] for item in turn["items"]]
    said = [(item["type"], item.get("text") or item["content"][0]["text"]) for item in items
            if item["type"] in ("userMessage", "agentMessage")]
    expected = []
    for entry in store.paths.entries(middle.seq):
        message = entry.message or {}
        blocks = message.get("content")
        if message.get("role") == "user":
            expected.append(("userMessage", content_text(blocks)))
        elif message.get("role") == "assistant" and isinstance(blocks, list) and \
                any(b.get("type") == "text" for b in blocks):
            expected.append(("agentMessage", "".join(b["text"] for b in blocks if b.get("type") == "text")))
    assert said == expected and len(said) == 2
    # `codex resume` loads it: the thread resumes, idle, in the session's directory
    resumed = read_thread(codex, plan.native_id, "thread/resume", env=child_env)["thread"]
    assert resumed["id"] == plan.native_id and resumed["cwd"] == str(tmp_path)
    assert resumed["forkedFromId"] == session.uid
    # named after the branch, in Codex's own reader and its resume picker's list
    title = f"Add a --dry-run flag to the deploy script · main, up to {middle.id}"
    assert thread["name"] == title
    listed = read_thread(codex, plan.native_id, "thread/list", env=child_env)["data"]
    assert {item["id"]: item.get("name") for item in listed}[plan.native_id] == title
