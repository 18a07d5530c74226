"""`arbor import` of a few appended lines closes the store without writing SQLite's log back
into the file (issue 29, appends: that checkpoint's two fsyncs cost more than the rest of
the import's work), while SQLite keeps the log under KEEP_LOG_BYTES; a bigger import writes
it back as before. How big the log is, is asked of SQLite (`PRAGMA wal_checkpoint` of a
connection opened afterwards reports the frames it found), never of the file system."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests import usage_files as uf


def _log_frames(db: Path) -> tuple[int, int]:
    """(frames in the store's write-ahead log, page size), as SQLite tells them to a
    connection opened now (which then writes them back and removes the log as it closes)."""
    conn = sqlite3.connect(db)
    try:
        _busy, frames, _done = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return frames, conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()


def _entries(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    finally:
        conn.close()


def _import(home: Path, db: Path, monkeypatch) -> None:
    from tui.cli import main

    monkeypatch.setenv("HOME", str(home))
    assert main(["import", "-q", "--discover", "--db", str(db)]) == 0


def _imported_once(tmp_path: Path, monkeypatch) -> tuple[Path, Path, Path]:
    """A Claude Code session in a home folder, imported once: (home, session, store)."""
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    _import(home, db, monkeypatch)
    return home, session, db


def test_an_import_of_appended_lines_leaves_the_log_and_keeps_what_it_wrote(tmp_path, monkeypatch):
    home, session, db = _imported_once(tmp_path, monkeypatch)   # (written back as it closes)
    assert _log_frames(db)[0] == 0
    before = _entries(db)
    uf.append_answered_question(session, 1)
    _import(home, db, monkeypatch)
    frames, page = _log_frames(db)
    assert 0 < frames * page < 1024 * 1024, "the log was left as it was, and it is small"
    assert _entries(db) == before + 2, "what the import wrote is in the store"
    uf.append_answered_question(session, 2)   # and the next import goes on from there
    _import(home, db, monkeypatch)
    assert _entries(db) == before + 4


def test_a_new_file_in_the_same_import_writes_the_log_back(tmp_path, monkeypatch):
    """A file without an import record is read whole (the bulk writer lets the log grow to
    16 MB): the store is closed the ordinary way."""
    home, session, db = _imported_once(tmp_path, monkeypatch)
    uf.append_answered_question(session, 1)
    uf.codex_rollout(home / ".codex" / "sessions" / "2025" / "10" / "05")
    _import(home, db, monkeypatch)
    assert _log_frames(db)[0] == 0


def test_sqlite_keeps_the_log_small_until_the_store_closes(tmp_path):
    """After `keep_log_small`, SQLite writes the log back at the commit that takes it over
    KEEP_LOG_BYTES, and starts it again at the next: many commits leave a log under that
    bound (and one commit's pages), which `close(keep_log=True)` leaves as it is."""
    from core import open_store
    from core.store.sqlite.backend import KEEP_LOG_BYTES

    db = tmp_path / "arbor.db"
    store = open_store(db)
    store.keep_log_small()
    for number in range(40):                     # ~100 KB a commit, 4 MB in all
        with store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                         (f"filler {number}", "x" * 100_000))
    store.close(keep_log=True)
    frames, page = _log_frames(db)
    assert 0 < frames * page < KEEP_LOG_BYTES + 200 * 1024


def test_the_kept_log_is_emptied_once_it_reaches_its_bound(tmp_path):
    """A log written back as it reached KEEP_LOG_BYTES is emptied as the store closes:
    the next process reads a kept log anew and counts none of it as written back, so it
    grew by every import's pages for good (and each commit wrote all of it back again).
    Each round here is such a process: the store opened, ~200 KB written, closed."""
    from core import open_store
    from core.store.sqlite.backend import KEEP_LOG_BYTES

    db = tmp_path / "arbor.db"
    open_store(db).close()
    for number in range(15):                     # 3 MB in all
        store = open_store(db)
        store.keep_log_small()
        with store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                         (f"filler {number}", "x" * 200_000))
        store.close(keep_log=True)
    frames, page = _log_frames(db)
    assert frames * page < KEEP_LOG_BYTES + 300 * 1024


def test_without_keep_log_small_the_store_is_closed_as_before(tmp_path):
    from core import open_store

    db = tmp_path / "arbor.db"
    store = open_store(db)
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES ('a', 'b')")
    store.close(keep_log=True)
    assert _log_frames(db)[0] == 0


def test_a_finished_first_import_is_not_marked_again(tmp_path, monkeypatch):
    """Each `--discover` after the first import finished marked it started and done again:
    two commits of every import of appended lines."""
    import core.store.first_import as first_import

    home, session, db = _imported_once(tmp_path, monkeypatch)
    marked = []
    monkeypatch.setattr(first_import, "begin", lambda store: marked.append("begin"))
    monkeypatch.setattr(first_import, "finish", lambda store: marked.append("finish"))
    import core.importing.first_run as first_run
    monkeypatch.setattr(first_run, "begin", first_import.begin)
    monkeypatch.setattr(first_run, "finish", first_import.finish)
    uf.append_answered_question(session, 1)
    _import(home, db, monkeypatch)
    assert marked == []


def test_the_looks_connection_keeps_the_log_and_the_store_opens_no_other(tmp_path, monkeypatch):
    """The read-only connection the records were read through (`unchanged.look`) stays open
    until the store is closed, which keeps SQLite from writing the log back: closing opens
    no connection of its own for that (one connection fewer, and its reading of the
    schema). Two connections in all: the look's and the store's."""
    home, session, db = _imported_once(tmp_path, monkeypatch)
    before = _entries(db)
    uf.append_answered_question(session, 1)
    opened = []
    real = sqlite3.connect

    def connect(*args, **kwargs):
        opened.append(args[0] if args else kwargs.get("database"))
        return real(*args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)
    _import(home, db, monkeypatch)
    monkeypatch.setattr(sqlite3, "connect", real)
    assert len(opened) == 2, opened
    frames, page = _log_frames(db)
    assert 0 < frames * page < 1024 * 1024, "the log was left as it was"
    assert _entries(db) == before + 2


def test_an_import_of_appended_lines_commits_once(tmp_path, monkeypatch):
    """`arbor import --discover` of a few appended lines is not a newest-first import: its
    read is not cut at the newest-first import's quick first commit (FIRST_COMMIT), which
    made a second commit of every such import (its record written twice)."""
    from core.importing import driver
    from core.store.store import Store

    home, session, db = _imported_once(tmp_path, monkeypatch)
    before = _entries(db)
    uf.append_answered_question(session, 1)
    monkeypatch.setattr(driver, "FIRST_COMMIT", 0.0)   # (a newest-first read commits at once)
    monkeypatch.setattr(driver, "COMMIT_EVERY", 3600.0)   # (and no other does, however slow)
    real = Store.commit_and_continue
    commits = []

    def counted(self):
        commits.append(1)
        return real(self)

    monkeypatch.setattr(Store, "commit_and_continue", counted)
    _import(home, db, monkeypatch)
    assert commits == [], "read in one transaction"
    assert _entries(db) == before + 2
