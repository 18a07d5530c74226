"""Gemini CLI's session files, as Gemini CLI 0.61.0 wrote them (tests/fixtures/agents/gemini,
SOURCES.md there): what each kind of line becomes (core/agents/gemini/importer.py)."""

from __future__ import annotations

import json
import shutil
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
