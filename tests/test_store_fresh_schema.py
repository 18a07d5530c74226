"""A new SQLite store is made from core/store/sqlite/fresh_schema.py in one transaction: it
must be the very store that running every migration on an empty file makes (schema, rows,
the migrations recorded), and a store made part-way (a crash) is made again."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from core import open_store
from core.store.sqlite import fresh_schema, fresh_schema_maker, migrations

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "python -m core.store.sqlite.fresh_schema_maker writes it again"


def _everything(path: Path) -> dict:
    """What a store file holds that a new store's maker decides: every schema object's SQL,
    every table's rows (the full-text index's shadow tables too), the migrations recorded
    and the file's own settings."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        objects = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        rows = {}
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            if name == "schema_migrations":
                rows[name] = conn.execute(
                    "SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
            elif not conn.execute(f"SELECT sql FROM sqlite_master WHERE name = ?",
                                  (name,)).fetchone()[0].startswith("CREATE VIRTUAL"):
                rows[name] = sorted(map(repr, conn.execute(f'SELECT * FROM "{name}"')))
        settings = {pragma: conn.execute(f"PRAGMA {pragma}").fetchone()[0] for pragma in (
            "page_size", "user_version", "application_id", "auto_vacuum", "encoding",
            "journal_mode")}
    finally:
        conn.close()
    return {"objects": objects, "rows": rows, "settings": settings}


def _migrated(path: Path, monkeypatch) -> Path:
    with monkeypatch.context() as patch:
        patch.setattr(fresh_schema, "VERSION", -1)   # out of date: the migrations run
        open_store(path).close()
    return path


def test_the_fresh_schema_is_generated_from_the_migrations_of_today():
    assert fresh_schema.VERSION == migrations.CURRENT_VERSION, \
        f"a migration was added after fresh_schema.py was generated: {REGENERATE}"
    assert fresh_schema.MIGRATIONS == tuple((number, name) for number, name, _sql
                                            in migrations.MIGRATIONS), REGENERATE


def test_a_new_store_equals_an_empty_one_migrated(tmp_path, monkeypatch):
    migrated = _everything(_migrated(tmp_path / "migrated.db", monkeypatch))
    open_store(tmp_path / "fresh.db").close()
    fresh = _everything(tmp_path / "fresh.db")
    assert fresh["objects"] == migrated["objects"], REGENERATE
    assert fresh["rows"] == migrated["rows"], REGENERATE
    assert fresh["settings"] == migrated["settings"]
    assert len(migrated["rows"]["schema_migrations"]) == migrations.CURRENT_VERSION


def test_the_statements_are_what_the_migrated_store_says(tmp_path, monkeypatch):
    conn = sqlite3.connect(_migrated(tmp_path / "migrated.db", monkeypatch))
    try:
        assert tuple(fresh_schema_maker.schema_of(conn)) == fresh_schema.STATEMENTS, REGENERATE
    finally:
        conn.close()


def test_the_generator_writes_this_file_again_unchanged():
    path = ROOT / "core" / "store" / "sqlite" / "fresh_schema.py"
    assert fresh_schema_maker.generate() == path.read_text(encoding="utf-8"), REGENERATE


def test_an_out_of_date_fresh_schema_is_not_used(tmp_path, monkeypatch):
    """A migration added, the file not generated again: new stores are migrated."""
    monkeypatch.setattr(fresh_schema, "VERSION", migrations.CURRENT_VERSION - 1)
    monkeypatch.setattr(fresh_schema, "STATEMENTS", ("CREATE TABLE wrong (x)",))
    store = open_store(tmp_path / "s.db")
    store.close()
    objects = _everything(tmp_path / "s.db")["objects"]
    assert "wrong" not in {name for _type, name, _table, _sql in objects}
    assert "external_sessions" in {name for _type, name, _table, _sql in objects}


def test_a_store_another_process_made_first_is_migrated_not_made_again(tmp_path, monkeypatch):
    """Two processes opening one new file: the second finds tables inside its transaction
    and leaves them to apply_migrations (which finds nothing to do)."""
    path = tmp_path / "s.db"
    open_store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrations.make_new(conn, str(path)) == migrations.CURRENT_VERSION
        versions = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
    finally:
        conn.close()
    assert versions == migrations.CURRENT_VERSION


CRASH = """
import os, sys
sys.path.insert(0, sys.argv[2])
from core.store.sqlite import fresh_schema
half = len(fresh_schema.STATEMENTS) // 2
class Dies(tuple):
    def __iter__(self):
        for number, statement in enumerate(tuple.__iter__(self)):
            if number == half:
                os._exit(9)   # (killed mid-way: nothing flushed, nothing cleaned up)
            yield statement
fresh_schema.STATEMENTS = Dies(fresh_schema.STATEMENTS)
from core import open_store
open_store(sys.argv[1])
"""


def test_a_store_whose_making_was_cut_short_is_made_again(tmp_path):
    path = tmp_path / "s.db"
    done = subprocess.run([sys.executable, "-c", CRASH, str(path), str(ROOT)],
                          capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    assert path.exists()
    store = open_store(path)
    try:
        assert store.sessions.count() == 0
        # (made without waiting for the disk; written as every store once made)
        assert store.connection.execute("PRAGMA synchronous").fetchone()[0] == 1   # NORMAL
    finally:
        store.close()
    objects = _everything(path)
    assert len(objects["rows"]["schema_migrations"]) == migrations.CURRENT_VERSION
    assert "usage_buckets_insert" in {name for _type, name, _table, _sql in objects["objects"]}
