"""The import's fast path (the bulk writer thread, batches handed to it early, the
converters' shortcuts) gives exactly the store the plain path gives: every row of every
table, seqs and ids included, the data's text byte for byte, the search index's words and
what a search finds, usage rows and totals, import records. Compared on a generated
real-shaped tree (bench/claude_tree.py) plus the fixtures of every log format."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, driver, import_paths
from core.store.sqlite import backend as sqlite_backend
from core.store import writer as writer_module

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import claude_tree  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"

# Columns that say when a row was written (now), not what was imported.
WALL_CLOCK = {"schema_migrations": {"applied_at"}, "import_sources": {"imported_at"},
              "external_sessions": {"updated_at"},
              "internal_sessions": {"created_at", "updated_at"},
              "reflog": {"created_at"}, "labels": {"created_at"}, "operation_log": {"created_at"}}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=2.5, seed=11)
    places = {"claude_code": home / ".claude" / "projects" / "-fixtures",
              "codex": home / ".codex" / "sessions" / "2026" / "01" / "02",
              "pi": home / ".pi" / "agent" / "sessions" / "--fixtures--"}
    for fmt, folder in places.items():
        folder.mkdir(parents=True, exist_ok=True)
        for fixture in sorted((FIXTURES / fmt).glob("*.jsonl")) if (FIXTURES / fmt).is_dir() else []:
            name = fixture.name
            if fmt == "codex" and not name.startswith("rollout-"):
                name = "rollout-" + name
            shutil.copy(fixture, folder / name)
    return home


def dump(db: Path) -> dict:
    """Every row of every table (FTS5's own tables aside), in primary-key order."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'entries_fts%'"
            " AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        for table in tables:
            cursor = conn.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            skip = WALL_CLOCK.get(table, set())
            keep = [i for i, name in enumerate(names) if name not in skip]
            out[table] = sorted((tuple(row[i] for i in keep) for row in cursor), key=repr)
        conn.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, entries_fts, row)")
        out["search words"] = conn.execute("SELECT term, doc FROM temp.words ORDER BY term").fetchall()
        found = {}
        for term in ("the", "import*", "error", "def", "café", "README*", "test"):
            found[term] = conn.execute(
                "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rowid",
                (term,)).fetchall()
        out["search"] = found
        return out
    finally:
        conn.close()


def import_home(home: Path, db: Path) -> dict:
    with open_store(db) as store:
        report = import_paths(store, discover(home, env={}))
        assert report.files and all(f.status == "imported" for f in report.files), \
            [(f.path, f.status, f.error) for f in report.files if f.status != "imported"]
    return dump(db)


@pytest.fixture
def unpaced(monkeypatch):
    # commits every 0.1 s of wall time move where usage rows are flushed (so their seqs):
    # one transaction a file here, so both stores are made at the same points
    monkeypatch.setattr(driver, "COMMIT_EVERY", 1e9)


def plain(monkeypatch) -> None:
    """The straightforward path: no bulk writer thread (every batch written inline)."""
    monkeypatch.setattr(sqlite_backend.SQLiteBackend, "start_bulk", lambda self, conn, explain: None)


def test_the_fast_path_gives_the_plain_path_store_row_for_row(home, tmp_path, monkeypatch,
                                                              unpaced):
    fast = import_home(home, tmp_path / "fast.db")
    with monkeypatch.context() as patch:
        plain(patch)
        slow = import_home(home, tmp_path / "plain.db")
    assert fast.keys() == slow.keys()
    for table in fast:
        assert fast[table] == slow[table], table
    assert len(fast["entries"]) > 1500
    assert fast["usage"] and fast["search words"] and fast["search"]["the"]


def test_batches_handed_over_early_or_late_give_the_same_store(home, tmp_path, monkeypatch,
                                                               unpaced):
    monkeypatch.setattr(writer_module.EntryWriter, "EARLY", 1)
    early = import_home(home, tmp_path / "early.db")
    monkeypatch.setattr(writer_module.EntryWriter, "EARLY", 10 ** 9)
    late = import_home(home, tmp_path / "late.db")
    assert early == late


def _grown_store(home: Path, db: Path, monkeypatch, *, inline_below: int) -> tuple[dict, int]:
    """The active session imported, grown by 10 lines and imported again: (the store, how
    many bulk writers the second import started)."""
    from core.agents.claude_code import importer as claude_code
    from core.store.sqlite import bulk as sqlite_bulk

    sessions = sorted((home / ".claude" / "projects").rglob("*.jsonl"),
                      key=lambda p: p.stat().st_size)
    work = db.parent / "grown"   # (the same path for both stores: it is in the metadata)
    target = work / sessions[-1].relative_to(home)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(sessions[-1], target)
    os.utime(target, ns=(1_700_000_000 * 10**9,) * 2)   # (lines without a time take the file's)
    with open_store(db) as store:
        assert [f.status for f in import_paths(store, [target]).files] == ["imported"]
    claude_tree.append_lines(target, 10, seed=5)
    os.utime(target, ns=(1_700_000_100 * 10**9,) * 2)
    started = []
    real_init = sqlite_bulk.BulkWriter.__init__

    def counting(self, *args, **kwargs):
        started.append(self)
        real_init(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(sqlite_bulk.BulkWriter, "__init__", counting)
        patch.setattr(claude_code, "INLINE_BELOW", inline_below)
        with open_store(db) as store:
            report = import_paths(store, [target])
    assert [f.status for f in report.files] == ["imported"]
    assert report.files[0].entries_added > 0
    return dump(db), len(started)


def test_appended_lines_written_inline_give_the_bulk_writers_store(home, tmp_path, monkeypatch,
                                                                   unpaced):
    """A few lines appended to a session are written inline (no bulk writer thread for
    them: issue 11); the store is the one the bulk writer makes of them, row for row."""
    inline, inline_writers = _grown_store(home, tmp_path / "inline.db", monkeypatch,
                                          inline_below=1 << 20)
    bulk, bulk_writers = _grown_store(home, tmp_path / "bulk.db", monkeypatch, inline_below=0)
    assert (inline_writers, bulk_writers) == (0, 1)
    assert inline.keys() == bulk.keys()
    for table in inline:
        assert inline[table] == bulk[table], table
