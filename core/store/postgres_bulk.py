"""Entry batches of an import written to PostgreSQL by a second thread, so the server's
work (the rows, their indexes and foreign keys, the search vectors) overlaps the import's
Python on the other core, as SQLite's bulk writer does (`sqlite_bulk`).

Entries go in with COPY, search texts in one INSERT … SELECT over two arrays sent in
binary, usage rows in one pipelined `executemany`. The thread shares the store's
connection, and so its transaction: the store drains the queue before anything else
touches the connection (`Store._conn`) and stops the thread before the transaction
commits or rolls back; psycopg's connection lock makes each use whole.
"""

from __future__ import annotations

from typing import Any, Callable

from .sqlite_bulk import BulkWriter

COPY_ENTRIES = ("COPY entries (seq, external_session_id, id, parent_seq, type, timestamp, depth,"
                " chain, msg_index, role, data) FROM STDIN")
# the search row of every text of a batch (the words as `Statements.SEARCH_INSERT` makes them)
SEARCH_INSERT_MANY = (
    "INSERT INTO entries_search(seq, words) SELECT r.seq, strip(to_tsvector('simple',"
    " regexp_replace(left(r.text, 250000), '[[:punct:]]+', ' ', 'g')))"
    " FROM unnest(%b::bigint[], %b::text[]) AS r(seq, text)")


def search_text(text: bytes | str) -> str:
    """Search text as PostgreSQL takes it: text cannot hold NUL."""
    if type(text) is bytes:
        text = text.decode("utf-8")
    return text.replace("\x00", " ") if "\x00" in text else text


class _Sender:
    """What the writer thread runs a queued statement on: COPY for the entry rows, an
    ordinary statement (or `executemany`, for a list of rows) for the rest."""

    def __init__(self, conn: Any):
        self._conn = conn   # postgres.Connection

    def execute(self, sql: str, params: Any) -> None:
        conn = self._conn._live()
        if sql is COPY_ENTRIES:
            with conn.cursor() as cursor, cursor.copy(COPY_ENTRIES) as copy:
                for row in params:
                    copy.write_row((*row[:-1], row[-1].decode("utf-8")))
        elif sql is SEARCH_INSERT_MANY:
            conn.execute(sql, ([row[0] for row in params], [search_text(row[1]) for row in params]))
        else:
            with conn.cursor() as cursor:
                cursor.executemany(sql, params)


class CopyWriter(BulkWriter):
    """The queue and thread of `sqlite_bulk.BulkWriter` (order kept, first error raised by
    `drain`/`stop`, what follows it skipped), with PostgreSQL's statements."""

    # rows an EntryWriter buffers before handing them over: small, so that the server
    # works on one batch while the next is read (a file's last batch is waited for)
    batch_rows = 250

    def __init__(self, conn: Any, explain: Callable[[BaseException], BaseException],
                 usage_insert: str):
        super().__init__(_Sender(conn), depth=4, explain=explain)
        self._usage_insert = usage_insert

    def write(self, entries: list[tuple], texts: list[tuple], usage: list[tuple]) -> None:
        """Queue an EntryWriter's buffered rows (entry rows and search texts end with UTF-8
        bytes) and empty the lists."""
        statements = []
        for rows, sql in ((entries, COPY_ENTRIES), (texts, SEARCH_INSERT_MANY),
                          (usage, self._usage_insert)):
            if rows:
                statements.append((sql, list(rows)))
                rows.clear()
        if statements:
            self.submit(statements)
