"""Following running agents while the app is open: a core.follow.Follower in a thread.

A plain thread, not a Textual worker: it runs for the app's whole life, and workers are
what tests and benchmarks wait for. It imports through the app's own store (one store per
file per process) in short transactions, then posts the app a `StoreGrew` so that it looks at
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
        from core.follow import Follower

        self.stop_event = threading.Event()
        self.follower = Follower(store, on_import=lambda _report: on_import(), **options)
        self.thread = threading.Thread(target=self._run, name="arbor-follow", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        try:
            self.follower.run(self.stop_event)
        except Exception as error:  # noqa: BLE001 - never take the app down with it
            self.follower.stats.last_error = f"{type(error).__name__}: {error}"
            self.follower.stats.mode = "stopped"

    def poke(self) -> None:
        """Look for changes now (after `o` ran an agent in the foreground)."""
        self.follower.request_catch_up()

    def stop(self, timeout: float = 3.0) -> None:
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    @property
    def mode(self) -> str:
        return self.follower.stats.mode
