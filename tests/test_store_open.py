"""Opening stores: the schema, pragmas, default path, and clear errors that change nothing."""

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import (StoreDamaged, StoreNotFound, StoreTooNew, StoreUnavailable, default_db_path,
                  open_store)
from core.store.sqlite.migrations import CURRENT_VERSION

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_new_store_has_schema_and_pragmas(tmp_path):
    store = open_store(tmp_path / "a.db")
    conn = store.connection
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 4096  # 16 MiB of WAL
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    assert versions == list(range(1, CURRENT_VERSION + 1))
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"external_sessions", "internal_sessions", "checkpoints", "entries", "labels",
            "entries_fts", "schema_migrations"} <= tables
    store.close()


def test_reopen_does_not_migrate_twice(tmp_path):
    open_store(tmp_path / "a.db").close()
    store = open_store(tmp_path / "a.db")
    assert store.connection.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == CURRENT_VERSION
    store.close()


def test_default_path_and_env_override(tmp_path, monkeypatch):
    monkeypatch.setenv("ARBOR_DB", str(tmp_path / "env.db"))
    assert default_db_path() == tmp_path / "env.db"
    store = open_store()
    assert store.path == tmp_path / "env.db" and store.path.exists()
    store.close()
    monkeypatch.delenv("ARBOR_DB")
    assert default_db_path().name == "arbor.db"


def test_newer_schema_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "new.db"
    store = open_store(path)
    store.connection.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 'x')",
                             (CURRENT_VERSION + 5,))
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    before = digest(path)
    with pytest.raises(StoreTooNew) as error:
        open_store(path)
    assert "newer arbor" in str(error.value) and "not changed" in str(error.value)
    assert digest(path) == before


def test_garbage_file_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "garbage.db"
    path.write_bytes(os.urandom(4096))
    before = digest(path)
    with pytest.raises(StoreDamaged) as error:
        open_store(path)
    assert "not a SQLite database" in str(error.value)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.db"]


def test_other_sqlite_database_is_not_taken_over(tmp_path):
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE checkpoints_of_someone_else(x)")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(StoreDamaged) as error:
        open_store(path)
    assert "not an arbor store" in str(error.value)
    assert digest(path) == before


def test_damaged_header_pages_give_a_clear_error(tmp_path):
    path = tmp_path / "torn.db"
    store = open_store(path)
    store.sessions.create("x")
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the rest of page 1: the schema's root page
    path.write_bytes(bytes(data))
    before = digest(path)
    with pytest.raises(StoreDamaged):
        open_store(path)
    assert digest(path) == before


def test_missing_store_when_not_creating(tmp_path):
    with pytest.raises(StoreNotFound):
        open_store(tmp_path / "none.db", create=False)
    assert not (tmp_path / "none.db").exists()


def test_folder_instead_of_file(tmp_path):
    with pytest.raises(StoreUnavailable):
        open_store(tmp_path)


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder nobody can create files in. Root ignores permission bits, so as root the
    folder is bind-mounted read-only instead."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        yield folder
        os.chmod(folder, 0o755)
        return
    mounted = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot make a read-only folder here (no permission checks for root, no mount)")
    try:
        remount = subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True)
        if remount.returncode != 0:
            pytest.skip("cannot remount the folder read-only here")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def test_missing_file_in_read_only_folder(read_only_folder):
    with pytest.raises(StoreUnavailable) as error:
        open_store(read_only_folder / "x.db")
    assert "not writable" in str(error.value)
    assert list(read_only_folder.iterdir()) == []


@pytest.mark.skipif(not (FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite").exists(),
                    reason="shared fixtures are beside the repository")
def test_foreign_store_fixture_is_refused(tmp_path):
    source = FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"
    path = tmp_path / "lg.sqlite"
    path.write_bytes(source.read_bytes())
    with pytest.raises(StoreDamaged):
        open_store(path)
    assert digest(path) == digest(source)


def test_a_schema_1_store_gets_the_contentless_search_index(tmp_path):
    # Build the demo, then put its search index back the way schema 1 kept it (a plain
    # FTS5 table with a copy of the text) and forget migration 2.
    from core.demo import build_demo
    from core.model.entries import search_text
    from core.store import _loads
    from conftest import index_terms

    path = tmp_path / "old.db"
    build_demo(path)
    store = open_store(path)
    expected_terms = index_terms(store)
    expected_hits = [h.seq for h in store.search.messages("test")]
    conn = store.connection
    conn.execute("DROP TABLE entries_fts")
    conn.execute("CREATE VIRTUAL TABLE entries_fts USING fts5(text,"
                 " tokenize = 'unicode61 remove_diacritics 2')")
    for seq, kind, data in conn.execute("SELECT seq, type, data FROM entries").fetchall():
        conn.execute("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)",
                     (seq, search_text(kind, _loads(data, {}))))
    conn.execute("DELETE FROM schema_migrations WHERE version >= 2")
    store.close()

    store = open_store(path)
    assert [r[0] for r in store.connection.execute("SELECT version FROM schema_migrations")] == \
        list(range(1, CURRENT_VERSION + 1))
    assert "content=''" in store.connection.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'entries_fts'").fetchone()[0].replace(" ", "")
    assert index_terms(store) == expected_terms and expected_terms
    assert [h.seq for h in store.search.messages("test")] == expected_hits and expected_hits
    store.connection.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')")
    store.close()


def test_deleting_a_session_takes_its_words_out_of_the_search_index(tmp_path):
    from core.demo import build_demo
    from conftest import index_terms

    path = tmp_path / "demo.db"
    build_demo(path)
    store = open_store(path)
    session = store.search.messages("lisbon")[0].external_session_id
    seqs = {r[0] for r in store.connection.execute(
        "SELECT seq FROM entries WHERE external_session_id = ?", (session,))}
    before = index_terms(store)
    assert any(doc in seqs for doc, _term in before)
    store.sessions.delete(session)
    assert index_terms(store) == [(doc, term) for doc, term in before if doc not in seqs]
    assert store.search.messages("lisbon") == []
    store.connection.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')")
    store.close()


def test_an_upgrade_is_announced_and_a_new_store_is_not(tmp_path):
    said: list[str] = []
    path = tmp_path / "s.db"
    open_store(path, on_upgrade=said.append).close()
    assert said == []  # a new store is created, not upgraded
    store = open_store(path)
    store.connection.execute("DELETE FROM schema_migrations WHERE version >= 2")
    store.close()
    open_store(path, on_upgrade=said.append).close()
    assert len(said) == CURRENT_VERSION - 1 and "search index" in said[0]


def test_the_command_line_says_so_before_a_slow_upgrade(tmp_path):
    path = tmp_path / "s.db"
    store = open_store(path)
    store.connection.execute("DELETE FROM schema_migrations WHERE version >= 2")
    store.close()
    done = subprocess.run([sys.executable, "-m", "tui", "export", "nothing", "--db", str(path)],
                          capture_output=True, text=True, cwd=REPO)
    assert "updating the store for this version of arbor (once)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_store_made_with_16k_pages_keeps_them(tmp_path):
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA page_size = 16384")  # as new stores were made from cb66a42 on
    raw.execute("PRAGMA journal_mode = WAL")
    raw.close()
    store = open_store(path)
    assert store.connection.execute("PRAGMA page_size").fetchone()[0] == 16384
    session = store.sessions.create("s")
    assert store.entries.append(session.id, None, "message",
                              {"message": {"role": "user", "content": "hi"}}).msg_index == 1
    store.close()


def test_a_schema_3_store_keeps_its_first_user_messages_in_the_session_rows(tmp_path):
    """Migration 4: the partial index of user entries and the (folder, activity) index go;
    each session row holds its first user message (the manager's previews read it)."""
    from core.seed.manager import SessionManager, close_root_dbs

    folder = tmp_path / "sessions"
    try:
        first = SessionManager.new("/w", folder)
        first.init()
        first.append_message({"role": "assistant", "content": "hello"})
        first.append_message({"role": "user", "content": "the first question"})
        first.append_message({"role": "user", "content": "the second"})
        quiet = SessionManager.new("/w", folder)
        quiet.init()
        quiet.append_message({"role": "assistant", "content": "nobody asked"})
        store = first.store
        conn = store.connection
        # back to schema 3, as a store written before this version has it
        conn.execute("UPDATE external_sessions SET first_user_seq = NULL")
        conn.execute("DROP INDEX idx_external_sessions_cwd")
        conn.execute("CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd, updated_at)")
        conn.execute("CREATE INDEX idx_entries_first_user ON entries(external_session_id, seq)"
                     " WHERE role = 'user'")
        conn.execute("DELETE FROM schema_migrations WHERE version >= 4")
        close_root_dbs()

        previews = {d.id: d.preview for d in SessionManager.list_all_detailed(folder)}
        assert previews == {first.session_id: "the first question", quiet.session_id: ""}
        store = SessionManager.open_by_id_exact(folder, first.session_id).store
        names = {row[0] for row in store.connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "idx_entries_first_user" not in names
        assert store.connection.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'idx_external_sessions_cwd'"
        ).fetchone()[0].endswith("(cwd)")
        assert store.schema_version() == CURRENT_VERSION
        # appends keep it: a new session's first user message, an old one's stays
        later = SessionManager.new("/w", folder)
        later.init()
        later.append_message({"role": "assistant", "content": "hi"})
        later.append_message({"role": "user", "content": "new question"})
        again = SessionManager.open_by_id_exact(folder, first.session_id)
        again.append_message({"role": "user", "content": "not the first"})
        previews = {d.id: d.preview for d in SessionManager.list_all_detailed(folder)}
        assert previews[later.session_id] == "new question"
        assert previews[first.session_id] == "the first question"
    finally:
        close_root_dbs()
