"""Imports that stop and go on: bounded transactions, the per-file record (offset, tail
hash), resuming an interrupted import, reading a grown file from where the last import
stopped, torn, truncated and rewritten files. See core/importing/state.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core import open_store
from core.agents.claude_code import importer as claude_code
from core.importing import import_paths
from core.importing import state as import_state

from test_import_robust import CODEX_FIXTURE, cc_line, only, write_lines
from store_sql import query


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def tool(i):
    return [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"c": i}}]


def result_line(uuid, parent, i):
    return json.dumps({
        "type": "user", "parentUuid": parent, "uuid": uuid, "sessionId": "sx",
        "timestamp": "2025-07-01T10:00:02.000Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"out {i}"}]}})


def tricky_lines() -> list[str]:
    """Everything the reader keeps across lines: a reply split over lines (usage counted
    once), parallel calls, progress, metadata lines without a uuid (chained before the
    next node), a rewind, a sidechain, a line whose parent comes later, a duplicate uuid,
    a compaction with its summary, a custom title near the end."""
    return [
        json.dumps({"type": "summary", "summary": "Fixing the build", "leafUuid": "zz"}),
        cc_line("u1", None, text="fix the build"),
        cc_line("a1", "u1", kind="assistant", msg_id="m1", text="Let me look."),
        cc_line("a2", "a1", kind="assistant", msg_id="m1", text=tool(1)),
        cc_line("a3", "a2", kind="assistant", msg_id="m1", text=tool(2)),
        result_line("r1", "a2", 1),
        result_line("r2", "a3", 2),
        json.dumps({"type": "progress", "uuid": "g1", "parentUuid": "a3", "sessionId": "sx",
                    "timestamp": "2025-07-01T10:00:02.500Z", "data": {"type": "hook"}}),
        cc_line("w2", "w1", text="I arrive before my parent"),
        cc_line("a4", "r2", kind="assistant", msg_id="m2", text="Fixed."),
        json.dumps({"type": "file-history-snapshot", "messageId": "x", "snapshot": {}}),
        json.dumps({"type": "queue-operation", "operation": "enqueue", "content": "later"}),
        cc_line("w1", "a4", kind="assistant", msg_id="mw", text="my child came first"),
        cc_line("u2", "a4", text="now run the tests"),
        cc_line("a5", "u2", kind="assistant", msg_id="m3", text="All green."),
        cc_line("s1", None, text="sub-agent task", isSidechain=True, agentId="ag1"),
        cc_line("s2", "s1", kind="assistant", msg_id="m4", text="sub result", isSidechain=True),
        cc_line("u3", "a4", text="actually, deploy instead"),
        cc_line("a6", "u3", kind="assistant", msg_id="m5", text=tool(9)),
        result_line("r9", "a6", 9),
        cc_line("d1", "gone", text="dangling parent"),
        cc_line("d1", "gone", text="same uuid, other text"),
        cc_line("i1", "a6", text="[Request interrupted by user for tool use]"),
        json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "cb",
                    "parentUuid": None, "logicalParentUuid": "i1", "sessionId": "sx",
                    "timestamp": "2025-07-01T10:30:00.000Z", "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": 1000}}),
        json.dumps({"type": "user", "uuid": "cs", "parentUuid": "cb", "sessionId": "sx",
                    "isCompactSummary": True, "timestamp": "2025-07-01T10:30:01.000Z",
                    "message": {"role": "user", "content": "This session is being continued."}}),
        cc_line("u4", "cs", text="carry on"),
        cc_line("a7", "u4", kind="assistant", msg_id="m6", text="Carrying on."),
        cc_line("a8", "a7", kind="assistant", msg_id="m6", text=tool(10)),
        result_line("r10", "a8", 10),
        json.dumps({"type": "custom-title", "customTitle": "Build fixes", "sessionId": "sx"}),
        cc_line("a9", "r10", kind="assistant", msg_id="m7", text="Done."),
    ]


def picture(store, uid: str) -> dict:
    """What a session holds, independent of seqs: entries by id (parent, type, data),
    branches, usage, name and counters."""
    ext = store.sessions.by_uid(uid)
    entries = {}
    for seq, entry_id, parent_seq, entry_type, data in query(
            store, "SELECT seq, id, parent_seq, type, data FROM entries WHERE external_session_id = ?",
            (ext.id,)).fetchall():
        parent = query(store, "SELECT id FROM entries WHERE seq = ?", (parent_seq,)).fetchone()
        entries[entry_id] = (parent[0] if parent else None, entry_type, json.loads(data))
    branches = sorted((b.head_id or "", b.fork_id or "", b.name, b.is_current)
                      for b in store.branches.of_session(ext.id))
    usage = sorted((u["model"], u["input_tokens"], u["output_tokens"]) for u in store.usage.of_session(ext.id))
    meta = dict(ext.metadata)
    meta.pop("path", None)
    return {"entries": entries, "branches": branches, "usage": usage, "name": ext.session_name,
            "metadata": meta, "counts": (ext.message_count,)
            + tuple(query(store, "SELECT entry_count FROM external_sessions WHERE id = ?",
                          (ext.id,)).fetchone())}


def pictures(store) -> dict:
    return {s.uid: picture(store, s.uid) for s in store.sessions.list(include_archived=True)}


def interrupt_at(monkeypatch, call: int) -> dict:
    """Make the call-th entry conversion raise KeyboardInterrupt (as Ctrl-C would)."""
    calls = {"n": 0}
    convert = claude_code._Import._convert

    def interrupted(self, *args):
        calls["n"] += 1
        if calls["n"] == call:
            raise KeyboardInterrupt
        return convert(self, *args)

    monkeypatch.setattr(claude_code._Import, "_convert", interrupted)
    return calls


@pytest.mark.parametrize("every_line", [True, False])
def test_an_interrupted_import_resumes_to_the_same_store_as_a_clean_one(tmp_path, monkeypatch,
                                                                        every_line):
    path = write_lines(tmp_path / "s.jsonl", tricky_lines())
    with open_store(tmp_path / "clean.db") as clean:
        result = only(import_paths(clean, [path]))
        assert result.status == "imported" and result.session_uid
        # (the sub-agent written inline, s1-s2, is a session of its own)
        expected = pictures(clean)
        assert len(expected) == 2
        conversions = sum(len(each["entries"]) for each in expected.values())
    # commit after every line (budget 0) or never (the default 0.1 s can pass on a loaded
    # machine: 18 entries were kept at load 18)
    monkeypatch.setattr("core.importing.driver.COMMIT_EVERY", 0.0 if every_line else 3600.0)
    convert = claude_code._Import._convert
    resumed_somewhere = 0
    for call in range(1, conversions + 1):
        with open_store(tmp_path / f"cut{call}.db") as store:
            interrupt_at(monkeypatch, call)
            with pytest.raises(KeyboardInterrupt):
                import_paths(store, [path])
            kept = query(store, "SELECT COUNT(*) FROM entries").fetchone()[0]
            assert store.integrity_check() == "ok"
            if not every_line:
                assert kept == 0         # one transaction: rolled back whole
            resumed_somewhere += kept > 0
            monkeypatch.setattr(claude_code._Import, "_convert", convert)
            again = only(import_paths(store, [path]))
            assert again.status == "imported", again.error
            assert again.entries_added == conversions - kept
            assert pictures(store) == expected, f"cut at conversion {call}"
            assert only(import_paths(store, [path])).status == "unchanged"
    if every_line:
        assert resumed_somewhere >= conversions - 3   # most cuts left committed work behind


def test_commits_are_bounded_and_the_record_is_written_with_them(store, tmp_path, monkeypatch):
    lines = [cc_line("u0", None, text="start")]
    for n in range(1, 3000):
        lines.append(cc_line(f"u{n}", f"u{n - 1}", kind="assistant" if n % 2 else "user",
                             text=f"line {n}"))
    path = write_lines(tmp_path / "big.jsonl", lines)
    commits = []
    real = store.commit_and_continue

    def counted():
        commits.append(store.imports.source(f"claude_code:{path.resolve()}")[4])
        return real()

    monkeypatch.setattr(store, "commit_and_continue", counted)
    monkeypatch.setattr("core.importing.driver.COMMIT_EVERY", 0.0)
    result = only(import_paths(store, [path]))
    assert result.entries_added == 3000
    assert len(commits) > 100
    offsets = [c["offset"] for c in commits]
    assert offsets == sorted(offsets) and all(not c["complete"] for c in commits)
    data = path.read_bytes()
    for record in commits:   # every recorded offset is the start of a line
        assert record["offset"] == 0 or data[record["offset"] - 1:record["offset"]] == b"\n"
        assert record["line"] == data[:record["offset"]].count(b"\n")
    final = store.imports.source(f"claude_code:{path.resolve()}")[4]
    assert final["complete"] and final["offset"] == len(data) and final["line"] == 3000


def test_a_grown_file_is_read_from_where_the_last_import_stopped(store, tmp_path, monkeypatch):
    lines = tricky_lines()
    path = write_lines(tmp_path / "s.jsonl", lines[:20])
    first = only(import_paths(store, [path]))
    assert first.status == "imported"
    parsed = []
    decoder = claude_code.common_decoder    # (the reader's decoder for a read of that size)
    monkeypatch.setattr(claude_code, "common_decoder", lambda expected: (
        lambda data, loads=decoder(expected): parsed.append(data) or loads(data)))
    with open(path, "a") as out:
        out.write("\n".join(lines[20:]) + "\n")
    grown = only(import_paths(store, [path]))
    assert grown.status == "imported"
    # only the new lines were parsed
    assert len(parsed) == len(lines) - 20
    assert all(json.loads(p) in [json.loads(line) for line in lines[20:]] for p in parsed)
    with open_store(tmp_path / "clean.db") as clean:
        expected = picture(clean, only(import_paths(clean, [path])).session_uid)
        # (with the sub-agent written inline, s1-s2, a session of its own)
        every = pictures(clean)
    got = picture(store, grown.session_uid)
    assert {uid: each["entries"] for uid, each in pictures(store).items()} == \
        {uid: each["entries"] for uid, each in every.items()}
    # one import or two give the same entries, branches and usage (the name was given by
    # the first import, before the custom title line existed: names are not changed later)
    assert got["entries"] == expected["entries"]
    assert got["usage"] == expected["usage"]
    assert [b[:2] for b in got["branches"]] == [b[:2] for b in expected["branches"]]
    assert grown.entries_added == sum(len(each["entries"]) for each in every.values()) \
        - first.entries_added


def test_an_unchanged_file_is_not_opened(store, tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    logs.mkdir()
    path = write_lines(logs / "s.jsonl", tricky_lines())
    # two Codex rollouts too: their parent-first ordering must not read unchanged files
    rollouts = [logs / f"rollout-2026-01-02T03-04-0{i}-x.jsonl" for i in (1, 2)]
    for rollout in rollouts:
        shutil.copy(CODEX_FIXTURE, rollout)
    first = import_paths(store, [logs])
    assert [f.status for f in first.files] == ["imported"] * 3
    opened = []
    real_open = open
    watched = {str(path), *map(str, rollouts)}

    def watching(file, *args, **kwargs):
        if str(file) in watched:
            opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", watching)
    everything = import_paths(store, [logs])
    assert [f.status for f in everything.files] == ["unchanged"] * 3 and opened == []
    again = [f for f in everything.files if f.path == str(path)][0]
    assert again.sessions and again.sessions[0].entries_total > 0
    again = only(import_paths(store, [path]))
    os.utime(path)                      # touched: checked (head and tail), nothing new
    touched = only(import_paths(store, [path]))
    assert touched.status == "imported" and touched.entries_added == 0 and opened


def test_a_torn_last_line_waits_for_its_end(store, tmp_path):
    lines = tricky_lines()
    path = tmp_path / "s.jsonl"
    whole = "\n".join(lines) + "\n"
    more = cc_line("z1", "a9", text="one more")
    path.write_text(whole + more[:30])
    first = only(import_paths(store, [path]))
    record = store.imports.source(f"claude_code:{path.resolve()}")[4]
    assert record["offset"] == len(whole.encode()) and record["line"] == len(lines)
    assert [s.line for s in first.skipped if "truncated" in s.reason] == [len(lines) + 1]
    path.write_text(whole + more + "\n")
    second = only(import_paths(store, [path]))
    assert second.entries_added == 1 and not second.skipped
    ext = store.sessions.by_uid(second.session_uid)
    assert store.entries.find(ext.id, "z1").parent_id == "a9"


@pytest.mark.parametrize("module_name", ["claude_code", "codex"])
def test_a_torn_line_finished_while_it_is_read_is_one_line_not_two(store, tmp_path,
                                                                    monkeypatch, module_name):
    """The agent finishes its torn last line while the importer reads the file: the reader
    has the line's start as the file's end, and then (the file grew) its rest. The rest is
    not a line of its own: read on, it was two bad lines and the message lost, the record
    past it (found by killing and restarting `arbor watch` while agents write)."""
    import importlib

    module = importlib.import_module(f"core.agents.{module_name}.importer")
    if module_name == "claude_code":
        lines = tricky_lines()
        more = cc_line("z1", "a9", text="finished while read")
    else:
        lines = CODEX_FIXTURE.read_text().splitlines()
        more = json.dumps({"timestamp": "2025-09-01T10:00:09.000Z", "type": "response_item",
                           "payload": {"type": "message", "role": "user", "content": [
                               {"type": "input_text", "text": "finished while read"}]}})
    path = tmp_path / "s.jsonl"
    whole = "\n".join(lines) + "\n"
    path.write_text(whole + more[:30])
    from core.importing import base

    real = base.iter_lines

    def finished_while_read(handle, *args, **kwargs):
        for raw in real(handle, *args, **kwargs):
            if not raw.complete:               # the agent writes the rest now
                with open(path, "a") as out:
                    out.write(more[30:] + "\n")
            yield raw

    for owner in (base, module):             # (codex reads through base.object_lines)
        monkeypatch.setattr(owner, "iter_lines", finished_while_read)
    first = only(import_paths(store, [path]))
    # the torn line, once, and nothing read after it
    assert [s.line for s in first.skipped if s.line > len(lines)] == [len(lines) + 1]
    monkeypatch.undo()
    second = only(import_paths(store, [path]))
    assert not second.skipped and second.entries_added >= 1
    fresh = open_store(tmp_path / "fresh.db")
    try:
        import_paths(fresh, [path])
        mine = store.sessions.by_uid(second.session_uid)
        theirs = fresh.sessions.by_uid(second.session_uid)
        assert sorted(e.id for e in store.entries.of_session(mine.id)) == \
            sorted(e.id for e in fresh.entries.of_session(theirs.id))
        assert mine.message_count == theirs.message_count
    finally:
        fresh.close()


def test_a_rewritten_or_truncated_file_is_read_again_from_the_start(store, tmp_path):
    lines = tricky_lines()
    path = write_lines(tmp_path / "s.jsonl", lines)
    first = only(import_paths(store, [path]))
    # (the main session's: the sub-agent written inline, s1-s2, is a session of its own)
    total = len(store.entries.seqs(store.sessions.by_uid(first.session_uid).id))
    # rewritten: an earlier line changed (same uuid, other text) and one line added
    changed = list(lines)
    changed[1] = cc_line("u1", None, text="fix the build, please")
    write_lines(path, changed + [cc_line("z1", "a9", text="and one more")])
    again = only(import_paths(store, [path]))
    assert again.status == "imported" and again.entries_added == 1   # ids: nothing twice
    # truncated below what was imported: read from the start, nothing lost, nothing twice
    write_lines(path, lines[:5])
    cut = only(import_paths(store, [path]))
    assert cut.status == "imported" and cut.entries_added == 0
    ext = store.sessions.by_uid(cut.session_uid)
    assert len(store.entries.seqs(ext.id)) == total + 1


def test_plan_from_stat_and_bytes(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    with open(path, "rb") as handle:
        fd = handle.fileno()
        st = os.fstat(fd)
        record = import_state.FileState(format="x", offset=16, line=2, complete=True,
                                        tail=import_state.tail_hash(fd, 16),
                                        head=import_state.head_hash(fd, 16), head_len=16)
        record.stamp(st)
        assert import_state.plan(record, st).action == import_state.UNCHANGED
        assert import_state.plan(None, st).action == import_state.FROM_START
    with open(path, "ab") as out:
        out.write(b'{"c":3}\n')
    with open(path, "rb") as handle:
        grown = import_state.plan(record, os.fstat(handle.fileno()), handle.fileno())
        assert (grown.action, grown.offset, grown.line) == (import_state.RESUME, 16, 2)
    path.write_bytes(b'{"a":9}\n{"b":2}\n{"c":3}\n')
    with open(path, "rb") as handle:
        assert import_state.plan(record, os.fstat(handle.fileno()),
                                 handle.fileno()).action == import_state.FROM_START
    path.write_bytes(b'{"a":1}\n')
    with open(path, "rb") as handle:
        assert import_state.plan(record, os.fstat(handle.fileno()),
                                 handle.fileno()).action == import_state.FROM_START
    assert import_state.FileState.from_json(record.to_json(), "x") == record
    assert import_state.FileState.from_json('{"head": "old kind"}', "x") is None


def test_path_key_is_the_resolved_path(tmp_path, monkeypatch):
    # what identifies a file's record: every link resolved, as Path.resolve() does, though
    # folders are resolved once each (a link in the folder, the file a link, ".." after a
    # link, a relative path)
    from core.importing.files import path_key

    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f.jsonl").write_text("x")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "real" / "sub", tmp_path / "folder-link")
    os.symlink(tmp_path / "real" / "sub" / "f.jsonl", tmp_path / "elsewhere" / "file-link.jsonl")
    monkeypatch.chdir(tmp_path / "real")
    for given in (tmp_path / "real" / "sub" / "f.jsonl", tmp_path / "folder-link" / "f.jsonl",
                  tmp_path / "elsewhere" / "file-link.jsonl",
                  tmp_path / "folder-link" / ".." / "sub" / "f.jsonl", Path("sub/f.jsonl")):
        assert path_key(given) == str(given.resolve()) == str(tmp_path / "real" / "sub" / "f.jsonl")


@pytest.mark.parametrize("fixture", ["pi/pi_v3_generated.jsonl",
                                     "pi/specstory_full_format_v3_synthetic.jsonl",
                                     "codex/rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-"
                                     "111111111111.jsonl"])
def test_formats_read_from_the_start_commit_as_they_go_and_recover(tmp_path, monkeypatch,
                                                                   fixture):
    # Codex and pi files are not resumed from an offset: their entries are committed as
    # they are written (here before every entry), and an import cut anywhere is read again
    # from the start next time, to the same store as a clean import.
    from core.importing import session as import_session
    from test_import_robust import FIXTURES

    path = tmp_path / Path(fixture).name
    shutil.copy(FIXTURES / fixture, path)
    with open_store(tmp_path / "clean.db") as clean:
        result = only(import_paths(clean, [path]))
        assert result.status == "imported"
        expected = {s.uid: picture(clean, s.uid) for s in result.sessions}
        total = sum(len(p["entries"]) for p in expected.values())
    monkeypatch.setattr("core.importing.driver.COMMIT_EVERY", 0.0)
    with open_store(tmp_path / "paced.db") as store:
        commits = []
        real = store.commit_and_continue
        monkeypatch.setattr(store, "commit_and_continue", lambda: commits.append(1) or real())
        paced = only(import_paths(store, [path]))
        assert len(commits) >= total - 1
        assert {s.uid: picture(store, s.uid) for s in paced.sessions} == expected
    add = import_session.SessionTarget.add
    for cut in range(2, total + 1):
        calls = {"n": 0}

        def interrupted(self, *args, **kwargs):
            calls["n"] += 1
            if calls["n"] == cut:
                raise KeyboardInterrupt
            return add(self, *args, **kwargs)

        with open_store(tmp_path / f"cut{cut}.db") as store:
            monkeypatch.setattr(import_session.SessionTarget, "add", interrupted)
            with pytest.raises(KeyboardInterrupt):
                import_paths(store, [path])
            monkeypatch.setattr(import_session.SessionTarget, "add", add)
            assert store.integrity_check() == "ok"
            again = only(import_paths(store, [path]))
            assert again.status == "imported", again.error
            got = {s.uid: picture(store, s.uid) for s in again.sessions}
            assert got == expected, f"cut at entry {cut}"


def long_session(turns: int) -> list[str]:
    """`turns` rounds of prompt, tool call and tool result, answer: ids like Claude Code's
    (uuids, msg_ and toolu_ ids), and a rewind to the first prompt's parent at the end."""
    lines, parent = [], None
    for n in range(turns):
        prompt, call, result, answer = (f"{n:08d}-0000-4000-8000-{k:012d}" for k in range(4))
        lines.append(cc_line(prompt, parent, text=f"question {n}"))
        lines.append(cc_line(call, prompt, kind="assistant", msg_id=f"msg_01{n:022d}", text=[
            {"type": "tool_use", "id": f"toolu_01{n:022d}", "name": "Bash", "input": {"n": n}}]))
        lines.append(json.dumps({
            "type": "user", "parentUuid": call, "uuid": result, "sessionId": "sx",
            "timestamp": "2025-07-01T10:00:02.000Z", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_01{n:022d}", "content": "ok"}]}}))
        lines.append(cc_line(answer, result, kind="assistant", msg_id=f"msg_02{n:022d}",
                             text=f"answer {n}"))
        parent = answer
    return lines


def test_the_record_of_a_long_session_stays_small(store, tmp_path):
    """What a resumed read is told of its past (500 prompts, 256 counted responses and tool
    calls) is kept as short keys: the record is written again with every append."""
    path = write_lines(tmp_path / "s.jsonl", long_session(600))
    assert only(import_paths(store, [path])).status == "imported"
    record = store.imports.source(f"claude_code:{path.resolve()}")[4]
    reader = json.loads(record["reader"])
    assert len(reader["prompt_parents"].split()) == 500
    assert len(reader["counted_keys"].split()) == 256
    assert len(reader["tool_calls"].split()) == 256 and reader["tool_names"] == ["Bash"]
    assert len(json.dumps(record, separators=(",", ":"))) < 15_000    # (63 KB with ids whole)
    # a rewind after an append, to the parent of a prompt 450 prompts back (the record
    # keeps the newest 500): a branch, as in a one-pass import
    rewind = cc_line("ffffffff-0000-4000-8000-000000000000", "00000149-0000-4000-8000-000000000003",
                     text="back to answer 149")
    grown = write_lines(tmp_path / "s.jsonl", long_session(600) + [rewind])
    again = only(import_paths(store, [grown]))
    with open_store(tmp_path / "clean.db") as clean:
        expected = picture(clean, only(import_paths(clean, [grown])).session_uid)
    got = picture(store, again.session_uid)
    assert got["entries"] == expected["entries"] and got["usage"] == expected["usage"]
    assert [b[:2] for b in got["branches"]] == [b[:2] for b in expected["branches"]]


@pytest.mark.parametrize("cut", [3, 5, 10, 14, 17, 19, 22, 27])
def test_a_record_that_keeps_the_ids_whole_still_resumes(tmp_path, monkeypatch, cut):
    """Records written before the ids were kept as short keys (prompts as pairs, counted
    message ids and tool names by id) are read as they were: a file grown after such a
    record ends up as it does after a record of today."""
    lines = tricky_lines()
    snapshot = claude_code._Import.snapshot

    def whole_ids(self):
        state = snapshot(self)
        held = self.held[1] if self.held is not None else None
        for name in ("prompt_parents", "counted_keys", "tool_names", "tool_calls"):
            del state[name]
        state["prompts"] = [list(pair) for pair in self.prompts if pair[1] != held][-500:]
        state["counted"] = list(self.counted)[-256:]
        state["tools"] = dict(list(self.tool_names.items())[-256:])
        return state

    pictures = []
    for old in (True, False):
        path = write_lines(tmp_path / f"s-{old}.jsonl", lines[:cut])
        with open_store(tmp_path / f"{old}.db") as store:
            if old:
                monkeypatch.setattr(claude_code._Import, "snapshot", whole_ids)
            assert only(import_paths(store, [path])).status == "imported"
            reader = json.loads(store.imports.source(f"claude_code:{path.resolve()}")[4]["reader"])
            assert ("prompts" in reader) == old and ("prompt_parents" in reader) != old
            monkeypatch.setattr(claude_code._Import, "snapshot", snapshot)
            write_lines(path, lines)
            grown = only(import_paths(store, [path]))
            pictures.append(picture(store, grown.session_uid))
    assert pictures[0]["entries"] == pictures[1]["entries"]
    assert pictures[0]["usage"] == pictures[1]["usage"]
    assert pictures[0]["branches"] == pictures[1]["branches"]
