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

import threading
import time

from ..errors import StoreUnreachable

UP = "up"
SUSPECT = "suspect"   # a connection broke; nobody has tried to connect since
DOWN = "down"         # the last attempt to connect failed

_here = threading.local()


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
        self._lock = threading.Lock()

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
