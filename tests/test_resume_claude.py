"""`arbor resume` for Claude Code: the branch as a new transcript, as Claude Code writes one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_logs import NOW, ClaudeLog, claude_session, fixed_ids, path_view, text, tool_use
from core import open_store
from core.actions import operations
from core.agents import ResumeError, prepare_resume
from core.agents.claude_code.writer import (
    INTERRUPTED, SUMMARY_PREFACE, project_folder, transcript_dir)
from core.agents.native import write_new_file
from core.importing import import_paths

SPACED = "/tmp/arbor tests/Projet données ✓"


@pytest.fixture
def env(tmp_path):
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "PATH": ""}


def imported(tmp_path, log: ClaudeLog):
    store = open_store(tmp_path / "arbor.db")
    path = log.write(tmp_path / "source")
    report = import_paths(store, [path])
    assert report.files[0].status == "imported", report.files[0]
    return store, store.sessions.by_uid(log.session_id)


IDS = fixed_ids()


def resume(store, session, branch, env, **options):
    return prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS, **options)


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def reimport(tmp_path, plan):
    store = open_store(tmp_path / f"again-{plan.native_id}.db")
    report = import_paths(store, [plan.file])
    assert report.files[0].status == "imported" and not report.files[0].skipped, report.files[0]
    session = store.sessions.by_uid(plan.native_id)
    return store, session


def test_project_folder_is_claude_codes_name_for_the_directory():
    assert project_folder("/tmp/a", {}) == "-tmp-a"
    # every character outside [A-Za-z0-9] is '-', a character outside the BMP is two
    assert project_folder("/tmp/arbor tests/Projet données ✓/🚀", {}) == \
        "-tmp-arbor-tests-Projet-donn-es---" + "--"  # as node prints it
    # past 200 characters: cut, then '-' and Claude Code's hash (value from node)
    long = "/home/user/" + "very-long-directory-name/" * 10 + "projekt ✓ 🚀"
    assert project_folder(long, {}).endswith("-very-long-dire-1bw8qm")
    assert len(project_folder(long, {})) == 200 + len("-1bw8qm")
    # CLAUDE_CODE_PROJECT_DIR_NAME names the folder when CLAUDE_CONFIG_DIR is set
    assert project_folder("/x", {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "mine"}) == "mine"
    assert project_folder("/x", {"CLAUDE_CODE_PROJECT_DIR_NAME": "mine"}) == "-x"


def test_each_branch_is_written_the_way_claude_code_writes_a_transcript(tmp_path, env):
    store, session = imported(tmp_path, claude_session(SPACED))
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2
    for branch in branches:
        plan = resume(store, session, branch, env)
        assert plan.argv == ["claude", "--resume", plan.native_id]
        assert plan.file == Path(env["CLAUDE_CONFIG_DIR"]) / "projects" / \
            "-tmp-arbor-tests-Projet-donn-es--" / f"{plan.native_id}.jsonl"
        lines = lines_of(plan.file)
        assert lines[-1] == {"type": "custom-title", "sessionId": plan.native_id,
                             "customTitle": f"Flaky parser test · {branch.name}"}
        previous = None
        open_calls: list[str] = []
        message_ids = set()
        for line in lines[:-1]:
            assert line["sessionId"] == plan.native_id
            assert line["isSidechain"] is False
            assert line["cwd"] == SPACED and line["version"] == "2.1.90"
            assert line["userType"] == "external" and line["gitBranch"] == "main"
            assert line["timestamp"].endswith("Z")
            assert line["parentUuid"] == previous      # one chain, in path order
            previous = line["uuid"]
            content = line["message"]["content"]
            if line["type"] == "assistant":
                assert line["message"]["id"].startswith("msg_")
                message_ids.add(line["message"]["id"])
                assert not any(b.get("type") == "tool_result" for b in content)
                open_calls += [b["id"] for b in content if b.get("type") == "tool_use"]
                assert line["forkedFrom"]["sessionId"] == session.uid
            else:
                results = [b["tool_use_id"] for b in content if isinstance(content, list)
                           and b.get("type") == "tool_result"]
                if results:   # a tool result follows its call, with nothing between
                    assert results == open_calls[:len(results)]
                    open_calls = open_calls[len(results):]
                else:
                    assert open_calls == []
        assert open_calls == []
        assert len({line["uuid"] for line in lines[:-1]}) == len(lines) - 1
        # the reply split over four lines keeps one message id
        assert "msg_01AAAAAAAAAAAAAAAAAAAAAAAA" in message_ids


def test_the_written_file_imports_back_as_the_same_messages_and_tree(tmp_path, env):
    store, session = imported(tmp_path, claude_session(SPACED))
    ends = []
    for branch in store.branches.of_session(session.id):
        expected = path_view(store, branch.head_seq)
        ends.append(expected[-1])
        plan = resume(store, session, branch, env)
        again, copy = reimport(tmp_path, plan)
        assert len(again.branches.of_session(copy.id)) == 1          # one chain, no false forks
        got = path_view(again, again.branches.current(copy.id).head_seq)
        if expected[-1][0] == "assistant" and expected[-1][2]:
            # a branch that ends in a tool call: the call gets the result Claude Code writes
            # for an interrupted call, so that Claude Code keeps the call when it resumes
            call = expected[-1][2][0][0]
            assert got == expected + [("toolResult", call, INTERRUPTED, True)]
        else:
            assert got == expected
        assert copy.session_name == f"Flaky parser test · {branch.name}"
        assert copy.cwd == SPACED
    assert sorted(bool(end[2]) for end in ends) == [False, True]   # one ends in a tool call


def test_a_message_inside_the_branch_resumes_the_branch_up_to_it(tmp_path, env):
    store, session = imported(tmp_path, claude_session("/tmp/p"))
    branch = store.branches.current(session.id)
    path = store.paths.entries(branch.head_seq)
    middle = next(e for e in path if e.message and "races the clock" in str(e.message["content"]))
    plan = resume(store, session, branch, env, at_seq=middle.seq)
    again, copy = reimport(tmp_path, plan)
    got = path_view(again, again.branches.current(copy.id).head_seq)
    assert got == path_view(store, middle.seq)
    assert got[-1][1] == "The test compares against `now()`: it races the clock."


def test_a_branch_across_a_claude_code_compaction(tmp_path, env):
    log = ClaudeLog("c0ffee00-0000-4000-8000-000000000002", "/tmp/p")
    log.user("Plan the migration")
    log.assistant(text("Step one: back up."), msg_id="msg_01A0000000000000000000000A")
    kept_head = log.user("Go on")
    kept_tail = log.assistant(text("Step two: migrate."), msg_id="msg_01A0000000000000000000000B")
    log.compact("Summary: a two-step plan.", kept=[kept_head, kept_tail])
    log.user("And step three?")
    log.assistant(text("Verify."), msg_id="msg_01A0000000000000000000000C")
    store, session = imported(tmp_path, log)
    branch = store.branches.current(session.id)
    expected = path_view(store, branch.head_seq)
    assert ("compaction", "Summary: a two-step plan.", 2) in expected
    plan = resume(store, session, branch, env)
    lines = lines_of(plan.file)
    boundary = next(line for line in lines if line.get("subtype") == "compact_boundary")
    index = lines.index(boundary)
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == lines[index - 1]["uuid"]
    summary = lines[index + 1]
    assert summary["isCompactSummary"] is True and summary["parentUuid"] == boundary["uuid"]
    segment = boundary["compactMetadata"]["preservedSegment"]
    assert segment == {"headUuid": lines[index - 2]["uuid"], "anchorUuid": summary["uuid"],
                       "tailUuid": lines[index - 1]["uuid"]}
    assert [line["message"]["content"] for line in lines if line.get("isCompactSummary")] == \
        ["Summary: a two-step plan."]          # the summary line is not written twice
    again, copy = reimport(tmp_path, plan)
    assert path_view(again, again.branches.current(copy.id).head_seq) == expected


def test_a_compaction_made_in_arbor_is_written_as_claude_code_writes_one(tmp_path, env):
    log = ClaudeLog("c0ffee00-0000-4000-8000-000000000003", "/tmp/p")
    for n in range(6):
        log.user(f"question {n} " + "x" * 400)
        log.assistant(text(f"answer {n} " + "y" * 400), msg_id=f"msg_01B{n:023d}")
    store, session = imported(tmp_path, log)
    branch = store.branches.current(session.id)
    operations.compact(store, branch.id, summary="They asked six questions.", keep_recent_tokens=250)
    branch = store.branches.get(branch.id)
    expected = path_view(store, branch.head_seq)
    compaction = next(item for item in expected if item[0] == "compaction")
    assert compaction[2] is not None                 # it keeps the newest messages
    plan = resume(store, session, branch, env)
    lines = lines_of(plan.file)
    summary = next(line for line in lines if line.get("isCompactSummary"))
    assert summary["message"]["content"].startswith(SUMMARY_PREFACE)
    assert "They asked six questions." in summary["message"]["content"]
    again, copy = reimport(tmp_path, plan)
    got = path_view(again, again.branches.current(copy.id).head_seq)
    # the same entries; Claude Code's summary line (the preface and summary) follows the
    # compaction, and the compaction's summary is that line's text
    position = expected.index(compaction)
    assert got[:position] == expected[:position]
    assert got[position][0] == "compaction" and got[position][2] == compaction[2]
    assert got[position][1] == summary["message"]["content"]
    assert got[position + 1] == ("user", summary["message"]["content"], ())
    assert got[position + 2:] == expected[position + 1:]


def test_arbor_written_messages_become_claude_lines(tmp_path, env):
    """A branch with entries arbor added (a branch summary from a roll back, a message written
    through core) still gives lines Claude Code accepts."""
    store, session = imported(tmp_path, claude_session("/tmp/p"))
    branch = store.branches.current(session.id)
    path = store.paths.entries(branch.head_seq)
    back_to = next(e for e in path if e.message and "races the clock" in str(e.message["content"]))
    new = operations.rollback(store, branch.id, entry_id=back_to.seq, summary="Tried 50 runs.")
    store.entries.append_messages(new.id, [{"role": "user", "content": "Try a fixture instead."},
                                   {"role": "assistant", "content": [
                                       {"type": "thinking", "thinking": "unsigned"},
                                       {"type": "text", "text": "Using a fixture."}]}])
    new = store.branches.get(new.id)
    plan = resume(store, session, new, env)
    lines = lines_of(plan.file)[:-1]
    assert lines[-2]["message"]["content"] == "Try a fixture instead."
    last = lines[-1]["message"]
    assert last["id"].startswith("msg_01") and len(last["id"]) == 28
    # an unsigned thinking block would be refused by the API: it is left out
    assert last["content"] == [{"type": "text", "text": "Using a fixture."}]
    assert last["usage"]["output_tokens"] == 0 and last["stop_reason"] is None
    summary_line = lines[-3]["message"]["content"]
    assert "Tried 50 runs." in summary_line and summary_line.startswith("The following is a summary")
    assert "forkedFrom" not in lines[-1]


def test_nothing_is_ever_written_over(tmp_path, env):
    target = tmp_path / "f.jsonl"
    target.write_text("original\n")
    with pytest.raises(ResumeError, match="already exists"):
        write_new_file(target, [{"a": 1}])
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.jsonl"]   # no temporary file left


def test_a_failed_write_leaves_no_file(tmp_path):
    def lines():
        yield {"a": 1}
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_new_file(tmp_path / "g.jsonl", lines())
    assert list(tmp_path.iterdir()) == []


def test_the_original_transcript_is_not_touched(tmp_path, env):
    log = claude_session("/tmp/p")
    store, session = imported(tmp_path, log)
    source = tmp_path / "source" / f"{log.session_id}.jsonl"
    before = source.read_bytes(), source.stat().st_mtime_ns
    for branch in store.branches.of_session(session.id):
        resume(store, session, branch, env)
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before
    assert not (transcript_dir("/tmp/p", env) / f"{log.session_id}.jsonl").exists()


def test_claude_config_dir_and_home(tmp_path, env):
    store, session = imported(tmp_path, claude_session("/tmp/p"))
    plan = resume(store, session, None, {"HOME": env["HOME"], "PATH": ""})
    assert plan.file.parent == Path(env["HOME"]) / ".claude" / "projects" / "-tmp-p"
    plan = resume(store, session, None, env)
    assert plan.file.parent == tmp_path / "claude" / "projects" / "-tmp-p"
    plan = resume(store, session, None, {"HOME": env["HOME"], "CLAUDE_CONFIG_DIR": "~/cc"})
    assert plan.file.parent == Path(env["HOME"]) / "cc" / "projects" / "-tmp-p"


def test_text_utf8_cannot_hold_is_written_escaped(tmp_path):
    """A lone surrogate (from undecodable input) is written as a JSON escape: the file
    stays valid UTF-8 and nothing is lost. Other lines keep their text as it is."""
    target = tmp_path / "s.jsonl"
    write_new_file(target, [{"text": "bad \ud800 end"}, {"ok": "é ✓ 🚀"}])
    raw = target.read_bytes()
    raw.decode("utf-8")
    assert b"\\ud800" in raw and "é ✓ 🚀".encode() in raw
    assert [json.loads(line) for line in raw.splitlines()] == [{"text": "bad \ud800 end"},
                                                              {"ok": "é ✓ 🚀"}]
