"""Factory droid's session files, as droid 0.215.0 wrote them (tests/fixtures/agents/droid,
SOURCES.md there): forks, sub-agents, usage per session (core/agents/droid/importer.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.importing.detect import detect_format
from core.model.entries import COMPACTION, content_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "droid" / "sessions"
FIRST = "5b1718eb-1a16-4a18-b5c5-37b5aab05f60"      # list the files
FORK = "76fe2ac3-76be-4f34-a7ac-4c375834f495"       # --fork FIRST "now read notes.txt"
PARENT = "25eac295-358d-4b80-8b4a-f5b30ef88331"     # ask a helper (a Task call)
CHILD = "759b687d-82e9-4bf0-aff2-24eebdedf6a3"      # the worker it started
PROJECT = "-tmp-arbor-lab-droid-project"


@pytest.fixture
def factory(tmp_path) -> Path:
    target = tmp_path / "home" / ".factory"
    shutil.copytree(FIXTURE, target / "sessions")
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def branch(store, uid: str):
    session = store.sessions.by_uid(uid)
    return [e for e in store.paths.entries(store.branches.current(session.id).head_seq)]


def test_a_droid_file_is_not_taken_for_pi(factory):
    # (droid's `message` lines have pi's shape: the session_start line decides)
    for log in (factory / "sessions" / PROJECT).glob("*.jsonl"):
        assert detect_format(log) == "droid"


def test_messages_tool_calls_and_results_pair_up(store, factory):
    import_paths(store, [factory / "sessions" / PROJECT / f"{FIRST}.jsonl"])
    session = store.sessions.by_uid(FIRST)
    assert session.cwd == "/tmp/arbor-lab/droid/project" and session.session_name == "list the files"
    entries = branch(store, FIRST)
    assert [e.message["role"] for e in entries] == \
        ["user", "user", "assistant", "toolResult", "assistant"]
    assert entries[0].data["droid"]["context"] is True        # droid's system reminders
    call = entries[2].message["content"][1]
    assert (call["type"], call["name"], call["arguments"]["command"]) == ("toolCall", "Execute", "ls")
    result = entries[3].message
    assert result["toolCallId"] == call["id"] and result["toolName"] == "Execute"
    assert "notes.txt" in content_text(result["content"]) and result["isError"] is False
    # what arbor does not draw is kept: the turn outcome, droid's own message fields
    outcome = store.sessions.metadata(session.id)["records"][0]
    assert outcome["type"] == "agent_turn_outcome" and outcome["reason"] == "completed"
    assert entries[1].data["droid"]["interactionMode"] == "auto"


def test_a_fork_is_a_session_under_the_message_it_left_its_parent_at(store, factory):
    import_paths(store, [factory / "sessions"])
    parent = store.sessions.by_uid(FIRST)
    [fork] = store.sessions.children(parent.id)
    assert fork.kind == "fork" and fork.id == store.sessions.by_uid(FORK).id
    assert store.entries.get(fork.spawn_seq).id == "faa4d22b-5d00-485a-9034-03e4069395a7"
    texts = [content_text(e.message["content"]) for e in branch(store, FORK)]
    assert texts[1] == "list the files" and texts[-1] == "notes.txt says: hello from the lab."


def test_a_sub_agent_is_nested_under_its_task_call(store, factory):
    import_paths(store, [factory / "sessions"])
    parent = store.sessions.by_uid(PARENT)
    [child] = store.sessions.children(parent.id)
    assert child.kind == "subagent" and child.id == store.sessions.by_uid(CHILD).id
    spawn = store.entries.get(child.spawn_seq)
    assert spawn.message["content"][1]["name"] == "Task"
    assert content_text(branch(store, CHILD)[-1].message["content"]) == "The sub-agent counted 1 file."


def test_usage_is_each_sessions_own_tokens_as_droid_recorded_them(store, factory):
    import_paths(store, [factory / "sessions"])
    rows = {row[0]: row[2] for row in store.usage.report(by="session").rows}
    for uid in (FIRST, FORK, PARENT, CHILD):
        settings = json.loads((factory / "sessions" / PROJECT / f"{uid}.settings.json").read_text())
        tokens = settings["tokenUsage"]
        figure = store.usage.of_path(store.branches.current(store.sessions.by_uid(uid).id).head_seq)
        assert (figure.input_tokens, figure.output_tokens, figure.cache_read_tokens) == \
            (tokens["inputTokens"], tokens["outputTokens"], tokens["cacheReadTokens"]), uid
    # the fork's figure is its own requests (droid does not count the copies again), and
    # the sub-agent's counts in its parent's row
    assert rows[FORK].input_tokens == 18104 and rows[FORK].cache_read_tokens == 1000
    assert rows[PARENT].input_tokens == 320 + 215 and rows[PARENT].subagent_tokens == 215 + 35
    totals = store.usage.report(by="model").totals
    assert (totals.input_tokens, totals.output_tokens) == (203 + 18104 + 320 + 215, 23 + 26 + 50 + 35)


def test_a_session_that_goes_on_replaces_its_usage_record(store, factory):
    """droid rewrites the settings' running totals each turn: the session's record grows,
    nothing is added beside it."""
    folder = factory / "sessions" / PROJECT
    log, settings = folder / f"{FIRST}.jsonl", folder / f"{FIRST}.settings.json"
    import_paths(store, [log])
    lines = log.read_text().splitlines(keepends=True)
    turn = [json.loads(line) for line in lines[2:6]]    # the turn, again, as a new turn
    with open(log, "a") as handle:
        parent = "faa4d22b-5d00-485a-9034-03e4069395a7"
        for n, record in enumerate(turn):
            record["id"], record["parentId"] = f"again-{n}", parent
            parent = record["id"]
            handle.write(json.dumps(record) + "\n")
    data = json.loads(settings.read_text())
    data["tokenUsage"].update(inputTokens=500, outputTokens=40)
    settings.write_text(json.dumps(data))
    import_paths(store, [log])
    totals = store.usage.report(by="model").totals
    assert (totals.responses, totals.input_tokens, totals.output_tokens) == (1, 500, 40)


def test_a_custom_model_is_priced_as_the_model_it_stands_for(store, factory):
    # droid's BYOK configuration (docs/agents/droid.md), here naming a priced model
    (factory / "config.json").write_text(json.dumps({"custom_models": [{
        "model_display_name": "Fake Model", "model": "gpt-4o",
        "base_url": "http://127.0.0.1:9/v1", "provider": "generic-chat-completion-api"}]}))
    import_paths(store, [factory / "sessions" / PROJECT / f"{FIRST}.jsonl"])
    answer = branch(store, FIRST)[-1]
    assert answer.message["model"] == "gpt-4o"
    assert answer.data["droid"]["modelId"] == "custom:Fake-Model-0"
    totals = store.usage.report(by="model").totals
    assert totals.cost_usd > 0 and not totals.unpriced


def test_o_carries_on_the_end_of_a_session_with_droid_fork(store, factory):
    from core.agents import ResumeError, prepare_resume

    import_paths(store, [factory / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(FIRST).id)
    plan = prepare_resume(store, session, env={"HOME": str(factory.parent), "PATH": ""})
    assert plan.argv == ["droid", "--fork", FIRST] and plan.cwd == "/tmp/arbor-lab/droid/project"
    assert plan.file is None
    child = store.sessions.get(store.sessions.by_uid(CHILD).id)
    with pytest.raises(ResumeError, match="sub-agent"):
        prepare_resume(store, child, env={"HOME": str(factory.parent)})


@pytest.mark.parametrize("uid", [FIRST, FORK, PARENT])
def test_an_earlier_point_is_written_as_droids_own_fork_writes_one(store, factory, tmp_path, uid):
    """Up to the message before the last: a new session file in droid's folder for the
    project, `session_start` naming the session it came from and the message it stops at,
    then droid's own records of that path as droid wrote them (turn outcomes included)."""
    from core.agents import prepare_resume

    import_paths(store, [factory / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(uid).id)
    messages = [e for e in branch(store, uid) if e.message]
    out = tmp_path / "out"
    plan = prepare_resume(store, session, at_seq=messages[-2].seq,
                          env={"HOME": str(out), "PATH": ""})
    assert plan.argv == ["droid", "--fork", plan.native_id]
    assert plan.file == out / ".factory" / "sessions" / PROJECT / f"{plan.native_id}.jsonl"
    written = [json.loads(line) for line in plan.file.read_text().splitlines()]
    original = [json.loads(line) for line in (factory / "sessions" / PROJECT / f"{uid}.jsonl")
                .read_text().splitlines()]
    header = written[0]
    assert header["type"] == "session_start" and header["id"] == plan.native_id
    assert header["parent"] == uid and header["cwd"] == "/tmp/arbor-lab/droid/project"
    assert header["forkedAtMessageId"] == written[-1]["id"]
    assert header["title"].startswith(session.session_name) and header["isSessionTitleManuallySet"]
    assert written[1:] == original[1:len(written)]
    assert original[len(written)]["type"] == "message"      # (it stopped a message early)
    # read back by arbor: the same branch, up to that message
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(again, [plan.file])
        copy = again.sessions.by_uid(plan.native_id)
        got = [(e.message["role"], content_text(e.message["content"])) for e in
               again.paths.entries(again.branches.current(copy.id).head_seq) if e.message]
        assert got == [(e.message["role"], content_text(e.message["content"]))
                       for e in messages[:-1]]
    finally:
        again.close()


def test_a_call_left_without_its_result_gets_droids_interrupted_answer(store, factory, tmp_path):
    from core.agents import prepare_resume
    from core.agents.droid.writer import INTERRUPTED

    import_paths(store, [factory / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(FIRST).id)
    call = next(e for e in branch(store, FIRST) if e.message and e.message["role"] == "assistant")
    plan = prepare_resume(store, session, at_seq=call.seq, env={"HOME": str(tmp_path), "PATH": ""})
    last = json.loads(plan.file.read_text().splitlines()[-1])
    assert last["message"] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "call_fake001_0", "is_error": True,
         "content": INTERRUPTED}]}


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="droid not installed: "
    "run tests/agent_lab/install_agents.sh DIR and set ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_droid_itself_carries_on_from_an_earlier_point_of_the_branch(store, tmp_path):
    """droid runs a session and a fork of it (two turns); arbor writes the branch back up to
    the first turn's answer; `droid exec --fork <the written id>` (what `o` runs, headless)
    sends exactly that branch, then the new prompt."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "agent_lab"))
    from core.agents import prepare_resume
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab, npm_bin
    from make_droid import EXECUTE, MODEL, configure, droid_env

    if npm_bin("droid") is None:
        pytest.skip("droid not installed")
    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("now say bye"), Reply("Bye.")),
             (last_says("list the files"), Reply("Listing.", [ToolCall("Execute", EXECUTE)])),
             (last_says("Process exited"), Reply("There is one file: notes.txt."))]
    with FakeModelServer(rules=rules, model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        configure(lab)
        (lab.project / "notes.txt").write_text("hello\n")
        droid = [npm_bin("droid"), "exec", "-m", MODEL]
        env = droid_env(lab)
        assert lab.run(droid + ["list the files"], env=env).returncode == 0
        first = next((lab.home / ".factory/sessions").rglob("*.jsonl")).stem
        assert lab.run(droid + ["--fork", first, "now say bye"], env=env).returncode == 0
        import_paths(store, [lab.home / ".factory" / "sessions"])
        fork = next(s for s in store.sessions.list() if s.uid != first)
        entries = branch(store, fork.uid)
        answer = next(e for e in entries if e.message and
                      content_text(e.message["content"]) == "There is one file: notes.txt.")
        plan = prepare_resume(store, store.sessions.get(fork.id), at_seq=answer.seq, env=env)
        assert plan.file is not None and plan.file.parent.parent == lab.home / ".factory/sessions"
        asked = len(server.model_requests)
        done = lab.run(droid + plan.argv[1:] + ["and then?"], env=env, cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    said = [(m["role"], m["text"].strip()) for m in server.model_requests[asked].conversation()
            if m["role"] != "system"]
    texts = " | ".join(text for _role, text in said)
    assert "list the files" in texts and "There is one file: notes.txt." in texts
    assert "notes.txt" in texts and "Process exited" in texts        # the call's result
    assert "now say bye" not in texts and "Bye." not in texts
    assert said[-1][0] == "user" and said[-1][1].endswith("and then?")


# ------------------------------------------------------------------ /compress
# tests/fixtures/agents/droid/tree: droid's own TUI driven in tmux (SOURCES.md there):
# "say one", "say two", `/compress`, "say three" (in the session the compression started).
COMPRESSED = "05cb1202-4442-4dd1-8a0e-024fbb057cc1"
GOES_ON = "2e6c00f3-5578-4086-b130-13fe88b881f3"


def test_a_compression_is_a_compaction_entry_in_the_session_it_goes_on_in(tmp_path, store):
    target = tmp_path / "home" / ".factory" / "sessions"
    shutil.copytree(FIXTURE.parent / "tree" / "sessions", target)
    import_paths(store, [target])
    old, new = store.sessions.by_uid(COMPRESSED), store.sessions.by_uid(GOES_ON)
    entries = branch(store, GOES_ON)
    assert entries[0].type == COMPACTION
    assert entries[0].data["summary"] == \
        "Summary: the user asked for one and two; the model said One. and Two."
    assert entries[0].data["droid"]["removedCount"] == 5
    texts = [content_text(e.message["content"]) for e in entries[1:]
             if e.message and not (e.data.get("droid") or {}).get("context")]
    assert texts[-2:] == ["say three", "Three."]
    # nested under the compressed session, at its last message ("Two.")
    [child] = store.sessions.children(old.id)
    assert child.id == new.id
    assert content_text(store.entries.get(child.spawn_seq).message["content"]) == "Two."


# ------------------------------------------------------------------ /rewind-conversation
# tests/fixtures/agents/droid/rewind: droid's own TUI driven in tmux (SOURCES.md there):
# "say one", "say two", "say three", `/rewind-conversation` to before "say two", "say four".
REWOUND = "89180e24-c58e-4fdb-9ff1-f0a2ae97d6d7"
REWIND = "62ff5a02-71a3-470e-bbe0-210becba9403"


def said(store, uid: str) -> list[str]:
    return [content_text(e.message["content"]) for e in branch(store, uid)
            if e.message and not (e.data.get("droid") or {}).get("context")]


def test_a_rewind_branches_at_the_message_it_went_back_to_and_loses_nothing(tmp_path, store):
    target = tmp_path / "home" / ".factory" / "sessions"
    shutil.copytree(FIXTURE.parent / "rewind" / "sessions", target)
    import_paths(store, [target])
    old, new = store.sessions.by_uid(REWOUND), store.sessions.by_uid(REWIND)
    # the conversation as it went on: the kept part, then the new turn
    assert said(store, REWIND) == ["say one", "One.", "say four", "Four."]
    # the abandoned part is kept, whole, as the branch of the session rewound from
    assert said(store, REWOUND) == ["say one", "One.", "say two", "Two.", "say three", "Three."]
    # the new branch starts at the point droid went back to ("One."), and says it is a rewind
    [child] = store.sessions.children(old.id)
    assert child.id == new.id and child.kind == "fork"
    assert content_text(store.entries.get(child.spawn_seq).message["content"]) == "One."
    assert store.sessions.metadata(new.id)["forkedFrom"] == {
        "session": REWOUND, "at": "0b771993-2e24-4ea6-914b-726a19809965",
        "command": "rewind-conversation"}
    # usage counted once: each file's own requests, the kept copies add nothing
    totals = store.usage.report(by="model").totals
    assert (totals.input_tokens, totals.output_tokens) == (540 + 150, 20 + 5)


def test_a_fork_of_the_whole_session_is_not_called_a_rewind(store, factory):
    import_paths(store, [factory / "sessions"])
    assert store.sessions.metadata(store.sessions.by_uid(FORK).id)["forkedFrom"]["command"] == "fork"


def test_the_messages_pane_calls_it_a_rewind_where_it_went_back(tmp_path, store):
    from datetime import datetime, timezone
    from tui.message_source import Item
    from tui.render.message_render import spawn_lines

    target = tmp_path / "home" / ".factory" / "sessions"
    shutil.copytree(FIXTURE.parent / "rewind" / "sessions", target)
    import_paths(store, [target])
    [child] = store.sessions.children(store.sessions.by_uid(REWOUND).id)
    line = spawn_lines(Item("spawn", store.entries.get(child.spawn_seq), child=child), False,
                       datetime(2027, 1, 1, tzinfo=timezone.utc), 80)[0].plain
    assert line.startswith("▸ ↱ rewind ") and "fork" not in line
