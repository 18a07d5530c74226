"""`o` / `arbor resume` for GitHub Copilot CLI (core/agents/copilot/writer.py): a branch
written as a new Copilot session (`session-state/<uuid>/events.jsonl`), resumed with
`copilot --resume=<uuid>`.

The last tests run the real Copilot CLI (opt-in, like tests/test_agent_lab.py): it loads a
session arbor wrote (no index, no signature: the log alone) and its first request holds
exactly the branch, then the new prompt."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.agents.copilot.writer import INTERRUPTED
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "agents" / "copilot" / "session-state"
MAIN = "fd8ec7af-de2c-46f5-8d2f-101d6e2af536"
HELPER = "aa98647b-0726-4980-8b87-ce54651693ff"      # a task call and its sub-agent


@pytest.fixture
def state(tmp_path) -> Path:
    target = tmp_path / "home" / ".copilot" / "session-state"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture
def store(tmp_path, state):
    s = open_store(tmp_path / "arbor.db")
    import_paths(s, [state])
    yield s
    s.close()


def main_session(store):
    return store.sessions.get(store.sessions.by_uid(MAIN).id)


def path_of(store, session):
    return store.paths.entries(store.branches.current(session.id).head_seq)


def said(entries) -> list[tuple]:
    out = []
    for e in entries:
        if e.message:
            content = e.message["content"]
            calls = tuple(b["name"] for b in content if isinstance(b, dict) and
                          b.get("type") == "toolCall") if isinstance(content, list) else ()
            out.append((e.message["role"], " ".join(content_text(content).split()), calls))
    return out


def events_of(plan) -> list[dict]:
    return [json.loads(line) for line in plan.file.read_text().splitlines()]


def env_for(state) -> dict:
    return {"HOME": str(state.parent.parent), "PATH": ""}


def test_an_earlier_point_is_a_new_copilot_session_of_that_branch(store, state, tmp_path):
    session = main_session(store)
    answer = next(e for e in path_of(store, session) if e.message and
                  content_text(e.message["content"]) == "There is one file: notes.txt.")
    plan = prepare_resume(store, session, at_seq=answer.seq, env=env_for(state))
    assert plan.file == state / plan.native_id / "events.jsonl"
    assert plan.argv == ["copilot", f"--resume={plan.native_id}"] and not plan.before
    events = events_of(plan)
    start = events[0]
    assert start["type"] == "session.start" and start["parentId"] is None
    assert start["data"]["sessionId"] == plan.native_id
    assert start["data"]["context"] == {"cwd": "/tmp/arbor-lab/copilot/project"}
    assert start["data"]["selectedModel"] == "gpt-4.1"
    # one chain of new event ids
    assert all(b["parentId"] == a["id"] for a, b in zip(events, events[1:]))
    original = {json.loads(line)["id"] for line in
                (FIXTURE / MAIN / "events.jsonl").read_text().splitlines()}
    assert not original & {e["id"] for e in events}
    assert [e["type"] for e in events] == [
        "session.start", "user.message", "system.message", "assistant.message",
        "tool.execution_start", "tool.execution_complete", "assistant.message"]
    user = events[1]["data"]
    assert user["content"] == "list the files"
    assert user["transformedContent"].endswith("\n\nlist the files")     # what was sent, kept
    call = events[3]["data"]["toolRequests"][0]
    assert (call["toolCallId"], call["name"], call["arguments"]) == \
        ("call_fake001_0", "bash", {"command": "ls", "description": "list files"})
    done = events[5]["data"]
    assert done["success"] is True and done["result"]["content"].startswith("notes.txt\n")
    assert not any(e["type"] == "session.usage_record" for e in events)
    workspace = (plan.file.parent / "workspace.yaml").read_text()
    assert f'id: "{plan.native_id}"' in workspace and "user_named: true" in workspace
    # read back by arbor: the same branch, named after it, and no usage counted twice
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(again, [plan.file])
        copy = again.sessions.by_uid(plan.native_id)
        assert said(path_of(again, copy)) == said(store.paths.entries(answer.seq))
        assert copy.session_name.startswith("list the files · main, up to ")
        assert again.usage.report(by="model").totals.responses == 0
    finally:
        again.close()


def test_a_call_without_its_result_gets_a_failed_result(store, state):
    session = main_session(store)
    call = next(e for e in path_of(store, session) if e.message and
                e.message["role"] == "assistant")
    plan = prepare_resume(store, session, at_seq=call.seq, env=env_for(state))
    last = events_of(plan)[-1]
    assert last["type"] == "tool.execution_complete"
    assert last["data"] == {"toolCallId": "call_fake001_0", "success": False,
                            "error": {"message": INTERRUPTED}}


def test_copilots_compaction_is_written_as_copilot_wrote_it(store, state):
    session = main_session(store)
    compaction = next(e for e in path_of(store, session) if e.type == COMPACTION)
    plan = prepare_resume(store, session, at_seq=compaction.seq, env=env_for(state))
    events = events_of(plan)
    assert [e["type"] for e in events[-2:]] == ["session.compaction_start",
                                                "session.compaction_complete"]
    done = events[-1]["data"]
    assert done["success"] is True and done["messagesRemoved"] == 7
    assert done["summaryContent"].startswith("<summary>The user listed the files")
    assert "checkpointPath" not in done      # (that checkpoint is the original session's)


def test_a_compaction_made_in_arbor_starts_before_what_it_keeps(store, state, tmp_path):
    """Copilot goes on from an applied compaction's summary, then what was said after its
    `compaction_start`: a compaction that keeps entries starts just before the first."""
    session = store.sessions.get(store.sessions.by_uid(HELPER).id)
    branch = store.branches.current(session.id)
    operations.compact(store, branch.id, summary="All of it, briefly.", keep_recent_tokens=20)
    branch = store.branches.get(branch.id)
    path = store.paths.entries(branch.head_seq)
    assert path[-1].data["firstKeptEntryId"]
    compaction = path[-1]
    ids = [e.id for e in path]
    kept = next(e for e in path[ids.index(compaction.data["firstKeptEntryId"]):] if e.message)
    plan = prepare_resume(store, session, branch, env=env_for(state))
    events = events_of(plan)
    done = events[-1]
    assert done["type"] == "session.compaction_complete"
    assert done["data"]["success"] is True and done["data"]["outcome"] == "applied"
    assert done["data"]["summaryContent"] == "All of it, briefly."
    start = next(e for e in events if e["type"] == "session.compaction_start" and
                 e["data"]["compactionAttemptId"] == done["data"]["compactionAttemptId"])
    after = events[events.index(start) + 1]
    assert after["data"].get("content") == content_text(kept.message["content"])
    # read back: the same compaction, keeping the same entries
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(again, [plan.file])
        copy = again.sessions.by_uid(plan.native_id)
        entries = path_of(again, copy)
        last = entries[-1]
        assert last.type == COMPACTION and last.data["summary"] == "All of it, briefly."
        first = next(e for e in entries if e.id == last.data["firstKeptEntryId"])
        assert content_text(first.message["content"]) == content_text(kept.message["content"])
        assert said(entries) == said(store.paths.entries(branch.head_seq))
    finally:
        again.close()


# ------------------------------------------------------------- the real Copilot CLI
needs_copilot = pytest.mark.skipif(
    not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="@github/copilot not installed: run "
    "tests/agent_lab/install_agents.sh DIR and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")


def _copilot():
    sys.path.insert(0, str(HERE / "agent_lab"))
    from lab import npm_bin

    found = npm_bin("copilot")
    if found is None:
        pytest.skip("@github/copilot not installed")
    return found


def _sent(request) -> list[tuple[str, str]]:
    return [(m["role"], m["text"].strip()) for m in request.conversation() if m["role"] != "system"]


@needs_copilot
def test_copilot_itself_resumes_an_earlier_point_of_the_branch(tmp_path):
    """Copilot runs a session of two turns ("list the files": a bash call and its answer,
    then "now say bye"); arbor writes the branch up to the first turn's answer as a new
    session; `copilot --resume=<new id> -p …` (what `o` runs, headless) loads it and its
    first request holds exactly that branch, then the new prompt."""
    copilot = _copilot()
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab
    from make_copilot import MODEL, copilot_env

    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("now say bye"), Reply("Bye.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("bash", {"command": "ls", "description": "list"})]))]
    store = open_store(tmp_path / "arbor.db")
    try:
        with FakeModelServer(rules=rules, default=Reply("There is one file: notes.txt."),
                             model=MODEL) as server:
            lab = new_lab(tmp_path / "lab", server)
            (lab.project / "notes.txt").write_text("hello\n")
            env = copilot_env(lab)
            base = [copilot, "--allow-all-tools", "--disable-client-telemetry"]
            assert lab.run(base + ["-p", "list the files"], env=env).returncode == 0
            state = lab.home / ".copilot" / "session-state"
            first = next(p.name for p in state.iterdir())
            assert lab.run(base + [f"--resume={first}", "-p", "now say bye"],
                           env=env).returncode == 0
            import_paths(store, [state])
            [listed] = store.sessions.list()
            session = store.sessions.get(listed.id)
            answer = next(e for e in path_of(store, session) if e.message and
                          content_text(e.message["content"]) == "There is one file: notes.txt.")
            plan = prepare_resume(store, session, at_seq=answer.seq, env=env)
            assert plan.file.parent.parent == state and plan.native_id != first
            asked = len(server.model_requests)
            done = lab.run(base + plan.argv[1:] + ["-p", "and then?"], env=env,
                           cwd=Path(plan.cwd))
            assert done.returncode == 0, done.stderr
        assert "Resumed." in done.stdout and plan.native_id in done.stdout + done.stderr
        sent = _sent(server.model_requests[asked])
        assert [role for role, _text in sent] == ["user", "assistant", "tool", "assistant", "user"], sent
        assert sent[0][1].endswith("list the files")
        assert "notes.txt" in sent[2][1]
        assert sent[3][1] == "There is one file: notes.txt."
        assert sent[4][1].endswith("and then?")
        assert not any("bye" in text.lower() for _role, text in sent)
        # what Copilot added to the session arbor wrote is read on the next import
        import_paths(store, [state])
        copy = store.sessions.by_uid(plan.native_id)
        assert said(path_of(store, copy))[-2:] == [("user", "and then?", ()),
                                                   ("assistant", "Resumed.", ())]
    finally:
        store.close()


@needs_copilot
def test_copilot_itself_resumes_after_its_compaction_from_a_written_session(store, tmp_path):
    """The fixture's session (Copilot's own `/compact` applied) written back up to its
    compaction: Copilot goes on from the summary, as it does in its own session."""
    copilot = _copilot()
    from fake_model_server import FakeModelServer, Reply
    from lab import new_lab
    from make_copilot import MODEL, copilot_env

    with FakeModelServer([Reply("Resumed.")], default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        env = copilot_env(lab)
        session = main_session(store)
        compaction = next(e for e in path_of(store, session) if e.type == COMPACTION)
        plan = prepare_resume(store, session, at_seq=compaction.seq, env=env,
                              cwd_fallback=str(lab.project))
        done = lab.run([copilot, "--allow-all-tools", "--disable-client-telemetry",
                        *plan.argv[1:], "-p", "and then?"], env=env, cwd=lab.project)
        assert done.returncode == 0, done.stderr
    sent = _sent(server.model_requests[0])
    assert [role for role, _text in sent] == ["user", "user"], sent
    assert "<summary>The user listed the files (notes.txt) and read notes.txt.</summary>" in sent[0][1]
    assert sent[1][1].endswith("and then?")


@needs_copilot
def test_copilot_itself_goes_on_from_a_compaction_made_in_arbor(store, tmp_path):
    """A compaction made in arbor (keeping the newest entries) written as Copilot's own:
    Copilot sends its summary, then exactly the entries it kept, then the new prompt."""
    copilot = _copilot()
    from fake_model_server import FakeModelServer, Reply
    from lab import new_lab
    from make_copilot import MODEL, copilot_env

    session = store.sessions.get(store.sessions.by_uid(HELPER).id)
    branch = store.branches.current(session.id)
    operations.compact(store, branch.id, summary="All of it, briefly.", keep_recent_tokens=20)
    branch = store.branches.get(branch.id)
    path = store.paths.entries(branch.head_seq)
    ids = [e.id for e in path]
    kept = [e for e in path[ids.index(path[-1].data["firstKeptEntryId"]):-1] if e.message]
    with FakeModelServer([Reply("Resumed.")], default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        env = copilot_env(lab)
        plan = prepare_resume(store, session, branch, env=env, cwd_fallback=str(lab.project))
        done = lab.run([copilot, "--allow-all-tools", "--disable-client-telemetry",
                        *plan.argv[1:], "-p", "and then?"], env=env, cwd=lab.project)
        assert done.returncode == 0, done.stderr
    sent = _sent(server.model_requests[0])
    assert "All of it, briefly." in sent[0][1] and sent[0][0] == "user"
    assert [text for _role, text in sent[1:-1]] == \
        [content_text(e.message["content"]).strip() for e in kept]
    assert sent[-1][1].endswith("and then?")
    # (Copilot's own summary message also quotes the user's earlier prompts: its way)
