"""`arbor resume` for Codex: `codex resume` on the rollout itself when the branch ends where it
ends, else a new rollout forked from it, as `codex fork` writes one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_logs import NOW, CodexLog, codex_session, fixed_ids, path_view
from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.agents.codex.writer import SUMMARY_PREFIX, rollout_path
from core.importing import import_paths

CWD = "/home/dev/my shop/café"
IDS = fixed_ids()


@pytest.fixture
def env(tmp_path):
    return {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex"), "PATH": "",
            "TZ": "UTC"}


def imported(tmp_path, log: CodexLog, env):
    store = open_store(tmp_path / "arbor.db")
    path = log.write(Path(env["CODEX_HOME"]))
    report = import_paths(store, [path])
    assert report.files[0].status == "imported", report.files[0]
    return store, store.sessions.by_uid(log.session_id), path


def resume(store, session, branch, env, **options):
    return prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS, **options)


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_branch_that_ends_where_the_rollout_ends_resumes_the_rollout(tmp_path, env):
    store, session, path = imported(tmp_path, codex_session(CWD), env)
    before = sorted(Path(env["CODEX_HOME"]).rglob("*.jsonl"))
    plan = resume(store, session, None, env)
    assert plan.argv == ["codex", "resume", session.uid] and plan.file is None
    assert plan.cwd == CWD
    assert sorted(Path(env["CODEX_HOME"]).rglob("*.jsonl")) == before      # nothing written
    assert plan.shell_command() == f"cd '{CWD}' && codex resume {session.uid}"


def test_an_earlier_message_becomes_a_forked_rollout(tmp_path, env):
    store, session, path = imported(tmp_path, codex_session(CWD), env)
    branch = store.branches.current(session.id)
    entries = store.paths.entries(branch.head_seq)
    middle = next(e for e in entries if e.message and "line 12" in json.dumps(e.message))
    plan = resume(store, session, branch, env, at_seq=middle.seq)
    assert plan.argv == ["codex", "resume", plan.native_id]
    assert plan.file == rollout_path(env, plan.native_id, NOW)
    assert plan.file.parent == Path(env["CODEX_HOME"]) / "sessions" / "2026" / "03" / "02"
    lines = lines_of(plan.file)
    meta = lines[0]
    assert meta["type"] == "session_meta"
    assert meta["payload"]["id"] == plan.native_id and meta["payload"]["forked_from_id"] == session.uid
    assert meta["payload"]["cwd"] == CWD
    assert meta["payload"]["base_instructions"] == {"text": "You are Codex."}
    assert meta["payload"]["cli_version"] == "0.171.0"
    # the rest is the rollout's own lines, up to the chosen message, as they were
    original = lines_of(path)
    assert lines[1:] == original[1:len(lines)]
    assert lines[-1]["payload"].get("content") == [
        {"type": "output_text", "text": "The script parses its flags at line 12; I'll add --dry-run there."}]
    # named after the branch, as Codex's rename names a thread (its picker reads the index)
    index = lines_of(Path(env["CODEX_HOME"]) / "session_index.jsonl")
    assert index == [{"id": plan.native_id, "updated_at": "2026-03-02T12:30:00.000Z",
                      "thread_name": f"Add a --dry-run flag to the deploy script · main, "
                                     f"up to {middle.id}"}]


def test_a_forked_rollout_imports_back_as_the_same_messages(tmp_path, env):
    store, session, _ = imported(tmp_path, codex_session(CWD), env)
    branch = store.branches.current(session.id)
    middle = [e for e in store.paths.entries(branch.head_seq) if e.type == "message"][4]
    plan = resume(store, session, branch, env, at_seq=middle.seq)
    # alone in a new store: a session of its own, forked from the original
    again = open_store(tmp_path / "again.db")
    report = import_paths(again, [plan.file])
    assert report.files[0].status == "imported" and not report.files[0].skipped
    copy = again.sessions.by_uid(plan.native_id)
    assert copy.parent_session == session.uid
    assert path_view(again, again.branches.current(copy.id).head_seq) == \
        path_view(store, middle.seq)
    # in the store it came from: matched against the parent's entries, nothing new
    entries = len(store.entries.of_session(session.id))
    report = import_paths(store, [plan.file])
    assert report.files[0].status == "imported"
    assert len(store.entries.of_session(session.id)) == entries


def test_a_rollout_that_grew_since_its_import_is_not_resumed_past_the_branch(tmp_path, env):
    log = codex_session(CWD)
    store, session, path = imported(tmp_path, log, env)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"timestamp": "2026-03-01T10:00:00.000Z", "type": "response_item",
                                 "payload": {"type": "message", "role": "user", "content": [
                                     {"type": "input_text", "text": "newer"}]}}) + "\n")
    plan = resume(store, session, None, env)
    assert plan.file is not None and plan.native_id != session.uid
    assert "newer" not in plan.file.read_text()


def test_a_torn_last_line_is_not_the_tip(tmp_path, env):
    store, session, path = imported(tmp_path, codex_session(CWD), env)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"timestamp": "2026-03-01T10:00:00.000Z", "type": "event_msg", "payl')
    plan = resume(store, session, None, env)
    assert plan.file is not None


@pytest.mark.parametrize("event_first", [True, False], ids=["event-then-item", "item-then-event"])
def test_the_twin_line_of_the_last_message_still_counts_as_the_tip(tmp_path, env, event_first):
    """Codex writes a reply twice (an event and a response item); arbor makes one entry of
    them, whose id is the first line's: the second line after it is not new."""
    log = codex_session(CWD)
    log.lines.pop()          # the token count: the file now ends with the reply's two lines
    if not event_first:
        log.lines[-2], log.lines[-1] = log.lines[-1], log.lines[-2]
    store, session, path = imported(tmp_path, log, env)
    plan = resume(store, session, None, env)
    assert plan.file is None and plan.native_id == session.uid


def test_rolled_back_turns_resume_as_a_fork_without_the_rollback(tmp_path, env):
    log = codex_session(CWD)
    log.roll_back(1)
    log.user("Instead, add a --plan flag.")
    log.say("Added --plan.")
    store, session, path = imported(tmp_path, log, env)
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2
    current = store.branches.current(session.id)
    plan = resume(store, session, current, env)
    assert plan.file is None            # Codex applies the rollback itself
    other = next(b for b in branches if b.id != current.id)
    plan = resume(store, session, other, env)
    lines = lines_of(plan.file)
    assert not any(line["payload"].get("type") == "thread_rolled_back" for line in lines)
    assert any("Done: --dry-run" in json.dumps(line) for line in lines)
    again = open_store(tmp_path / "again.db")
    import_paths(again, [plan.file])
    copy = again.sessions.by_uid(plan.native_id)
    assert path_view(again, again.branches.current(copy.id).head_seq) == \
        path_view(store, other.head_seq)


def test_entries_arbor_added_are_written_as_codex_items(tmp_path, env):
    store, session, _ = imported(tmp_path, codex_session(CWD), env)
    branch = store.branches.current(session.id)
    store.entries.append_messages(branch.id, [
        {"role": "user", "content": "One more thing"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "toolCall", "id": "c9", "name": "shell", "arguments": {"command": ["ls"]}}]},
        {"role": "toolResult", "toolCallId": "c9", "toolName": "shell",
         "content": [{"type": "text", "text": "deploy.py"}], "isError": False}])
    branch = store.branches.get(branch.id)
    plan = resume(store, session, branch, env)
    lines = lines_of(plan.file)[-6:]
    assert [(line["type"], line["payload"]["type"]) for line in lines] == [
        ("event_msg", "user_message"), ("response_item", "message"),
        ("event_msg", "agent_message"), ("response_item", "message"),
        ("response_item", "function_call"), ("response_item", "function_call_output")]
    assert lines[4]["payload"] == {"type": "function_call", "name": "shell",
                                   "arguments": '{"command":["ls"]}', "call_id": "c9"}
    assert lines[5]["payload"] == {"type": "function_call_output", "call_id": "c9", "output": "deploy.py"}
    again = open_store(tmp_path / "again.db")
    import_paths(again, [plan.file])
    copy = again.sessions.by_uid(plan.native_id)
    # Codex has one item per part of a reply: the text and the call come back as two
    expected = path_view(store, branch.head_seq)
    assert expected[-2] == ("assistant", "Checking.", (("c9", "shell", '{"command": ["ls"]}'),))
    expected[-2:-1] = [("assistant", "Checking.", ()), ("assistant", "", expected[-2][2])]
    assert path_view(again, again.branches.current(copy.id).head_seq) == expected


def test_a_compaction_made_in_arbor_becomes_codexs_compacted_line(tmp_path, env):
    log = codex_session(CWD)
    for n in range(4):
        log.user(f"step {n} " + "z" * 300)
        log.say(f"did {n} " + "w" * 300)
    store, session, _ = imported(tmp_path, log, env)
    branch = store.branches.current(session.id)
    operations.compact(store, branch.id, summary="Four steps done.", keep_recent_tokens=200)
    branch = store.branches.get(branch.id)
    plan = resume(store, session, branch, env)
    compacted = next(line for line in lines_of(plan.file) if line["type"] == "compacted")
    history = compacted["payload"]["replacement_history"]
    assert compacted["payload"]["message"] == "Four steps done."
    assert history[0]["content"][0]["text"] == f"{SUMMARY_PREFIX}\nFour steps done."
    kept = store.paths.replay(branch.head_seq).messages[1:]
    # the summary, then the kept messages as response items
    assert [item["content"][0]["text"] for item in history[1:]] == \
        [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in kept]


def test_a_fork_merged_into_its_parent_resumes_the_forks_own_rollout(tmp_path, env):
    """A Codex fork (its own rollout, `forked_from_id` naming the parent) is imported as a
    branch of the parent's session; resuming that branch resumes the fork's rollout."""
    parent = codex_session(CWD)
    child = CodexLog("0199a000-0000-7000-8000-00000000f02c", CWD)
    child.lines[0]["payload"]["forked_from_id"] = parent.session_id
    child.lines[1:] = [dict(line) for line in parent.lines[1:8]]   # the history it repeats
    child.user("Use a config file instead.")
    child.say("Reading deploy.toml now.")
    store, session, _ = imported(tmp_path, parent, env)
    report = import_paths(store, [child.write(Path(env["CODEX_HOME"]))])
    assert report.files[0].status == "imported"
    session = store.sessions.get(session.id)      # it knows its fork now
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2
    fork = next(b for b in branches if b.head_id.startswith(child.session_id))
    plan = resume(store, session, fork, env)
    assert plan.file is None and plan.argv == ["codex", "resume", child.session_id]
    main = next(b for b in branches if b.id != fork.id)
    plan = resume(store, session, main, env)
    assert plan.file is None and plan.argv == ["codex", "resume", parent.session_id]
