"""A store seen through a `Redactor`: every entry read from it comes with its secrets masked.

An export and a push read a session through `store.entries` and `store.paths`; handed this
view instead, they write what they always write, masked, without a line of their own
changing. Reading only: the real store is never written through it, so it never changes.
"""

from __future__ import annotations

import copy
from typing import Any

from core.model.entries import Entry
from .redact import Redactor


def _masked(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, Entry):
        return Entry(value.seq, value.id, value.external_session_id, value.parent_seq, value.type,
                     value.timestamp, value.depth, value.chain, value.msg_index, value.role,
                     redactor.value(value.data), value.parent_id)
    if isinstance(value, list) and value and isinstance(value[0], Entry):
        return [_masked(item, redactor) for item in value]
    if hasattr(value, "session_name") and hasattr(value, "metadata"):
        # a session: its name is often its first prompt, and its metadata holds titles
        value = copy.copy(value)
        value.session_name = redactor.text(value.session_name or "")
        value.metadata = redactor.value(value.metadata or {})
    return value


class _Room:
    def __init__(self, room: Any, redactor: Redactor):
        self._room = room
        self._redactor = redactor

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._room, name)
        if not callable(found):
            return found

        def call(*args: Any, **kwargs: Any) -> Any:
            return _masked(found(*args, **kwargs), self._redactor)

        return call


class RedactedStore:
    """`store` with its entries masked by `redactor` (see the module doc)."""

    def __init__(self, store: Any, redactor: Redactor):
        self._store = store
        self.redactor = redactor
        self.entries = _Room(store.entries, redactor)
        self.paths = _Room(store.paths, redactor)
        self.sessions = _Room(store.sessions, redactor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
