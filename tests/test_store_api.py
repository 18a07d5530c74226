"""The store API's shape: callers reach the database only through named store methods,
and the methods that replaced callers' own SQL answer as that SQL did."""

import ast
import sqlite3
from pathlib import Path

import pytest

from core import open_store
from core.seed.session_types import SessionCapabilities, SessionCapabilityEvent, SessionRunEvent

ROOT = Path(__file__).resolve().parent.parent

# Modules outside core/store that may talk to SQLite themselves, and why.
OWN_SQLITE = {
    "core/store/sqlite_probe.py": "tells what a file is through a read-only SQLite connection",
    "core/demo.py": "the demo is a local file: built aside and copied in by SQLite's backup",
    "core/importing/detect.py": "asks SQLite whether a file to import is a database",
    "core/agents/langgraph/importer.py": "reads a LangGraph checkpoint database (not the store)",
    "core/agents/opencode/importer.py": "reads opencode's own database, read-only (not the store)",
    "core/agents/copilot/importer.py": "reads Copilot's session-store.db, read-only, for turns a /rewind undid (not the store)",
    "core/importing/driver.py": "reports a foreign database's error for one file",
    "tui/commands/shared.py": "explains an error while opening a store",
}



def _sources():
    for folder in ("core", "tui"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if not relative.startswith("core/store/"):
                yield relative, path.read_text(encoding="utf-8")


def test_no_sql_outside_the_store():
    """No caller runs SQL on the store's connection: a PostgreSQL backend then needs no
    change in callers."""
    offenders = []
    for relative, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("connection", "_conn", "_db") \
                    and relative not in OWN_SQLITE:
                offenders.append(f"{relative}:{node.lineno} .{node.attr}")
    assert offenders == []


def test_only_known_modules_import_sqlite3():
    importers = set()
    for relative, text in _sources():
        for node in ast.walk(ast.parse(text)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) else []
            if "sqlite3" in names:
                importers.add(relative)
    assert importers <= set(OWN_SQLITE), importers - set(OWN_SQLITE)


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def test_counts_listing_and_current_branch(store):
    one = store.sessions.create("one", cwd="/w", user_id=7)
    two = store.sessions.create("two", cwd="/v")
    store.sessions.create("sub", cwd="/w", kind="subagent")
    branch = store.branches.create(one.id)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "hello there"}})
    store.sessions.set_active(two.id, False)
    assert store.sessions.count() == 3
    assert store.sessions.count(user_id=7) == 1
    assert store.sessions.count(archived=True) == 1
    listing = store.sessions.listing(kind="session", cwd="/w", preview=True)
    assert [(row[0], row[1], row[2], row[4]) for row in listing] == [(one.uid, "one", "/w", 1)]
    assert listing[0][5] == {"role": "user", "content": "hello there"}
    assert store.sessions.listing(kind="session", preview=False)[0][5] is None
    assert store.branches.current_id(one.id) == branch.id
    assert store.branches.unset_current(branch.id)
    assert store.branches.current_id(one.id) is None
    assert store.branches.current(one.id) is None


def test_entry_ids_across_sessions_and_the_label_log(store):
    a = store.sessions.create("a")
    b = store.sessions.create("b")
    first = store.entries.append(a.id, None, "message", {"message": {"role": "user", "content": "x"}},
                               entry_id="same")
    second = store.entries.append(b.id, None, "message", {"message": {"role": "user", "content": "y"}},
                                entry_id="same")
    assert store.entries.seqs_with_id("same") == [first.seq, second.seq]
    assert store.entries.seqs_with_id("same", limit=1) == [first.seq]
    assert store.entries.seqs_with_id("none") == []
    branch = store.branches.create(a.id, head_seq=first.seq)
    store.annotations.add_label(a.id, "look", target_seq=first.seq, created_at="2026-01-01T00:00:00Z")
    store.annotations.add_label(a.id, "", target_branch=branch.id, created_at="2026-01-02T00:00:00Z")
    assert store.annotations.label_log(a.id) == [
        {"label": "look", "at": "2026-01-01T00:00:00.000+00:00", "target_entry": "same",
         "target_branch": None, "label_entry": None},
        {"label": None, "at": "2026-01-02T00:00:00.000+00:00", "target_entry": None,
         "target_branch": branch.id, "label_entry": None}]


def test_events_and_capabilities(store):
    first = store.events.add_run_event(SessionRunEvent("s1", "start", run_id="r"))
    store.events.add_run_event(SessionRunEvent("s1", "end", id="mine"))
    store.events.add_run_event(SessionRunEvent("s2", "other"))
    events = store.events.run_events("s1")
    assert [e.event.id for e in events] == [first, "mine"]
    assert [e.event.event_type for e in store.events.run_events("s1", events[0].seq)] == ["end"]
    assert len(store.events.run_events("s1", limit=1)) == 1
    store.events.add_capability_event(SessionCapabilityEvent("s1", "set", capability="browser",
                                                      new_value="on", data={"k": 1}))
    [cap] = store.events.capability_events("s1")
    assert (cap.event.capability, cap.event.data) == ("browser", {"k": 1})
    assert store.events.load_capabilities("s1") is None
    store.events.save_capabilities(SessionCapabilities("s1", mode="plan", browser=True))
    store.events.save_capabilities(SessionCapabilities("s1", mode="act", web_search=True))
    caps = store.events.load_capabilities("s1")
    assert (caps.mode, caps.browser, caps.web_search) == ("act", False, True)


@pytest.mark.sqlite_only
def test_checkpoint_log_empties_the_wal(store):
    ext = store.sessions.create("s")
    store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "x"}})
    wal = Path(str(store.path) + "-wal")
    assert wal.stat().st_size > 0
    store.checkpoint_log()
    assert wal.stat().st_size == 0


def test_store_errors_cover_the_driver(store):
    if store.path.__class__.__name__ == "PostgresURL":
        import psycopg

        assert psycopg.Error in store.database_errors
    else:
        assert sqlite3.Error in store.database_errors
    assert set(store.database_errors) < set(store.errors)
    assert not store.closed
    store.close()
    assert store.closed


def test_what_importers_ask_of_the_store(store):
    ext = store.sessions.create("s", source="codex", metadata={"path": "/a", "x": 1})
    assert store.sessions.name(ext.id) == "s" and store.sessions.name(9999) is None
    assert store.sessions.metadata(ext.id) == {"path": "/a", "x": 1}
    store.sessions.set_metadata(ext.id, {"parentThreadId": "p", "path": "/a"})
    other = store.sessions.create("o", source="codex",
                                          metadata={"parentThreadId": "p", "mergedInto": "q"})
    store.sessions.create("c", source="claude-code", metadata={"parentThreadId": "p"})
    assert [s.id for s in store.sessions.by_metadata("codex", {"parentThreadId": "p"},
                                                     unset="mergedInto")] == [ext.id]
    assert store.sessions.by_metadata("codex", {"parentThreadId": "p", "path": "/b"},
                                      unset="mergedInto") == []
    with pytest.raises(ValueError):
        store.sessions.by_metadata("codex", {"a') OR 1=1 --": "p"}, unset="mergedInto")
    store.sessions.set_cwd_if_empty(ext.id, "/w")
    store.sessions.set_cwd_if_empty(ext.id, "/v")
    assert store.sessions.get(ext.id).cwd == "/w"
    root = store.entries.append(ext.id, None, "message", {"message": {"role": "user", "content": "a"},
                                                        "fp": "f1"}, entry_id="r")
    store.entries.append(other.id, None, "message", {"message": {"role": "user", "content": "b"}})
    kid = store.entries.append(ext.id, root.seq, "note", {"fp": 7}, entry_id="k",
                             timestamp="2026-03-04T05:06:07Z")
    assert store.entries.id_of(kid.seq) == "k" and store.entries.id_of(99999) is None
    assert store.entries.parent_of(kid.seq) == root.seq
    assert store.entries.timestamp_of(kid.seq) == "2026-03-04T05:06:07.000+00:00"
    assert store.entries.span(ext.id) == (root.seq, kid.seq, 2)
    assert list(store.entries.parents(ext.id)) == [(root.seq, None), (kid.seq, root.seq)]
    assert list(store.entries.parents(other.id + 100)) == []
    assert store.entries.data_field(ext.id, "fp") == [(root.seq, None, "f1"), (kid.seq, root.seq, 7)]
    first = store.branches.create(ext.id, head_seq=kid.seq, langgraph_session_id="key:1")
    second = store.branches.create(ext.id, head_seq=root.seq, is_current=False)
    assert store.branches.heads(ext.id) == [(first.id, kid.seq), (second.id, root.seq)]
    assert store.branches.key_taken("key:1") and not store.branches.key_taken("key:2")
    store.branches.add_tool_calls_to_current(ext.id, 3)
    assert store.branches.get(first.id).tool_invocation_count == 3
    assert store.branches.get(second.id).tool_invocation_count == 0
    assert store.sessions.totals(ext.id) == (2, 2)
    store.annotations.create_checkpoint(first.id, "c", metadata={"checkpoint_id": "ck1"})
    store.annotations.create_checkpoint(first.id, "d", metadata={})
    assert store.annotations.checkpoint_metadata_values(ext.id, "checkpoint_id") == {"ck1", None}


def test_import_sources(store):
    ext = store.sessions.create("s")
    assert store.imports.source("pi:/a") is None
    store.imports.record_source(key="pi:/a", path="/a", external_session_id=ext.id, fmt="pi",
                               size=10, mtime=1.5, state={"head": "h"})
    store.imports.record_source(key="pi:/a", path="/a", external_session_id=ext.id, fmt="pi",
                               size=12, mtime=2.5, state={"head": "i", "lines": 3})
    assert store.imports.source("pi:/a") == (ext.id, "pi", 12, 2.5, {"head": "i", "lines": 3})
    store.imports.forget_sources(ext.id)
    assert store.imports.source("pi:/a") is None


def test_a_url_is_never_taken_for_a_path(tmp_path, monkeypatch):
    from core.model.errors import StoreUnavailable
    from core.seed.repositories import shared_store

    monkeypatch.chdir(tmp_path)
    for opening in (open_store, shared_store):
        # opened as PostgreSQL (no server there: one sentence naming it), never as a path
        with pytest.raises(StoreUnavailable, match="PostgreSQL at /tmp"):
            opening("postgresql://user@/db?host=/tmp")
    assert list(tmp_path.iterdir()) == []   # no folder named "postgresql:"
    monkeypatch.setenv("ARBOR_DB", str(tmp_path / "from-env.db"))
    store = open_store()
    assert store.path == tmp_path / "from-env.db"
    store.close()


def test_entry_outline_and_label_search(store_location):
    """The entry tree's outline (no data) and / finding a message by its label, on both
    backends."""
    from core.actions import operations

    store = open_store(store_location)
    try:
        session = store.sessions.create("work")
        branch = store.branches.create(session.id, name="main")
        first, second = store.entries.append_messages(branch.id, [
            {"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}])
        assert store.entries.outline(session.id) == [
            (first.seq, None, "message", "user"), (second.seq, first.seq, "message", "assistant")]
        operations.set_label(store, second.seq, "Zebra Crossing")
        operations.set_label(store, first.seq, "old name")
        operations.set_label(store, first.seq, "renamed")
        hits = store.search.labels("zebra")
        assert [hit.seq for hit in hits] == [second.seq]
        assert hits[0].snippet.startswith("⚑ Zebra Crossing")
        assert store.search.labels("old") == []          # only the current label counts
        assert [hit.seq for hit in store.search.labels("renamed")] == [first.seq]
    finally:
        store.close()
