"""How far a whole import is: sessions done of all it is to read, bytes done of all, and the
time left. `import_paths(run=...)` keeps it up to date (the files it is to read once
planned, each file's progress, each file done, the files worker processes read apart and
when they have); the app's status line and `arbor import`'s progress line read it.

Sessions are the files that are not a sub-agent's (the list shows a sub-agent under its
session, not as one of its own): their bytes count, they do not. The time left is that of
the slower of two lanes, each from its own bytes a second: this process's (every byte
passes through it: the files it reads itself, the newest ones and a long one read in
slices, and the batches it moves in) and the workers' (the files they read apart, done
once a worker has answered for their batch), unless they are waiting for this process
(their window of batches read ahead is full: their pace is its pace then). A lane that
cannot tell yet (the workers start a second or two after this process) does not hide the
other's: on a tree read in six seconds the status line said "estimating…" throughout."""

from __future__ import annotations

import _thread   # (not threading: an import of a few lines does not load it)
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterable

    from .base import Progress

# No time left is guessed before this share of the bytes was read, nor this long after
# the start: the newest files, read first, are the slowest to read a byte of (the workers
# start after them), and an estimate from them alone said minutes for what took seconds.
ESTIMATE_AFTER_SHARE = 0.02
ESTIMATE_AFTER_SECONDS = 3.0
# ... and then from the bytes read a second over about the last this many seconds.
RATE_WINDOW = 10.0


class RunProgress:
    """Totals of one import (thread-safe to read: `snapshot()`); `listener(self)` is called
    at most every `interval` seconds as it moves, and at once when a file is done."""

    def __init__(self, listener: Callable[[RunProgress], None] | None = None, *,
                 interval: float = 0.2, clock: Callable[[], float] = time.monotonic):
        self.listener = listener
        self.interval = interval
        self.clock = clock
        self._lock = _thread.allocate_lock()
        self._sizes: dict[int, int] = {}
        self._subagents: set[int] = set()
        self._done: set[int] = set()
        self._partial: dict[int, int] = {}
        self._bytes_done = 0
        self._apart: set[int] = set()       # files the workers read
        self._held: Callable[[], bool] | None = None
        self._read_apart: set[int] = set()  # ... and have read
        self._started: float | None = None
        self._told = 0.0
        self._here = TimeLeft(clock)
        self._workers = TimeLeft(clock)

    # ---------------------------------------------------------------- the driver's side
    def plan(self, sizes: dict[int, int], subagents: Iterable[int] = ()) -> None:
        """The files to read (planned index -> size), and which of them are sub-agents'
        (not sessions of their own); again once more is known of them."""
        with self._lock:
            self._sizes = dict(sizes)
            self._subagents = {index for index in subagents if index in self._sizes}
            self._apart &= self._sizes.keys()
            if self._started is None:
                self._started = self.clock()
                self._here.note(0, sum(self._sizes.values()))
        self._tell(force=True)

    def apart(self, indexes: Iterable[int], held: Callable[[], bool] | None = None) -> None:
        """These files are read by worker processes (their lane of the time left); `held()`:
        whether they are waiting for this process now (their lane is not the slower one:
        this process's is, and their pace then is its)."""
        with self._lock:
            self._apart = {index for index in indexes if index in self._sizes}
            self._held = held
            done, total = self._lanes(0)[1]
            self._workers.note(done, total)

    def read_apart(self, indexes: Iterable[int]) -> None:
        """A worker has read these files (they are done once moved in: `file_done`)."""
        with self._lock:
            self._read_apart.update(index for index in indexes if index in self._apart)
        self._tell()

    def reading_apart(self, indexes: Iterable[int], done: int) -> None:
        """A worker has read `done` bytes of these files (in their order) so far: they
        count as read that far until it has read them all (a long session read by a worker
        kept the bytes still for as long as it took)."""
        with self._lock:
            for index in indexes:
                size = self._sizes.get(index)
                if size is None:
                    continue
                if index not in self._done and index not in self._read_apart:
                    self._partial[index] = max(self._partial.get(index, 0), min(done, size))
                done -= size
                if done <= 0:
                    break
        self._tell()

    def __call__(self, progress: Progress) -> None:
        """A file's progress (the driver's ProgressCallback)."""
        index = progress.file_index
        with self._lock:
            if index not in self._sizes or index in self._done:
                return
            # (never back: a file read in slices starts each slice's progress at 0)
            self._partial[index] = max(self._partial.get(index, 0),
                                       min(progress.done, self._sizes[index]))
        self._tell()

    def file_done(self, index: int) -> None:
        with self._lock:
            if index not in self._sizes or index in self._done:
                return
            self._done.add(index)
            self._partial.pop(index, None)
            self._bytes_done += self._sizes[index]
        self._tell(force=True)

    # ---------------------------------------------------------------- the reader's side
    @property
    def files_total(self) -> int:
        return len(self._sizes)

    def snapshot(self) -> tuple[int, int, int, int, float | None]:
        """(sessions done, sessions in all, bytes done, bytes in all, seconds left or None
        while it cannot be told yet)."""
        with self._lock:
            done = self._bytes_done + sum(self._partial.values())
            total = sum(self._sizes.values())
            files = len(self._done - self._subagents)
            count = len(self._sizes) - len(self._subagents)
            left = None
            if self._started is not None and total:
                lanes = []
                held = self._held is not None and self._held()
                for (lane_done, lane_total), lane in zip(self._lanes(done),
                                                         (self._here, self._workers)):
                    if lane_total and lane_done < lane_total:
                        lane.note(lane_done, lane_total)
                        if lane is self._here or not held:
                            lanes.append(lane.seconds(lane_done, lane_total))
                told = [seconds for seconds in lanes if seconds is not None]
                left = 0.0 if not lanes else max(told) if told else None
        return files, count, min(done, total), total, left

    def _lanes(self, done: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """(done, in all) of this process's lane, and of the workers' (under the lock).
        This process's is every byte: what it reads and what it moves in of what the
        workers read (all passes through it); theirs, the bytes they have read."""
        apart = self._apart
        apart_total = apart_done = 0
        for index in apart:
            apart_total += self._sizes[index]
            if index in self._read_apart or index in self._done:
                apart_done += self._sizes[index]
            else:
                apart_done += self._partial.get(index, 0)
        return (done, sum(self._sizes.values())), (apart_done, apart_total)

    def _tell(self, force: bool = False) -> None:
        if self.listener is None:
            return
        now = self.clock()
        if force or now - self._told >= self.interval:
            self._told = now
            self.listener(self)


class TimeLeft:
    """Seconds left of an import, from the bytes read a second over the last RATE_WINDOW
    seconds (`note` what is done as it moves); None until there is enough to go on."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._samples: list[tuple[float, int]] = []
        self._first: float | None = None

    def note(self, done: int, total: int) -> None:
        now = self.clock()
        if self._first is None:
            self._first = now
        samples = self._samples
        if samples and samples[-1][1] == done:
            return
        samples.append((now, done))
        while len(samples) > 2 and now - samples[1][0] >= RATE_WINDOW:
            samples.pop(0)

    def seconds(self, done: int, total: int) -> float | None:
        if total and done >= total:
            return 0.0
        if self._first is None or not total or len(self._samples) < 2:
            return None
        now = self.clock()
        if now - self._first < ESTIMATE_AFTER_SECONDS or done < total * ESTIMATE_AFTER_SHARE:
            return None
        since, then = self._samples[0]
        if done <= then or now <= since:
            return None
        return (total - done) / ((done - then) / (now - since))


def time_left_text(seconds: float | None) -> str:
    """`42 s left`, `3 min left`, `1 h 5 min left`; `estimating…` while it cannot be told."""
    if seconds is None:
        return "estimating…"
    return f"{_duration(seconds)} left"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def megabytes_text(done: int, total: int) -> str:
    """`84/1,024 MB` (`0.4/2.1 MB` below 10 MB in all)."""
    mb = 1 << 20
    if total < 10 * mb:
        return f"{done / mb:.1f}/{total / mb:.1f} MB"
    return f"{done // mb:,}/{total // mb:,} MB"
