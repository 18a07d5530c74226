"""Following running agents while the app is open: a core.importing.follow.Follower in a thread.

A plain thread, not a Textual worker: it runs for the app's whole life, and workers are
what tests and benchmarks wait for. It imports through the process's background-writing
connection to the app's store (`Store.write_handle()`, opened in the thread: the screen's
thread never connects), in short transactions, so that an import waiting for the store's
write lock or for a server that went away never holds the connection the screen reads
through; then it posts the app a `StoreGrew` so that it looks at
the store at once instead of at its next poll: an agent's new line shows within a fraction
of a second. Posting never waits for the app (while `o` runs an agent in the terminal the
app is suspended, and the follower goes on importing what that agent writes).
"""

from __future__ import annotations

import threading
from typing import Callable

from textual.message import Message


class StoreGrew(Message):
    """Posted (thread-safe, without waiting) after the follower imported something."""


class LiveFollow:
    def __init__(self, store, on_import: Callable[[], None], **options) -> None:
        from core.importing.follow import FollowStats

        self.store = store
        self.on_import = on_import
        self.options = options
        self.stop_event = threading.Event()
        self.follower = None
        self.stats = FollowStats()   # (the follower's, once it is made)
        self.thread = threading.Thread(target=self._run, name="arbor-follow", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        from core.importing.follow import RETRY_MOST_UNREACHABLE, Follower

        try:
            while self.follower is None:
                try:
                    writing = self.store.write_handle()
                except self.store.errors as error:   # (the server is gone: try again)
                    self.stats.last_error = str(error)
                    if self.stop_event.wait(RETRY_MOST_UNREACHABLE):
                        return
                    continue
                self.follower = Follower(writing, on_import=lambda _report: self.on_import(),
                                         **self.options)
                self.stats = self.follower.stats
            self.follower.run(self.stop_event)
        except Exception as error:  # noqa: BLE001 - never take the app down with it
            self.stats.last_error = f"{type(error).__name__}: {error}"
            self.stats.mode = "stopped"

    def poke(self) -> None:
        """Look for changes now (after `o` ran an agent in the foreground, or once the
        store answers again)."""
        if self.follower is not None:
            self.follower.request_catch_up()

    def stop(self, timeout: float = 3.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    @property
    def mode(self) -> str:
        return self.stats.mode
