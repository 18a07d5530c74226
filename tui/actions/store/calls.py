"""The app's side of a store that may not answer: its writes handed to a queue (see
store_writes), the store's health told on the status line and reloaded from when it
answers again (see store_health), and what the user typed kept when a write could not be
made. A mixin of ArborApp, like history_actions."""

from __future__ import annotations

from typing import Any, Callable

from core.model.errors import StoreBusy
from core.store import reach

from .health import StoreAnswered, StoreHealth, StoreSilent
from .writes import WriteDone, WriteQueue

STATUS_EVERY = 0.25   # seconds between status line updates while a write is under way


class StoreCalls:
    """Mixed into ArborApp (uses its store, say/_error/_update_status, load_sessions)."""

    health: StoreHealth
    writes: WriteQueue

    def _start_store_calls(self) -> None:
        """(__init__) The write queue, the health, and what was typed for writes that failed."""
        self.health = StoreHealth(self)
        self.writes = WriteQueue(self, self.store)
        self._unsaved: dict[tuple, str] = {}
        self._status_ticker = None

    def _store_calls_mounted(self) -> None:
        # the screen's thread never connects to a server, nor waits long for a store's
        # lock: what would is said on the status line and tried again in the background
        reach.forbid_waiting()

    def _store_calls_unmounted(self) -> None:
        self._stop_ticking()
        self.health.stop()
        self.writes.close()
        reach.forbid_waiting(False)

    # ------------------------------------------------------------------ writes
    def _write(self, what: str, work: Callable[[Any], Any], *,
               done: Callable[[Any], None] | None = None,
               keep: tuple[tuple, str] | None = None) -> None:
        """Run `work(store)` in the writing thread, after the writes before it; then
        `done(result)` here. `what` says what it was if it fails ("label entry 1a2b");
        `keep`: (key, text) the user typed, offered again (`typed`) if it fails."""
        self.writes.submit(what, work, done=done, keep=keep)
        if self._status_ticker is None:
            self._status_ticker = self.set_interval(STATUS_EVERY, self._tick_status,
                                                    name="write status")

    def _tick_status(self) -> None:
        self._status_now()

    def _status_now(self) -> None:
        """The status line updated, unless the app is ending (its screen gone already: a
        write or a probe may end while it does)."""
        from textual.css.query import NoMatches

        try:
            self._update_status()
        except NoMatches:
            self._stop_ticking()

    def _stop_ticking(self) -> None:
        """No write under way: the status line needs no more ticks (none may come while
        the app ends: its status line is gone by then)."""
        if self._status_ticker is not None:
            self._status_ticker.stop()
            self._status_ticker = None

    def typed(self, key: tuple, default: str) -> str:
        """What the user typed for a write of `key` that could not be made, else `default`."""
        return self._unsaved.pop(key, default)

    def on_write_done(self, message: WriteDone) -> None:
        job = message.job
        self.writes.handed_back(job)
        if not self.writes.pending:
            self._stop_ticking()
        try:
            if job.error is None:
                if job.keep is not None:
                    self._unsaved.pop(job.keep[0], None)
                if job.done is not None:
                    job.done(job.result)
            else:
                self._write_failed(job)
        finally:
            self._status_now()

    def _write_failed(self, job) -> None:
        error = job.error
        if job.keep is not None:
            key, text = job.keep
            self._unsaved[key] = text
        if isinstance(error, StoreBusy):   # (another program's write lock: reads go on)
            again = "; what you typed is kept: the same key offers it again" if job.keep else ""
            self.say(f"Not saved: {job.what}: {error}{again}.", title="arbor",
                     severity="error", timeout=12)
            return
        if self.health.transient(error):
            self.health.failed(error)
            if getattr(error, "saved_unknown", False):
                self.say(f"Perhaps not saved: {job.what}. {error}: the connection was cut while "
                         "it was being saved; look whether it is there once the store answers.",
                         title="arbor", severity="error", timeout=12)
                return
            # (the sentence naming the server, once per outage: after that, the status line)
            why = self.health.tell_once() or self.health.status() or str(error)
            again = "; what you typed is kept: the same key offers it again" if job.keep else ""
            self.say(f"Not saved: {job.what} ({why}). Nothing was changed: press the key again "
                     f"once the store answers{again}.", title="arbor", severity="error",
                     timeout=12)
            return
        self._error(error)

    # ------------------------------------------------------------------ health
    def _store_trouble(self, error: BaseException, *, quiet: bool = False) -> bool:
        """A store that does not answer (True: taken care of): the status line says so,
        the sentence naming the server once per outage; `quiet`: nothing more (a read for
        the cursor, whose pane says it), else a short note that the key did nothing."""
        if not self.health.failed(error):
            return False
        self._status_now()
        sentence = self.health.tell_once()
        if sentence is not None:
            self.say(f"The store does not answer: {sentence}. What is loaded stays browsable; "
                     "the status line says when it answers again.", title="arbor",
                     severity="warning", timeout=10)
        elif not quiet:
            self.say(f"Not done: {self.health.status() or 'the store does not answer'}.",
                     severity="warning", timeout=4)
        return True

    def on_store_silent(self, message: StoreSilent) -> None:
        self.health.silent(message.error)
        self._status_now()

    def on_store_answered(self, _message: StoreAnswered) -> None:
        """Every connection answers again: what is shown is read again, cursors kept."""
        gone = self.health.answered()
        self._status_now()
        if gone >= 2:
            self.say(f"The store answers again (after {gone:.0f} s).", markup=False, timeout=4)
        self.load_sessions(live=True)
        if self.live_follow is not None:
            self.live_follow.poke()

    def store_alert(self) -> str:
        """The status line's alert: the store not answering, or a write under way."""
        alert = self.health.status()
        if not alert:
            alert = self.writes.slow
        return alert
