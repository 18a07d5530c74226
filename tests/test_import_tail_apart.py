"""The newest session's tail read by a worker (core/importing/workers/parallel.py,
core/store/sqlite/tail.py).

A newest-first import reads the first part of a long head file itself and leaves the rest
of it for after the other files; with workers, one of them reads on in it from the file's
record, in a scratch store seeded with its sessions, while this process moves the other
batches in, and its tail is merged in last. The store is the one an import without workers
makes (which reads that rest itself, at the same point), row for row; a stop or a kill
while the tail is read loses nothing, and the next import, or an append, goes on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import driver
from core.importing.driver import import_paths
from core.importing.workers import parallel

from test_import_same_store import dump

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_import_parallel import meaning  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

REPO = Path(__file__).resolve().parent.parent

# The settings that make the newest file (31% of the tree, ~1 MB; no other file of the tree
# is over 400 KB) the one head file read in two parts.
SETUP = """
import os, sys
sys.path.insert(0, {tests!r})
from core.importing import driver
from core.importing.workers import parallel
parallel.BATCH_BYTES = 200_000
parallel.PARALLEL_MIN_BYTES = 0
driver.HEAD_FILES = 6
driver.HEAD_SLICE = 500_000
driver.FIRST_SLICE = 100_000
real_import_file = driver.import_file
def import_file(store, path, fmt=None, **kwargs):   # (the first part cut where it is due)
    if kwargs.get("enough") is not None and os.path.getsize(path) > driver.HEAD_SLICE:
        kwargs["budget"], kwargs["first_commit"] = 0.0, None
    return real_import_file(store, path, fmt, **kwargs)
driver.import_file = import_file
"""


def _setup(patch) -> None:
    patch.setattr(parallel, "BATCH_BYTES", 200_000)
    patch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    patch.setattr(driver, "HEAD_FILES", 6)
    patch.setattr(driver, "HEAD_SLICE", 500_000)
    patch.setattr(driver, "FIRST_SLICE", 100_000)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=3, files=36, seed=31)
    sizes = sorted((p.stat().st_size for p in home.rglob("*.jsonl")), reverse=True)
    assert sizes[0] > 500_000 > sizes[1]
    return home


@pytest.fixture
def tail_apart(monkeypatch):
    """Two workers, small batches, the newest file read in two parts; and every read here
    at a fixed pace: the first part's end at the first line past FIRST_SLICE (a commit
    after each line), anything else in one transaction (so that the usage rows are
    summed in one go, as a worker's are: their sums of costs are then equal to the last
    bit)."""
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    _setup(monkeypatch)
    real = driver.import_file
    begun: set[tuple[int, str]] = set()

    def import_file(store, path, fmt=None, **kwargs):
        first = (id(store), str(path)) not in begun
        begun.add((id(store), str(path)))
        cut = first and kwargs.get("enough") is not None and \
            os.path.getsize(path) > driver.HEAD_SLICE
        kwargs["budget"] = 0.0 if cut else 1e9
        kwargs["first_commit"] = None
        return real(store, path, fmt, **kwargs)

    monkeypatch.setattr(driver, "import_file", import_file)
    return begun


def _tails_sent(monkeypatch) -> list:
    """The tails given to workers (their files), and then "merged" for each merged in."""
    sent = []
    real = parallel.Workers.submit
    real_merge = parallel.ParallelImport._merge_tail

    def submit(self, files, size=0, tail=None):
        if tail is not None:
            sent.append(files)
        return real(self, files, size, tail)

    def merge_tail(self, *args):
        merged = real_merge(self, *args)
        if merged is not None:
            sent.append("merged")
        return merged

    monkeypatch.setattr(parallel.Workers, "submit", submit)
    monkeypatch.setattr(parallel.ParallelImport, "_merge_tail", merge_tail)
    return sent


def _alone(home: Path, db: Path, monkeypatch, **options) -> dict:
    with monkeypatch.context() as patch:
        patch.setenv("ARBOR_IMPORT_WORKERS", "0")
        with open_store(db) as store:
            report = import_paths(store, [home], newest_first=True, **options)
    assert report.converted == 0 and not report.stopped and not report.failed_files
    return _rounded_dump(db)


def _rounded_dump(db: Path) -> dict:
    """`dump`, with sums of costs to 12 places: the sessions' and buckets' totals of the
    session read in two parts add the same costs in another order (the first part's are
    priced in the worker's scratch store, whose query plan sums rows in another order),
    1e-15 apart."""
    def fix(row):
        return tuple(round(v, 12) if isinstance(v, float) else v for v in row)
    return {table: [fix(row) for row in rows] if isinstance(rows, list) else rows
            for table, rows in dump(db).items()}


def _newest(home: Path) -> Path:
    return max(home.rglob("*.jsonl"), key=lambda p: p.stat().st_size)


@pytest.mark.parametrize("price_later", [False, True], ids=["discover", "first run"])
def test_a_worker_reads_the_newest_sessions_tail_and_the_store_is_an_import_without_workers(
        home, tmp_path, monkeypatch, tail_apart, price_later):
    sent = _tails_sent(monkeypatch)
    with open_store(tmp_path / "apart.db") as store:
        report = import_paths(store, [home], newest_first=True, price_later=price_later)
        assert not report.stopped and not report.failed_files and report.converted > 0
        newest = [f for f in report.files if Path(f.path) == _newest(home)]
        assert [f.status for f in newest] == ["imported"]
        assert newest[0].sessions and newest[0].sessions[0].created
        assert newest[0].sessions[0].entries_added == newest[0].sessions[0].entries_total
    assert sent == [[(str(_newest(home)), "claude_code")], "merged"]
    assert _rounded_dump(tmp_path / "apart.db") == _alone(home, tmp_path / "alone.db", monkeypatch,
                                                 price_later=price_later)


def test_a_tail_that_cannot_be_merged_is_read_here_from_the_record(
        home, tmp_path, monkeypatch, tail_apart):
    sent = _tails_sent(monkeypatch)
    monkeypatch.setattr(parallel.ParallelImport, "_merge_tail", lambda self, *args: None)
    with open_store(tmp_path / "apart.db") as store:
        report = import_paths(store, [home], newest_first=True)
    assert not report.stopped and not report.failed_files and sent
    assert _rounded_dump(tmp_path / "apart.db") == _alone(home, tmp_path / "alone.db", monkeypatch)


def test_stopped_while_the_tail_is_read_the_next_import_goes_on(home, tmp_path, monkeypatch,
                                                                 tail_apart):
    import threading

    stop = threading.Event()
    real = parallel.ParallelImport.tail_result

    def tail_result(self, index, import_here):
        stop.set()   # (Ctrl-C as this process waits for the worker reading the tail)
        return real(self, index, import_here)

    with monkeypatch.context() as patch:
        patch.setattr(parallel.ParallelImport, "tail_result", tail_result)
        with open_store(tmp_path / "apart.db") as store:
            report = import_paths(store, [home], newest_first=True, stop=stop)
    assert report.stopped == 1
    [cut] = [f for f in report.files if f.status == "stopped"]
    assert Path(cut.path) == _newest(home)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(parallel.FOLDER_PREFIX)]
    with open_store(tmp_path / "apart.db") as store:   # (the rest, read here: nothing new)
        report = import_paths(store, [home], newest_first=True)
    assert not report.stopped and not report.failed_files
    assert _rounded_dump(tmp_path / "apart.db") == _alone(home, tmp_path / "alone.db", monkeypatch)


def test_killed_while_the_tail_is_read_the_next_import_goes_on(home, tmp_path, monkeypatch):
    """SIGKILL (nothing can catch it) as the import waits for the tail: the store keeps the
    file's first part with its record, the workers leave, the next import reads the rest."""
    db = tmp_path / "apart.db"
    script = SETUP.format(tests=str(REPO / "tests")) + f"""
from core import open_store
from core.importing.driver import import_paths
if sys.argv[1] == "kill":
    def tail_result(self, index, import_here):
        os.kill(os.getpid(), {int(signal.SIGKILL)})
    parallel.ParallelImport.tail_result = tail_result
with open_store({str(db)!r}) as store:
    report = import_paths(store, [{str(home)!r}], newest_first=True)
    assert not report.stopped and not report.failed_files, report
"""
    env = dict(os.environ, ARBOR_IMPORT_WORKERS="2", TMPDIR=str(tmp_path))
    killed = subprocess.run([sys.executable, "-c", script, "kill"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    finished = subprocess.run([sys.executable, "-c", script, "finish"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    alone = tmp_path / "alone.db"
    with monkeypatch.context() as patch:
        _setup(patch)
        _alone(home, alone, monkeypatch)
    assert _rounded(meaning(db)) == _rounded(meaning(alone))


def _rounded(held: dict) -> dict:
    """(sums of costs added in another order by an import cut and finished by another)"""
    def fix(row):
        return tuple(round(v, 9) if isinstance(v, float) else v for v in row)
    return {key: [fix(row) for row in rows] if key in ("session usage", "buckets") else rows
            for key, rows in held.items()}


def test_lines_appended_after_the_tail_was_merged_are_read_on(home, tmp_path, monkeypatch,
                                                              tail_apart):
    import shutil

    own = tmp_path / "home"
    shutil.copytree(home, own)
    with open_store(tmp_path / "apart.db") as store:
        assert import_paths(store, [own], newest_first=True).converted > 0
    _alone(own, tmp_path / "alone.db", monkeypatch)
    claude_tree.append_lines(_newest(own), 40, seed=5)
    for name in ("apart.db", "alone.db"):
        with open_store(tmp_path / name) as store:
            report = import_paths(store, [own])
        [grown] = [f for f in report.files if f.status == "imported"]
        assert Path(grown.path) == _newest(own) and grown.sessions[0].entries_added > 0
    assert _rounded_dump(tmp_path / "apart.db") == _rounded_dump(tmp_path / "alone.db")


def test_a_tail_another_import_read_on_in_meanwhile_is_not_merged(home, tmp_path, monkeypatch,
                                                                  tail_apart):
    """The app following the file may read on in it while the worker does: then the store's
    record is no longer the one the worker's store was seeded with, and its tail is dropped
    (merging it would add the same lines twice)."""
    sent = _tails_sent(monkeypatch)
    real = parallel.ParallelImport.tail_result

    def tail_result(self, index, import_here):
        followed = driver.import_file(self.store, _newest(home), "claude_code")
        assert followed.status == "imported" and followed.sessions[0].entries_added > 0
        return real(self, index, import_here)

    from core.store.rooms.imports import ImportsRoom

    said = []
    real_merge = ImportsRoom.merge_scratch_tail

    def merge_scratch_tail(self, *args):
        try:
            said.append(real_merge(self, *args))
        except Exception as error:   # (the store's UNIQUE (session, id) would refuse it too)
            said.append(type(error).__name__)
            raise
        return said[-1]

    monkeypatch.setattr(parallel.ParallelImport, "tail_result", tail_result)
    monkeypatch.setattr(ImportsRoom, "merge_scratch_tail", merge_scratch_tail)
    with open_store(tmp_path / "apart.db") as store:
        report = import_paths(store, [home], newest_first=True)
    assert not report.stopped and not report.failed_files
    assert sent == [[(str(_newest(home)), "claude_code")]]   # (given, never merged)
    assert said == [False]   # (seen for what it is: nothing of it was written)
    assert _rounded_dump(tmp_path / "apart.db") == _alone(home, tmp_path / "alone.db",
                                                          monkeypatch)
