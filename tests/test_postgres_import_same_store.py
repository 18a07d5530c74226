"""On PostgreSQL, an import's fast path (the COPY writer thread, search words computed on a
spare connection and inserted apart, the index cleaned on a third) gives exactly the store
the plain path gives (every batch written inline, each search row's words made by the
server's one-row statement): every row of every table, seqs and ids included, the data's
text byte for byte, each entry's search words, and what searches find. Compared on the
generated tree plus the fixtures of every log format (test_import_same_store's home)."""

from __future__ import annotations

import pytest

from core import open_store
from core.importing import discover, import_paths
from core.store.postgres import backend as postgres_backend
from core.store.postgres import bulk as postgres_bulk

from test_import_same_store import WALL_CLOCK, home, unpaced  # noqa: F401 - fixtures

SEARCHES = ("the", "import", "error", "def", "café", "README", "test", "→", "x")


def dump(store) -> dict:
    """Every row of every table of the store's schema (search words as text), sorted, and
    the seqs each search finds."""
    conn = store.connection
    tables = [row[0] for row in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        " AND table_type = 'BASE TABLE' ORDER BY table_name")]
    out = {}
    for table in tables:
        columns = [row[0] for row in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema ="
            " current_schema() AND table_name = %s ORDER BY ordinal_position", (table,))]
        keep = [c for c in columns if c not in WALL_CLOCK.get(table, set())]
        shown = ", ".join(f"{c}::text" if (table, c) == ("entries_search", "words") else c
                          for c in keep)
        out[table] = sorted(conn.execute(f"SELECT {shown} FROM {table}").fetchall(), key=repr)
    out["search"] = {term: [hit.seq for hit in store.search.messages(term, limit=100_000)]
                     for term in SEARCHES}
    return out


def import_home(home, url: str) -> dict:
    with open_store(url) as store:
        report = import_paths(store, discover(home, env={}))
        assert report.files and all(f.status == "imported" for f in report.files), \
            [(f.path, f.status, f.error) for f in report.files if f.status != "imported"]
        return dump(store)


def test_the_copy_path_gives_the_plain_path_store_row_for_row(home, postgres_server, monkeypatch,
                                                              unpaced):  # noqa: F811
    with monkeypatch.context() as patch:
        # every batch's words apart, and the index cleaned apart from the first rows
        patch.setattr(postgres_bulk, "WORDS_APART_FROM", 1)
        patch.setattr(postgres_bulk, "CLEAN_FROM", 1)
        fast = import_home(home, postgres_server.new_store_url("fast"))
    with monkeypatch.context() as patch:
        patch.setattr(postgres_backend.PostgresBackend, "start_bulk",
                      lambda self, conn, explain: None)
        plain = import_home(home, postgres_server.new_store_url("plain"))
    assert fast.keys() == plain.keys()
    for table in fast:
        assert fast[table] == plain[table], table
    assert len(fast["entries"]) > 1500
    assert fast["usage"] and fast["entries_search"] and fast["search"]["the"]
