"""The import's speed-ups change nothing in the store: each is compared with the plain way
on a realistic generated tree (bench/claude_tree.py: thinking, tool calls and results,
progress lines, sub-agent files, rewinds, compactions) plus the fixtures' odd cases."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, import_paths
from core.store import Store

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import claude_tree  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures" / "claude_code"   # as test_import_robust


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """About 1.5 MB of Claude Code logs in the shape of real ones, and the fixtures."""
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=1.5, seed=7)
    extra = home / ".claude" / "projects" / "-fixtures"
    extra.mkdir(parents=True)
    for fixture in sorted(FIXTURES.glob("*.jsonl")) if FIXTURES.is_dir() else []:
        shutil.copy(fixture, extra / fixture.name)
    return home


def everything(store) -> dict:
    """The whole store, independent of seqs: every session's entries (parent id, type,
    timestamp, position, role, data), branches, usage rows, totals and import records."""
    conn = store.connection
    ids = dict(conn.execute("SELECT seq, id FROM entries"))
    sessions = {}
    for sid, uid, name, kind, cwd, meta, *counts in conn.execute(
            "SELECT id, uid, session_name, kind, cwd, metadata, entry_count, message_count,"
            " parent_id IS NOT NULL, spawn_ref, first_user_seq IS NOT NULL"
            " FROM external_sessions"):
        entries = {}
        for row in conn.execute(
                "SELECT id, parent_seq, type, timestamp, depth, msg_index, role, data,"
                " chain = seq FROM entries WHERE external_session_id = ?", (sid,)):
            entries[row[0]] = (ids.get(row[1]), *row[2:7], json.loads(row[7]), row[8])
        branches = sorted(
            (ids.get(head), ids.get(fork), bname, current)
            for head, fork, bname, current in conn.execute(
                "SELECT head_seq, fork_seq, name, is_current FROM internal_sessions"
                " WHERE external_session_id = ?", (sid,)))
        usage = sorted(tuple(ids.get(v) if k == "entry_seq" else v for k, v in row
                             if k not in ("seq", "external_session_id", "chain"))
                       for row in _rows(conn, sid))
        totals = sorted(conn.execute(
            "SELECT * FROM session_usage WHERE external_session_id = ?", (sid,)).fetchall())
        metadata = json.loads(meta)
        metadata.pop("path", None)
        # totals are sums of each flush's sums: their float rounding depends on where the
        # import committed (every ~0.1 s of wall time), so they are compared to 1e-9
        totals = [tuple(round(v, 9) if type(v) is float else v for v in row[1:])
                  for row in totals]
        sessions[uid] = (name, kind, cwd, metadata, counts, entries, branches, usage, totals)
    search = sorted(conn.execute(
        "SELECT e.id FROM entries_fts JOIN entries e ON e.seq = entries_fts.rowid"
        " WHERE entries_fts MATCH 'the'").fetchall())
    return {"sessions": sessions, "search": search}


def _rows(conn, sid):
    cursor = conn.execute("SELECT * FROM usage WHERE external_session_id = ?", (sid,))
    names = [d[0] for d in cursor.description]
    return [list(zip(names, row)) for row in cursor]


def import_tree(home: Path, db: Path) -> dict:
    with open_store(db) as store:
        report = import_paths(store, discover(home))
        assert report.files and all(f.status == "imported" for f in report.files), \
            [(f.path, f.status, f.error) for f in report.files if f.status != "imported"]
        return everything(store)


def test_the_bulk_writer_kept_across_files_gives_the_same_store(tree, tmp_path, monkeypatch):
    started = []
    from core.store.sqlite import bulk as sqlite_bulk

    real_init = sqlite_bulk.BulkWriter.__init__

    def counting(self, *args, **kwargs):
        started.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(sqlite_bulk.BulkWriter, "__init__", counting)
    kept = import_tree(tree, tmp_path / "kept.db")
    assert len(started) == 1, "one bulk writer for the whole import"
    assert not [t for t in threading.enumerate() if t.name == "arbor-bulk-writer"]

    @contextmanager
    def per_file(self):
        yield

    started.clear()
    monkeypatch.setattr(Store, "bulk_writes", per_file)
    plain = import_tree(tree, tmp_path / "plain.db")
    assert len(started) >= 5, "without it, a bulk writer per file"
    assert kept == plain
    assert sum(len(s[5]) for s in kept["sessions"].values()) > 1000
    assert kept["search"]


def test_the_page_cache_is_given_back_after_the_import(tree, tmp_path):
    with open_store(tmp_path / "a.db") as store:
        before = store.connection.execute("PRAGMA cache_size").fetchone()[0]
        import_paths(store, discover(tree))
        assert store.connection.execute("PRAGMA cache_size").fetchone()[0] == before
        with store.transaction():   # the store writes as usual afterwards
            assert store._bulk is None
