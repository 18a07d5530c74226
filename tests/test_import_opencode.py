"""opencode's database, as opencode 1.18.33 wrote it (tests/fixtures/agents/opencode,
SOURCES.md there): what its sessions, messages and parts become
(core/agents/opencode/importer.py), usage against opencode's own figures, and the database
followed while opencode writes to it."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from core import open_store
from core.agents import ResumeError, prepare_resume
from core.importing import import_paths
from core.model.entries import COMPACTION, content_text

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "agents" / "opencode" / "opencode.db"
MAIN = "ses_db28d291affeBWJ51SDDts5ac9"
FORK = "ses_db28cf9ebffeV5quK1YZ5EnI0Q"
PARENT = "ses_db28ce084ffebJjrqwLGe1Vn1m"
CHILD = "ses_db28cd281ffejLNVqPK857BTTn"


@pytest.fixture
def database(tmp_path) -> Path:
    target = tmp_path / "home" / ".local" / "share" / "opencode" / "opencode.db"
    target.parent.mkdir(parents=True)
    with sqlite3.connect(f"file:{FIXTURE}?mode=ro", uri=True) as source:
        source.execute("VACUUM INTO ?", (str(target),))
    return target


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


def branch_entries(store, uid: str):
    session = store.sessions.by_uid(uid)
    return store.paths.entries(store.branches.current(session.id).head_seq)


def said(entries) -> list[tuple[str, str]]:
    return [((e.message or {}).get("role") or e.type,
             content_text(e.message["content"]) if e.message else "")
            for e in entries if e.message or e.type == COMPACTION]


def test_a_session_is_its_messages_with_each_step_a_response(store, database):
    import_paths(store, [database])
    session = store.sessions.by_uid(MAIN)
    assert (session.source, session.session_name, session.cwd) == \
        ("opencode", "Files in the project", "/tmp/arbor-lab/opencode/project")
    entries = branch_entries(store, MAIN)
    assert [role for role, _text in said(entries)] == [
        "user", "assistant", "toolResult", "assistant", "user", "assistant", "toolResult",
        COMPACTION, "user", "assistant"]
    calls = [b for e in entries if e.message for b in e.message["content"]
             if b.get("type") == "toolCall"]
    results = [e.message for e in entries if e.message and e.message["role"] == "toolResult"]
    assert [(c["id"], c["name"]) for c in calls] == [("call_fake002_0", "bash"),
                                                     ("call_fake004_0", "read")]
    assert [r["toolCallId"] for r in results] == ["call_fake002_0", "call_fake004_0"]
    assert content_text(results[0]["content"]) == "notes.txt\nopencode.json\n"
    compaction = next(e for e in entries if e.type == COMPACTION)
    assert compaction.data["summary"].startswith("Summary: the user listed the files")
    assert compaction.data["tokensBefore"] == 18000 + 1000     # the last prompt, cache included
    assert store.sessions.get(session.id).metadata["session"]["slug"]     # the row, kept


def test_usage_is_opencodes_own_per_session_and_a_forks_copies_count_once(store, database):
    import_paths(store, [database])
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        columns = {row[0]: row[1:] for row in db.execute(
            "SELECT id, cost, tokens_input, tokens_output, tokens_cache_read FROM session")}
    rows = {uid: figure for uid, _name, figure in store.usage.report(by="session").rows}
    for uid in (MAIN, FORK, PARENT):
        figure = rows[uid]
        own_cost = figure.cost_usd - figure.subagent_cost_usd
        cost, tokens_in, tokens_out, cache = columns[uid]
        assert round(own_cost, 9) == round(cost, 9), uid
        # (the parent's row holds its sub-agent's tokens too, shown apart)
        child = columns[CHILD] if uid == PARENT else (0, 0, 0, 0)
        assert figure.input_tokens == tokens_in + child[1], uid
        assert figure.output_tokens == tokens_out + child[2], uid
        assert figure.cache_read_tokens == cache, uid
    totals = store.usage.report(by="model").totals
    # main 5 responses (one the compaction's request), the fork's one new, parent 2, child 2
    assert totals.responses == 5 + 1 + 2 + 2
    assert round(totals.cost_usd, 6) == round(columns[MAIN][0] + 0.000576 +
                                              columns[PARENT][0] + columns[CHILD][0], 6)


def test_a_fork_is_under_the_last_message_it_copied_and_a_task_nests_its_session(store, database):
    import_paths(store, [database])
    main, fork = store.sessions.by_uid(MAIN), store.sessions.by_uid(FORK)
    [child] = store.sessions.children(main.id)
    assert child.id == fork.id and child.kind == "fork"
    assert content_text(store.entries.get(child.spawn_seq).message["content"]) == \
        "notes.txt says: hello from the lab."
    parent = store.sessions.by_uid(PARENT)
    [spawned] = store.sessions.children(parent.id)
    assert spawned.kind == "subagent" and spawned.id == store.sessions.by_uid(CHILD).id
    call = store.entries.get(spawned.spawn_seq).message["content"][-1]
    assert (call["name"], call["id"]) == ("task", "call_fake009_0")
    with pytest.raises(ResumeError, match="parent"):
        prepare_resume(store, store.sessions.get(spawned.id), env={})


def test_a_message_still_being_written_is_read_once_it_is_complete(store, database):
    with sqlite3.connect(database) as db:
        last = db.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY id DESC "
                          "LIMIT 1", (MAIN,)).fetchone()
        data = json.loads(last[1])
        unfinished = {**data, "time": {"created": data["time"]["created"]}}
        db.execute("UPDATE message SET data = ? WHERE id = ?", (json.dumps(unfinished), last[0]))
    import_paths(store, [database])
    assert said(branch_entries(store, MAIN))[-1][0] == "user"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE message SET data = ?, time_updated = time_updated + 1 WHERE id = ?",
                   (last[1], last[0]))
    report = import_paths(store, [database])
    assert report.entries_added == 1
    assert said(branch_entries(store, MAIN))[-1] == ("assistant", "notes.txt says: hello from the lab.")


def test_the_database_is_followed_while_opencode_writes_to_it(store, database):
    """A turn opencode adds (here: the main session's last turn written again under new ids,
    as opencode writes a message and its parts) is in the store within the follow's delay."""
    from core.importing.follow import Follower

    import_paths(store, [database])
    before = len(branch_entries(store, MAIN))
    follower = Follower(store, places=[database.parent], discover=False, poll_delay_ms=100)
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop,), daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        while follower.stats.mode not in ("notify", "polling", "idle"):
            assert time.monotonic() - started < 30
            time.sleep(0.05)
        with sqlite3.connect(database) as db:
            rows = db.execute("SELECT id, time_created, time_updated, data FROM message "
                              "WHERE session_id = ? ORDER BY id DESC LIMIT 2", (MAIN,)).fetchall()
            for n, (mid, created, updated, data) in enumerate(reversed(rows)):
                new = f"msg_zz{n}{mid[6:]}"
                db.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) "
                           "VALUES (?, ?, ?, ?, ?)", (new, MAIN, created, updated + 10, data))
                db.execute("INSERT INTO part (id, message_id, session_id, time_created, "
                           "time_updated, data) SELECT 'prt_zz' || ? || substr(id, 7), ?, "
                           "session_id, time_created, time_updated + 10, data FROM part "
                           "WHERE message_id = ?", (n, new, mid))
        started = time.monotonic()
        while len(branch_entries(store, MAIN)) < before + 2:
            assert time.monotonic() - started < 30, "not followed in time"
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(10)
    assert said(branch_entries(store, MAIN))[-2:] == [
        ("user", "Continue if you have next steps, or stop and ask for clarification if "
                 "you are unsure how to proceed."),
        ("assistant", "notes.txt says: hello from the lab.")]


def test_opencodes_own_export_files_import_as_the_sessions_of_its_database(store, database, tmp_path):
    """`opencode export <id>` (printed over many lines) is read as that session: the same
    messages, tool calls and results as the database gives, and usage counted once."""
    import_paths(store, [database])
    exports = sorted((FIXTURE.parent / "export").glob("*.json"))
    other = open_store(tmp_path / "exports.db")
    try:
        report = import_paths(other, exports)
        assert [f.format for f in report.files] == ["opencode"] * 4, report.summary()
        for path in exports:
            uid = path.stem
            assert said(branch_entries(other, uid)) == said(branch_entries(store, uid)), uid
        assert other.sessions.get(other.sessions.by_uid(CHILD).id).kind == "subagent"
        assert import_paths(other, exports).entries_added == 0
        assert store.usage.report(by="model").totals.responses == \
            other.usage.report(by="model").totals.responses
    finally:
        other.close()
