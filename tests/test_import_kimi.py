"""Kimi CLI's sessions, as Kimi CLI 1.50.0 wrote them (tests/fixtures/agents/kimi, SOURCES.md
there): the wire log read into a branch, its compaction, its sub-agent, usage per step
(core/agents/kimi/importer.py)."""

from __future__ import annotations

import json
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
