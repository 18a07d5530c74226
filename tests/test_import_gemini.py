"""Gemini CLI's session files, as Gemini CLI 0.61.0 wrote them (tests/fixtures/agents/gemini,
SOURCES.md there): what each kind of line becomes (core/agents/gemini/importer.py)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "gemini" / "gemini-tmp"
MAIN = "f53b9475-d2f5-494d-89bd-d5908ca8423e"
PARENT = "d357f1d9-79e9-43ff-a2aa-9112d1a80f77"
CHILD = "a01fecd6-15c5-499b-83a8-397e193c0f59"


@pytest.fixture
def tree(tmp_path) -> Path:
    target = tmp_path / "home" / ".gemini" / "tmp"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def branch_entries(store, uid: str):
    session = store.sessions.by_uid(uid)
    return store.paths.entries(store.branches.current(session.id).head_seq)


def test_a_resumed_and_compressed_session_is_one_branch_with_a_compaction(store, tree):
    import_paths(store, [tree])
    session = store.sessions.by_uid(MAIN)
    assert session.cwd == "/tmp/arbor-lab/gemini/project"      # from .project_root
    assert len(store.branches.of_session(session.id)) == 1       # the resume adds nothing
    entries = branch_entries(store, MAIN)
    roles = [(e.message or {}).get("role") or e.type for e in entries]
    assert roles == ["user", "user", "assistant", "assistant", "toolResult", "assistant",
                     "user", "assistant", "assistant", "toolResult", COMPACTION, "assistant"]
    compaction = entries[10]
    assert compaction.data["summary"].startswith("<state_snapshot>")
    # the kept tail came back under new ids: the first kept entry is the one it copies
    kept = next(e for e in entries if e.id == compaction.data["firstKeptEntryId"])
    assert content_text(kept.message["content"]) == "now read notes.txt"
    # each tool call is paired with its result; the result sent back again adds nothing
    calls = [b for e in entries if e.message for b in e.message["content"]
             if isinstance(b, dict) and b.get("type") == "toolCall"]
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [c["id"] for c in calls] == [r["toolCallId"] for r in results] == \
        ["run_shell_command__gemini_call001_0", "read_file__gemini_call003_0"]
    assert "notes.txt" in content_text(results[0]["content"])


def test_usage_is_each_records_tokens_once(store, tree):
    import_paths(store, [tree / "project" / "chats" /
                         "session-2026-12-06T22-20-f53b9475.jsonl"])
    totals = store.usage.report(by="model").totals
    # four model turns (72f9…, 1057…, e7bf…, 5c8a…), each written once or twice
    assert totals.responses == 4
    assert totals.input_tokens == 101 + 102 + 900000 + 106
    assert totals.output_tokens == 11 + 12 + 15 + 16
    assert totals.cost_usd > 0                                    # priced from the table


def test_a_sub_agent_is_nested_under_the_invoke_agent_call(store, tree):
    import_paths(store, [tree])
    parent = store.sessions.by_uid(PARENT)
    child = store.sessions.by_uid(CHILD)
    [spawned] = store.sessions.children(parent.id)
    assert spawned.id == child.id and spawned.kind == "subagent"
    spawn = store.entries.get(spawned.spawn_seq)
    assert spawn.message["content"][0]["name"] == "invoke_agent"
    assert [e.message["content"][0]["name"] for e in branch_entries(store, CHILD)
            if e.message and e.message["role"] == "assistant"
            and e.message["content"] and e.message["content"][0].get("type") == "toolCall"] == \
        ["run_shell_command", "complete_task"]


def test_a_rewind_makes_what_follows_a_new_branch(store, tree):
    log = tree / "project" / "chats" / "session-2026-12-06T22-20-d357f1d9.jsonl"
    import_paths(store, [log])
    # /rewind to the answer, then a new answer (what Gemini CLI appends)
    with open(log, "a") as handle:
        handle.write(json.dumps({"$rewindTo": "7d21ca45-1c3f-445b-93e4-c2a4953aa84c"}) + "\n")
        handle.write(json.dumps({"id": "new-answer", "timestamp": "2026-12-06T22:21:00.000Z",
                                 "type": "gemini", "content": "Another answer.",
                                 "model": "gemini-2.5-flash"}) + "\n")
    report = import_paths(store, [log])
    assert report.branches_added == 1 and report.entries_added == 1
    entries = branch_entries(store, PARENT)
    assert content_text(entries[-1].message["content"]) == "Another answer."
    assert "The helper found one file." not in [content_text((e.message or {}).get("content"))
                                                 for e in entries]


def test_a_record_written_in_two_steps_while_followed_is_one_turn(store, tree, tmp_path):
    """The model's turn is written with its text, then again with its tool calls: read in
    between (live follow), the second writing adds the calls, nothing twice."""
    source = tree / "project" / "chats" / "session-2026-12-06T22-20-f53b9475.jsonl"
    lines = source.read_text().splitlines(keepends=True)
    whole = open_store(tmp_path / "whole.db")
    import_paths(whole, [source])
    expected = [(e.id, e.type) for e in branch_entries(whole, MAIN)]
    whole.close()
    for cut in (5, 6, 7, 20, len(lines)):    # after the text, before / after the calls
        source.write_text("".join(lines[:cut]))
        import_paths(store, [source])
    assert [(e.id, e.type) for e in branch_entries(store, MAIN)] == expected


# ------------------------------------------------------------- written back
def test_an_earlier_point_is_written_as_gemini_cli_records_it(store, tree, tmp_path):
    """Up to the first answer: a new session file in the project's folder (the one whose
    `.project_root` names the project), each record as Gemini CLI wrote it last (the model
    turn with its tool calls and their results), without the functionResponse user turn
    Gemini CLI would send twice, then the title as `$set.summary`."""
    from core.agents import prepare_resume

    import_paths(store, [tree])
    session = store.sessions.get(store.sessions.by_uid(MAIN).id)
    answer = next(e for e in branch_entries(store, MAIN) if e.message and
                  content_text(e.message["content"]) == "There is one file: notes.txt.")
    home = tree.parent.parent
    plan = prepare_resume(store, session, at_seq=answer.seq, env={"HOME": str(home), "PATH": ""})
    assert plan.argv == ["gemini", "--resume", plan.native_id]
    assert plan.file.parent == tree / "project" / "chats"
    assert plan.file.name.startswith("session-") and plan.file.name.endswith(
        f"-{plan.native_id[:8]}.jsonl")
    written = [json.loads(line) for line in plan.file.read_text().splitlines()]
    original = [json.loads(line) for line in
                (tree / "project" / "chats" / "session-2026-12-06T22-20-f53b9475.jsonl")
                .read_text().splitlines()]
    header = written[0]
    assert header["sessionId"] == plan.native_id and header["kind"] == "main"
    assert header["projectHash"] == original[0]["projectHash"]
    by_id = {}
    for record in original:          # (the last write of each record, as Gemini CLI reads it)
        if "id" in record and "type" in record:
            by_id[record["id"]] = record
    context = original[1]["$set"]["messages"][0]
    assert written[1] == context
    assert written[2:5] == [by_id["cbea42e0-530b-4624-8855-f087994e9fee"],
                            by_id["72f922d8-0c30-4f8e-b99f-4d21d91f6f96"],
                            by_id["1057eb43-c050-4604-9719-71c8c80e9687"]]
    assert set(written[5]) == {"$set"} and written[5]["$set"]["lastUpdated"] == header["startTime"]
    assert written[5]["$set"]["summary"].startswith("list the files · main, up to ")
    assert len(written) == 6


def test_a_compaction_is_written_as_gemini_cli_writes_one_after_compressing(store, tree, tmp_path):
    """The whole branch, compression included: the records before it, then `$set.messages`
    (Gemini CLI's first turn, its summary and acknowledgement, the records it kept), then
    what came after; read back, the same branch with the compaction in its place."""
    from core.agents.gemini import writer
    from core.agents.native import BranchToWrite, Ids

    import_paths(store, [tree])
    session = store.sessions.get(store.sessions.by_uid(MAIN).id)
    branch = store.branches.current(session.id)
    job = BranchToWrite(store=store, session=session, branch=branch, head_seq=branch.head_seq,
                        cwd=session.cwd, env={"HOME": str(tmp_path / "out")},
                        now=datetime(2026, 12, 7, tzinfo=timezone.utc), ids=Ids())
    target, new_id = writer.place(job)
    writer.write(job, target, new_id)
    written = [json.loads(line) for line in target.read_text().splitlines()]
    [compacted] = [r["$set"]["messages"] for r in written if "messages" in r.get("$set", {})]
    assert [m["content"][0]["text"][:18] for m in compacted[:3]] == [
        "<session_context>\n", "<state_snapshot>Th", "Got it. Thanks for"]
    assert [m["id"] for m in compacted[3:]] == ["640c6b56-cb7f-40ca-8b0a-829a9c661d75",
                                               "e7bf4bb3-8a87-4379-847b-dfffe4780d7f"]
    assert written[-2]["content"] == "notes.txt says: hello from the lab."
    # a new project folder for the project (this home has none), marked as Gemini CLI marks one
    assert (target.parent.parent / ".project_root").read_text() == session.cwd
    assert target.parent.parent.name == "project"
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(again, [target])
        copy = again.sessions.by_uid(new_id)
        assert shape(again, copy.uid) == shape(store, MAIN)
    finally:
        again.close()


def shape(store, uid: str) -> list[tuple]:
    return [(e.message["role"], content_text(e.message["content"])) if e.message else (e.type,)
            for e in branch_entries(store, uid) if e.message or e.type == COMPACTION]


def test_the_project_folder_is_gemini_clis_own_and_no_file_of_it_is_changed(tmp_path):
    from core.agents.gemini.writer import project_folder

    home = tmp_path / "home"
    gemini = home / ".gemini"
    env = {"HOME": str(home)}
    # nothing there yet: a folder named as Gemini CLI names one, to be marked
    assert project_folder("/work/My Project.v2", env) == (gemini / "tmp" / "my-project-v2", True)
    # the name is taken by another project (marked, or in projects.json): the next one
    (gemini / "tmp" / "my-project-v2").mkdir(parents=True)
    (gemini / "tmp" / "my-project-v2" / ".project_root").write_text("/elsewhere/my-project-v2")
    (gemini / "projects.json").write_text(json.dumps({"projects": {"/x/My Project.v2": "my-project-v2-1"}}))
    assert project_folder("/work/My Project.v2", env) == (gemini / "tmp" / "my-project-v2-2", True)
    # a folder marked for the project (Gemini CLI adopts it too)
    (gemini / "history" / "mine").mkdir(parents=True)
    (gemini / "history" / "mine" / ".project_root").write_text("/work/My Project.v2")
    assert project_folder("/work/My Project.v2", env) == (gemini / "tmp" / "mine", False)
    # registered in projects.json: that one
    registry = json.dumps({"projects": {"/work/My Project.v2": "registered"}})
    (gemini / "projects.json").write_text(registry)
    assert project_folder("/work/My Project.v2", env) == (gemini / "tmp" / "registered", False)
    assert (gemini / "projects.json").read_text() == registry
    # $GEMINI_CLI_HOME moves the home folder
    moved = {"HOME": str(home), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    assert project_folder("/p/q", moved) == (tmp_path / "g" / ".gemini" / "tmp" / "q", True)


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="@google/gemini-cli not "
    "installed: run tests/agent_lab/install_agents.sh DIR and set "
    "ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_gemini_cli_itself_resumes_an_earlier_point_of_the_branch(store, tmp_path):
    """Gemini CLI runs a session of two turns; arbor writes it back up to the first answer
    into a home where Gemini CLI never ran for the project (no projects.json entry, no
    folder); `gemini --resume <id>` from the project adopts arbor's folder and sends exactly
    that branch, then the new prompt."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "agent_lab"))
    from core.agents import prepare_resume
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab, npm_bin
    from make_gemini import MODEL, gemini_env, settings

    if npm_bin("gemini") is None:
        pytest.skip("@google/gemini-cli not installed")
    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("now say bye"), Reply("Bye.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("run_shell_command", {"command": "ls"})]))]
    with FakeModelServer(rules=rules, default=Reply("There is one file: notes.txt."),
                         model=MODEL) as server:
        lab = new_lab(tmp_path / "lab", server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello\n")
        base = [npm_bin("gemini"), "-m", MODEL, "--yolo"]
        env = gemini_env(lab)
        assert lab.run(base + ["-p", "list the files"], env=env).returncode == 0
        assert lab.run(base + ["--resume", "latest", "-p", "now say bye"], env=env).returncode == 0
        import_paths(store, [lab.home / ".gemini" / "tmp"])
        [listed] = store.sessions.list()
        entries = branch_entries(store, listed.uid)
        answer = next(e for e in entries if e.message and
                      content_text(e.message["content"]) == "There is one file: notes.txt.")
        other = tmp_path / "other-home"
        settings(other)
        env_b = {**env, "HOME": str(other), "USERPROFILE": str(other)}
        plan = prepare_resume(store, store.sessions.get(listed.id), at_seq=answer.seq, env=env_b)
        assert plan.file.parent.parent == other / ".gemini" / "tmp" / "project"
        assert not (other / ".gemini" / "projects.json").exists()
        asked = len(server.model_requests)
        done = lab.run(base + plan.argv[1:] + ["-p", "and then?"], env=env_b, cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    said = [(m["role"], m["text"].strip()) for m in server.model_requests[asked].conversation()
            if m["role"] != "system"]
    texts = " | ".join(text for _role, text in said)
    assert "list the files" in texts and "There is one file: notes.txt." in texts
    assert "now say bye" not in texts and "Bye." not in texts
    assert said[-1][0] == "user" and said[-1][1].endswith("and then?")
    # each result once (Gemini CLI's own files send it twice after a resume)
    results = [m for m in server.model_requests[asked].conversation() if m["role"] == "tool"]
    assert len(results) == 1
    # Gemini CLI registered arbor's folder for the project itself
    registry = json.loads((other / ".gemini" / "projects.json").read_text())
    assert registry["projects"][str(lab.project)] == "project"


# ---------------------------------------------------------------- /chat save, /chat resume
# tests/fixtures/agents/gemini/tree: Gemini CLI's own TUI driven in tmux (SOURCES.md there):
# "say one", `/chat save first`, "say two", `/chat resume first`, "say three".
TREE = FIXTURE.parent / "tree" / "gemini-tmp"
SAVED = "f55c4fad-821c-4432-a6bb-5731ac15d400"


def test_chat_save_tags_the_message_it_saved_at_and_resume_branches_from_it(tmp_path, store):
    target = tmp_path / "home" / ".gemini" / "tmp"
    shutil.copytree(TREE, target)
    import_paths(store, [target])
    session = store.sessions.by_uid(SAVED)
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2              # nothing lost: "say two" stays as its own branch

    def said(branch):
        return [content_text(e.message["content"]) for e in store.paths.entries(branch.head_seq)
                if e.message and not content_text(e.message["content"]).startswith("<session")]

    current = store.branches.current(session.id)
    assert said(current) == ["say one", "One.", "say three", "Three."]
    other = next(b for b in branches if b.id != current.id)
    assert said(other) == ["say one", "One.", "say two", "Two."]
    # the tag names the message the history ended on when it was saved
    labels = store.annotations.entry_labels(session.id)
    assert list(labels.values()) == ["first"]
    tagged = next(e for e in store.paths.entries(current.head_seq) if e.seq in labels)
    assert content_text(tagged.message["content"]) == "One."
    # the replayed history adds no entry; a second import adds nothing and no second label
    before = len(store.paths.entries(current.head_seq))
    import_paths(store, [target])
    assert len(store.branches.of_session(session.id)) == 2
    assert len(store.paths.entries(store.branches.current(session.id).head_seq)) == before
    assert len(store.annotations.label_log(session.id)) == 1


# tests/fixtures/agents/gemini/resume-tools (SOURCES.md there): "read the notes" (a read_file
# call and its result), `/chat save first`, "say two", `/chat resume first`, "say three".
RESUME_TOOLS = FIXTURE.parent / "resume-tools" / "gemini-tmp"
WITH_TOOLS = "effe01c5-18f2-4e3e-ad91-e81686eb1852"


def test_resume_of_a_history_with_tool_calls_matches_the_calls_and_adds_nothing(tmp_path, store):
    target = tmp_path / "home" / ".gemini" / "tmp"
    shutil.copytree(RESUME_TOOLS, target)
    import_paths(store, [target])
    session = store.sessions.by_uid(WITH_TOOLS)
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2              # "say two" stays as its own branch

    def said(branch):
        out = []
        for e in store.paths.entries(branch.head_seq):
            if not e.message or content_text(e.message["content"]).startswith("<session"):
                continue
            calls = [b["name"] for b in e.message["content"] if b.get("type") == "toolCall"]
            out.append(f"call {calls[0]}" if calls else content_text(e.message["content"]).strip())
        return out

    kept = ["read the notes", "Reading it.", "call read_file", "hello from the lab",
            "notes.txt says: hello from the lab."]
    current = store.branches.current(session.id)
    assert said(current) == kept + ["say three", "Three."]
    other = next(b for b in branches if b.id != current.id)
    assert said(other) == kept + ["say two", "Two."]
    # the checkpoint tag is on the answer the saved history ended on, on both branches
    labels = store.annotations.entry_labels(session.id)
    tagged = next(e for e in store.paths.entries(current.head_seq) if e.seq in labels)
    assert content_text(tagged.message["content"]) == "notes.txt says: hello from the lab."
    # usage once per answer (the replayed records carry no tokens, and add no response)
    totals = store.usage.report(by="model").totals
    assert (totals.input_tokens, totals.output_tokens) == (110 + 130 + 140 + 160, 8 + 9 + 5 + 5)
