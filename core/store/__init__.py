"""The arbor store. `Store` (store.py) holds the connection, its transactions and the
backend, and hands out one room per concern (`store.sessions`, `store.branches`,
`store.entries`, `store.paths`, `store.annotations`, `store.search`, `store.usage`,
`store.imports`, `store.oplog`, `store.langgraph`, `store.events`: core/store/rooms). The
SQL of each concern is in core/store/statements, SQLite's and PostgreSQL's side by side;
each backend (sqlite/, postgres/) opens its store, runs transactions and keeps its schema
and numbered migrations (applied in order on every open; a store written by a newer arbor
is refused, unchanged). `backends.py` picks the backend from the store's name: a file path
or a postgresql:// URL.

Callers import from here (`from core.store import Store, open_store`) and never ask which
backend they have. Names are imported on first use (PEP 562): a command that only reads
the backend's SQL (`sqlite.backend.peek_import_stamps`) does not pay for the whole API.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "LangGraphCheckpoint": "records", "LoggedOperation": "records", "PathCounts": "records", "SearchHit": "records",
    "SessionSummary": "records", "SpawnedSession": "records", "Store": "store", "UnlinkedChild": "records",
    "_loads": "records", "open_store": "store", "snippet": "rooms.search", "EntryWriter": "writer",
    "SearchCoverage": "search", "SearchResults": "search", "BacklogStep": "search",
}

__all__ = ["BacklogStep", "EntryWriter", "LangGraphCheckpoint", "LoggedOperation", "PathCounts", "SearchCoverage",
           "SearchHit", "SearchResults", "SessionSummary", "SpawnedSession", "Store",
           "UnlinkedChild", "open_store", "snippet"]


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'core.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
