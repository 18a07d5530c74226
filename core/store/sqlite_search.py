"""The full-text index over entries (FTS5), kept without a copy of the text.

It is contentless (`content=''`), with no word positions (`detail=none`) and no column
sizes (`columnsize=0`): about a third of the size and the insert time of a plain FTS5
table. What it gives up are phrase queries and bm25 ranking, which arbor's search does not
use (it matches word prefixes, newest first). The index's text is `entries.search_text`
of each entry, a pure function of the stored row, so an entry is removed from the index
by giving that text again.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False   # (reading SQL must stay cheap: `arbor import` with nothing changed
if TYPE_CHECKING:       # loads this module, and neither typing nor json)
    from typing import Iterator

CREATE = ("CREATE VIRTUAL TABLE entries_fts USING fts5(text, content = '', detail = none,"
          " columnsize = 0, tokenize = 'unicode61 remove_diacritics 2')")

INSERT = "INSERT INTO entries_fts(rowid, text) VALUES (?, ?)"
_DELETE = "INSERT INTO entries_fts(entries_fts, rowid, text) VALUES ('delete', ?, ?)"
_BATCH = 5000


def _texts(conn: sqlite3.Connection, where: str, args: tuple) -> Iterator[list[tuple[int, str]]]:
    import json

    from ..entries import search_text   # (not at import: reading SQL must stay cheap)

    batch: list[tuple[int, str]] = []
    for seq, entry_type, data in conn.execute(
            f"SELECT seq, type, data FROM entries {where} ORDER BY seq", args):
        try:
            value = json.loads(data)
        except ValueError:
            continue
        text = search_text(entry_type, value) if isinstance(value, dict) else ""
        if text:
            batch.append((seq, text))
            if len(batch) >= _BATCH:
                yield batch
                batch = []
    if batch:
        yield batch


def index_entries(conn: sqlite3.Connection, where: str = "", args: tuple = ()) -> None:
    """Add these entries' text to the index (entries not in it yet)."""
    for batch in _texts(conn, where, args):
        conn.executemany(INSERT, batch)


def unindex_entries(conn: sqlite3.Connection, where: str, args: tuple) -> None:
    """Remove these entries from the index (call before deleting them)."""
    for batch in _texts(conn, where, args):
        conn.executemany(_DELETE, batch)


def rebuild(conn: sqlite3.Connection) -> None:
    """Replace the index with a contentless one over every entry (migration 2)."""
    conn.execute("DROP TABLE IF EXISTS entries_fts")
    conn.execute(CREATE)
    index_entries(conn)
