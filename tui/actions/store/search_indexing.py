"""The search index's backlog after an upgrade (core/store/search.py), indexed while the app
runs: a short write transaction at a time on the reader's connection, with a pause between
them so that agents, imports and the app's own writes go first. Stopped with the app; the
next start goes on where it stopped."""

from __future__ import annotations

import time

from textual.worker import get_current_worker

PAUSE = 0.05   # seconds between two steps: the store is free for others


def catch_up(store) -> bool:
    """(a thread worker) Step through the backlog until it is done or the worker is
    cancelled; returns whether it is done. A fault stops it quietly: search says how much
    it covers, and the next start tries again."""
    worker = get_current_worker()
    try:
        if not store.search.coverage().pending:
            return True
    except store.errors:
        return False
    while not worker.is_cancelled:
        try:
            if store.search.index_backlog().done:
                return True
        except store.errors:
            return False
        time.sleep(PAUSE)
    return False


def start(app) -> None:
    """Index the backlog of `app.store`, if its index has one, in a thread."""
    app.run_worker(lambda: catch_up(app.store.reader()), thread=True, exclusive=True, group="search-index",
                   name="search index backlog")
