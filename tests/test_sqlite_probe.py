"""What is at a path, asked of SQLite: never by reading the file, which would drop the
locks this process holds on a store through another connection."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

from core import open_store
from core.store.sqlite_probe import (
    ARBOR, EMPTY, FOLDER, MISSING, NOT_SQLITE, SIDECAR, SPECIAL, SQLITE, probe)


def test_kinds(tmp_path):
    store = open_store(tmp_path / "s.db")
    store.set_meta("demo", "1")
    found = probe(tmp_path / "s.db")
    assert found.kind == ARBOR and found.meta["demo"] == "1" and found.is_database
    assert probe(tmp_path / "s.db-wal").kind == SIDECAR
    assert probe(tmp_path / "s.db-shm").kind == SIDECAR
    store.close()
    assert probe(tmp_path / "absent.db").kind == MISSING
    assert probe(tmp_path).kind == FOLDER
    (tmp_path / "empty.db").touch()
    assert probe(tmp_path / "empty.db").kind == EMPTY
    (tmp_path / "notes.txt").write_text("hello, not a database" * 20)
    assert probe(tmp_path / "notes.txt").kind == NOT_SQLITE
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    assert probe(tmp_path / "other.db").kind == SQLITE
    os.mkfifo(tmp_path / "pipe.jsonl")
    assert probe(tmp_path / "pipe.jsonl").kind == SPECIAL  # and it did not block
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert probe(tmp_path / "loop").kind == "unreadable"


def deleted_descriptors(under, pid: int | str = "self") -> list[str]:
    """This process's descriptors of files under `under` that were deleted meanwhile."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(under)) and target.endswith(" (deleted)"):
            found.append(target)
    return found


def count_elsewhere(path) -> int:
    script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "print(c.execute('SELECT COUNT(*) FROM external_sessions').fetchone()[0]); c.close()")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


def test_probing_a_store_this_process_holds_keeps_its_locks(tmp_path):
    path = tmp_path / "held.db"
    store = open_store(path)  # (not store.reader(): today that reads the file itself)
    store.sessions.create("one")
    assert probe(path).kind == ARBOR  # opened and closed through SQLite
    # Another process opens, reads and closes the store: if this process had lost its
    # locks, that process would take itself for the last one and delete -wal and -shm.
    assert count_elsewhere(path) == 1
    store.sessions.create("two")
    store.sessions.create("three")
    assert count_elsewhere(path) == 3 == len(store.sessions.list())
    assert deleted_descriptors(tmp_path) == []
    store.close()
