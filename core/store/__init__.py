"""The arbor store: the API every caller uses (`api.Store`), the entry writer, and one
module per backend holding that backend's SQL under the same statement names (`sqlite.py`,
`postgres.py`; their migrations under `migrations/`, numbered alike). `backends.py` picks
the backend from the store's name: a file path or a postgresql:// URL.

Callers import from here (`from core.store import Store, open_store`) and never ask which
backend they have. Names are imported on first use (PEP 562): a command that only reads
the backend's SQL (`sqlite.peek_import_stamps`) does not pay for the whole API.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "LangGraphCheckpoint": "api", "LoggedOperation": "api", "PathCounts": "api", "SearchHit": "api",
    "SessionSummary": "api", "SpawnedSession": "api", "Store": "api", "UnlinkedChild": "api",
    "_loads": "api", "open_store": "api", "snippet": "api", "EntryWriter": "writer",
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
