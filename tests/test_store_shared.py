"""One store, many processes (issue 8 item 1, the store's part).

SQLite's locks are POSIX locks: closing any descriptor of the database file drops every
lock the process holds on it. Nothing in arbor may open a store file, its -wal or -shm
with plain file I/O; and within a process every API shares one connection per store
file (plus one reader), so no second opening can happen behind a connection's back.
"""

import builtins
import io
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core import open_store
from core.seed.manager import close_root_dbs, open_root_db
from core.seed.repositories import close_shared_stores, shared_store

ROOT = Path(__file__).resolve().parent.parent

OTHER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from core import open_store
store = open_store(sys.argv[2], create=False)
if sys.argv[3] == "append":
    branch = store.branches.current(int(sys.argv[4]))
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "other"}})
print(store.sessions.totals(int(sys.argv[4]))[0])
store.close()
"""


def other_process(path, session_id: int, action: str = "count") -> int:
    done = subprocess.run([sys.executable, "-c", OTHER, str(ROOT), str(path), action,
                           str(session_id)], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def plain_sqlite_process(path) -> None:
    """Another program opens, reads and closes the file: the sqlite3 shell when there is
    one, Python's sqlite3 module otherwise (both close their connection at the end, and
    the last connection to close checkpoints and deletes -wal and -shm)."""
    shell = shutil.which("sqlite3")
    if shell:
        subprocess.run([shell, str(path), "SELECT COUNT(*) FROM entries"], check=True,
                       capture_output=True)
    script = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "c.execute('SELECT COUNT(*) FROM entries').fetchone(); c.close()")
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)


def deleted_descriptors(folder) -> list[str]:
    """Descriptors of this process on files in `folder` that were deleted (the test's own
    temporary files elsewhere, such as pytest's capture files, do not count)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)) and target.endswith(" (deleted)"):
            out.append(target)
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd (Linux)")
def test_a_held_store_and_its_reader_stay_coherent_with_other_processes(tmp_path):
    path = tmp_path / "shared.db"
    store = open_store(path)
    session = store.sessions.create("s")
    branch = store.branches.create(session.id)
    for n in range(2):
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": f"{n}"}})
    store.sessions.list()
    reader = store.reader()  # as the browser does at start
    reader.sessions.list()
    try:
        for round_ in range(2):
            plain_sqlite_process(path)
            assert other_process(path, session.id) == store.sessions.totals(session.id)[0]
            # the holder writes: the other processes see it
            for n in range(3):
                store.entries.append_to_branch(branch.id, "message",
                                       {"message": {"role": "user", "content": f"r{round_}.{n}"}})
            mine = store.sessions.totals(session.id)[0]
            plain_sqlite_process(path)
            assert other_process(path, session.id) == mine
            # another process writes: the holder and its reader see it
            assert other_process(path, session.id, "append") == mine + 1
            assert store.sessions.totals(session.id)[0] == mine + 1
            assert reader.sessions.totals(session.id)[0] == mine + 1
            assert deleted_descriptors(tmp_path) == []
        assert store.integrity_check() == "ok"
    finally:
        store.close()
    assert deleted_descriptors(tmp_path) == []


def test_opening_a_store_reads_no_file_with_plain_io(tmp_path, monkeypatch):
    path = tmp_path / "s.db"
    open_store(path).close()
    opened = []
    real_open, real_io_open = builtins.open, io.open

    def spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def io_spy(file, *args, **kwargs):
        opened.append(str(file))
        return real_io_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", io_spy)
    store = open_store(path, create=False)
    store.reader().sessions.list()
    store.close()
    assert [name for name in opened if name.startswith(str(path))] == []


def test_every_api_shares_one_connection_per_file(tmp_path, monkeypatch):
    folder = tmp_path / "agents"
    folder.mkdir()
    path = folder / "sessions.db"
    first = open_store(path)
    try:
        by_manager = open_root_db(folder)
        by_repositories = shared_store(path)
        (tmp_path / "link.db").symlink_to(path)
        monkeypatch.chdir(tmp_path)
        by_other_names = [open_store("agents/sessions.db"), open_store(tmp_path / "link.db")]
        handles = [by_manager, by_repositories, *by_other_names]
        assert all(h.connection is first.connection for h in handles)
        assert first.reader().connection is by_manager.reader().connection
        assert first.reader().connection is not first.connection
        # a handle keeps its own clock and ids
        clocked = open_store(path, clock=lambda: "2026-01-02T00:00:00Z", id_factory=lambda: "fixed")
        assert clocked.connection is first.connection
        made = clocked.sessions.create("clocked")
        assert (made.uid, made.created_at.year) == ("fixed", 2026)
        assert first.sessions.create("mine").uid != "fixed"
        # closing one user leaves the connection to the others
        for handle in by_other_names:
            handle.close()
        clocked.close()
        assert handle.closed and not first.closed
        assert len(first.sessions.list()) == 2
        assert by_manager.sessions.by_uid("fixed").session_name == "clocked"
    finally:
        close_root_dbs()
        close_shared_stores()
        first.close()


def test_the_last_close_closes_the_connection_and_a_new_open_starts_over(tmp_path):
    path = tmp_path / "s.db"
    a = open_store(path)
    b = open_store(path)
    a.reader().sessions.list()
    connection = a.connection
    a.close()
    b.sessions.list()
    b.close()
    with pytest.raises(Exception):
        connection.execute("SELECT 1")
    c = open_store(path)
    assert c.connection is not connection and c.sessions.list() == []
    c.close()


def test_threads_opening_one_new_store_share_it(tmp_path):
    path = tmp_path / "new.db"
    stores = []

    def open_it():
        stores.append(open_store(path))

    threads = [threading.Thread(target=open_it) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s.connection) for s in stores}) == 1
    for store in stores:
        store.close()


def test_a_transaction_in_one_handle_is_the_transaction_of_all(tmp_path):
    path = tmp_path / "s.db"
    a, b = open_store(path), open_store(path)
    try:
        with pytest.raises(RuntimeError):
            with a.transaction():
                b.sessions.create("joined")
                raise RuntimeError("undo")
        assert b.sessions.list() == []  # b's write was part of a's transaction
    finally:
        a.close()
        b.close()
