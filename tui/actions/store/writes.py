"""The app's writes, one after another in a thread of their own, never on the screen's.

A key that changes the store (b, r, l, c, enter, a, R, u, …) hands its operation to the
`WriteQueue`: the operation runs on the process's background-writing connection
(`Store.write_handle()`), so a write waiting for the store's write lock (another program
importing into the same SQLite file, 10 s at most) or for a PostgreSQL server that went
away holds that connection, never the one the screen reads through. Operations run in
the order their keys were pressed (a `u` right after a `b` undoes that branch); when one
is done, the app is told with a `WriteDone` message and carries on from there (says what
happened, reloads what is shown). One that could not be written says so and changes
nothing: its transaction was rolled back whole.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

from textual.message import Message

SLOW = 0.4      # seconds after which the status line says a write is under way ...
WAITING = 2.0   # ... and that it waits for the store (another program's lock, a server)


class Job:
    """One operation: `work(store)` runs in the writing thread; `done(result)` then runs
    on the app's (a failure is said there: store_calls)."""

    __slots__ = ("what", "work", "done", "keep", "result", "error", "started")

    def __init__(self, what: str, work: Callable[[Any], Any],
                 done: Callable[[Any], None] | None, keep: tuple[tuple, str] | None):
        self.what = what          # said if it fails: "label entry 1a2b3c4d"
        self.work = work
        self.done = done
        self.keep = keep          # (key, text) the user typed: offered again if it fails
        self.result: Any = None
        self.error: BaseException | None = None
        self.started: float | None = None


class WriteDone(Message):
    """Posted (from the writing thread, without waiting) when a job has run."""

    def __init__(self, job: Job) -> None:
        super().__init__()
        self.job = job


class WriteQueue:
    def __init__(self, app, store) -> None:
        self._app = app
        self._store = store
        self._jobs: queue.Queue[Job | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.pending = 0              # submitted and not yet handed back (the app's thread)
        self.running: Job | None = None

    def submit(self, what: str, work: Callable[[Any], Any], *,
               done: Callable[[Any], None] | None = None,
               keep: tuple[tuple, str] | None = None) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="arbor-writes", daemon=True)
            self._thread.start()
        self.pending += 1
        self._jobs.put(Job(what, work, done, keep))

    def handed_back(self, job: Job) -> None:
        """The app has taken `job` back (its WriteDone was handled)."""
        self.pending -= 1

    @property
    def slow(self) -> str:
        """What the status line says of a write that has been running for a while ("":
        none has)."""
        job = self.running
        if job is None or job.started is None:
            return ""
        took = time.monotonic() - job.started
        if took >= WAITING:
            return "saving… (waiting for the store)"
        return "saving…" if took >= SLOW else ""

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            job.started = time.monotonic()
            self.running = job
            try:
                job.result = job.work(self._store.write_handle())
            except Exception as error:  # noqa: BLE001 - handed to the app, said there
                job.error = error
            finally:
                self.running = None
            self._app.post_message(WriteDone(job))

    def close(self, timeout: float = 2.0) -> None:
        """No more jobs; wait `timeout` seconds at most for those queued (one waiting for a
        server that does not answer is left: it rolls back as the process ends)."""
        if self._thread is None:
            return
        self._jobs.put(None)
        self._thread.join(timeout)
