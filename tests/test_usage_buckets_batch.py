"""An import sums its usage rows into the hourly buckets one statement a batch (migration
12) instead of through the trigger row by row (issue 29): the store means the same either
way, and every other way of writing usage still goes through the trigger."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, import_paths
from core.store.usage import rows as usage_rows

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_import_parallel import meaning  # noqa: E402


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=2, files=16, seed=29)
    return home


def _import(home: Path, db: Path, monkeypatch, *, batch: bool) -> None:
    monkeypatch.setattr(usage_rows, "BATCH_BUCKETS", batch)
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "0")
    with open_store(db) as store:
        import_paths(store, discover(home, env={}))


def _buckets(db: Path) -> list:
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute("SELECT * FROM usage_buckets"))
    finally:
        conn.close()


def _summed_from_rows(db: Path) -> list:
    """The buckets as migration 9 sums them from every usage row."""
    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute(
            "SELECT counted, substr(timestamp, 1, 13), external_session_id, model, COUNT(*),"
            " SUM(input_tokens), SUM(output_tokens), SUM(cache_creation_tokens),"
            " SUM(cache_read_tokens), SUM(reasoning_tokens), SUM(COALESCE(cost_usd, 0)),"
            " SUM(cost_usd IS NULL),"
            " SUM(CASE WHEN subagent = 1 THEN COALESCE(cost_usd, 0) ELSE 0 END),"
            " SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens +"
            " cache_creation_tokens + cache_read_tokens ELSE 0 END) FROM usage GROUP BY 1, 2, 3, 4"))
    finally:
        conn.close()


def _close(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        x[:10] == y[:10] and abs(x[10] - y[10]) < 1e-9 and x[11] == y[11]
        and abs(x[12] - y[12]) < 1e-9 and x[13] == y[13] for x, y in zip(a, b))


def test_the_batch_and_the_trigger_give_the_same_buckets(home, tmp_path, monkeypatch):
    _import(home, tmp_path / "batch.db", monkeypatch, batch=True)
    _import(home, tmp_path / "rows.db", monkeypatch, batch=False)
    batch, rows = _buckets(tmp_path / "batch.db"), _buckets(tmp_path / "rows.db")
    assert batch and len(batch) > 10
    assert _close(batch, rows)
    assert _close(batch, _summed_from_rows(tmp_path / "batch.db"))
    assert meaning(tmp_path / "batch.db") == meaning(tmp_path / "rows.db")
    conn = sqlite3.connect(tmp_path / "batch.db")
    try:   # (the batch path was the one taken)
        assert conn.execute("SELECT COUNT(*) FROM usage WHERE bucketed = 0").fetchone()[0] > 0
    finally:
        conn.close()


def test_rows_grown_and_deleted_after_a_batch_keep_their_buckets(home, tmp_path, monkeypatch):
    db = tmp_path / "grown.db"
    _import(home, db, monkeypatch, batch=True)
    active = max((p for p in (home / ".claude").rglob("*.jsonl")), key=lambda p: p.stat().st_size)
    copy = tmp_path / "home"
    import shutil

    shutil.copytree(home / ".claude", copy / ".claude")
    claude_tree.append_lines(copy / active.relative_to(home), 10, seed=4)
    with open_store(db) as store:    # appended lines: the same batch path, a second time
        import_paths(store, discover(copy, env={}))
    assert _close(_buckets(db), _summed_from_rows(db))
    with open_store(db) as store:    # a session's deletion goes through the delete trigger
        victim = store.sessions.list(include_archived=True)[0].id
        store.sessions.delete(victim)
    assert _close(_buckets(db), _summed_from_rows(db))
    conn = sqlite3.connect(db)
    try:
        assert not conn.execute("SELECT 1 FROM usage_buckets WHERE responses = 0").fetchone()
    finally:
        conn.close()
