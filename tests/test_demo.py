"""The demo store is the same every time, and never overwrites a store that is not a demo."""

import pytest

from core import ArborError, open_store
from core.demo import LONG_SESSION_MESSAGES, build_demo


def dump(path):
    store = open_store(path)
    conn = store.connection
    out = {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
           for table in ("external_sessions", "internal_sessions", "entries", "checkpoints", "labels")}
    store.close()
    return out


def test_demo_is_deterministic(tmp_path):
    build_demo(tmp_path / "a.db")
    build_demo(tmp_path / "b.db")
    assert dump(tmp_path / "a.db") == dump(tmp_path / "b.db")
    build_demo(tmp_path / "a.db")  # rebuilding a demo in place is allowed
    assert dump(tmp_path / "a.db") == dump(tmp_path / "b.db")


def test_demo_has_what_pictures_need(tmp_path):
    store = open_store(build_demo(tmp_path / "d.db"))
    sessions = store.list_sessions(include_archived=True)
    assert len(sessions) == 6 and sum(not s.is_active for s in sessions) == 1
    assert {s.source for s in sessions} == {"claude_code", "codex", "pi", "langgraph", "arbor"}
    assert max(s.message_count for s in sessions) == LONG_SESSION_MESSAGES
    types = {r[0] for r in store.connection.execute("SELECT DISTINCT type FROM entries")}
    assert {"message", "compaction", "branch_summary", "model_change", "thinking_level_change"} <= types
    assert store.connection.execute("SELECT COUNT(*) FROM labels").fetchone()[0] >= 3
    assert store.connection.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] >= 4
    assert any(s.branch_count >= 2 for s in sessions)
    store.close()


def test_demo_refuses_other_stores(tmp_path):
    path = tmp_path / "mine.db"
    store = open_store(path)
    store.create_external_session("my real work")
    store.close()
    with pytest.raises(ArborError, match="not a demo store"):
        build_demo(path)
    assert open_store(path).list_sessions()[0].name == "my real work"
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ArborError):
        build_demo(other)
    assert other.read_text() == "hello"
