"""An import with workers stopped from outside: SIGTERM and SIGHUP stop it as Ctrl-C does
(workers ended, scratch stores deleted, the next import finishes the store); after a
SIGKILL, which nothing can catch, its workers stop by themselves and the next import
deletes the scratch folder it left behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.importing.workers import parallel, worker
from core.importing.driver import import_paths
from core.importing.workers.frames import write_frame
from core.store.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_import_parallel import meaning  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=6, files=40, seed=31)
    return home


@pytest.fixture(scope="module")
def serial(home, tmp_path_factory) -> dict:
    db = tmp_path_factory.mktemp("serial") / "serial.db"
    assert _import(home, db, workers="0").returncode == 0
    return _rounded(meaning(db))


def _env(home: Path, tmp: Path, workers: str) -> dict:
    """(TMPDIR: a folder of its own, which must stay empty: scratch folders go beside the
    store, in `tmp`.)"""
    temporary = tmp / "tmpdir"
    temporary.mkdir(exist_ok=True)
    return dict(os.environ, HOME=str(home), TMPDIR=str(temporary), ARBOR_IMPORT_WORKERS=workers)


def _import(home: Path, db: Path, *, workers: str = "2", tmp: Path | None = None):
    tmp = tmp or db.parent
    return subprocess.run([sys.executable, "-m", "tui", "import", "-q", "--discover", "--db",
                           str(db)], cwd=REPO, env=_env(home, tmp, workers),
                          capture_output=True, text=True, timeout=300)


def _started(home: Path, db: Path, tmp: Path) -> subprocess.Popen:
    """An import whose workers have begun: its scratch folder holds a worker's log."""
    process = subprocess.Popen([sys.executable, "-m", "tui", "import", "-q", "--discover",
                                "--db", str(db)], cwd=REPO, env=_env(home, tmp, "2"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp.glob(parallel.FOLDER_PREFIX + "*/worker-*.log")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the import started no worker"
        time.sleep(0.005)
    return process


def _rounded(held: dict) -> dict:
    """`meaning`, with the sums of costs to 9 places: they are added in another order when
    an import is cut and finished by another (floating point, 1e-14 apart)."""
    def fix(row):
        return tuple(round(v, 9) if isinstance(v, float) else v for v in row)
    return {key: [fix(row) for row in rows] if key in ("session usage", "buckets") else rows
            for key, rows in held.items()}


def _folders(tmp: Path) -> list[Path]:
    temporary = tmp / "tmpdir"
    assert not temporary.exists() or not any(temporary.iterdir())   # nothing in TMPDIR
    return sorted(tmp.glob(parallel.FOLDER_PREFIX + "*"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_stops_an_import_as_ctrl_c_does(home, serial, tmp_path, signum):
    db = tmp_path / "store.db"
    process = _started(home, db, tmp_path)
    process.send_signal(signum)
    _out, err = process.communicate(timeout=60)
    name = signal.Signals(signum).name
    assert process.returncode == 128 + signum, err
    assert f"arbor import: stopped by {name}; what it had read up to its last save is kept" in err
    assert "Traceback" not in err
    assert _folders(tmp_path) == []        # workers ended and their scratch stores deleted
    finished = _import(home, db)
    assert finished.returncode == 0, finished.stderr
    assert _rounded(meaning(db)) == serial


def test_after_a_sigkill_the_workers_stop_and_the_next_import_deletes_their_folder(
        home, serial, tmp_path):
    db = tmp_path / "store.db"
    process = _started(home, db, tmp_path)
    process.kill()
    process.communicate(timeout=60)
    [left] = _folders(tmp_path)
    assert (left / parallel.OWNER_LOCK).exists()
    finished = _import(home, db)
    assert finished.returncode == 0, finished.stderr
    assert _folders(tmp_path) == []
    assert _rounded(meaning(db)) == serial


def test_only_folders_nobody_owns_are_swept(tmp_path):
    def folder(name: str, *files: str) -> Path:
        path = tmp_path / name
        path.mkdir()
        for file in files:
            (path / file).write_bytes(b"x")
        return path

    dead = folder(parallel.FOLDER_PREFIX + "dead", parallel.OWNER_LOCK, "batch-0.db")
    live = folder(parallel.FOLDER_PREFIX + "live")
    held = parallel.own_folder(str(live))
    assert held is not None and (live / parallel.OWNER_LOCK).exists()
    older = folder(parallel.FOLDER_PREFIX + "older", "batch-0.db")   # no lock: not ours to judge
    other = folder("not-arbor", parallel.OWNER_LOCK)
    target = folder("elsewhere", parallel.OWNER_LOCK, "precious")
    link = tmp_path / (parallel.FOLDER_PREFIX + "link")
    link.symlink_to(target)
    try:
        assert parallel.sweep_abandoned(str(tmp_path)) == [str(dead)]
    finally:
        os.close(held)
    assert not dead.exists()
    for kept in (live, older, other, target / "precious", link):
        assert kept.exists()
    # once its owner lets go, the live one is abandoned too
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(live)]


def test_a_sweep_is_not_undone_by_a_worker_still_writing_in_the_folder(tmp_path):
    """A killed import's worker lives on for a moment and may make a file (a journal) in its
    folder while the next import deletes it: the folder goes all the same."""
    import threading

    dead = tmp_path / (parallel.FOLDER_PREFIX + "dead")
    dead.mkdir()
    (dead / parallel.OWNER_LOCK).write_bytes(b"")
    for number in range(200):
        (dead / f"batch-{number}.db").write_bytes(b"x")
    stop = threading.Event()
    made = []

    def orphan():
        number = 0
        while not stop.is_set():
            try:
                with open(dead / f"journal-{number}", "wb"):
                    made.append(number)
            except OSError:
                pass
            number += 1

    writer = threading.Thread(target=orphan)
    writer.start()
    try:
        while not made:
            time.sleep(0.001)
        assert parallel.sweep_abandoned(str(tmp_path)) == [str(dead)]
    finally:
        stop.set()
        writer.join()
    assert list(tmp_path.glob(parallel.FOLDER_PREFIX + "*")) == []


def test_an_import_that_needs_no_workers_still_sweeps(tmp_path, monkeypatch):
    dead = tmp_path / (parallel.FOLDER_PREFIX + "dead")
    dead.mkdir()
    (dead / parallel.OWNER_LOCK).write_bytes(b"")
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "0")
    log = tmp_path / "one.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl", log)
    store = open_store(tmp_path / "store.db")
    try:
        import_paths(store, [log])          # new: no workers wanted
        assert not dead.exists()
        dead.mkdir()
        (dead / parallel.OWNER_LOCK).write_bytes(b"")
        import_paths(store, [log])          # nothing new
    finally:
        store.close()
    assert not dead.exists()


def test_a_worker_whose_importing_process_is_gone_takes_no_more_work(tmp_path, home):
    """Jobs sent before the importing process died are still in the pipe: an orphan does
    not read them (nor, within a progress tick, the rest of a file it is in)."""
    log = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    stdin = tmp_path / "frames"
    with open(stdin, "wb") as out:
        write_frame(out, {"folder": str(tmp_path), "cards": []})
        write_frame(out, {"job": 0, "files": [(str(log), "claude_code")],
                          "out": str(tmp_path / "batch-0.db")})
    answers = tmp_path / "answers"
    with open(stdin, "rb") as frames, open(answers, "wb") as said:
        with pytest.raises(worker.Orphaned):
            worker._serve(frames, said, parent=os.getppid() + 1)
    assert not (tmp_path / "batch-0.db").exists()
    assert not list(tmp_path.glob("template-*.db"))   # nothing of it in the folder
    assert answers.read_bytes() == b""
    worker.parent_watch(os.getppid())()      # its own parent: nothing raised
    with open(stdin, "rb") as frames, open(answers, "wb") as said:
        with pytest.raises(EOFError):   # the end of its jobs, as when the pipe is closed
            worker._serve(frames, said, parent=os.getppid())
    assert (tmp_path / "batch-0.db").exists() and answers.read_bytes()
