"""arbor's core: the session store and everything that is not drawing. Knows nothing of `tui`."""

from .entries import Entry
from .errors import (AmbiguousId, ArborError, NotFound, OutsideSessionDir, ReplayError,
                     StoreDamaged, StoreError, StoreNotFound, StoreTooNew, StoreUnavailable)
from .ids import generate_id
from .manager import CURRENT_VERSION, SessionManager, apply_migrations, open_root_db
from .memory_store import MemoryStore
from .models import Checkpoint, ExternalSession, InternalSession
from .paths import default_db_path
from .replay import ReplayState
from .repositories import CheckpointRepository, ExternalSessionRepository, InternalSessionRepository
from .session_types import (CompactionEntry, Header, SequencedMessage, SessionCapabilities,
                            SessionCapabilityEvent, SessionDetail, SessionInfo, SessionRunEvent)
from .store import SearchHit, SessionSummary, Store, open_store

__all__ = [
    "AmbiguousId", "ArborError", "Checkpoint", "CheckpointRepository", "CompactionEntry",
    "CURRENT_VERSION", "Entry", "ExternalSession", "ExternalSessionRepository", "Header",
    "InternalSession", "InternalSessionRepository", "MemoryStore", "NotFound", "OutsideSessionDir",
    "ReplayError", "ReplayState", "SearchHit", "SequencedMessage", "SessionCapabilities",
    "SessionCapabilityEvent", "SessionDetail", "SessionInfo", "SessionManager", "SessionRunEvent",
    "SessionSummary", "Store", "StoreDamaged", "StoreError", "StoreNotFound", "StoreTooNew",
    "StoreUnavailable", "apply_migrations", "default_db_path", "generate_id", "open_root_db",
    "open_store",
]
