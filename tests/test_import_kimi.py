"""Kimi CLI's sessions, as Kimi CLI 1.50.0 wrote them (tests/fixtures/agents/kimi, SOURCES.md
there): the wire log read into a branch, its compaction, its sub-agent, usage per step
(core/agents/kimi/importer.py)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "kimi" / "kimi-home"
FOLDER = "73d625a8b0923cd1f9484f6e13217a66"            # md5 of the work folder
COMPACTED = "b09f2d5c-bcc6-4424-b8b2-5b94e9b17630"     # list, read, /compact
PARENT = "7a42aa87-8fe2-4261-83bb-f222c766ea4e"        # ask a helper (an Agent call)
CHILD = f"{PARENT}/aa37a9a5c"


@pytest.fixture
def share(tmp_path) -> Path:
    target = tmp_path / "home" / ".kimi"
    shutil.copytree(FIXTURE, target)
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def branch(store, uid: str):
    session = store.sessions.by_uid(uid)
    return store.paths.entries(store.branches.current(session.id).head_seq)


def test_only_the_wire_log_is_read_from_a_sessions_folder(store, share):
    report = import_paths(store, [share / "sessions"])
    assert sorted(Path(f.path).name for f in report.files if f.status == "imported") == \
        ["wire.jsonl"] * 3           # not context.jsonl, context_1.jsonl (the model context)


def test_a_compaction_keeps_everything_before_it_and_names_what_it_kept(store, share):
    import_paths(store, [share / "sessions"])
    session = store.sessions.by_uid(COMPACTED)
    assert session.cwd == "/tmp/arbor-lab/kimi/project"        # from kimi.json, by md5
    entries = branch(store, COMPACTED)
    kinds = [e.type if e.type == COMPACTION else e.message["role"] for e in entries]
    assert kinds == ["user", "assistant", "toolResult", "assistant", "user", "assistant",
                     "toolResult", "assistant", "user", COMPACTION, "assistant"]
    compaction = entries[9]
    # the summary Kimi put at the head of the new context.jsonl
    assert compaction.data["summary"] == \
        "Summary: the user listed the files (notes.txt) and read notes.txt."
    kept = next(e for e in entries if e.id == compaction.data["firstKeptEntryId"])
    assert content_text(kept.message["content"]).startswith("Reading it.")
    assert compaction.data["tokensBefore"] == 104
    # each entry at its event's time (the wire's epoch seconds)
    assert datetime.fromisoformat(entries[0].timestamp).timestamp() == \
        pytest.approx(1796596649.703, abs=0.001)
    calls = [b for e in entries for b in (e.message or {}).get("content") or []
             if isinstance(b, dict) and b.get("type") == "toolCall"]
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [(c["id"], c["name"]) for c in calls] == [(r["toolCallId"], r["toolName"]) for r in results] \
        == [("call_fake001_0", "Shell"), ("call_fake003_0", "ReadFile")]
    assert calls[0]["arguments"] == {"command": "ls"}


def test_a_sub_agent_is_nested_under_its_agent_call_and_counted_once(store, share):
    import_paths(store, [share / "sessions"])
    parent = store.sessions.by_uid(PARENT)
    [child] = store.sessions.children(parent.id)
    assert child.kind == "subagent" and child.id == store.sessions.by_uid(CHILD).id
    assert store.entries.get(child.spawn_seq).message["content"][1]["name"] == "Agent"
    assert store.sessions.by_uid(CHILD).session_name == "Count files (coder)"
    # the parent's wire mirrors the child's steps (SubagentEvent): not read twice
    assert [content_text(e.message["content"]).split("\n")[0] for e in branch(store, PARENT)
            if e.message["role"] == "assistant"] == \
        ["I will ask a helper.", "The helper says there is 1 file."]
    rows = {row[0]: row[2] for row in store.usage.report(by="session").rows}
    assert rows[PARENT].responses == 2 + 3 and rows[PARENT].subagent_tokens == \
        (107 + 17) + (108 + 18) + (109 + 19)


def test_usage_is_each_steps_token_usage_as_kimi_recorded_it(store, share):
    wire = share / "sessions" / FOLDER / COMPACTED / "wire.jsonl"
    expected = [json.loads(line)["message"]["payload"]["token_usage"] for line in wire.open()
                if '"StatusUpdate"' in line]
    expected = [u for u in expected if u]
    import_paths(store, [wire])
    totals = store.usage.report(by="model").totals
    assert totals.responses == len(expected) == 4
    assert totals.input_tokens == sum(u["input_other"] for u in expected) == 1307
    assert totals.cache_read_tokens == sum(u["input_cache_read"] for u in expected) == 500
    assert totals.output_tokens == sum(u["output"] for u in expected)


def test_the_model_is_the_default_of_kimis_configuration(store, share):
    # the configuration the laboratory ran Kimi CLI with (SOURCES.md), naming a priced model
    (share / "config.toml").write_text(
        'default_model = "fake"\n[providers.fake]\ntype = "openai_legacy"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key = "fake"\n'
        '[models.fake]\nprovider = "fake"\nmodel = "gpt-4o"\nmax_context_size = 128000\n')
    import_paths(store, [share / "sessions" / FOLDER / COMPACTED / "wire.jsonl"])
    totals = store.usage.report(by="model").totals
    assert totals.models == {"gpt-4o"} and totals.cost_usd > 0


def test_a_step_still_being_written_is_read_when_it_is_whole(store, share):
    wire = share / "sessions" / FOLDER / COMPACTED / "wire.jsonl"
    lines = wire.read_text().splitlines(keepends=True)
    whole = [l for l in lines]
    wire.write_text("".join(lines[:4]))        # TurnBegin, StepBegin, the text: not whole
    import_paths(store, [wire])
    assert [e.message["role"] for e in branch(store, COMPACTED)] == ["user"]
    wire.write_text("".join(lines[:5]))        # + the tool call
    import_paths(store, [wire])
    wire.write_text("".join(whole))
    import_paths(store, [wire])
    answer = branch(store, COMPACTED)[1].message
    assert [b["type"] for b in answer["content"]] == ["text", "toolCall"] and answer["usage"]


def test_o_resumes_the_end_of_a_session_with_kimi_r(store, share):
    from core.agents import ResumeError, prepare_resume

    import_paths(store, [share / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(PARENT).id)
    plan = prepare_resume(store, session, env={"HOME": str(share.parent), "PATH": ""})
    assert plan.argv == ["kimi", "-r", PARENT] and plan.cwd == "/tmp/arbor-lab/kimi/project"
    child = store.sessions.get(store.sessions.by_uid(CHILD).id)
    with pytest.raises(ResumeError, match="sub-agent"):
        prepare_resume(store, child, env={"HOME": str(share.parent)})


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_earlier_point_is_written_as_kimis_own_fork_writes_one(store, share, tmp_path):
    """Up to the Agent call's result: a new session folder beside the others of the work
    folder, its context the messages Kimi wrote for that path (with Kimi's system prompt),
    its wire the events, its state the title; read back, the same branch."""
    from core.agents import prepare_resume

    import_paths(store, [share / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(PARENT).id)
    result = next(e for e in branch(store, PARENT) if e.message and e.message["role"] == "toolResult")
    plan = prepare_resume(store, session, at_seq=result.seq,
                          env={"HOME": str(share.parent), "PATH": ""})
    assert plan.argv == ["kimi", "-r", plan.native_id]
    folder = share / "sessions" / FOLDER / plan.native_id
    assert plan.file == folder / "wire.jsonl"
    original = _records(share / "sessions" / FOLDER / PARENT / "context.jsonl")
    written = _records(folder / "context.jsonl")
    assert written[0] == original[0] and written[0]["role"] == "_system_prompt"

    def said(records):
        return [r for r in records if not r["role"].startswith("_")]

    assert said(written) == said(original)[:3]
    assert [r["id"] for r in written if r["role"] == "_checkpoint"] == [0, 1]
    wire = _records(plan.file)
    assert wire[0] == {"type": "metadata", "protocol_version": "1.10"}
    assert [w["message"]["type"] for w in wire[1:]] == [
        "TurnBegin", "StepBegin", "ContentPart", "ToolCall", "StatusUpdate", "ToolResult",
        "TurnEnd"]
    state = json.loads((folder / "state.json").read_text())
    assert state["custom_title"].startswith(f"{session.session_name} · main, up to")
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(again, [plan.file])
        copy = again.sessions.by_uid(plan.native_id)
        assert copy.cwd == "/tmp/arbor-lab/kimi/project"
        got = [(e.message["role"], content_text(e.message["content"])) for e in
               again.paths.entries(again.branches.current(copy.id).head_seq) if e.message]
        assert got == [(e.message["role"], content_text(e.message["content"]))
                       for e in branch(store, PARENT) if e.message][:3]
    finally:
        again.close()


def test_after_a_compaction_the_context_starts_from_its_summary(store, share, tmp_path):
    """The branch of the compacted session up to the message after /compact: the context
    Kimi is sent starts as Kimi's own after compacting (its summary, what it kept), the
    wire holds the whole history."""
    from core.agents.kimi import writer
    from core.agents.native import BranchToWrite, Ids
    from datetime import timezone

    import_paths(store, [share / "sessions"])
    session = store.sessions.get(store.sessions.by_uid(COMPACTED).id)
    head = store.branches.current(session.id)
    job = BranchToWrite(store=store, session=session, branch=head, head_seq=head.head_seq,
                        cwd=session.cwd, env={"HOME": str(share.parent)},
                        now=datetime(2026, 12, 7, tzinfo=timezone.utc), ids=Ids())
    target, new_id = writer.place(job)
    writer.write(job, target, new_id)
    written = _records(target.parent / "context.jsonl")
    original = _records(share / "sessions" / FOLDER / COMPACTED / "context.jsonl")
    said = [r for r in written if not r["role"].startswith("_")]
    assert said[0]["content"][0]["text"] == \
        "<system>Previous context has been compacted. Here is the compaction output:</system>"
    assert said == [r for r in original if not r["role"].startswith("_")][:len(said)]
    assert len(said) >= 2
    kinds = [w["message"]["type"] for w in _records(target)[1:]]
    assert kinds.count("TurnBegin") == 3 and ["CompactionBegin", "CompactionEnd"] == \
        [k for k in kinds if k.startswith("Compaction")]


def test_a_work_folder_kimi_does_not_list_is_refused_and_kimi_json_left_alone(store, share):
    from core.agents import ResumeError, prepare_resume

    import_paths(store, [share / "sessions"])
    (share / "kimi.json").write_text(json.dumps({"work_dirs": []}))
    before = (share / "kimi.json").read_bytes()
    session = store.sessions.get(store.sessions.by_uid(PARENT).id)
    first = next(e for e in branch(store, PARENT) if e.message)
    with pytest.raises(ResumeError, match="Kimi CLI has not run in /tmp/arbor-lab/kimi/project"):
        prepare_resume(store, session, at_seq=first.seq, env={"HOME": str(share.parent)})
    assert (share / "kimi.json").read_bytes() == before
    assert sorted(p.name for p in (share / "sessions" / FOLDER).iterdir()) == sorted([COMPACTED, PARENT])


@pytest.mark.skipif(not os.environ.get("ARBOR_AGENT_VENVS"), reason="kimi-cli not installed: run "
    "tests/agent_lab/install_agents.sh DIR and set ARBOR_AGENT_VENVS=DIR/venvs")
def test_kimi_itself_resumes_an_earlier_point_of_the_branch(store, tmp_path):
    """Kimi runs a session of two turns; arbor writes it back up to the first answer;
    `kimi -r <id>` sends exactly that branch, then the new prompt."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "agent_lab"))
    from core.agents import prepare_resume
    from fake_model_server import FakeModelServer, Reply, ToolCall, last_says
    from lab import new_lab, venv_bin
    from make_kimi import configure, kimi_env

    if venv_bin("kimi", "kimi") is None:
        pytest.skip("kimi-cli not installed")
    rules = [(last_says("and then?"), Reply("Resumed.")),
             (last_says("now say bye"), Reply("Bye.")),
             (last_says("list the files"), Reply("Listing.", [ToolCall("Shell", {"command": "ls"})]))]
    with FakeModelServer(rules=rules, default=Reply("There is one file: notes.txt."),
                         model="fake-model") as server:
        lab = new_lab(tmp_path / "lab", server)
        configure(lab)
        (lab.project / "notes.txt").write_text("hello\n")
        kimi = [venv_bin("kimi", "kimi"), "--print", "-y"]
        env = kimi_env(lab)
        assert lab.run(kimi + ["-p", "list the files"], env=env).returncode == 0
        assert lab.run(kimi + ["-C", "-p", "now say bye"], env=env).returncode == 0
        import_paths(store, [lab.home / ".kimi" / "sessions"])
        [listed] = store.sessions.list()
        answer = next(e for e in branch(store, listed.uid) if e.message and
                      content_text(e.message["content"]) == "There is one file: notes.txt.")
        plan = prepare_resume(store, store.sessions.get(listed.id), at_seq=answer.seq, env=env)
        asked = len(server.model_requests)
        done = lab.run(kimi + plan.argv[1:] + ["-p", "and then?"], env=env, cwd=Path(plan.cwd))
        assert done.returncode == 0, done.stderr
    assert "Resumed." in done.stdout
    said = [(m["role"], m["text"].strip()) for m in server.model_requests[asked].conversation()
            if m["role"] != "system"]
    texts = " | ".join(text for _role, text in said)
    assert "list the files" in texts and "There is one file: notes.txt." in texts
    assert "notes.txt" in texts
    assert "now say bye" not in texts and "Bye." not in texts
    assert said[-1][0] == "user" and said[-1][1].endswith("and then?")
    # what Kimi added goes on in the session arbor wrote
    import_paths(store, [lab.home / ".kimi" / "sessions"])
    written = store.sessions.by_uid(plan.native_id)
    assert [content_text(e.message["content"]) for e in branch(store, written.uid)
            if e.message][-2:] == ["and then?", "Resumed."]


# ------------------------------------------------------------------ /undo and /fork
# tests/fixtures/agents/kimi/tree: Kimi CLI's own shell driven in tmux (SOURCES.md there):
# "say one", "say two", `/undo` of turn [1], "say three", `/fork`, "say four".
TREE = FIXTURE.parent / "tree" / "kimi-home"
ORIGINAL = "fe0f5202-f623-4f1d-977e-aec6cd78ea3e"
UNDONE = "dff8bbf2-60d6-4b6f-9f32-9554285694b6"
FORKED = "ee536cb3-9188-4cc6-94fa-115b2d7911a8"


def _said(store, uid):
    return [content_text(e.message["content"]) for e in branch(store, uid)
            if e.message and content_text(e.message["content"]).strip()]


def test_undo_branches_from_the_turn_it_went_back_to_and_a_fork_nests_under_it(tmp_path, store):
    target = tmp_path / "home" / ".kimi"
    shutil.copytree(TREE, target)
    import_paths(store, [target / "sessions"])
    original, undone, forked = (store.sessions.by_uid(u) for u in (ORIGINAL, UNDONE, FORKED))
    # nothing lost: the undone turn stays in the original
    assert _said(store, ORIGINAL) == ["say one", "One.", "say two", "Two."]
    # the undo goes on from "One." (where it went back to), nested there
    [child] = store.sessions.children(original.id)
    assert child.id == undone.id and child.kind == "fork"
    assert content_text(store.entries.get(child.spawn_seq).message["content"]) == "One."
    assert _said(store, UNDONE) == ["say one", "One.", "say three", "Three."]
    assert store.sessions.metadata(undone.id)["forkedFrom"]["command"] == "undo"
    # the fork is under the undo's session (not the original), at its last entry
    [grandchild] = store.sessions.children(undone.id)
    assert grandchild.id == forked.id and grandchild.kind == "fork"
    assert content_text(store.entries.get(grandchild.spawn_seq).message["content"]) == "Three."
    assert _said(store, FORKED)[-2:] == ["say four", "Four."]
    # usage: each response once, though the copies repeat them
    totals = store.usage.report(by="model").totals
    assert totals.input_tokens == 120 + 140 + 160 + 180
