"""Which backend a store name opens: a file path is SQLite, a `postgresql://` URL is
PostgreSQL (`core.store.location.store_location` tells them apart). The one place that chooses;
everything after it asks the backend object."""

from __future__ import annotations


from core.model.errors import StoreUnavailable
from .location import PostgresURL, store_location

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any


def backend_for(value: Any) -> Any:
    """The backend for a store name (None: `ARBOR_DB`, else the default file)."""
    location = store_location(value)
    if isinstance(location, PostgresURL):
        try:
            import psycopg  # noqa: F401 - only a PostgreSQL store needs it
            import psycopg_pool  # noqa: F401
        except ImportError:
            raise StoreUnavailable(
                f"{location.shown()} is a PostgreSQL store, and this arbor was installed"
                " without PostgreSQL support: pip install 'arbor[postgres]'") from None
        from core.store.postgres.backend import PostgresBackend

        return PostgresBackend(location)
    from core.store.sqlite.backend import SQLiteBackend

    return SQLiteBackend(location)
