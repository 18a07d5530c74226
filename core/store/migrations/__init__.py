"""Numbered schema migrations, one module per backend, recorded in `schema_migrations`.

Each backend's migrations are numbered and applied the same way: pending ones in order,
in one transaction, on every open; a store whose highest recorded migration is above the
backend's `CURRENT_VERSION` was written by a newer arbor and is refused, unchanged.
"""
