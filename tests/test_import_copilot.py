"""GitHub Copilot CLI's sessions, as Copilot CLI 1.0.102 wrote them (tests/fixtures/agents/copilot,
SOURCES.md there): what each kind of event becomes (core/agents/copilot/importer.py), usage
against Copilot's own figures, and `o` at the end of a session, run by Copilot itself
(opt-in: ARBOR_AGENT_NODE_MODULES, as tests/test_agent_lab.py)."""

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
from core.usage.tokens import MODEL_REQUEST

sys.path.insert(0, str(Path(__file__).resolve().parent / "agent_lab"))

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "copilot"
MAIN = "fd8ec7af-de2c-46f5-8d2f-101d6e2af536"       # runs 1, 2 and 4 (resumed twice, /compact)
HELPER = "aa98647b-0726-4980-8b87-ce54651693ff"     # run 3: a task call and its sub-agent
CALL = "call_fake006_0"


@pytest.fixture
def state(tmp_path) -> Path:
    target = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(FIXTURE / "session-state", target)
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def events(uid: str) -> list[dict]:
    path = FIXTURE / "session-state" / uid / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def branch_entries(store, uid: str):
    session = store.sessions.by_uid(uid)
    return store.paths.entries(store.branches.current(session.id).head_seq)


def said(entries) -> list[tuple[str, str]]:
    """(role, text) of each message: its text blocks (tool calls left out)."""
    return [(e.message["role"], " ".join(" ".join(
        b.get("text", "") for b in e.message["content"] if b.get("type") == "text").split()))
        for e in entries if e.message]


def test_a_session_is_its_events_with_resumes_calls_paired_and_the_compaction(store, state):
    import_paths(store, [state])
    session = store.sessions.by_uid(MAIN)
    assert session.source == "copilot" and session.cwd == "/tmp/arbor-lab/copilot/project"
    assert session.session_name == "list the files"           # workspace.yaml's name
    assert session.metadata["workspace"]["summary_count"] == 1
    entries = branch_entries(store, MAIN)
    # the three runs (two resumes appended to the same file) are one branch
    assert len(store.branches.of_session(session.id)) == 1
    assert [role for role, _text in said(entries)] == [
        "user", "assistant", "toolResult", "assistant",
        "user", "assistant", "toolResult", "assistant"]
    assert said(entries)[0] == ("user", "list the files")     # what was typed, not what was sent
    assert entries[0].data["copilot"]["transformedContent"].startswith("<current_datetime>")
    calls = [b for e in entries if e.message for b in e.message["content"]
             if b.get("type") == "toolCall"]
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [(c["id"], c["name"]) for c in calls] == [("call_fake001_0", "bash"),
                                                     ("call_fake003_0", "view")]
    assert [(r["toolCallId"], r["toolName"], r["isError"]) for r in results] == \
        [("call_fake001_0", "bash", False), ("call_fake003_0", "view", False)]
    assert calls[0]["arguments"] == {"command": "ls", "description": "list files"}
    assert content_text(results[1]["content"]) == "hello from the lab\n"
    view = next(e for e in entries if e.message and e.message.get("toolCallId") == "call_fake003_0")
    assert view.data["copilot"]["result"]["detailedContent"].startswith("\ndiff --git")
    assert view.data["copilot"]["start"]["toolTitle"] == "Viewing file"
    # /compact: the summary Copilot goes on from, at the end of the branch
    compaction = entries[-2]
    assert compaction.type == COMPACTION
    assert compaction.data["summary"] == ("<summary>The user listed the files (notes.txt) "
                                          "and read notes.txt.</summary>")
    assert compaction.data["tokensBefore"] == 10614
    assert compaction.data["firstKeptEntryId"] is None
    assert compaction.data["copilot"]["start"]["trigger"] == "manual"
    assert [e["type"] for e in compaction.data["copilot"]["modelEvents"]][-1] == \
        "model.messages_snapshot"
    # what else Copilot wrote is kept, in its place
    kinds = [e.type for e in entries if not e.message]
    assert kinds == ["copilot:system.message", "copilot:session.shutdown",
                     "copilot:session.resume", MODEL_REQUEST, "copilot:session.shutdown",
                     "copilot:session.resume", MODEL_REQUEST, COMPACTION,
                     "copilot:session.shutdown"]
    assert entries[-1].data["copilot"]["data"]["shutdownType"] == "routine"
    assert session.metadata["start"]["copilotVersion"] == "1.0.102"


def test_the_cancelled_background_compaction_is_its_request_only(store, state):
    import_paths(store, [state])
    entries = branch_entries(store, MAIN)
    cancelled = next(e for e in entries if e.type == MODEL_REQUEST and "copilot" in e.data)
    assert cancelled.data["copilot"]["data"]["outcome"] == "cancelled"
    assert cancelled.data["request"]["usage"]["input"] == 400
    assert sum(e.type == COMPACTION for e in entries) == 1


def test_a_background_compaction_applied_keeps_what_was_said_after_it_started(store, state):
    """Copilot compacts in the background and goes on answering; applied later, the
    compaction keeps the messages written after it started (here: the cancelled one of run
    2, made applied)."""
    log = state / MAIN / "events.jsonl"
    lines = events(MAIN)
    for event in lines:
        if event["type"] == "session.compaction_complete" and event["data"]["outcome"] == "cancelled":
            event["data"].update(success=True, outcome="applied", summaryContent="early summary",
                                 preCompactionTokens=19027)
    log.write_text("".join(json.dumps(e) + "\n" for e in lines))
    import_paths(store, [log])
    entries = branch_entries(store, MAIN)
    early = next(e for e in entries if e.type == COMPACTION and e.data["summary"] == "early summary")
    answer = next(e for e in entries if e.message and
                  content_text(e.message["content"]) == "notes.txt says: hello from the lab.")
    assert early.data["firstKeptEntryId"] == answer.id and answer.seq < early.seq
    assert early.data["tokensBefore"] == 19027
    assert len(store.branches.of_session(store.sessions.by_uid(MAIN).id)) == 1


def test_usage_is_copilots_own_figures_plus_its_compactions(store, state):
    """Copilot's `session.shutdown` (what `/usage` and the `Tokens ↑ ↓` line show) counts the
    session's requests, its sub-agents' included; arbor counts the compactions' requests
    (`compactionTokensUsed`) too."""
    import_paths(store, [state])
    rows = {uid: figure for uid, _name, figure in store.usage.report(by="session").rows}
    for uid in (MAIN, HELPER):
        shutdown = [e for e in events(uid) if e["type"] == "session.shutdown"][-1]["data"]
        [(model, metrics)] = shutdown["modelMetrics"].items()
        want = metrics["usage"]
        compactions = [e["data"]["compactionTokensUsed"] for e in events(uid)
                       if e["type"] == "session.compaction_complete"]
        got = rows[uid]
        assert got.responses == metrics["requests"]["count"] + len(compactions), uid
        assert got.input_tokens + got.cache_read_tokens == \
            want["inputTokens"] + sum(c["inputTokens"] for c in compactions), uid
        assert got.cache_read_tokens == want["cacheReadTokens"], uid
        assert got.output_tokens == want["outputTokens"] + sum(c["outputTokens"] for c in compactions)
        assert model in got.models
    assert (rows[MAIN].responses, rows[MAIN].input_tokens, rows[MAIN].cache_read_tokens,
            rows[MAIN].output_tokens) == (6, 19_108, 1_000, 110)
    # the sub-agent's requests, shown apart: its own count (subagent.completed totalTokens)
    completed = next(e for e in events(HELPER) if e["type"] == "subagent.completed")
    assert rows[HELPER].subagent_tokens == completed["data"]["totalTokens"] == 250
    # keyed by the request: a copy of the session counts once in any total
    answer = next(e for e in branch_entries(store, MAIN)
                  if e.message and e.message["role"] == "assistant")
    assert answer.message["responseId"] == "copilot:chatcmpl-fake0001"
    assert answer.message["usage"] == {"input": 101, "output": 11, "cacheRead": 0,
                                       "cacheWrite": 0, "reasoning": 0}
    # Copilot's `cost` (premium requests) is kept, never taken as money
    assert answer.data["copilot"]["usageRecord"]["isByok"] is True


def test_a_sub_agent_is_a_session_under_its_task_call(store, state):
    import_paths(store, [state])
    parent = store.sessions.by_uid(HELPER)
    [spawned] = store.sessions.children(parent.id)
    assert spawned.kind == "subagent"
    call = store.entries.get(spawned.spawn_seq).message["content"][-1]
    assert (call["name"], call["id"]) == ("task", CALL)
    child = store.sessions.get(spawned.id)
    assert child.uid == f"{HELPER}:{CALL}" and child.session_name == "Count files (explore)"
    assert said(branch_entries(store, child.uid)) == [
        ("user", "SUBTASK: count the files in the project"),
        ("assistant", "Counting."), ("toolResult", "1 <shellId: 0 completed with exit code 0>"),
        ("assistant", "The sub-agent counted 1 file.")]
    assert [e["type"] for e in child.metadata["events"]] == [
        "subagent.started", "subagent.selected", "subagent.configured",
        "session.model_change", "subagent.completed"]
    # the parent's branch: the call, its result (the sub-agent's answer), the answer
    assert said(branch_entries(store, HELPER)) == [
        ("user", "ask a helper to count the files"), ("assistant", "I will ask a helper."),
        ("toolResult", "The sub-agent counted 1 file."),
        ("assistant", "The helper says there is 1 file.")]
    with pytest.raises(ResumeError, match="sub-agent"):
        prepare_resume(store, child, env={"HOME": str(state.parent.parent)})


def test_a_response_still_being_written_is_counted_once_it_is_whole(store, state):
    """Live: the file ends after a usage record, before its answer; read again once the
    answer is there, the answer carries the usage, counted once."""
    log = state / MAIN / "events.jsonl"
    whole = log.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(whole) if '"session.usage_record"' in line) + 1
    log.write_text("".join(whole[:cut]))
    import_paths(store, [log])
    assert store.usage.report(by="model").totals.responses == 0
    log.write_text("".join(whole))
    import_paths(store, [log])
    totals = store.usage.report(by="model").totals
    assert totals.responses == 6 and totals.output_tokens == 110


def test_an_event_naming_an_earlier_one_makes_a_branch_and_unknown_events_are_kept(store, state):
    log = state / HELPER / "events.jsonl"
    import_paths(store, [log])
    lines = events(HELPER)
    first_answer = next(e for e in lines if e["type"] == "assistant.message")
    prompt = next(e for e in lines if e["type"] == "user.message")
    retry = {**prompt, "id": "r-1", "parentId": first_answer["id"],
             "data": {**prompt["data"], "content": "no, count them yourself"}}
    odd = {"type": "session.something_new", "data": {"x": 1}, "id": "r-2", "parentId": "r-1",
           "timestamp": prompt["timestamp"]}
    with open(log, "a") as handle:
        handle.write(json.dumps(retry) + "\n" + json.dumps(odd) + "\n")
    report = import_paths(store, [log])
    assert report.entries_added == 2 and report.branches_added == 1
    entries = branch_entries(store, HELPER)
    assert said(entries)[-2:] == [("assistant", "I will ask a helper."),
                                  ("user", "no, count them yourself")]
    assert entries[-1].type == "copilot:session.something_new"
    assert entries[-1].data["copilot"]["data"] == {"x": 1}


def test_discover_finds_copilots_folder_and_copilot_home(tmp_path):
    from core.importing.files import discover

    home = tmp_path / "home"
    (home / ".copilot" / "session-state").mkdir(parents=True)
    moved = tmp_path / "elsewhere"
    (moved / "session-state").mkdir(parents=True)
    assert home / ".copilot" / "session-state" in [p for p in discover(home, {})]
    assert moved / "session-state" in [p for p in discover(home, {"COPILOT_HOME": str(moved)})]


def test_o_resumes_the_end_of_copilots_own_session_and_writes_an_earlier_point(store, state):
    import_paths(store, [state])
    session = store.sessions.get(store.sessions.by_uid(MAIN).id)
    plan = prepare_resume(store, session, env={"HOME": str(state.parent.parent), "PATH": ""})
    assert plan.argv == ["copilot", f"--resume={MAIN}"] and plan.file is None
    assert plan.cwd == "/tmp/arbor-lab/copilot/project"
    earlier = next(e.seq for e in branch_entries(store, MAIN) if e.message)
    plan = prepare_resume(store, session, at_seq=earlier, env={"HOME": str(state.parent.parent)})
    assert plan.file == state / plan.native_id / "events.jsonl"
    assert plan.argv == ["copilot", f"--resume={plan.native_id}"]
    with pytest.raises(ResumeError, match="sub-agent"):
        child = store.sessions.children(store.sessions.by_uid(HELPER).id)[0]
        prepare_resume(store, store.sessions.get(child.id), env={"HOME": str(state.parent.parent)})


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="@github/copilot not "
    "installed: run tests/agent_lab/install_agents.sh DIR and set "
    "ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_copilot_itself_carries_on_from_what_arbor_imported(store, tmp_path):
    """Copilot runs a session; arbor imports it; the command `o` runs (`copilot
    --resume=<id>`, from the session's folder) sends exactly that session, then the prompt."""
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab, npm_bin
    from make_copilot import MODEL, copilot_env

    if npm_bin("copilot") is None:
        pytest.skip("@github/copilot not installed")
    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("bash", {"command": "ls", "description": "list"})]))]
    with FakeModelServer(rules=rules, default=Reply("There is one file: notes.txt."),
                         model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        (lab.project / "notes.txt").write_text("hello\n")
        env = copilot_env(lab)
        base = [npm_bin("copilot"), "--allow-all-tools", "--disable-client-telemetry"]
        assert lab.run(base + ["-p", "list the files"], env=env).returncode == 0
        import_paths(store, [lab.home / ".copilot" / "session-state"])
        [listed] = store.sessions.list()
        session = store.sessions.get(listed.id)
        plan = prepare_resume(store, session, env=env)
        assert plan.argv[0] == "copilot" and plan.cwd == str(lab.project)
        asked = len(server.model_requests)
        done = lab.run(base + plan.argv[1:] + ["-p", "and then?"], env=env, cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    conversation = [(m["role"], m["text"].strip()) for m in server.model_requests[asked].conversation()
                    if m["role"] != "system"]
    texts = " | ".join(text for _role, text in conversation)
    assert "list the files" in texts and "There is one file: notes.txt." in texts
    assert conversation[-1][0] == "user" and conversation[-1][1].endswith("and then?")
    # what Copilot added is read on the next import, on the same branch
    import_paths(store, [lab.home / ".copilot" / "session-state"])
    entries = store.paths.entries(store.branches.current(session.id).head_seq)
    assert said(entries)[-2:] == [("user", "and then?"), ("assistant", "Resumed.")]
    assert len(store.branches.of_session(session.id)) == 1


# ------------------------------------------------------------------ /rewind and /fork
# tests/fixtures/agents/copilot/tree: Copilot CLI's own TUI driven in tmux (SOURCES.md there):
# "say one", "say two", `/rewind` to turn 2, "say three", `/fork`, "say four" (in the fork).
TREE = FIXTURE / "tree"
ORIGINAL = "acf590f5-226e-40ab-af74-de8c5101123d"
FORKED = "423180a0-3b55-4986-ba30-2073b7db4017"


def _said(store, head_seq):
    return [content_text(e.message["content"]) for e in store.paths.entries(head_seq)
            if e.message and e.message.get("role") in ("user", "assistant")
            and content_text(e.message["content"]).strip()]


def test_a_rewind_is_a_branch_from_where_it_went_back_and_the_undone_turn_stays(tmp_path, store):
    # arbor read the session before the rewind (as its live follow does), then Copilot
    # rewrote events.jsonl without turn 2: turn 2 stays, as its own branch
    target = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(TREE / "before-rewind" / "session-state", target)
    import_paths(store, [target])
    shutil.rmtree(target)
    shutil.copytree(TREE / "session-state", target)
    import_paths(store, [target / ORIGINAL / "events.jsonl"])
    session = store.sessions.by_uid(ORIGINAL)
    branches = store.branches.of_session(session.id)
    current = store.branches.current(session.id)
    assert _said(store, current.head_seq) == ["say one", "One.", "say three", "Three."]
    assert sorted(_said(store, b.head_seq)[-2:] for b in branches if b.id != current.id) == \
        [["say two", "Two."]]
    assert store.sessions.metadata(session.id)["rewinds"] == [
        "f393b305-1837-49f0-b67e-398a5fb658fb"]


def test_a_fork_is_a_session_nested_under_its_original(tmp_path, store):
    target = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(TREE / "session-state", target)
    import_paths(store, [target])
    original = store.sessions.by_uid(ORIGINAL)
    [fork] = store.sessions.children(original.id)
    assert fork.kind == "fork" and fork.id == store.sessions.by_uid(FORKED).id
    # under the last entry it shares with its original ("Three."), going on from there
    assert content_text(store.entries.get(fork.spawn_seq).message["content"]) == "Three."
    assert _said(store, store.branches.current(fork.id).head_seq) == [
        "say one", "One.", "say three", "Three.", "say four", "Four."]


def test_a_session_first_read_after_its_rewind_gets_the_undone_turn_from_the_index(tmp_path,
                                                                                  store):
    # the events file no longer holds turn 2; Copilot's session-store.db still does
    home = tmp_path / "home" / ".copilot"
    shutil.copytree(TREE / "session-state", home / "session-state")
    shutil.copy(TREE / "session-store.db", home / "session-store.db")
    import_paths(store, [home / "session-state" / ORIGINAL / "events.jsonl"])
    session = store.sessions.by_uid(ORIGINAL)
    current = store.branches.current(session.id)
    assert _said(store, current.head_seq) == ["say one", "One.", "say three", "Three."]
    [other] = [b for b in store.branches.of_session(session.id) if b.id != current.id]
    assert _said(store, other.head_seq) == ["say one", "One.", "say two", "Two."]
    # read again: nothing more
    import_paths(store, [home / "session-state" / ORIGINAL / "events.jsonl"])
    assert len(store.branches.of_session(session.id)) == 2


def test_the_index_adds_nothing_when_the_undone_turn_was_read_before(tmp_path, store):
    home = tmp_path / "home" / ".copilot"
    shutil.copytree(TREE / "before-rewind" / "session-state", home / "session-state")
    import_paths(store, [home / "session-state"])
    shutil.rmtree(home / "session-state")
    shutil.copytree(TREE / "session-state", home / "session-state")
    shutil.copy(TREE / "session-store.db", home / "session-store.db")
    import_paths(store, [home / "session-state" / ORIGINAL / "events.jsonl"])
    session = store.sessions.by_uid(ORIGINAL)
    assert [sorted(_said(store, b.head_seq)) for b in store.branches.of_session(session.id)
            if "say two" in _said(store, b.head_seq)] == [["One.", "Two.", "say one", "say two"]]
