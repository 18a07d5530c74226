"""Which batches the workers of a big import are given, and when: in plan order within a
window, a big one (a long session) at once; each to the worker with the fewest bytes to
read. (That the store comes out the same whatever the order is test_import_parallel's.)"""

from __future__ import annotations

import io
import queue
import threading
from pathlib import Path

import pytest

from core.importing.workers import parallel
from core.importing.workers.frames import read_frame, write_frame

MB = 1 << 20


class FakeWorkers:
    def __init__(self, count: int):
        self.procs = [None] * count
        self.sent: list[list[str]] = []

    def submit(self, files, size=0):
        self.sent.append([Path(path).name for path, _fmt in files])
        return len(self.sent) - 1


def _import(tmp_path: Path, sizes_mb: list[float], workers: int, monkeypatch,
            ahead_mb: float = 6) -> tuple[parallel.ParallelImport, FakeWorkers]:
    """A ParallelImport of files of these sizes (sparse files), one a batch, with a window
    of `ahead_mb`, its workers faked."""
    monkeypatch.setattr(parallel, "BATCH_BYTES", 1)
    monkeypatch.setattr(parallel, "AHEAD_BYTES", int(ahead_mb * MB))
    planned = []
    for number, size in enumerate(sizes_mb):
        path = tmp_path / f"f{number}.jsonl"
        with open(path, "wb") as out:
            out.truncate(int(size * MB))
        planned.append((path, "claude_code", None))

    class Store:
        class imports:
            takes_scratch = True

    job = parallel.ParallelImport(Store(), planned, {p for p, _f, _x in planned}, commit_every=1)
    job._sizes = {i: parallel._size(planned[i][0]) for i in range(len(planned))}
    job._bytes = [sum(job._sizes[i] for i in batch) for batch in job.batches]
    job.workers = fake = FakeWorkers(workers)
    return job, fake


def _land_next(job: parallel.ParallelImport) -> None:
    """What `_land` does to the schedule: the next batch is moved in."""
    job._jobs.pop(job._landed, None)
    job._landed += 1
    job._top_up()


def test_a_big_batch_is_sent_at_once_and_the_window_goes_on_without_it(tmp_path, monkeypatch):
    job, fake = _import(tmp_path, [2, 2, 2, 40, 2, 2, 2, 20], workers=2, monkeypatch=monkeypatch)
    job._top_up()
    # the first big one first, then the window of 6 MB in plan order, the big one not in it
    assert fake.sent == [["f3.jsonl"], ["f0.jsonl"], ["f1.jsonl"], ["f2.jsonl"]]
    _land_next(job)   # f0 moved in: room for one more
    assert fake.sent[4:] == [["f4.jsonl"]]
    _land_next(job)   # f1 moved in: f5
    _land_next(job)   # f2 moved in: f6, and the window (f4, f5, f6: 6 MB) is full
    assert fake.sent[5:] == [["f5.jsonl"], ["f6.jsonl"]]
    _land_next(job)   # f3, the early one, moved in: the next big one goes at once
    assert fake.sent[7:] == [["f7.jsonl"]]
    assert sorted(map(tuple, fake.sent)) == sorted((f"f{n}.jsonl",) for n in range(8))


def test_one_worker_reads_in_plan_order(tmp_path, monkeypatch):
    job, fake = _import(tmp_path, [2, 2, 40, 2], workers=1, monkeypatch=monkeypatch, ahead_mb=100)
    job._top_up()
    assert fake.sent == [["f0.jsonl"], ["f1.jsonl"], ["f2.jsonl"], ["f3.jsonl"]]


def test_a_batch_goes_to_the_worker_with_the_fewest_bytes_to_read():
    workers = parallel.Workers.__new__(parallel.Workers)

    class Proc:
        def __init__(self):
            self.stdin = io.BytesIO()

    workers.procs = [Proc(), Proc()]
    workers._load = [0, 0]
    workers._dead = set()
    workers._next_job = 0
    workers._job_worker = {}
    workers._job_load = {}
    workers._load_lock = threading.Lock()
    workers.folder = "/nowhere"
    sizes = [300 * MB, 2 * MB, 2 * MB, 2 * MB]
    for size in sizes:
        workers.submit([("f", "claude_code")], size)
    # the big job keeps worker 0; the small ones all go to worker 1
    assert workers._job_worker == {0: 0, 1: 1, 2: 1, 3: 1}
    frames = io.BytesIO(workers.procs[1].stdin.getvalue())
    assert [read_frame(frames)["job"] for _ in range(3)] == [1, 2, 3]
    # answers take a job's bytes off its worker as they come (the reading thread), before
    # they are taken: a tail's answer is taken last, its worker free long before
    workers._answers = queue.Queue()
    workers._answered_now = workers._reading_now = None
    answers = io.BytesIO()
    write_frame(answers, {"job": 0})
    answers.seek(0)

    class Answering:
        stdout = answers

    workers._listen(0, Answering())
    assert workers._load == [0, 3 * (2 * MB + 1)]
    assert workers.take(0, {}) == {"job": 0}
    with pytest.raises(KeyError):
        workers._job_load[0]
