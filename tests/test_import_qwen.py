"""Qwen Code's session files, as Qwen Code 0.24.4 wrote them (tests/fixtures/agents/qwen,
SOURCES.md there): what each kind of record becomes (core/agents/qwen/importer.py), usage
against Qwen Code's own figures, and a branch written back (core/agents/qwen/writer.py),
resumed by Qwen Code itself (opt-in: ARBOR_AGENT_NODE_MODULES, as tests/test_agent_lab.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from core import open_store
from core.agents import ResumeError, prepare_resume
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

sys.path.insert(0, str(Path(__file__).resolve().parent / "agent_lab"))

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "qwen"
PROJECT = "-tmp-arbor-lab-qwen-project"
MAIN = "fc36451c-e4ec-4673-8438-fa461b4d7952"
FORK = "2232232f-aea5-4eb0-a50a-7578af0ff974"
PARENT = "3cc576cf-ea1c-44c3-964a-409c53330786"


@pytest.fixture
def projects(tmp_path) -> Path:
    target = tmp_path / "home" / ".qwen" / "projects"
    shutil.copytree(FIXTURE / "projects", target)
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def branch_entries(store, uid: str):
    session = store.sessions.by_uid(uid)
    return store.paths.entries(store.branches.current(session.id).head_seq)


def roles(entries) -> list[str]:
    return [(e.message or {}).get("role") or e.type for e in entries
            if e.message or e.type == COMPACTION]


def test_a_session_is_its_records_tree_with_calls_paired_and_the_compression(store, projects):
    import_paths(store, [projects])
    session = store.sessions.by_uid(MAIN)
    assert session.cwd == "/tmp/arbor-lab/qwen/project" and session.source == "qwen"
    assert session.session_name == "list the files"
    entries = branch_entries(store, MAIN)
    assert roles(entries) == ["user", "assistant", "toolResult", "assistant", "user",
                              "assistant", "toolResult", "assistant", COMPACTION]
    calls = [b for e in entries if e.message for b in e.message["content"]
             if b.get("type") == "toolCall"]
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [c["id"] for c in calls] == [r["toolCallId"] for r in results] == \
        ["call_fake001_0", "call_fake003_0"]
    assert [c["name"] for c in calls] == ["run_shell_command", "read_file"]
    assert "hello from the lab" in content_text(results[1]["content"])
    compaction = entries[-1]
    assert compaction.data["summary"].startswith("<state_snapshot>The user listed the files")
    assert compaction.data["tokensBefore"] == 30000
    # what Qwen Code sends from there on is kept whole
    assert len(compaction.data["qwen"]["systemPayload"]["compressedHistory"]) == 3
    # the records every line repeats are kept once
    assert session.metadata["lineDefaults"]["version"] == "0.24.4"
    assert "cwd" not in entries[0].data["qwen"]


def test_usage_matches_qwen_codes_own_figures_per_session(store, projects):
    """~/.qwen/usage_record.jsonl (what /stats shows) counts each request of a run: the
    compression's two requests too, and in the parent the sub-agent's."""
    import_paths(store, [projects])
    recorded = {}
    for line in (FIXTURE / "usage_record.jsonl").read_text().splitlines():
        record = json.loads(line)
        recorded[record["sessionId"]] = record["models"]["qwen3-coder-plus"]   # (running totals)
    rows = {uid: figure for uid, _name, figure in store.usage.report(by="session").rows}
    for uid in (MAIN, FORK, PARENT):     # (the parent's row holds its sub-agent's)
        want, got = recorded[uid], rows[uid]
        assert (got.responses, got.input_tokens + got.cache_read_tokens,
                got.cache_read_tokens, got.output_tokens) == \
            (want["requests"], want["inputTokens"], want["cachedTokens"],
             want["outputTokens"]), uid
    assert rows[PARENT].subagent_tokens == 110 + 20 + 111 + 21
    # the fork's copies keep their uuids: once in the total
    totals = store.usage.report(by="model").totals
    assert totals.responses == 6 + 1 + 5
    # qwen3-coder-plus has no price in the table: an incomplete figure, never $0 alone
    assert "qwen3-coder-plus" in totals.unpriced


def test_a_fork_is_a_session_under_the_record_it_left_its_source_at(store, projects):
    import_paths(store, [projects])
    main, fork = store.sessions.by_uid(MAIN), store.sessions.by_uid(FORK)
    [child] = store.sessions.children(main.id)
    assert child.id == fork.id and child.kind == "fork"
    assert store.entries.get(child.spawn_seq).type == COMPACTION
    assert [content_text(e.message["content"]) for e in branch_entries(store, FORK)
            if e.message][-2:] == ["fork: say hi", "Hi from the fork."]


def test_a_sub_agent_is_nested_under_the_agent_call(store, projects):
    import_paths(store, [projects])
    parent = store.sessions.by_uid(PARENT)
    [spawned] = store.sessions.children(parent.id)
    assert spawned.kind == "subagent"
    call = store.entries.get(spawned.spawn_seq).message["content"][-1]
    assert call["name"] == "agent" and call["id"] == "call_fake008_0"
    child = store.sessions.get(spawned.id)
    assert child.session_name == "SUBTASK: count the files in the project"
    entries = branch_entries(store, child.uid)
    assert roles(entries) == ["user", "assistant", "assistant", "toolResult", "assistant"]
    assert entries[1].message["model"] == "qwen3-coder-plus"     # from its .meta.json
    with pytest.raises(ResumeError, match="sub-agent"):
        prepare_resume(store, child, env={"HOME": str(projects.parent.parent)})


def test_a_rewind_appended_makes_a_branch(store, projects):
    log = projects / PROJECT / "chats" / f"{PARENT}.jsonl"
    import_paths(store, [log])
    first = json.loads(log.read_text().splitlines()[0])
    # /rewind to the first prompt: Qwen Code re-roots the chain at the prompt's parent
    # (null), writes a rewind record there, then the new prompt below it
    rewind = {**first, "uuid": "r-1", "parentUuid": None, "type": "system", "subtype": "rewind",
              "systemPayload": {"targetTurnIndex": 0}}
    rewind.pop("message")
    prompt = {**first, "uuid": "r-2", "parentUuid": "r-1",
              "message": {"role": "user", "parts": [{"text": "say hello instead"}]}}
    with open(log, "a") as handle:
        handle.write(json.dumps(rewind) + "\n" + json.dumps(prompt) + "\n")
    report = import_paths(store, [log])
    assert report.entries_added == 2 and report.branches_added == 1
    assert [content_text(e.message["content"]) for e in branch_entries(store, PARENT)
            if e.message] == ["say hello instead"]


def test_the_branch_written_back_is_qwen_codes_fork_of_it(store, projects, tmp_path):
    """Every record as Qwen Code wrote it, under the new session id with `forkedFrom`, as
    `--fork-session` writes them, then a title."""
    import_paths(store, [projects])
    session = store.sessions.by_uid(MAIN)
    plan = prepare_resume(store, session, env={"HOME": str(tmp_path / "out"), "PATH": ""})
    assert plan.argv == ["qwen", "--resume", plan.native_id]
    assert plan.file.parent == tmp_path / "out" / ".qwen" / "projects" / PROJECT / "chats"
    original = [json.loads(line) for line in
                (projects / PROJECT / "chats" / f"{MAIN}.jsonl").read_text().splitlines()]
    written = [json.loads(line) for line in plan.file.read_text().splitlines()]
    assert written[-1]["subtype"] == "custom_title"
    for before, after in zip(original, written[:-1], strict=True):
        assert after.pop("forkedFrom") == {"sessionId": MAIN, "messageUuid": before["uuid"]}
        assert after.pop("sessionId") == plan.native_id
        before.pop("sessionId")
        assert after == before


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="@qwen-code/qwen-code not installed: run "
    "tests/agent_lab/install_agents.sh DIR and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_qwen_code_itself_resumes_an_earlier_point_of_the_branch(store, tmp_path):
    """Qwen Code runs a session; arbor writes it back up to the first answer; `qwen
    --resume <id>` sends exactly that branch, then the new prompt."""
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab, npm_bin
    from make_qwen import MODEL, qwen_env, settings

    if npm_bin("qwen") is None:
        pytest.skip("@qwen-code/qwen-code not installed")
    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("run_shell_command", {"command": "ls"})])),
             (last_says("Command: ls\n"), Reply("There is one file: notes.txt.")),
             (last_says("now say bye"), Reply("Bye."))]
    with FakeModelServer(rules=rules, model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello\n")
        base = [npm_bin("qwen"), "-m", MODEL, "--yolo"]
        env = qwen_env(lab)
        assert lab.run(base + ["-p", "list the files"], env=env).returncode == 0
        assert lab.run(base + ["--continue", "-p", "now say bye"], env=env).returncode == 0
        import_paths(store, [lab.home / ".qwen" / "projects"])
        [session] = store.sessions.list()
        entries = branch_entries(store, session.uid)
        answer = next(e for e in entries if e.message and
                      content_text(e.message["content"]) == "There is one file: notes.txt.")
        plan = prepare_resume(store, store.sessions.get(session.id), at_seq=answer.seq, env=env)
        asked = len(server.model_requests)
        done = lab.run(base + plan.argv[1:] + ["-p", "and then?"], env=env, cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    said = [(m["role"], m["text"].strip()) for m in server.model_requests[asked].conversation()
            if m["role"] != "system"]
    texts = " | ".join(text for _role, text in said)
    assert "list the files" in texts and "There is one file: notes.txt." in texts
    assert "now say bye" not in texts and "Bye." not in texts
    assert said[-1][0] == "user" and said[-1][1].endswith("and then?")
