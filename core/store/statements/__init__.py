"""Every SQL statement of the store, one module per concern, SQLite's (`SQLite`) and
PostgreSQL's (`Postgres`) side by side under the same names, so the two can be read together
and a statement added to one is seen missing from the other (tests/test_postgres.py).

Each backend's `Statements` is composed of its classes here (`compose`).
"""

from __future__ import annotations

CONCERNS = ("common", "sessions", "branches", "entries", "paths", "annotations", "langgraph",
            "oplog", "imports", "search", "usage", "events")


def compose(backend: str) -> type:
    """One class holding every statement of `backend` ("SQLite" or "Postgres"), from each
    concern's module; a name given by two concerns is an error."""
    from importlib import import_module

    namespace: dict = {"__doc__": f"Every statement of the store API on {backend}, by name."}
    for concern in CONCERNS:
        part = getattr(import_module(f".{concern}", __name__), backend)
        for name, value in vars(part).items():
            if name.startswith("__"):
                continue
            if name in namespace:
                raise TypeError(f"the statement {name} is given twice ({concern})")
            namespace[name] = value
    return type("Statements", (), namespace)
