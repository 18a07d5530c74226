"""Whether the store answers, as the app last found it, and what it does while it does not.

The screen's thread never waits for the network (`core.store.reach.forbid_waiting`): a
read it makes while the PostgreSQL server is gone fails at once with StoreUnreachable,
and one that would wait behind a background thread on the same connection fails after a
tenth of a second with StoreBusy. Either is handed here (`failed`): the status line says
"server unreachable, retrying" (or "store busy"), the sentence naming the server is said
once per outage, and a probe thread tries the store's connections again, after a second,
then less often, up to every PROBE_MOST seconds (each try bounded by the connect
timeout). When they answer, the app is told (`StoreAnswered`) and reloads what it shows,
keeping every cursor. Keys keep working meanwhile: moving through what is loaded, opening
dialogs; a write that cannot be made says so (see store_writes).
"""

from __future__ import annotations

import threading
import time

from textual.message import Message

from core.model.errors import StoreBusy, StoreUnreachable

PROBE_FIRST = 1.0   # seconds before the first try ...
PROBE_MOST = 5.0    # ... doubling up to this
BUSY_AGAIN = 0.3    # seconds before a read that found the store busy is tried again


class StoreAnswered(Message):
    """The probe reached every connection of the store: it answers again."""


class StoreSilent(Message):
    """The probe's try failed (the sentence of its error)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class StoreHealth:
    UNREACHABLE = "server unreachable, retrying"
    BUSY = "store busy, retrying"

    def __init__(self, app) -> None:
        self._app = app
        self.state = "ok"                 # "ok" | "unreachable" | "busy"
        self.sentence: str | None = None  # what the store said, naming the server
        self.since: float | None = None
        self.told = False                 # the sentence was said (once per outage)
        self._delay = PROBE_FIRST
        self._timer = None
        self._probing = False

    @staticmethod
    def transient(error: BaseException) -> bool:
        """Whether an error is the store not answering now (not a fault of what was asked)."""
        return isinstance(error, (StoreUnreachable, StoreBusy))

    @property
    def answering(self) -> bool:
        return self.state == "ok"

    def status(self) -> str:
        """The status line's alert ("" when the store answers)."""
        if self.state == "unreachable":
            return self.UNREACHABLE
        if self.state == "busy":
            return self.BUSY
        return ""

    def failed(self, error: BaseException) -> bool:
        """A read or write found the store not answering: take it from here (True), or
        leave an error of another kind to the caller (False)."""
        if not self.transient(error):
            return False
        unreachable = isinstance(error, StoreUnreachable)
        if self.state == "ok":
            self.since = time.monotonic()
            self._delay = PROBE_FIRST if unreachable else BUSY_AGAIN
            self.told = False
        if unreachable or self.state != "unreachable":
            self.state = "unreachable" if unreachable else "busy"
            self.sentence = str(error)
        self._schedule()
        return True

    def tell_once(self) -> str | None:
        """The sentence naming the server, the first time it is asked for in an outage."""
        if self.state != "unreachable" or self.told:
            return None
        self.told = True
        return self.sentence

    def _schedule(self) -> None:
        if self._timer is not None or self._probing:
            return
        self._timer = self._app.set_timer(self._delay, self._probe, name="store probe")

    def _probe(self) -> None:
        self._timer = None
        if self.state == "ok" or self._probing:
            return
        self._probing = True
        threading.Thread(target=self._try, name="arbor-probe", daemon=True).start()

    def _try(self) -> None:
        """(the probe's thread, which may wait) Every connection the app uses, pinged:
        one broken by the outage connects again here, not on the screen's thread."""
        store = self._app.store
        try:
            store.ping()
        except store.errors as error:
            self._app.post_message(StoreSilent(error))
            return
        except Exception as error:  # noqa: BLE001 - a probe never ends the app
            self._app.post_message(StoreSilent(error))
            return
        self._app.post_message(StoreAnswered())

    def silent(self, error: BaseException) -> None:
        """(the app's thread) The probe's try failed: try again, less often."""
        self._probing = False
        if self.transient(error):
            if isinstance(error, StoreUnreachable):
                self.state, self.sentence = "unreachable", str(error)
            self._delay = min(self._delay * 2, PROBE_MOST)
            self._schedule()
        else:
            self.answered()   # (it answered, with an error of another kind: not an outage)

    def stop(self) -> None:
        """The app ends: no more tries."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._probing = True   # (a try under way tells an app that has gone: harmless)

    def answered(self) -> float:
        """(the app's thread) The store answers again; how long it did not."""
        self._probing = False
        gone = time.monotonic() - self.since if self.since is not None else 0.0
        self.state, self.sentence, self.since, self.told = "ok", None, None, False
        self._delay = PROBE_FIRST
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        return gone
