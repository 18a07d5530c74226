"""Sub-agents and forks under the session they came from (core.history.lineage), on files the
agents themselves wrote (tests/fixtures/lineage/SOURCES.md), in every import order."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from core.history.lineage import family_rows
from store_sql import query

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lineage"
CLAUDE_PROJECT = FIXTURES / "claude_code" / "-tmp-follow-fake-proj"
CLAUDE_SESSION = "f130fd16-2a20-4cd2-819e-bb77ddb1f0a2"
CLAUDE_AGENT = "ae72423398c4cfc30"
CODEX = FIXTURES / "codex"
CODEX_PARENT = "01a22f28-3ed7-7fe3-a320-7f424147f4fd"
CODEX_CHILD = "01a22f28-405a-7753-9ba8-dacacf3927e6"
PI = FIXTURES / "pi"
PI_PARENT = "2026-12-01T01-17-37-256Z_01a22f2d-c05f-7026-a5cd-ade08305162e.jsonl"
PI_FORK = "2026-12-01T01-17-37-258Z_01a22f2d-c06a-71c6-8a1e-5fd3204a27e0.jsonl"


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def _claude_copy(tmp_path) -> tuple[Path, Path]:
    project = tmp_path / "projects" / CLAUDE_PROJECT.name
    shutil.copytree(CLAUDE_PROJECT, project)
    main = project / f"{CLAUDE_SESSION}.jsonl"
    agent = project / CLAUDE_SESSION / "subagents" / f"agent-{CLAUDE_AGENT}.jsonl"
    return main, agent


def _entry_with_tool_call(store, session_id: int, call_id: str) -> int:
    for entry in store.entries.of_session(session_id):
        message = entry.message or {}
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("id") == call_id
                                             for b in content):
            return entry.seq
    raise AssertionError(f"no entry holds tool call {call_id}")


def _check_claude(store, meta: bool = True) -> None:
    parent = store.sessions.by_uid(CLAUDE_SESSION)
    child = store.sessions.by_uid(f"{CLAUDE_SESSION}:agent-{CLAUDE_AGENT}")
    assert child.kind == "subagent"
    row = query(store, "SELECT parent_id, spawn_seq FROM external_sessions"
                                   " WHERE id = ?", (child.id,)).fetchone()
    assert row[0] == parent.id
    assert row[1] == _entry_with_tool_call(store, parent.id, "toolu_main0002")
    if meta:
        assert child.metadata["agentType"] == "general-purpose"
        assert child.metadata["description"] == "Find config"


@pytest.mark.parametrize("order", ["parent first", "sub-agent first", "together"])
def test_claude_code_subagent_is_attached_to_the_tool_call_that_spawned_it(store, tmp_path, order):
    main, agent = _claude_copy(tmp_path)
    if order == "parent first":
        import_paths(store, [main])
        import_paths(store, [agent])
    elif order == "sub-agent first":
        import_paths(store, [agent])
        child = store.sessions.by_uid(f"{CLAUDE_SESSION}:agent-{CLAUDE_AGENT}")
        assert [s.id for s in store.sessions.list()] == [child.id]   # alone: its own row
        import_paths(store, [main])
    else:
        import_paths(store, [main.parent])
    _check_claude(store)


def test_claude_code_subagent_without_meta_json_is_found_by_its_agent_id(store, tmp_path):
    main, agent = _claude_copy(tmp_path)
    agent.with_name(f"agent-{CLAUDE_AGENT}.meta.json").unlink()
    import_paths(store, [agent])
    import_paths(store, [main])
    _check_claude(store, meta=False)


def test_a_subagents_messages_count_in_its_parent_and_it_is_listed_only_under_it(store, tmp_path):
    main, _agent = _claude_copy(tmp_path)
    import_paths(store, [main.parent])
    parent = store.sessions.by_uid(CLAUDE_SESSION)
    child = store.sessions.by_uid(f"{CLAUDE_SESSION}:agent-{CLAUDE_AGENT}")
    sessions = store.sessions.list()
    closed = family_rows(sessions)
    assert [r.session.id for r in closed] == [parent.id]
    assert closed[0].children == 1
    assert closed[0].messages == parent.message_count + child.message_count
    opened = family_rows(sessions, {parent.id})
    assert [(r.session.id, r.depth) for r in opened] == [(parent.id, 0), (child.id, 1)]


def test_the_import_summary_counts_sessions_as_the_list_shows_them(store, tmp_path):
    """A sub-agent's thread is listed under its session: the summary says so apart (it said
    "96 new sessions" over a list of 85 rows)."""
    main, _agent = _claude_copy(tmp_path)
    report = import_paths(store, [main.parent])
    assert len(family_rows(store.sessions.list())) == 1
    assert (report.sessions_added, report.threads_added) == (2, 1)
    assert "imported: 1 new session and 1 sub-agent thread, " in report.summary()


def test_a_second_import_adds_no_spawn_point_twice(store, tmp_path):
    main, _agent = _claude_copy(tmp_path)
    import_paths(store, [main.parent])
    before = query(store, "SELECT * FROM spawn_points ORDER BY spawn_key").fetchall()
    main.touch()
    import_paths(store, [main.parent])
    assert query(store, "SELECT * FROM spawn_points ORDER BY spawn_key").fetchall() \
        == before
    assert {row[0] for row in before} == {"claude:toolu_main0002", f"claude-agent:{CLAUDE_AGENT}"}


def test_nested_subagent_goes_under_the_subagent_that_spawned_it(store, tmp_path):
    main, agent = _claude_copy(tmp_path)
    # The sub-agent's Bash call becomes an Agent call that starts a second sub-agent.
    lines = [json.loads(x) for x in agent.read_text().splitlines()]
    for line in lines:
        for block in (line.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("id") == "toolu_sub0004":
                block["name"] = "Agent"
    agent.write_text("".join(json.dumps(x) + "\n" for x in lines))
    inner = agent.with_name("agent-bbbbbbbbbbbbbbbbb.jsonl")
    inner.write_text(json.dumps({
        "parentUuid": None, "isSidechain": True, "agentId": "bbbbbbbbbbbbbbbbb", "type": "user",
        "message": {"role": "user", "content": "inner task"}, "uuid": "0000-inner",
        "timestamp": "2026-12-01T01:11:00.300Z", "sessionId": CLAUDE_SESSION,
        "cwd": "/tmp/follow-fake/proj"}) + "\n")
    inner.with_name("agent-bbbbbbbbbbbbbbbbb.meta.json").write_text(
        json.dumps({"agentType": "Explore", "toolUseId": "toolu_sub0004"}))
    import_paths(store, [inner])
    import_paths(store, [main.parent])
    outer = store.sessions.by_uid(f"{CLAUDE_SESSION}:agent-{CLAUDE_AGENT}")
    nested = store.sessions.by_uid(f"{CLAUDE_SESSION}:agent-bbbbbbbbbbbbbbbbb")
    row = query(store, "SELECT parent_id, spawn_seq FROM external_sessions"
                                   " WHERE id = ?", (nested.id,)).fetchone()
    assert row == (outer.id, _entry_with_tool_call(store, outer.id, "toolu_sub0004"))
    parent = store.sessions.by_uid(CLAUDE_SESSION)
    rows = family_rows(store.sessions.list(), {parent.id, outer.id})
    assert [(r.session.id, r.depth) for r in rows] == [(parent.id, 0), (outer.id, 1), (nested.id, 2)]
    assert rows[0].messages == parent.message_count + outer.message_count + nested.message_count


@pytest.mark.parametrize("child_first", [False, True])
def test_codex_subagent_is_attached_to_its_spawn_agent_call(store, tmp_path, child_first):
    folder = tmp_path / "sessions"
    shutil.copytree(CODEX, folder)
    files = sorted(folder.glob("*.jsonl"))
    parent_file = next(f for f in files if CODEX_PARENT in f.name)
    child_file = next(f for f in files if CODEX_CHILD in f.name)
    for path in ([child_file, parent_file] if child_first else [parent_file, child_file]):
        import_paths(store, [path])
    parent = store.sessions.by_uid(CODEX_PARENT)
    child = store.sessions.by_uid(CODEX_CHILD)
    assert child.kind == "subagent" and len(store.branches.of_session(parent.id)) == 1
    row = query(store, "SELECT parent_id, spawn_seq FROM external_sessions"
                                   " WHERE id = ?", (child.id,)).fetchone()
    spawn = store.entries.get(row[1])
    assert row[0] == parent.id
    assert spawn.message["content"][0]["name"] == "spawn_agent"
    texts = [(e.message or {}).get("content") for e in store.entries.of_session(child.id)
             if e.message and e.message.get("role") == "assistant"]
    assert any("Sub-agent: the config is in settings.toml." in json.dumps(t) for t in texts)


@pytest.mark.parametrize("fork_first", [False, True])
def test_pi_fork_shows_where_it_came_from(store, tmp_path, fork_first):
    folder = tmp_path / "pi" / "sessions"
    folder.mkdir(parents=True)
    parent_file = folder / PI_PARENT
    shutil.copy(PI / PI_PARENT, parent_file)
    fork_file = folder / PI_FORK
    lines = (PI / PI_FORK).read_text().splitlines()
    header = json.loads(lines[0])
    header["parentSession"] = str(parent_file)      # where pi would have written it here
    fork_file.write_text(json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n")
    for path in ([fork_file, parent_file] if fork_first else [parent_file, fork_file]):
        import_paths(store, [path])
    parent = store.sessions.by_uid("01a22f2d-c05f-7026-a5cd-ade08305162e")
    fork = store.sessions.by_uid("01a22f2d-c06a-71c6-8a1e-5fd3204a27e0")
    assert fork.kind == "fork"
    row = query(store, "SELECT parent_id, spawn_seq FROM external_sessions"
                                   " WHERE id = ?", (fork.id,)).fetchone()
    assert row[0] == parent.id
    assert store.entries.get(row[1]).id == "5d71e22b"    # the reply it was forked at
    rows = family_rows(store.sessions.list(), {parent.id})
    assert [(r.session.id, r.depth) for r in rows] == [(parent.id, 0), (fork.id, 1)]
    assert rows[0].messages == parent.message_count     # a fork is not counted in its source


def test_claude_code_fork_session_goes_under_its_source(store, tmp_path):
    main, _agent = _claude_copy(tmp_path)
    source = [json.loads(x) for x in main.read_text().splitlines()]
    copied = [d for d in source if d.get("uuid")][:3]
    fork_id = "99999999-9999-4999-8999-999999999999"
    lines = []
    parent = None
    for n, d in enumerate(copied):
        line = dict(d, sessionId=fork_id, uuid=f"99999999-0000-4000-8000-00000000000{n}",
                    parentUuid=parent, forkedFrom={"sessionId": CLAUDE_SESSION,
                                                   "messageUuid": d["uuid"]})
        parent = line["uuid"]
        lines.append(line)
    lines.append({"parentUuid": parent, "isSidechain": False, "type": "user",
                  "message": {"role": "user", "content": "a new direction"},
                  "uuid": "99999999-0000-4000-8000-000000000009", "sessionId": fork_id,
                  "timestamp": "2026-12-01T02:00:00.000Z", "cwd": "/tmp/follow-fake/proj"})
    fork = main.with_name(f"{fork_id}.jsonl")
    fork.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_paths(store, [fork])
    import_paths(store, [main])
    source_session = store.sessions.by_uid(CLAUDE_SESSION)
    fork_session = store.sessions.by_uid(fork_id)
    row = query(store, "SELECT parent_id, spawn_seq, kind FROM external_sessions"
                                   " WHERE id = ?", (fork_session.id,)).fetchone()
    assert row[0] == source_session.id and row[2] == "fork"
    assert store.entries.get(row[1]).id == copied[-1]["uuid"]


def test_a_session_is_never_attached_under_itself_or_its_descendants(store):
    a = store.sessions.create("a")
    b = store.sessions.create("b")
    store.sessions.link_child(b.id, a.id, None)
    store.sessions.link_child(a.id, b.id, None)          # would make a cycle: refused
    store.sessions.link_child(a.id, a.id, None)
    rows = {s.id: s.parent_id for s in store.sessions.list()}
    assert rows == {a.id: None, b.id: a.id}


def test_family_rows_order_families_by_their_newest_activity():
    from core.store import SessionSummary

    def row(i, updated, parent=None, kind="session", messages=1):
        return SessionSummary(i, f"u{i}", f"s{i}", "pi", "", kind, "2026-01-01", updated, True,
                              messages, messages, 1, parent)

    rows = [row(1, "2026-01-05"), row(2, "2026-01-03"),
            row(3, "2026-01-09", parent=2, kind="subagent", messages=5),
            row(4, "2026-01-01", parent=99)]                         # its parent is not listed
    out = family_rows(rows)
    assert [r.session.id for r in out] == [2, 1, 4]                  # 2's sub-agent is newest
    assert out[0].messages == 6 and out[0].updated_at == "2026-01-09" and not out[0].is_open
    # a cycle in the data (never written by arbor) neither hangs nor hides sessions
    cyclic = [row(1, "2026-01-01", parent=2), row(2, "2026-01-02", parent=1)]
    assert sorted(r.session.id for r in family_rows(cyclic, {1, 2})) == [1, 2]


def test_a_tool_call_copied_into_another_session_does_not_take_its_subagent(store, tmp_path):
    # A fork (or any copy) of the parent holds the same Agent call id; the sub-agent names
    # its own session (sessionId) and goes there, whichever was imported first.
    main, agent = _claude_copy(tmp_path)
    copy_id = "77777777-7777-4777-8777-777777777777"
    lines = [json.loads(x) for x in main.read_text().splitlines()]
    copy = main.with_name(f"{copy_id}.jsonl")
    copy.write_text("".join(json.dumps(dict(d, sessionId=copy_id) if "sessionId" in d else d)
                            + "\n" for d in lines))
    import_paths(store, [copy])
    import_paths(store, [main])
    import_paths(store, [agent])
    _check_claude(store)


def test_linking_after_an_import_writes_only_when_something_is_to_be_linked(store, tmp_path,
                                                                           monkeypatch):
    """`link_lineage` reads first: a sub-agent whose session is not in the store yet (nothing
    to link) takes no write transaction; once its session is there, it is linked."""
    from core.importing import link_lineage

    main, agent = _claude_copy(tmp_path)
    import_paths(store, [agent])                  # (its own link_lineage: nothing to link)
    real = type(store).transaction
    writes = []

    def counted(self, *args, **kwargs):
        writes.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "transaction", counted)
    assert link_lineage(store) == 0
    assert writes == [], "nothing to link: the store was not written"
    monkeypatch.undo()
    import_paths(store, [main])                   # (links it: as before)
    _check_claude(store)
