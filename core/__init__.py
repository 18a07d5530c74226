"""arbor's core: the session store and everything that is not drawing. Knows nothing of `tui`.

Names are imported on first use (PEP 562), so `import core` costs almost nothing at start-up.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

_WHERE = {
    "Entry": "model.entries",
    "AmbiguousId": "model.errors", "ArborError": "model.errors", "NotFound": "model.errors",
    "OutsideSessionDir": "model.errors", "ReplayError": "model.errors", "StoreDamaged": "model.errors",
    "StoreError": "model.errors", "StoreNotFound": "model.errors", "StoreTooNew": "model.errors",
    "StoreBusy": "model.errors", "StoreUnavailable": "model.errors",
    "generate_id": "model.ids",
    "CURRENT_VERSION": "seed.manager", "SessionManager": "seed.manager", "apply_migrations": "seed.manager",
    "open_root_db": "seed.manager",
    "MemoryStore": "seed.memory_store",
    "Checkpoint": "seed.models", "ExternalSession": "seed.models", "InternalSession": "seed.models",
    "default_db_path": "store.location",
    "ReplayState": "history.replay",
    "CheckpointRepository": "seed.repositories", "ExternalSessionRepository": "seed.repositories",
    "InternalSessionRepository": "seed.repositories",
    "CompactionEntry": "seed.session_types", "Header": "seed.session_types",
    "SequencedMessage": "seed.session_types", "SessionCapabilities": "seed.session_types",
    "SessionCapabilityEvent": "seed.session_types", "SessionDetail": "seed.session_types",
    "SessionInfo": "seed.session_types", "SessionRunEvent": "seed.session_types",
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

