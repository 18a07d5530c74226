"""Whether a store's server answers, as this process last found it, and which threads may
wait for it.

A PostgreSQL store lives on a server that can go away (a crash, a restart, the network
cut) and come back. Every connection of the process to one server shares one `Reach`:

- a connection that broke makes the server *suspect*; a connection attempt that failed
  makes it *down*, with the sentence that says so (where, and what libpq said); a
  connection that succeeds makes it *up* again;
- a thread that must never wait for the network (the app's screen calls
  `forbid_waiting()`) never connects: where a connection is missing or broken, a store
  call there fails at once with StoreUnreachable, and a thread that may wait (a worker, a
  probe) connects again and finds out when the server is back;
- any other thread connects when it needs to, each attempt bounded by the connect timeout.

SQLite stores have no server: nothing here applies to them.
"""

from __future__ import annotations

import time
from _thread import _local, allocate_lock

from core.model.errors import StoreBusy, StoreUnreachable

UP = "up"
SUSPECT = "suspect"   # a connection broke; nobody has tried to connect since
DOWN = "down"         # the last attempt to connect failed

# (`_thread`, not `threading`: the registry takes its locks from here, and an import of a
# few appended lines starts no thread)
_here = _local()
LOCK_WAIT = 0.1     # seconds a thread that may not wait waits for a store's lock ...
LOCK_AGAIN = 1.0    # ... and not at all for this long after it waited in vain


def forbid_waiting(forbidden: bool = True) -> None:
    """From now on, store calls made by this thread never connect to a server (they fail
    at once with StoreUnreachable where a connection is missing or broken); `False` lifts
    it. For the thread that draws the screen."""
    _here.forbidden = forbidden


def waiting_allowed() -> bool:
    return not getattr(_here, "forbidden", False)


class Reach:
    """What this process knows of one server (see the module doc)."""

    def __init__(self, where: str):
        self.where = where          # "host:port, database name", never a password
        self.state = UP
        self.sentence: str | None = None
        self.since: float | None = None   # when it stopped answering (time.monotonic)
        self.failures = 0                 # connection attempts that failed in a row
        self._lock = allocate_lock()

    def lost(self, reason: str) -> StoreUnreachable:
        """A connection broke: the server ended it or stopped answering."""
        with self._lock:
            if self.state == UP:
                self.state, self.since = SUSPECT, time.monotonic()
                self.sentence = f"lost the connection to PostgreSQL at {self.where}: {reason}"
            return StoreUnreachable(self.sentence)

    def failed(self, reason: str) -> StoreUnreachable:
        """An attempt to connect failed (refused, timed out, the server starting up)."""
        with self._lock:
            if self.state == UP:
                self.since = time.monotonic()
            self.state = DOWN
            self.failures += 1
            self.sentence = f"cannot connect to PostgreSQL at {self.where}: {reason}"
            return StoreUnreachable(self.sentence)

    def answered(self) -> None:
        with self._lock:
            self.state, self.sentence, self.since, self.failures = UP, None, None, 0

    def refusal(self) -> StoreUnreachable | None:
        """For a thread that may not wait: the error it gets instead of a connection
        attempt (None: this thread may connect)."""
        if waiting_allowed():
            return None
        with self._lock:
            sentence = self.sentence or (f"not connected to PostgreSQL at {self.where}"
                                         " (connecting again in the background)")
        return StoreUnreachable(sentence)


class StoreLock:
    """The lock of a store's connection (an RLock): a thread that may wait takes it as an
    RLock does; one that may not (see `forbid_waiting`) waits LOCK_WAIT seconds at most,
    and for LOCK_AGAIN seconds after such a wait in vain not at all, then raises
    StoreBusy: the screen never waits behind a background thread's long statement or
    connection attempt on the same connection."""

    __slots__ = ("_lock", "_missed")

    def __init__(self):
        from _thread import RLock

        self._lock = RLock()
        self._missed = 0.0   # when a thread that may not wait last failed to get it

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> "StoreLock":
        lock = self._lock
        if lock.acquire(False):
            return self
        if waiting_allowed():
            lock.acquire()
            return self
        if time.monotonic() - self._missed < LOCK_AGAIN or not lock.acquire(True, LOCK_WAIT):
            self._missed = time.monotonic()
            raise StoreBusy("the store is busy with a background task (reading or writing); "
                            "this is tried again in a moment")
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()
