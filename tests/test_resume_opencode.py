"""`o` / `arbor resume` for opencode (core/agents/opencode/writer.py): the branch written as
opencode's own export, loaded with `opencode import`, carried on with `opencode --session`.

The last test runs the real opencode (opt-in, like tests/test_agent_lab.py): it imports the
file arbor wrote, its own `opencode export` of the session holds exactly the branch, and a
headless resume sends the model exactly the branch and the new prompt."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest

from core import open_store
from core.actions import operations
from core.agents import prepare_resume, run
from core.agents.opencode.writer import ABORTED
from core.importing import import_paths
from core.model.entries import content_text

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "agents" / "opencode" / "opencode.db"
MAIN = "ses_db28d291affeBWJ51SDDts5ac9"
CHILD = "ses_db28cd281ffejLNVqPK857BTTn"


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    with sqlite3.connect(f"file:{FIXTURE}?mode=ro", uri=True) as source:
        source.execute("VACUUM INTO ?", (str(tmp_path / "opencode.db"),))
    import_paths(s, [tmp_path / "opencode.db"])
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
            calls = tuple(b["name"] for b in e.message["content"]
                          if isinstance(b, dict) and b.get("type") == "toolCall") \
                if isinstance(e.message["content"], list) else ()
            out.append((e.message["role"], " ".join(content_text(e.message["content"]).split()),
                        calls))
    return out


def env_for(tmp_path) -> dict:
    return {"HOME": str(tmp_path / "home"), "PATH": ""}


def written(plan) -> dict:
    return json.loads(plan.file.read_text())


def test_an_earlier_point_is_written_as_opencodes_export_then_imported_and_resumed(store, tmp_path):
    session = main_session(store)
    entries = path_of(store, session)
    answer = next(e for e in entries if e.message and
                  content_text(e.message["content"]) == "There is one file: notes.txt.")
    plan = prepare_resume(store, session, at_seq=answer.seq, env=env_for(tmp_path))
    folder = tmp_path / "home" / ".local" / "share" / "opencode" / "arbor"
    assert plan.file == folder / f"{plan.native_id}.json"
    assert plan.native_id.startswith("ses_") and len(plan.native_id) == 30
    assert plan.before == [["opencode", "import", str(plan.file)]]
    assert plan.argv == ["opencode", "--session", plan.native_id]
    assert plan.shell_command() == (f"cd /tmp/arbor-lab/opencode/project && opencode import "
                                    f"{plan.file} && opencode --session {plan.native_id}")
    document = written(plan)
    assert len(plan.file.read_text().splitlines()) == 1          # (arbor knows it by its line)
    info = document["info"]
    assert (info["id"], info["directory"]) == (plan.native_id, "/tmp/arbor-lab/opencode/project")
    assert info["title"].startswith("Files in the project · main, up to ")
    messages = document["messages"]
    ids = [m["info"]["id"] for m in messages]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)      # opencode loads by id
    originals = {e.id for e in entries}
    assert not originals & set(ids)            # new ids, as opencode's fork copies
    parts = [p for m in messages for p in m["parts"]]
    assert [p["id"] for p in parts] == sorted(p["id"] for p in parts)
    assert all(p["messageID"] == m["info"]["id"] and p["sessionID"] == plan.native_id
               for m in messages for p in m["parts"])
    user, call, done = messages[0], messages[1], messages[2]
    assert [m["info"]["role"] for m in messages] == ["user", "assistant", "assistant"]
    assert call["info"]["parentID"] == done["info"]["parentID"] == user["info"]["id"]
    # the original times and opencode's own fields, kept
    assert user["info"]["time"] == {"created": 1796595701623} and user["info"]["agent"] == "build"
    tool = next(p for p in call["parts"] if p["type"] == "tool")
    assert tool["state"]["status"] == "completed" and tool["state"]["output"] == "notes.txt\nopencode.json\n"
    assert tool["state"]["input"] == {"command": "ls", "description": "list files"}
    assert tool["state"]["title"] == "ls" and tool["state"]["metadata"]["exit"] == 0
    assert [p["type"] for p in call["parts"]] == ["step-start", "text", "tool", "step-finish"]
    assert next(p for p in call["parts"] if p["type"] == "step-finish")["cost"] == 0.000486
    # read back by arbor: the same branch
    again = open_store(tmp_path / "again.db")
    try:
        report = import_paths(again, [plan.file])
        assert report.files[0].format == "opencode", report.summary()
        copy = again.sessions.by_uid(plan.native_id)
        assert said(path_of(again, copy)) == said(store.paths.entries(answer.seq))
    finally:
        again.close()


def test_a_call_without_its_result_gets_opencodes_aborted_state(store, tmp_path):
    session = main_session(store)
    call = next(e for e in path_of(store, session) if e.message and
                e.message["role"] == "assistant")
    plan = prepare_resume(store, session, at_seq=call.seq, env=env_for(tmp_path))
    tool = next(p for p in written(plan)["messages"][-1]["parts"] if p["type"] == "tool")
    assert tool["state"]["status"] == "error" and tool["state"]["error"] == ABORTED
    assert tool["state"]["metadata"] == {"interrupted": True}


def test_a_compaction_is_opencodes_request_and_summary(store, tmp_path):
    session = main_session(store)
    entries = path_of(store, session)
    go_on = [e for e in entries if e.message][-2]          # the synthetic "Continue…"
    plan = prepare_resume(store, session, at_seq=go_on.seq, env=env_for(tmp_path))
    messages = written(plan)["messages"]
    request, summary = messages[-3], messages[-2]
    assert [p["type"] for p in request["parts"]] == ["compaction"]
    assert request["parts"][0]["auto"] is True
    assert summary["info"]["summary"] is True and summary["info"]["parentID"] == request["info"]["id"]
    assert summary["info"]["finish"] == "stop" and summary["info"]["mode"] == "compaction"
    text = next(p for p in summary["parts"] if p["type"] == "text")["text"]
    assert text.startswith("Summary: the user listed the files")
    assert messages[-1]["parts"][0]["synthetic"] is True


def test_a_compaction_made_in_arbor_keeps_its_tail(store, tmp_path):
    session = main_session(store)
    branch = store.branches.current(session.id)
    operations.compact(store, branch.id, summary="All of it, briefly.", keep_recent_tokens=20)
    branch = store.branches.get(branch.id)
    compaction = store.paths.entries(branch.head_seq)[-1]
    kept = store.entries.find(session.id, compaction.data["firstKeptEntryId"])
    plan = prepare_resume(store, session, branch, env=env_for(tmp_path))
    messages = written(plan)["messages"]
    request, summary = messages[-2], messages[-1]
    part = request["parts"][0]
    assert part["type"] == "compaction" and part["auto"] is False
    # opencode sends: the request, the summary, the messages from tail_start_id, the rest
    tail = next(m for m in messages if m["info"]["id"] == part["tail_start_id"])
    assert messages.index(tail) < messages.index(request)
    assert kept.message is not None
    assert next(p for p in summary["parts"] if p["type"] == "text")["text"] == "All of it, briefly."


def test_the_end_of_opencodes_own_session_is_resumed_without_writing(store, tmp_path):
    plan = prepare_resume(store, main_session(store), env=env_for(tmp_path))
    assert plan.file is None and plan.before == []
    assert plan.argv == ["opencode", "--session", MAIN]


def test_the_same_branch_again_reuses_the_file_until_opencode_carried_it_on(store, tmp_path):
    session = main_session(store)
    earlier = [e for e in path_of(store, session) if e.message][3].seq
    env = env_for(tmp_path)
    first = prepare_resume(store, session, at_seq=earlier, env=env)
    again = prepare_resume(store, session, at_seq=earlier, env=env)
    assert again.reused and again.file == first.file and again.before == first.before
    # opencode imported it and went on: its database holds one message more
    database = tmp_path / "home" / ".local" / "share" / "opencode" / "opencode.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE message (id TEXT, session_id TEXT, data TEXT)")
        for n in range(len(written(first)["messages"]) + 1):
            db.execute("INSERT INTO message VALUES (?, ?, '{}')", (f"msg_{n}", first.native_id))
    third = prepare_resume(store, session, at_seq=earlier, env=env)
    assert not third.reused and third.native_id != first.native_id
    assert third.before == [["opencode", "import", str(third.file)]]
    assert prepare_resume(store, session, at_seq=earlier, env=env).file == third.file


def test_a_sub_agent_is_carried_on_from_its_parent(store, tmp_path):
    from core.agents import ResumeError

    child = store.sessions.get(store.sessions.by_uid(CHILD).id)
    with pytest.raises(ResumeError, match="parent"):
        prepare_resume(store, child, env=env_for(tmp_path))


def test_run_imports_first_and_starts_opencode_only_when_the_import_worked(store, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "ran.txt"
    fake = bin_dir / "opencode"
    fake.write_text(f"#!/bin/sh\necho \"$PWD $*\" >> {log}\n[ \"$1\" = import ] && exit ${{FAIL:-0}}\n"
                    "exit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    session = main_session(store)
    earlier = [e for e in path_of(store, session) if e.message][3].seq
    plan = prepare_resume(store, session, at_seq=earlier, env=env_for(tmp_path))
    plan.cwd = str(tmp_path)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    assert run(plan, env=env) == 0
    assert log.read_text().splitlines() == [f"{tmp_path} import {plan.file}",
                                            f"{tmp_path} --session {plan.native_id}"]
    log.unlink()
    assert run(plan, env={**env, "FAIL": "3"}) == 3
    assert log.read_text().splitlines() == [f"{tmp_path} import {plan.file}"]


# ------------------------------------------------------------- the real opencode
def _lab_modules():
    sys.path.insert(0, str(HERE / "agent_lab"))
    from lab import npm_bin

    return npm_bin("opencode")


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_NODE_MODULES"), reason="opencode not "
                    "installed: run tests/agent_lab/install_agents.sh DIR and set "
                    "ARBOR_AGENT_NODE_MODULES=DIR/npm/node_modules")
def test_opencode_itself_imports_and_carries_on_an_earlier_point_of_the_branch(tmp_path):
    """opencode runs a session of two turns (a bash call and its answer, then "now say
    bye"); arbor writes the branch up to the first turn's answer; `opencode import` loads
    it, opencode's own `opencode export` of it is exactly that branch, and `opencode run
    --session <id>` (what `o` runs, headless) sends the model exactly that branch, then the
    new prompt."""
    opencode = _lab_modules()
    if opencode is None:
        pytest.skip("opencode not installed")
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab
    from make_opencode import MODEL, TITLE, opencode_env, write_config

    rules = [(TITLE, Reply("Files")),
             (last_says("and then?"), Reply("Resumed.")),
             (last_says("now say bye"), Reply("Bye.")),
             (last_says("list the files"),
              Reply("Listing.", [ToolCall("bash", {"command": "ls", "description": "list"})])),
             (last_says("notes.txt"), Reply("There is one file: notes.txt."))]
    store = open_store(tmp_path / "arbor.db")
    try:
        with FakeModelServer(rules=rules, model=MODEL) as server:
            lab = new_lab(tmp_path / "lab", server)
            write_config(lab)
            (lab.project / "notes.txt").write_text("hello\n")
            env = opencode_env(lab)
            for argv in (["list the files"], ["--continue", "now say bye"]):
                done = lab.run([opencode, "run", *argv], env=env)
                assert done.returncode == 0, done.stderr
            database = lab.home / ".local" / "share" / "opencode" / "opencode.db"
            import_paths(store, [database])
            [listed] = store.sessions.list()
            session = store.sessions.get(listed.id)
            entries = path_of(store, session)
            answer = next(e for e in entries if e.message and
                          content_text(e.message["content"]) == "There is one file: notes.txt.")
            plan = prepare_resume(store, session, at_seq=answer.seq, env=env)
            assert plan.cwd == str(lab.project) and plan.before
            for argv in plan.before:                 # opencode's own import, from the project
                done = lab.run(argv, env=env, cwd=Path(plan.cwd))
                assert done.returncode == 0 and plan.native_id in done.stdout, done.stderr
            # what opencode holds now, in its own words
            exported = lab.run([opencode, "export", plan.native_id], env=env)
            assert exported.returncode == 0, exported.stderr
            document = json.loads(exported.stdout[exported.stdout.index("{"):])
            copy = tmp_path / "copy.json"
            copy.write_text(json.dumps(document) + "\n")
            again = open_store(tmp_path / "again.db")
            try:
                import_paths(again, [copy])
                got = said(path_of(again, again.sessions.by_uid(plan.native_id)))
            finally:
                again.close()
            branch = said(store.paths.entries(answer.seq))
            assert got == branch and branch[-1][1] == "There is one file: notes.txt."
            assert document["info"]["directory"] == str(lab.project)
            import_paths(store, [plan.file])        # (the app shows the new session at once)
            asked = len(server.model_requests)
            done = lab.run([opencode, "run", *plan.argv[1:], "and then?"], env=env,
                           cwd=Path(plan.cwd))
            assert done.returncode == 0, done.stderr
            # what opencode added (in its database) goes on the same session in arbor
            assert plan.continued_in == database
            import_paths(store, [plan.continued_in])
            copy = store.sessions.by_uid(plan.native_id)
            assert said(path_of(store, copy)) == [*branch, ("user", '"and then?"', ()),
                                                  ("assistant", "Resumed.", ())]
            assert len(store.branches.of_session(copy.id)) == 1
    finally:
        store.close()
    assert "Resumed." in done.stdout
    request = next(r for r in server.model_requests[asked:] if r.tool_names)
    sent = [(m["role"], m["text"].strip()) for m in request.conversation() if m["role"] != "system"]
    assert [role for role, _text in sent] == ["user", "assistant", "tool", "assistant", "user"], sent
    # (`opencode run` quotes an argument that holds a space)
    assert sent[0][1] == '"list the files"'
    assert "notes.txt" in sent[2][1]
    assert sent[3][1] == "There is one file: notes.txt."
    assert sent[4][1] == '"and then?"'
    assert not any("bye" in text.lower() for _role, text in sent)
