"""The arbor store: the API every caller uses (`api.Store`), the entry writer, and one
module per backend holding that backend's SQL under the same statement names (`sqlite.py`,
`postgres.py`; their migrations under `migrations/`, numbered alike). `backends.py` picks
the backend from the store's name: a file path or a postgresql:// URL.

Callers import from here (`from core.store import Store, open_store`) and never ask which
backend they have.
"""

from .api import (LangGraphCheckpoint, PathCounts, SearchHit, SessionSummary, SpawnedSession, Store, UnlinkedChild,
                  _loads, open_store, snippet)
from .writer import EntryWriter

__all__ = ["EntryWriter", "LangGraphCheckpoint", "PathCounts", "SearchHit", "SessionSummary", "SpawnedSession", "Store",
           "UnlinkedChild", "open_store", "snippet"]
