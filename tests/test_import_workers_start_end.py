"""When the worker processes of a big import start and end (core/importing/driver.py,
core/importing/workers/parallel.py).

`arbor import --discover` below PRICES_APART_BELOW (its workers load the price table
themselves) gives the workers the files after the head once the head's first file is in,
so that they start, load the table and read while the importing process reads the rest of
the head; the first run's import (`price_later`) starts them after the head, as before.
A worker runs in the importing process's session, in a process group of its own: Linux
shares the CPU between sessions before it looks at niceness, so a worker in a session of
its own was not the nicer one. Once the last batch is sent, the workers are told so (their
input closed) at the next batch moved in: each ends after its last answer, while the
importing process moves the batches in, instead of being waited for at the end."""

from __future__ import annotations

import os
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

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """More sessions than the head holds, sub-agents among them (Claude Code only)."""
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=3, files=36, seed=31)
    return home


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(parallel, "BATCH_BYTES", 200_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(driver, "HEAD_FILES", 6)


def _in_order(store, home: Path, monkeypatch, **options) -> tuple:
    """An import's report and what this process did, in order: "read" (a file it read
    itself) and "sent" (a batch given to a worker)."""
    events: list[str] = []
    real_file, real_submit = driver.import_file, parallel.Workers.submit

    def import_file(*args, **kwargs):
        events.append("read")
        return real_file(*args, **kwargs)

    def submit(self, *args, **kwargs):
        events.append("sent")
        return real_submit(self, *args, **kwargs)

    monkeypatch.setattr(driver, "import_file", import_file)
    monkeypatch.setattr(parallel.Workers, "submit", submit)
    report = import_paths(store, [home], newest_first=True, **options)
    assert not report.stopped and not report.failed_files and report.converted > 0
    return report, events


def test_a_discover_import_gives_its_workers_the_rest_once_the_first_file_is_in(
        home, tmp_path, monkeypatch, small_batches):
    with open_store(tmp_path / "early.db") as store:
        report, events = _in_order(store, home, monkeypatch)
    head = events.index("sent")
    assert head == driver.EARLY_REST_AFTER              # the newest file first, alone
    assert events[head:].count("read") > 0              # the rest of the head read meanwhile
    # the store is what an import without workers makes of the same files
    with monkeypatch.context() as patch:
        patch.setenv("ARBOR_IMPORT_WORKERS", "0")
        with open_store(tmp_path / "alone.db") as store:
            assert import_paths(store, [home], newest_first=True).converted == 0
    assert dump(tmp_path / "early.db") == dump(tmp_path / "alone.db")


def test_the_heads_sub_agents_are_linked_before_the_first_batch_moves_in(
        home, tmp_path, monkeypatch, small_batches):
    """The workers start before the head is read, but the import still links the head's
    sub-agents to their sessions once the head is in, before it moves in what they read."""
    seen = []
    real_move_in = parallel.ParallelImport._move_in

    def move_in(self, *args, **kwargs):
        if not seen:
            sessions = self.store.sessions.list()
            ids = {s.id for s in sessions}
            seen.append([s.parent_id in ids for s in sessions if s.kind == "subagent"])
        return real_move_in(self, *args, **kwargs)

    monkeypatch.setattr(parallel.ParallelImport, "_move_in", move_in)
    with open_store(tmp_path / "store.db") as store:
        _report, events = _in_order(store, home, monkeypatch)
    assert events.index("sent") == driver.EARLY_REST_AFTER
    assert seen and seen[0], "no sub-agent in the head: the test proves nothing"
    assert all(seen[0]), seen[0]


def test_the_first_runs_import_starts_its_workers_after_the_head(home, tmp_path, monkeypatch,
                                                                 small_batches):
    """With `price_later` the head teaches this process the rates the workers are given
    as they start: they start after it."""
    with open_store(tmp_path / "first.db") as store:
        report, events = _in_order(store, home, monkeypatch, price_later=True)
    first = events.index("sent")
    assert first >= driver.HEAD_FILES > driver.EARLY_REST_AFTER   # the whole head first


def test_a_worker_is_in_this_session_and_a_process_group_of_its_own(tmp_path):
    workers = parallel.Workers(1, [], str(tmp_path))
    try:
        pid = workers.procs[0].pid
        assert os.getsid(pid) == os.getsid(0)      # its niceness counts against this process
        assert os.getpgid(pid) == pid != os.getpgid(0)   # a Ctrl-C at the terminal is not its
    finally:
        workers.close()


def test_the_workers_are_told_there_is_no_more_before_the_end(home, tmp_path, monkeypatch,
                                                              small_batches):
    told: list[bool] = []
    real_close = parallel.Workers.close

    def close(self, *args, **kwargs):
        told.extend(proc.stdin.closed for proc in self.procs)
        return real_close(self, *args, **kwargs)

    monkeypatch.setattr(parallel.Workers, "close", close)
    with open_store(tmp_path / "store.db") as store:
        report = import_paths(store, [home])
    assert report.converted > 0 and not report.failed_files
    assert told == [True, True]
