"""LISTEN/NOTIFY: one connection per store and process that hears the store's commits, so
that a store can tell what other processes wrote (its data version)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from core.model.errors import StoreUnreachable
from . import reconnect as reconnecting
from .reconnect import CONNECT_TIMEOUT

LISTEN_RETRY_MAX = 5      # seconds between tries to listen again after the server went away
CHANNEL = "arbor_changes"  # NOTIFY channel; the payload is the store's schema


class Listener:
    """One connection per store and process that LISTENs for the store's commits and
    counts them per committing server process; a store asks how many came from others.
    When the server goes away (restarted, unreachable), it listens again once it is back."""

    def __init__(self, conninfo: str, schema: str):
        self.conninfo = conninfo
        self.schema = schema
        self.reach = reconnecting.reach_of(conninfo)
        self.total = 0
        self.by_pid: dict[int, int] = {}
        self.connected = False   # listening now (False while it listens again after a loss)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="arbor-listen", daemon=True)
        self._thread.start()
        self._ready.wait(CONNECT_TIMEOUT + 1)

    def count_from_others(self, own_pid: int) -> int:
        return self.total - self.by_pid.get(own_pid, 0)

    def _run(self) -> None:
        import psycopg

        try:
            conn = self._listen()
        except (psycopg.Error, StoreUnreachable) as error:
            self._error = error
            self._ready.set()
            return
        self.connected = True
        self._ready.set()
        while True:
            try:
                for note in conn.notifies():
                    if note.payload == self.schema:
                        self.by_pid[note.pid] = self.by_pid.get(note.pid, 0) + 1
                        self.total += 1
            except psycopg.Error as error:
                # the server went away (a restart, the network): listen again below
                self.connected = False
                self.reach.lost(reconnecting.reason(error))
            finally:
                conn.close()
            conn = self._listen_again()
            self.connected = True
            # commits while nobody listened went untold: count one change from elsewhere,
            # so that a store asking `data_version` reads again
            self.by_pid[-1] = self.by_pid.get(-1, 0) + 1
            self.total += 1

    def _listen(self) -> Any:
        conn = reconnecting.connect(self.conninfo, self.reach)
        try:
            conn.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _listen_again(self) -> Any:
        """A new listening connection once the server takes one: tried after half a
        second, then ever less often, up to every LISTEN_RETRY_MAX seconds."""
        import psycopg

        delay = 0.5
        while True:
            time.sleep(delay)
            try:
                return self._listen()
            except (psycopg.Error, StoreUnreachable):
                delay = min(delay * 2, LISTEN_RETRY_MAX)


_listeners: dict[tuple[str, str], Listener] = {}
_listeners_lock = threading.Lock()


def listener_of(conninfo: str, schema: str) -> Listener:
    """The process's listener of a store (made, and its first connection waited for, by a
    thread that may wait for the network)."""
    with _listeners_lock:
        found = _listeners.get((conninfo, schema))
        if found is None or found._error is not None:
            refusal = reconnecting.reach_of(conninfo).refusal()
            if refusal is not None:
                raise refusal
        if found is None or found._error is not None:
            found = _listeners[(conninfo, schema)] = Listener(conninfo, schema)
        return found



def _forget_in_child() -> None:
    # A forked child must not use its parent's listeners (their threads are not in the child).
    _listeners.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
