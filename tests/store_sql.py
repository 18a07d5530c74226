"""Raw SQL in tests that look inside a store, on either backend: written with SQLite's `?`
placeholders, run with PostgreSQL's `%s` where the store is on a server."""

from __future__ import annotations

from typing import Any


def is_postgres(store) -> bool:
    return store._backend.name == "postgresql"


def query(store, sql: str, args: Any = ()) -> Any:
    """The cursor of `sql` run on the store's connection."""
    if is_postgres(store):
        sql = sql.replace("?", "%s")
    return store.connection.execute(sql, tuple(args))
