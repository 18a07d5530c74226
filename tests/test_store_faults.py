"""Faults of the machine, not of arbor: a full disk. Each gives one sentence (an ArborError,
whatever the store's backend), loses nothing, and the store works again once there is room.

The full disk is a small tmpfs (root only; skipped where it cannot be mounted)."""

from __future__ import annotations

import ast
import sqlite3
import os
import subprocess
from pathlib import Path

import pytest

from core import StoreUnavailable, open_store
from core.demo import build_demo
from tui import cli

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def small_disk(tmp_path):
    """A folder on a 1 MiB file system, and a function that resizes it."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a small file system needs mount (root)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")

    def resize(size: str) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size}", str(folder)], check=True)

    try:
        yield folder, resize
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, leave: int = 0) -> None:
    """Take the free space of the file system, all but `leave` bytes."""
    info = os.statvfs(folder)
    free = info.f_bavail * info.f_frsize - leave
    with open(folder / "filler", "wb") as out:
        while free > 0:
            chunk = min(free, 1 << 16)
            try:
                out.write(b"\0" * chunk)
                out.flush()
            except OSError:
                break
            free -= chunk


def test_tui_names_no_database_driver():
    """The launcher and the app catch `ArborError` (or `store.errors`): they work the same
    on SQLite and PostgreSQL, so no module under tui/ imports a driver."""
    drivers = {"sqlite3", "psycopg", "psycopg2", "psycopg_pool"}
    found = []
    for path in sorted((REPO / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(REPO)}: {name}" for name in names
                      if name.split(".")[0] in drivers]
    assert found == []


def test_a_demo_that_does_not_fit_is_one_sentence_and_is_built_once_there_is_room(
        small_disk, capsys, monkeypatch):
    folder, resize = small_disk
    path = folder / "demo.db"
    assert cli.main(["--demo", "--db", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("arbor: cannot write the demo store") and "full" in err
    assert len(err.splitlines()) == 1
    resize("64m")   # room again: the half-built store is the demo's own, built again

    class FakeApp:
        def __init__(self, store, **_options):
            self.sessions = len(store.sessions.list())
            FakeApp.seen = self.sessions
            self.return_code = 0

        def run(self):
            pass

    import tui.app

    monkeypatch.setattr(tui.app, "ArborApp", FakeApp)
    assert cli.main(["--demo", "--db", str(path)]) == 0
    assert FakeApp.seen == 6    # as listed with archived and sub-agent sessions


def test_a_new_store_on_a_full_disk_says_the_disk_is_full(small_disk):
    folder, _ = small_disk
    fill(folder, leave=8192)
    with pytest.raises(StoreUnavailable, match="disk is full") as error:
        open_store(folder / "new.db")
    assert "damaged" not in str(error.value)


def test_a_store_whose_disk_filled_up_opens_as_unavailable_not_damaged(small_disk):
    folder, resize = small_disk
    path = folder / "s.db"
    store = open_store(path)
    session = store.sessions.create("kept")
    store.close()
    for leftover in ("s.db-wal", "s.db-shm"):   # the last close removed them; a new shm
        assert not (folder / leftover).exists()  # needs room the full disk has not got
    fill(folder)
    with pytest.raises(StoreUnavailable) as error:
        open_store(path)
    assert "damaged" not in str(error.value) and "full" in str(error.value)
    os.unlink(folder / "filler")
    store = open_store(path)
    assert [s.id for s in store.sessions.find()] == [session.id]
    store.close()


@pytest.fixture
def read_only_mount(tmp_path):
    """A folder holding a store, then made read-only (a read-only bind mount: root ignores
    permission bits)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    store = open_store(folder / "s.db")
    store.sessions.create("kept")
    store.close()
    if os.geteuid() != 0:
        os.chmod(folder, 0o555)
        yield folder
        os.chmod(folder, 0o755)
        return
    if subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode:
        pytest.skip("cannot bind-mount here")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)],
                          capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def test_a_store_in_a_read_only_folder_says_why_it_cannot_be_opened(read_only_mount, capsys,
                                                                     tmp_path):
    """A command that writes says why it cannot; one that only reads opens the store
    read-only and works (tests/test_read_only_commands.py)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    assert cli.main(["import", "--db", str(read_only_mount / "s.db"), str(logs)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("arbor: cannot open") and "folder is read-only" in err
    assert cli.main(["usage", "--db", str(read_only_mount / "s.db")]) == 0
    assert sorted(p.name for p in read_only_mount.iterdir()) == ["s.db"]


def test_a_write_behind_another_programs_long_write_is_one_sentence_and_changes_nothing(
        tmp_path, monkeypatch):
    from core import SessionManager, StoreBusy
    from core.seed.manager import close_root_dbs
    from core.store.sqlite import backend as sqlite_backend

    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_MS", 300)
    manager = SessionManager("/w", tmp_path)
    manager.init()
    manager.append_message({"role": "user", "content": "before"})
    other = sqlite3.connect(manager.store.path, isolation_level=None)   # another program
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy, match="another program has been writing to the store"):
            manager.append_message({"role": "user", "content": "during"})
    finally:
        other.execute("ROLLBACK")
        other.close()
    manager.append_message({"role": "user", "content": "after"})
    assert [m["content"] for m in manager.get_messages()] == ["before", "after"]
    close_root_dbs()



def test_a_long_write_that_cannot_take_the_store_back_says_so_and_keeps_what_it_committed(
        tmp_path, monkeypatch):
    """A long write (an import) commits, leaves the store to others for a moment and takes
    it back (`commit_and_continue`); when another program keeps it past the timeout, the
    error is that one sentence (not a failed rollback of a transaction that is not open),
    what was committed stays, and the store takes writes again."""
    from core import StoreBusy
    from core.store.sqlite import backend as sqlite_backend

    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_MS", 300)
    db = tmp_path / "s.db"
    with open_store(db) as store:
        other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        real_commit = sqlite_backend.SQLiteBackend.commit

        def commit_then_taken(conn):
            real_commit(conn)
            other.execute("BEGIN IMMEDIATE")   # another program gets in between

        try:
            with pytest.raises(StoreBusy, match="another program has been writing"):
                with store.transaction():
                    store.sessions.create("first", uid="first")
                    monkeypatch.setattr(sqlite_backend.SQLiteBackend, "commit",
                                        staticmethod(commit_then_taken))
                    store.commit_and_continue()
                    store.sessions.create("second", uid="second")
        finally:
            monkeypatch.setattr(sqlite_backend.SQLiteBackend, "commit", staticmethod(real_commit))
            other.execute("ROLLBACK")
            other.close()
        assert [s.uid for s in store.sessions.list()] == ["first"]
        store.sessions.create("third", uid="third")
        assert sorted(s.uid for s in store.sessions.list()) == ["first", "third"]
