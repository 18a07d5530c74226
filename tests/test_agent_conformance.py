"""The conformance suite every agent's module passes (issue 30), parametrised over the
registry (core/agents/registry.py): an agent added without its fixtures or its row in the
table of agents (docs/importing.md) fails here.

For each agent, from files the agent itself wrote (FIXTURES below):
* import: every file is read as that agent's, into sessions of that source, with branches
  and messages, and no line skipped;
* a second import adds nothing, and a file rewritten in place (same bytes, a new inode or
  the same one) is never counted twice: same entries, same usage;
* usage: each response counted once, as the agent recorded it;
* round trip (agents with a writer): the current branch written as a native session and
  imported again is the same branch (roles, text, tool calls);
* live follow: a file the agent is writing (its first half, then the rest; a database
  one row at a time, each imported before the next) is followed into the store, which
  ends the same as importing the finished file whole: the same entries in the same tree;
* odd lines: a line that is not JSON and one of an unexpected shape get a clear report
  with their line numbers, and nothing of the rest is lost.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from core import open_store
from core.agents import ResumeError, prepare_resume, registry
from core.importing import import_paths
from core.model.entries import content_text

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "fixtures"
AGENT_FIXTURES = REPO / "tests" / "fixtures" / "agents"

# Each agent's fixtures: (what, where it goes under the test's home folder). Folders are
# copied whole. These files were written by the agents themselves (see their SOURCES.md).
FIXTURES: dict[str, list[tuple[Path, str]]] = {
    "claude_code": [(SHARED / "claude_code" / "dag_compact_after_rewind.jsonl",
                     ".claude/projects/-w/dag_compact_after_rewind.jsonl")],
    "codex": [(SHARED / "codex" / "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
               ".codex/sessions/2026/01/02/"
               "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl")],
    "pi": [(SHARED / "pi" / "pi_v3_generated.jsonl", ".pi/agent/sessions/--w--/pi_v3_generated.jsonl")],
    "langgraph": [(SHARED / "langgraph" / "langgraph_checkpoints.sqlite", "graphs/checkpoints.sqlite")],
    "gemini": [(AGENT_FIXTURES / "gemini" / "gemini-tmp", ".gemini/tmp")],
    "qwen": [(AGENT_FIXTURES / "qwen" / "projects", ".qwen/projects")],
    "opencode": [(AGENT_FIXTURES / "opencode" / "opencode.db", ".local/share/opencode/opencode.db")],
    "droid": [(AGENT_FIXTURES / "droid" / "sessions", ".factory/sessions")],
    "kimi": [(AGENT_FIXTURES / "kimi" / "kimi-home", ".kimi")],
    "copilot": [(AGENT_FIXTURES / "copilot" / "session-state", ".copilot/session-state")],
    "aider": [(AGENT_FIXTURES / "aider" / "aider.chat.history.md", "project/.aider.chat.history.md")],
}
DEADLINE = 30.0     # generous: the machine is shared; follow's speed is measured in bench/

AGENTS = [agent.source for agent in registry.agents()]


def place(home: Path, source: str) -> list[Path]:
    """The agent's fixtures copied into `home`: the files of its logs."""
    out = []
    for what, where in FIXTURES[source]:
        target = home / where
        target.parent.mkdir(parents=True, exist_ok=True)
        if what.is_dir():
            shutil.copytree(what, target)
            out.extend(sorted(p for p in target.rglob("*") if p.is_file() and not p.name.startswith(".")))
        else:
            shutil.copy(what, target)
            out.append(target)
    return out


def logs(files: list[Path], source: str | None = None) -> list[Path]:
    """The files that are logs: JSONL files (of that agent: those its folder's rule names,
    where it keeps other JSONL files beside its logs, as Kimi CLI its model context) and
    the agent's own logs of another kind (Aider's Markdown history)."""
    agent = registry.get(source) if source else None
    rules = [place.rule for place in agent.places] if agent is not None else []
    return [f for f in files
            if (f.suffix == ".jsonl" and (not rules or any(r(f.name) for r in rules)))
            or (agent is not None and agent.follows is not None and agent.follows(f.name))]


def transcript(store, session, head: int | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
    """(role, text, tool calls) of each message on the session's current branch (up to the
    entry `head`, when given)."""
    branch = store.branches.current(session.id)
    out = []
    for entry in store.paths.entries(branch.head_seq if head is None else head):
        message = entry.message
        if not message:
            continue
        content = message.get("content")
        calls = tuple(str(block.get("name")) for block in content
                      if isinstance(block, dict) and block.get("type") == "toolCall") \
            if isinstance(content, list) else ()
        text = " ".join(content_text(content).split())
        if text or calls:
            out.append((str(message.get("role")), text, calls))
    return out


def every_text(store) -> list[str]:
    out = []
    for session in store.sessions.list(include_archived=True):
        for entry in store.entries.of_session(session.id):
            if entry.message:
                out.append(content_text(entry.message.get("content")))
    return sorted(out)


def usage_of(store) -> tuple:
    totals = store.usage.report(by="model").totals
    return (totals.responses, totals.input_tokens, totals.output_tokens,
            totals.cache_read_tokens, totals.cache_creation_tokens, round(totals.cost_usd, 9))


def entry_count(store) -> int:
    return sum(store.sessions.sizes(s.id)[0] for s in store.sessions.list(include_archived=True))


def shape(store) -> dict[str, tuple]:
    """Each session (by uid): its name, its entries as (id, parent's id, type, custom
    type), and its checkpoints as (the entry each tags, its checkpoint id): what a follow
    must end with, the same as a whole import of the finished file."""
    out = {}
    for session in store.sessions.list(include_archived=True):
        entries = store.entries.of_session(session.id)
        ids = {e.seq: e.id for e in entries}
        tree = sorted((e.id, ids.get(e.parent_seq), e.type, str(e.data.get("customType") or ""))
                      for e in entries)
        tags = sorted((ids.get(c.entry_seq), str(c.metadata.get("checkpoint_id") or c.checkpoint_name))
                      for c in store.annotations.checkpoints_of_session(session.id))
        out[session.uid] = (session.name, tree, tags)
    return out


# An agent's database written as the agent writes it: its main table's rows in order, each
# with the rows that go with it in other tables, in one transaction (used by the live-follow
# test below and by bench/bench_follow_agents.py).
DB_FEEDS = {
    "opencode": ("message", "rowid", [("part", "message_id", "id")]),
    "langgraph": ("checkpoints", "rowid", [("writes", "checkpoint_id", "checkpoint_id")]),
}


class DatabaseFeed:
    """The main table's rows (and theirs in the other tables), inserted one by one."""

    KEYS = ("id", "thread_id", "checkpoint_id", "task_id", "idx", "checkpoint_ns")

    def __init__(self, path: Path, source: str):
        self.path = path
        self.table, self.order, self.deps = DB_FEEDS[source]
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            self.columns = {t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
                            for t in [self.table, *[d[0] for d in self.deps]]}
            self.pieces = []
            for row in db.execute(f"SELECT * FROM {self.table} ORDER BY {self.order}"):
                rows = {self.table: [row]}
                record = dict(zip(self.columns[self.table], row))
                for table, column, key in self.deps:
                    rows[table] = db.execute(f"SELECT * FROM {table} WHERE {column} = ?",
                                             (record[key],)).fetchall()
                self.pieces.append(rows)

    def write_prefix(self, target: Path, k: int) -> None:
        """`target`: the database with its first `k` pieces (a new file)."""
        if target.exists():
            target.unlink()
        with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as db:
            db.execute("VACUUM INTO ?", (str(target),))
        with sqlite3.connect(target) as db:
            for rows in self.pieces[k:]:
                for table, found in rows.items():
                    for row in found:
                        record = dict(zip(self.columns[table], row))
                        keys = [c for c in self.columns[table] if c in self.KEYS]
                        db.execute(f"DELETE FROM {table} WHERE " +
                                   " AND ".join(f"{c} IS ?" for c in keys),
                                   [record[c] for c in keys])
        db.close()

    def append(self, target: Path, k: int) -> None:
        """Piece `k` (counted from 1) inserted into `target`, in one transaction."""
        with sqlite3.connect(target) as db:
            for table, found in self.pieces[k - 1].items():
                marks = ", ".join("?" for _ in self.columns[table])
                db.executemany(f"INSERT INTO {table} VALUES ({marks})", found)
        db.close()


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "arbor.db")
    yield s
    s.close()


# ------------------------------------------------------------------------- the suite
def test_every_agent_has_fixtures_and_a_row_in_the_table_of_agents():
    readme = (REPO / "docs" / "importing.md").read_text(encoding="utf-8")
    table = readme[readme.index("<!-- agents -->"):readme.index("<!-- /agents -->")]
    for agent in registry.agents():
        assert agent.source in FIXTURES, f"{agent.title}: no fixtures in the conformance suite"
        assert all(what.exists() for what, _where in FIXTURES[agent.source]), agent.title
        assert f"| {agent.title} |" in table, f"{agent.title}: no row in the table of agents (docs/importing.md)"
        assert agent.resume_note and agent.usage_rule and agent.logs_note, agent.title
    assert set(registry.sources()) >= set(FIXTURES)


@pytest.mark.parametrize("source", AGENTS)
def test_its_files_import_as_its_sessions(store, home, source):
    files = place(home, source)
    report = import_paths(store, files)
    mine = [f for f in report.files if f.format == source]
    assert mine and all(f.status == "imported" for f in mine), report.summary()
    assert not report.skipped, report.skipped
    sessions = store.sessions.list(include_archived=True)
    assert sessions and {s.source for s in sessions} == {source}
    for session in sessions:
        assert store.branches.of_session(session.id), session.uid
    assert any(transcript(store, s) for s in sessions)
    # where arbor looks for them: --discover finds the agent's folder (LangGraph has none)
    agent = registry.get(source)
    for folder, _rule in agent.folders(home, {}):
        folder.mkdir(parents=True, exist_ok=True)
    from core.importing.files import discover
    found = discover(home, {})
    assert len(found) >= len(agent.places)


@pytest.mark.parametrize("source", AGENTS)
def test_a_file_read_again_or_rewritten_in_place_is_never_counted_twice(store, home, source):
    files = place(home, source)
    import_paths(store, files)
    entries, usage, sessions = entry_count(store), usage_of(store), len(store.sessions.list())
    assert import_paths(store, files).entries_added == 0
    for path in files:                       # the same bytes under a new inode
        data = path.read_bytes()
        fresh = path.with_name(path.name + ".new")
        fresh.write_bytes(data)
        os.replace(fresh, path)
    assert import_paths(store, files).entries_added == 0
    for path in logs(files, source):         # ... and in the same file, later
        data = path.read_bytes()
        with open(path, "wb") as handle:
            handle.write(data)
        os.utime(path, ns=(time.time_ns() + 5_000_000_000,) * 2)
    report = import_paths(store, files)
    assert report.entries_added == 0, report.summary()
    assert (entry_count(store), usage_of(store), len(store.sessions.list())) == \
        (entries, usage, sessions)


@pytest.mark.parametrize("source", AGENTS)
def test_usage_is_counted_once_per_response(store, home, tmp_path, source):
    files = place(home, source)
    import_paths(store, files)
    once = usage_of(store)
    # imported twice over, from two copies of the files in other folders: each response
    # counts in each copy's session, and once in the totals
    other = open_store(tmp_path / "other.db")
    try:
        import_paths(other, files)
        import_paths(other, files)
        assert usage_of(other) == once
    finally:
        other.close()


@pytest.mark.parametrize("source", [a.source for a in registry.agents() if a.writer])
def test_the_branch_written_natively_imports_as_the_same_branch(store, home, tmp_path, source):
    env = {"HOME": str(home), "PATH": "", "TZ": "UTC"}
    import_paths(store, place(home, source))
    checked = 0
    for listed in store.sessions.list(include_archived=True):
        session = store.sessions.get(listed.id)
        if session.kind == "subagent":
            continue
        before = transcript(store, session)
        plan = prepare_resume(store, session, env=env)
        assert plan.argv and plan.argv[0], plan
        if not getattr(registry.get(source).writer_module(), "WRITES", True):
            # an agent arbor does not write for yet: its own session, resumed at its end
            assert plan.file is None and plan.native_id and \
                any(plan.native_id in arg for arg in plan.argv)     # (`--resume=<id>`)
            head = store.branches.current(session.id).head_seq
            earlier = [e.seq for e in store.paths.entries(head) if e.message][-2]
            with pytest.raises(ResumeError, match="cannot write"):
                prepare_resume(store, session, at_seq=earlier, env=env)
            checked += 1
            continue
        if plan.file is None:
            # the agent's own file ends there (nothing written): from the message before
            head = store.branches.current(session.id).head_seq
            earlier = [e.seq for e in store.paths.entries(head) if e.message][-2]
            before = transcript(store, session, earlier)
            plan = prepare_resume(store, session, at_seq=earlier, env=env)
            assert plan.file is not None, plan.summary
        again = open_store(tmp_path / f"again-{checked}.db")
        try:
            report = import_paths(again, [plan.file])
            assert report.files[0].format == source, report.summary()
            written = again.sessions.by_uid(plan.native_id) or again.sessions.list()[0]
            assert transcript(again, written) == before
        finally:
            again.close()
        checked += 1
    assert checked


def _follow(store, root: Path):
    from core.importing.follow import Follower

    follower = Follower(store, places=[root], discover=False, poll_delay_ms=100)
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop,), daemon=True)
    thread.start()
    return follower, stop, thread


def _wait(condition) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < DEADLINE, "not followed in time"
        time.sleep(0.05)
    return time.monotonic() - started


@pytest.mark.parametrize("source", [a.source for a in registry.agents() if a.database is None])
def test_a_file_being_written_is_followed_live(store, home, tmp_path, source):
    staged = tmp_path / "staged"
    files = place(staged, source)
    whole = open_store(tmp_path / "whole.db")
    import_paths(whole, files)
    expected = every_text(whole)
    whole.close()
    home.mkdir(parents=True)
    follower, stop, thread = _follow(store, home)
    try:
        _wait(lambda: follower.stats.mode in ("notify", "polling", "idle"))
        halves = []
        mine = logs(files, source)
        for path in files:
            target = home / path.relative_to(staged)
            target.parent.mkdir(parents=True, exist_ok=True)
            data = path.read_bytes()
            lines = data.splitlines(keepends=True)
            if path not in mine:
                target.write_bytes(data)
                continue
            cut = max(1, len(lines) // 2)
            target.write_bytes(b"".join(lines[:cut]))
            halves.append((target, b"".join(lines[cut:])))
        _wait(lambda: store.sessions.list(include_archived=True))
        for target, rest in halves:
            with open(target, "ab") as handle:
                handle.write(rest)
        _wait(lambda: every_text(store) == expected)
    finally:
        stop.set()
        thread.join(10)
    assert every_text(store) == expected
    whole = open_store(tmp_path / "whole-followed.db")
    try:
        import_paths(whole, [home])     # the finished files, where they were followed
        assert shape(store) == shape(whole)
    finally:
        whole.close()


def _imported_as_it_is(store, path: Path, fingerprint) -> bool:
    """The store's import record of the database `path` holds the state it has now."""
    head = fingerprint(path)
    return any(json.loads(state).get("head") == head for state in store.imports.records().values())


@pytest.mark.parametrize("source", [a.source for a in registry.agents() if a.database is not None])
def test_a_database_being_written_is_followed_live(store, home, tmp_path, source):
    """Row by row, each row followed before the next is written: a follow that saw the
    database at every step in between ends with the store a whole import of the finished
    database makes (a LangGraph fork's first checkpoint, a leaf until the next one, left
    a `checkpoint:` marker a whole import does not make)."""
    staged = tmp_path / "staged"
    files = place(staged, source)
    main = next(f for f in files if f.suffix in (".db", ".sqlite"))
    feed = DatabaseFeed(main, source)
    fingerprint = registry.get(source).importer_module().fingerprint
    for other in files:
        if other != main:
            (home / other.relative_to(staged)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(other, home / other.relative_to(staged))
    live = home / main.relative_to(staged)
    live.parent.mkdir(parents=True, exist_ok=True)
    feed.write_prefix(live, 1)
    import_paths(store, [home])
    follower, stop, thread = _follow(store, home)
    try:
        _wait(lambda: follower.stats.mode in ("notify", "polling", "idle"))
        for k in range(2, len(feed.pieces) + 1):
            feed.append(live, k)
            _wait(lambda: _imported_as_it_is(store, live, fingerprint))
    finally:
        stop.set()
        thread.join(10)
    assert len(feed.pieces) > 2
    whole = open_store(tmp_path / "whole.db")
    try:
        import_paths(whole, [home])     # the finished database, where it was followed
        assert shape(store) == shape(whole)
    finally:
        whole.close()


@pytest.mark.parametrize("source", [a.source for a in registry.agents() if a.database is None])
def test_odd_lines_are_reported_and_nothing_else_is_lost(store, home, tmp_path, source):
    files = place(tmp_path / "clean", source)
    clean = open_store(tmp_path / "clean.db")
    import_paths(clean, files)
    expected = every_text(clean)
    clean.close()
    damaged = place(home, source)
    odd = {}
    jsonl = [path for path in logs(damaged, source) if path.suffix == ".jsonl"]
    if not jsonl:
        pytest.skip("its logs are not JSON lines: odd input is tested in its own test file")
    for path in jsonl:
        lines = path.read_bytes().splitlines(keepends=True)
        at = min(2, len(lines))
        lines[at:at] = [b'{"this is": not json\n', b"[1, 2, 3]\n"]
        path.write_bytes(b"".join(lines))
        odd[str(path)] = (at + 1, at + 2)
    report = import_paths(store, damaged)
    skipped = {(s.path, s.line): s.reason for s in report.skipped}
    for path, (first, second) in odd.items():
        assert "not valid JSON" in skipped[(path, first)], skipped
        assert "not an object" in skipped[(path, second)], skipped
    assert every_text(store) == expected
