"""A store's first import: when it is to have one, and its record (core/store/first_import.py,
where `arbor` asks before its first frame without loading anything of the importers)."""

from core.store.first_import import (  # noqa: F401
    DEMO_MARK, DONE, FIRST_IMPORT, STARTED, begin, finish, pending)
