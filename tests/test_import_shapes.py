"""One odd line never fails a file or hides a session (issue 8, item 3): valid JSON of the
wrong shape, lines nested too deeply, compactions that name no entry; and replay never
raises on what is stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core import SessionManager, open_store
from core.model.entries import COMPACTION, MESSAGE, Entry
from core.importing import import_paths
from core.importing.base import MAX_JSON_DEPTH
from core.history.replay import replay_entries
from store_sql import is_postgres, query

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CC_FIXTURE = FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl"
PI_FIXTURE = FIXTURES / "pi" / "pi_v3_generated.jsonl"
CODEX_FIXTURE = FIXTURES / "codex" / \
    "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl"


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, lines: list) -> Path:
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line)
                              for line in lines) + "\n")
    return path


def only(report):
    assert len(report.files) == 1
    return report.files[0]


def imported_cleanly(result, entries: int) -> None:
    assert result.status == "imported", result.error
    assert result.entries_added == entries


# ------------------------------------------------------------- wrong-shaped values
def test_claude_code_block_type_that_is_a_list(store, tmp_path):
    lines = lines_of(CC_FIXTURE)
    changed = next(i for i, d in enumerate(lines) if d.get("type") == "assistant")
    lines[changed]["message"]["content"] = [{"type": [], "text": "odd"},
                                            {"type": "text", "text": "fine"}]
    prompt = next(i for i, d in enumerate(lines) if d.get("type") == "user")
    lines[prompt]["message"]["content"] = [{"type": {"nested": 1}, "text": "odder"}]
    result = only(import_paths(store, [write(tmp_path / "cc.jsonl", lines)]))
    imported_cleanly(result, 12)
    ext = store.sessions.by_uid(result.session_uid)
    entry = store.entries.find(ext.id, lines[changed]["uuid"])
    assert entry.message["content"][0] == {"type": [], "text": "odd"}   # kept as it was


def test_pi_block_type_that_is_a_list(store, tmp_path):
    lines = lines_of(PI_FIXTURE)
    changed = next(i for i, d in enumerate(lines) if d.get("type") == "message"
                   and isinstance(d["message"].get("content"), list))
    lines[changed]["message"]["content"][0]["type"] = []
    result = only(import_paths(store, [write(tmp_path / "pi.jsonl", lines)]))
    imported_cleanly(result, 18)


@pytest.mark.parametrize("odd", [[], {"type": "user_message"}], ids=["list", "object"])
def test_codex_payload_type_that_is_not_text(store, tmp_path, odd):
    lines = lines_of(CODEX_FIXTURE)
    for d in lines:
        if d.get("type") in ("event_msg", "response_item"):
            d["payload"]["type"] = odd
            break
    result = only(import_paths(store, [write(tmp_path / "rollout-x.jsonl", lines)]))
    assert result.status == "imported", result.error
    assert result.entries_added >= 10


def test_manager_appends_a_message_with_an_odd_block_type(tmp_path):
    manager = SessionManager.new("/w", tmp_path / "sessions")
    manager.init()
    message = {"role": "assistant", "content": [{"type": [], "text": "x"},
                                                {"type": "toolCall", "name": "a", "arguments": {}}]}
    manager.append_message(message)
    assert manager.get_messages()[-1] == message


# ------------------------------------------------------------------- deep nesting
def nested_text(levels: int) -> str:
    return "[" * levels + '"deep"' + "]" * levels


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 1000, 5000])
def test_a_line_nested_too_deeply_is_skipped_with_its_number(store, tmp_path, levels):
    lines = [json.dumps(d) for d in lines_of(CC_FIXTURE)]
    # line 3 gets a field `levels` deep in all (the line's own object is one level)
    lines[2] = lines[2][:-1] + ', "extra": ' + nested_text(levels - 1) + "}"
    result = only(import_paths(store, [write(tmp_path / "deep.jsonl", lines)]))
    assert result.status == "imported", result.error
    assert result.skipped[0].line == 3 and "nested" in result.skipped[0].reason
    assert result.entries_added == 11


def test_a_line_exactly_as_deep_as_allowed_imports_and_replays(store, tmp_path):
    lines = [json.dumps(d) for d in lines_of(CC_FIXTURE)]
    lines[2] = lines[2][:-1] + ', "extra": ' + nested_text(MAX_JSON_DEPTH - 1) + "}"
    result = only(import_paths(store, [write(tmp_path / "deep.jsonl", lines)]))
    imported_cleanly(result, 12)
    assert result.skipped == []
    ext = store.sessions.by_uid(result.session_uid)
    for branch in store.branches.of_session(ext.id):
        store.paths.replay(branch.head_seq)


# ------------------------------------------------------------ pi compactions
def pi_with_compaction(tmp_path: Path, kept) -> Path:
    lines = [
        {"type": "session", "version": 3, "id": "odd-kept", "timestamp": "2025-01-01T00:00:00.000Z",
         "cwd": "/w"},
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "first"}},
        {"type": "message", "id": "m2", "parentId": "m1", "timestamp": "2025-01-01T00:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "second"}]}},
        # a branch from m1 that the compaction's path does not go through
        {"type": "message", "id": "x1", "parentId": "m1", "timestamp": "2025-01-01T00:00:03.000Z",
         "message": {"role": "user", "content": "elsewhere"}},
        {"type": "compaction", "id": "c1", "parentId": "m2", "timestamp": "2025-01-01T00:00:04.000Z",
         "summary": "SUMMARY", "firstKeptEntryId": kept, "tokensBefore": 10},
        {"type": "message", "id": "m3", "parentId": "c1", "timestamp": "2025-01-01T00:00:05.000Z",
         "message": {"role": "user", "content": "after"}},
    ]
    return write(tmp_path / "pi-odd.jsonl", lines)


def context(store, result) -> list:
    ext = store.sessions.by_uid(result.session_uid)
    state = store.paths.replay(store.branches.current(ext.id).head_seq)
    return [(m.get("kind") or m.get("role"), m["content"] if isinstance(m["content"], str)
             else m["content"][0]["text"]) for m in state.messages]


@pytest.mark.parametrize("kept", [["m1"], {"id": "m1"}, 7, True, "x1", "nowhere", "m3"],
                         ids=["list", "object", "number", "bool", "other-branch", "unknown",
                              "after-it"])
def test_pi_compaction_keeping_no_entry_before_it_is_reported_and_replays(store, tmp_path, kept):
    result = only(import_paths(store, [pi_with_compaction(tmp_path, kept)]))
    assert result.status == "imported"
    assert [(s.line, "compaction c1 keeps" in s.reason) for s in result.skipped] == [(5, True)]
    # as pi does with a kept id it cannot find: the summary, then what follows
    assert context(store, result) == [("compaction_summary", "SUMMARY"), ("user", "after")]
    ext = store.sessions.by_uid(result.session_uid)
    stored = store.entries.find(ext.id, "c1").data
    assert stored["firstKeptEntryId"] is None and stored["arbor:firstKeptEntryId"] == kept


def test_pi_compaction_keeping_an_entry_before_it_is_left_alone(store, tmp_path):
    result = only(import_paths(store, [pi_with_compaction(tmp_path, "m2")]))
    assert result.skipped == []
    assert context(store, result) == [("compaction_summary", "SUMMARY"), ("assistant", "second"),
                                      ("user", "after")]


# ---------------------------------------------------------- replay never raises
def bad_compaction_path(kept) -> list[Entry]:
    def entry(seq, type_, data, parent):
        return Entry(seq, f"e{seq}", 1, parent, type_, "2025-01-01T00:00:00.000+00:00", seq - 1,
                     1, 0, None, data)

    return [entry(1, MESSAGE, {"message": {"role": "user", "content": "one"}}, None),
            entry(2, COMPACTION, {"summary": "S", "firstKeptEntryId": kept}, 1),
            entry(3, MESSAGE, {"message": {"role": "user", "content": "two"}}, 2)]


@pytest.mark.parametrize("kept", [["e1"], {"x": 1}, 3.5, "elsewhere"])
def test_replay_of_a_path_in_memory_falls_back_and_says_so(kept):
    state = replay_entries(bad_compaction_path(kept))
    assert [m["content"] for m in state.messages] == ["one", "two"]
    assert state.warning and "compaction e2" in state.warning


def store_with_bad_compaction(store, kept):
    with store.transaction():
        session = store.sessions.create("old", source="core")
        branch = store.branches.create(session.id, name="main")
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "one"}})
    store.entries.append_to_branch(branch.id, COMPACTION, {"summary": "S", "firstKeptEntryId": None})
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "two"}})
    # as an older arbor (or a log imported before validation) left it
    edit = ("UPDATE entries SET data = jsonb_set(data::jsonb, '{firstKeptEntryId}', ?::jsonb)::text"
            if is_postgres(store) else
            "UPDATE entries SET data = json_set(data, '$.firstKeptEntryId', json(?))")
    query(store, edit + " WHERE type = 'compaction'", (json.dumps(kept),))
    return store.branches.get(branch.id)


@pytest.mark.parametrize("kept", [["e1"], {"x": 1}, "elsewhere"])
def test_store_replay_of_a_bad_stored_compaction_falls_back_and_says_so(store, kept):
    branch = store_with_bad_compaction(store, kept)
    state = store.paths.replay(branch.head_seq)
    assert [m["content"] for m in state.messages] == ["one", "two"]
    assert state.warning and "compaction" in state.warning


# ------------------------------------------------------- shapes nobody foresaw
def test_a_line_whose_conversion_fails_is_kept_raw_and_reported(store, tmp_path, monkeypatch):
    """The last resort: a valid line that a converter cannot read (a shape no test
    foresaw) is kept as it was, raw, with its line number; the rest is imported."""
    from core.agents.claude_code import write_behind as claude_code   # (where lines convert)
    from core.agents.codex import importer as codex

    real_message = claude_code.convert_message

    def fragile(message, *args, **kwargs):
        if "Second answer" in json.dumps(message):
            raise TypeError("a shape nobody foresaw")
        return real_message(message, *args, **kwargs)

    monkeypatch.setattr(claude_code, "convert_message", fragile)
    lines = lines_of(CC_FIXTURE)
    number = next(i for i, d in enumerate(lines, 1) if "Second answer" in json.dumps(d))
    result = only(import_paths(store, [write(tmp_path / "cc.jsonl", lines)]))
    imported_cleanly(result, 12)
    assert [(s.line, "unexpected shape" in s.reason) for s in result.skipped] == [(number, True)]
    ext = store.sessions.by_uid(result.session_uid)
    raw = store.entries.find(ext.id, lines[number - 1]["uuid"])
    assert raw.type == "claude:assistant" and raw.data["message"] == lines[number - 1]["message"]

    real_entry = codex._Convert.entry

    def fragile_entry(self, item, timestamp):
        if item.line.get("type") == "turn_context":
            raise KeyError("nobody foresaw this")
        return real_entry(self, item, timestamp)

    monkeypatch.setattr(codex._Convert, "entry", fragile_entry)
    result = only(import_paths(store, [CODEX_FIXTURE]))
    assert result.status == "imported" and result.entries_added == 11
    assert [(s.line, "unexpected shape" in s.reason) for s in result.skipped] == [(2, True)]
    ext = store.sessions.by_uid(result.session_uid)
    assert store.entries.find(ext.id, "L2").type == "codex:turn_context"   # kept raw
