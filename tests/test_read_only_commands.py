"""The commands that only read (`arbor list`, `usage`, `export`, and the store `push` reads
from) open the store read-only: they work in a folder nobody may write to, never create a
store, and never make one of an empty or foreign file.

CI runs as root, which permission bits do not stop, so a read-only folder is made two ways
that stop root too: a read-only bind mount of the folder, and the folder's immutable
attribute (`chattr +i`). As another user, `chmod 555` is enough."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

import usage_files as uf
from core import open_store
from core.model.errors import ArborError, StoreNotFound
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
ROOT = os.geteuid() == 0


def arbor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "ARBOR_IMPORT_WORKERS": "0", **(env or {})})


@contextmanager
def read_only(folder: Path, how: str):
    """`folder` made read-only for everyone (root included) while inside."""
    if not ROOT:
        if how != "mount":
            pytest.skip("one way is enough where permission bits apply")
        os.chmod(folder, 0o555)
        try:
            yield
        finally:
            os.chmod(folder, 0o755)
        return
    if how == "mount":
        if shutil.which("mount") is None or subprocess.run(
                ["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode:
            pytest.skip("cannot bind-mount here")
        try:
            if subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)],
                              capture_output=True).returncode:
                pytest.skip("cannot remount read-only here")
            yield
        finally:
            subprocess.run(["umount", str(folder)], capture_output=True)
        return
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("no immutable attribute on this file system")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)


def build_store(db: Path, logs: Path) -> str:
    """A store with a Claude Code session that has usage; its uid."""
    logs.mkdir(parents=True, exist_ok=True)
    uf.claude_session(logs)
    store = open_store(db)
    try:
        import_paths(store, [logs])
        assert store.sessions.by_uid(uf.SESSION) is not None
        return uf.SESSION
    finally:
        store.close()


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def check_reads(db: Path, uid: str) -> None:
    listed = arbor("list", "--json", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert uid in [row["uid"] for row in json.loads(listed.stdout)]
    usage = arbor("usage", "--json", "--by", "session", "--db", str(db))
    assert usage.returncode == 0, usage.stderr
    assert json.loads(usage.stdout)["totals"]["total_tokens"] > 0
    exported = arbor("export", uid, "--format", "json", "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["session"]["uid"] == uid


@pytest.mark.parametrize("how", ["mount", "immutable"])
def test_reading_commands_work_in_a_read_only_folder(tmp_path, how):
    """The store closed cleanly (no -wal, no -shm): SQLite can read a WAL store there only
    `immutable`, which is safe as nobody can write it (a writer would need a -wal)."""
    folder = tmp_path / "ro"
    db = folder / "arbor.db"
    uid = build_store(db, tmp_path / "logs")
    assert names(folder) == ["arbor.db"]
    with read_only(folder, how):
        check_reads(db, uid)
        out = tmp_path / "out.md"
        done = arbor("export", uid, "-o", str(out), "--db", str(db))
        assert done.returncode == 0, done.stderr
        assert out.read_text().startswith("#")
        assert names(folder) == ["arbor.db"]


@pytest.mark.parametrize("how", ["mount", "immutable"])
def test_reading_commands_in_a_read_only_folder_see_a_live_writer(tmp_path, how):
    """Another process has the store open (its -wal and -shm are there) and writes while
    the folder is read-only for the reader: it reads through the -shm, and sees the writes."""
    folder = tmp_path / "ro"
    db = folder / "arbor.db"
    uid = build_store(db, tmp_path / "logs")
    writer = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; sys.path.insert(0, sys.argv[2]); from core import open_store\n"
         "s = open_store(sys.argv[1]); s.sessions.list(); print('ready', flush=True)\n"
         "sys.stdin.readline(); s.sessions.create('written later'); print('done', flush=True)\n"
         "sys.stdin.readline(); s.close()", str(db), str(REPO)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        assert set(names(folder)) == {"arbor.db", "arbor.db-wal", "arbor.db-shm"}
        with read_only(folder, how):
            check_reads(db, uid)
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == "done"
            listed = arbor("list", "--json", "--db", str(db))
            assert listed.returncode == 0, listed.stderr
            assert {row["name"] for row in json.loads(listed.stdout)} >= {"written later"}
    finally:
        writer.stdin.write("\n")
        writer.stdin.flush()
        writer.wait(timeout=30)


@pytest.mark.parametrize("how", ["mount", "immutable"])
def test_a_wal_without_its_shm_in_a_read_only_folder_is_said_so(tmp_path, how):
    """A crash left a -wal with commits in it, and its -shm is gone: they can only be read
    through a -shm, which cannot be made there. One sentence, nothing changed."""
    folder = tmp_path / "ro"
    db = folder / "arbor.db"
    build_store(db, tmp_path / "logs")
    subprocess.run([sys.executable, "-c",
                    "import os, sys; sys.path.insert(0, sys.argv[2]); from core import open_store\n"
                    "s = open_store(sys.argv[1]); s.connection.execute('PRAGMA wal_autocheckpoint = 0')\n"
                    "s.sessions.create('only in the wal'); os._exit(0)", str(db), str(REPO)],
                   check=True)
    os.unlink(f"{db}-shm")
    assert os.path.getsize(f"{db}-wal") > 0
    with read_only(folder, how):
        done = arbor("list", "--db", str(db))
        assert done.returncode == 2
        assert "its -wal holds changes" in done.stderr and "Traceback" not in done.stderr
        assert names(folder) == ["arbor.db", "arbor.db-wal"]


CASES = {
    "missing": (None, "there is no arbor store at"),
    "empty file": (lambda p: p.touch(), "there is no arbor store at"),
    "empty SQLite database": (lambda p: sqlite3.connect(p).execute("PRAGMA user_version = 1")
                              .connection.commit(), "there is no arbor store at"),
    "text": (lambda p: p.write_text("notes, not a database\n" * 50), "not an arbor store"),
}
COMMANDS = {
    "list": ["list"], "usage": ["usage"], "export": ["export", "x"],
    "push": ["push", "--all", "--to", "{other}"],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_reading_commands_never_make_a_store(tmp_path, case, command):
    make, said = CASES[case]
    db = tmp_path / "arbor.db"
    if make is not None:
        make(db)
    before = db.read_bytes() if db.exists() else None
    args = [a.replace("{other}", str(tmp_path / "other.db")) for a in COMMANDS[command]]
    done = arbor(*args, "--db", str(db))
    assert done.returncode == 2, done.stderr
    assert said in done.stderr and str(db) in done.stderr and "Traceback" not in done.stderr
    assert (db.read_bytes() if db.exists() else None) == before
    assert names(tmp_path) == ([] if make is None else ["arbor.db"])


def test_a_read_only_store_refuses_writes(tmp_path):
    db = tmp_path / "arbor.db"
    open_store(db).close()
    store = open_store(db, read_only=True)
    try:
        with pytest.raises(ArborError, match="opened for reading only"):
            store.sessions.create("no")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.connection.execute("CREATE TABLE t (x)")
        assert store.sessions.list() == []
    finally:
        store.close()
    with pytest.raises(StoreNotFound):
        open_store(tmp_path / "absent.db", read_only=True)
    assert not (tmp_path / "absent.db").exists()


def _outdated(db: Path) -> None:
    store = open_store(db)
    store.connection.execute("DELETE FROM schema_migrations WHERE version >= 2")
    store.close()


def test_an_older_arbors_store_is_updated_then_read(tmp_path):
    db = tmp_path / "ro" / "arbor.db"
    uid = build_store(db, tmp_path / "logs")
    _outdated(db)
    done = arbor("list", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "updating the store" in done.stderr
    assert uid in [row["uid"] for row in json.loads(done.stdout)]


def test_an_older_arbors_store_in_a_read_only_folder_is_said_so(tmp_path):
    folder = tmp_path / "ro"
    db = folder / "arbor.db"
    build_store(db, tmp_path / "logs")
    _outdated(db)
    with read_only(folder, "mount" if not ROOT or shutil.which("mount") else "immutable"):
        done = arbor("list", "--db", str(db))
    assert done.returncode == 2
    assert "was written by an older arbor, and has to be updated" in done.stderr
    assert "Traceback" not in done.stderr


def test_usage_prices_again_where_it_can_and_says_so_where_it_cannot(tmp_path):
    folder = tmp_path / "ro"
    db = folder / "arbor.db"
    build_store(db, tmp_path / "logs")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({uf.SONNET: {"input_mtok": 1000, "output_mtok": 1000}}))
    env = {"ARBOR_PRICES": str(prices)}
    before = json.loads(arbor("usage", "--json", "--db", str(db)).stdout)["totals"]["cost_usd"]
    with read_only(folder, "mount" if not ROOT or shutil.which("mount") else "immutable"):
        stale = arbor("usage", "--json", "--db", str(db), env=env)
        assert stale.returncode == 0, stale.stderr
        assert "costs are shown with the prices they were worked out with" in stale.stderr
        assert json.loads(stale.stdout)["totals"]["cost_usd"] == before
    fresh = arbor("usage", "--json", "--db", str(db), env=env)
    assert fresh.returncode == 0 and fresh.stderr == ""
    assert json.loads(fresh.stdout)["totals"]["cost_usd"] > before
