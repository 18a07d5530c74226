"""arbor's core: the session store and everything that is not drawing. Knows nothing of `tui`.

Names are imported on first use (PEP 562), so `import core` costs almost nothing at start-up.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

_WHERE = {
    "Entry": "entries",
    "AmbiguousId": "errors", "ArborError": "errors", "NotFound": "errors",
    "OutsideSessionDir": "errors", "ReplayError": "errors", "StoreDamaged": "errors",
    "StoreError": "errors", "StoreNotFound": "errors", "StoreTooNew": "errors",
    "StoreBusy": "errors", "StoreUnavailable": "errors",
    "generate_id": "ids",
    "CURRENT_VERSION": "manager", "SessionManager": "manager", "apply_migrations": "manager",
    "open_root_db": "manager",
    "MemoryStore": "memory_store",
    "Checkpoint": "models", "ExternalSession": "models", "InternalSession": "models",
    "default_db_path": "paths",
    "ReplayState": "replay",
    "CheckpointRepository": "repositories", "ExternalSessionRepository": "repositories",
    "InternalSessionRepository": "repositories",
    "CompactionEntry": "session_types", "Header": "session_types",
    "SequencedMessage": "session_types", "SessionCapabilities": "session_types",
    "SessionCapabilityEvent": "session_types", "SessionDetail": "session_types",
    "SessionInfo": "session_types", "SessionRunEvent": "session_types",
    "SearchHit": "store", "SessionSummary": "store", "Store": "store", "open_store": "store",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))

