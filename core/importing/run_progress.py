"""How far a whole import is: files done of all it is to read, bytes done of all, and the
time left, estimated from the bytes read a second so far. `import_paths(run=...)` keeps it
up to date (the files it is to read once planned, each file's progress, each file done);
the app's status line and `arbor import`'s progress line read it."""

from __future__ import annotations

import _thread   # (not threading: an import of a few lines does not load it)
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable

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
        self._done: set[int] = set()
        self._partial: dict[int, int] = {}
        self._bytes_done = 0
        self._started: float | None = None
        self._told = 0.0
        self._left = TimeLeft(clock)

    # ---------------------------------------------------------------- the driver's side
    def plan(self, sizes: dict[int, int]) -> None:
        """The files to read (planned index -> size); again once more is known of them."""
        with self._lock:
            self._sizes = dict(sizes)
            if self._started is None:
                self._started = self.clock()
                self._left.note(0, sum(self._sizes.values()))
        self._tell(force=True)

    def __call__(self, progress: Progress) -> None:
        """A file's progress (the driver's ProgressCallback)."""
        index = progress.file_index
        with self._lock:
            if index not in self._sizes or index in self._done:
                return
            self._partial[index] = min(progress.done, self._sizes[index])
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
        """(files done, files in all, bytes done, bytes in all, seconds left or None while
        it cannot be told yet)."""
        with self._lock:
            done = self._bytes_done + sum(self._partial.values())
            total = sum(self._sizes.values())
            files = len(self._done)
            count = len(self._sizes)
            left = None
            if self._started is not None:
                self._left.note(done, total)
                left = self._left.seconds(done, total)
        return files, count, min(done, total), total, left

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
