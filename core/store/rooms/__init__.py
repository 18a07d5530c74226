"""The store's rooms: one object per concern (`store.sessions`, `store.branches`,
`store.entries`, ...), each in its own module with the calls of that concern.

A room holds its store and reaches the connection, transactions and the backend's
statements through it (`Room` binds the ones every room uses). The SQL of each concern is
in `core/store/statements/`, the two backends side by side.
"""

from __future__ import annotations


class Room:
    """One concern of a store. Made by the store on first use (`Store.sessions`, ...)."""

    def __init__(self, store) -> None:
        self._store = store
        self._sql = store._sql
        self._lock = store._lock
        self._backend = store._backend
        self._link = store._link
        self._segments_cache = store._segments_cache
        self._one = store._one
        self._all = store._all
        self.transaction = store.transaction
        self.reading = store.reading
