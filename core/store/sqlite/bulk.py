"""Entry batches written by a second thread, so SQLite's work overlaps an import's Python.

Python's sqlite3 holds the GIL while it binds each row of an `executemany`, so a thread
that inserts row by row waits for the GIL on every row and gains nothing. Here a batch is
one statement with two parameters: the short fields of every row as one JSON array, and
the long texts (entry data, search text) packed into one blob that the rows point into by
byte offset. SQLite runs the whole INSERT … SELECT with the GIL released, on the other core.

The thread shares the store's connection, and so its transaction. The store drains the
queue before anything else touches the connection (see `Store._conn`), and stops the
thread before the transaction commits or rolls back. SQLite only: PostgreSQL has COPY.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from typing import Callable, Sequence


def _columns(count: int) -> str:
    return ", ".join(f"json_extract(value, '$[{i}]')" for i in range(count))


def _text_at(first: int) -> str:
    return (f"CAST(substr(?2, json_extract(value, '$[{first}]'),"
            f" json_extract(value, '$[{first + 1}]')) AS TEXT)")


ENTRIES_SQL = (
    "INSERT INTO entries(seq, external_session_id, id, parent_seq, type, timestamp, depth,"
    f" chain, msg_index, role, data) SELECT {_columns(10)}, {_text_at(10)} FROM json_each(?1)")
FTS_SQL = (f"INSERT INTO entries_fts(rowid, text) SELECT {_columns(1)}, {_text_at(1)}"
           " FROM json_each(?1)")
USAGE_SQL = (
    "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
    f" output_tokens, total_tokens, duration_ms, timestamp) SELECT {_columns(9)}"
    " FROM json_each(?1)")


def as_text(rows: list[tuple]):
    """Rows whose last field is UTF-8 bytes (as the entry writer buffers them) with it as text."""
    for row in rows:
        yield (*row[:-1], row[-1].decode("utf-8"))


def pack(rows: Sequence[tuple], text_column: int | None) -> tuple | None:
    """The rows as the statement's parameters, (JSON of the short fields, blob of the
    texts), or (JSON,) when there is no text column; None if they cannot be.

    `text_column` is the index of the last field, a text (str, or bytes in UTF-8) that goes
    into the blob and is replaced by its 1-based byte offset and length; None: every field
    stays in the JSON. Rows with text that is not valid UTF-8 (lone surrogates) give None:
    the caller writes them the ordinary way, which reports them as it always has.
    """
    from core.util.fastjson import dumps   # (here: reading the store's SQL must not load orjson)

    try:
        blob = None
        if text_column is None:
            fields_json = dumps(list(rows))
        else:
            fields = []
            parts = []
            offset = 1
            for row in rows:
                data = row[text_column]
                if type(data) is str:
                    data = data.encode("utf-8")
                size = len(data)
                fields.append((*row[:text_column], offset, size))
                parts.append(data)
                offset += size
            fields_json = dumps(fields)
            blob = b"".join(parts)
        if not fields_json.isascii():
            fields_json.encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError):
        return None
    return (fields_json,) if blob is None else (fields_json, blob)


def supported(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has the JSON functions the batch statements use."""
    try:
        row = conn.execute(
            "SELECT json_extract(value, '$[1]') FROM json_each('[[1,2]]')").fetchone()
    except sqlite3.Error:
        return False
    return row == (2,)


class BulkWriter:
    """One thread running queued statements, in order, on the store's connection."""

    def __init__(self, conn: sqlite3.Connection, *, depth: int = 3,
                 explain: Callable[[BaseException], BaseException] = lambda error: error,
                 row_statements: tuple[str, str, str] = ("", "", "")):
        self._conn = conn
        self._explain = explain
        # the ordinary INSERTs of entries, search text and usage, for rows `pack` refuses
        self._row_statements = row_statements
        self._queue: queue.Queue = queue.Queue(maxsize=depth)  # bounds the memory in flight
        self._error: BaseException | None = None
        self._discard = False
        self._thread = threading.Thread(target=self._run, name="arbor-bulk-writer", daemon=True)
        self._thread.start()

    def write(self, entries: list[tuple], texts: list[tuple], usage: list[tuple]) -> None:
        """Queue an EntryWriter's buffered rows (entry rows and search texts end with UTF-8
        bytes) and empty the lists. Rows whose text SQLite cannot take are written here, in
        order, the ordinary way, which reports them as it always has."""
        statements = []
        for rows, text_column, bulk_sql, row_sql in (
                (entries, 10, ENTRIES_SQL, self._row_statements[0]),
                (texts, 1, FTS_SQL, self._row_statements[1]),
                (usage, None, USAGE_SQL, self._row_statements[2])):
            if not rows:
                continue
            packed = pack(rows, text_column)
            if packed is None:
                if statements:
                    self.submit(statements)
                    statements = []
                self.drain()
                try:
                    self._conn.executemany(row_sql, as_text(rows) if text_column else rows)
                except sqlite3.IntegrityError as error:
                    raise self._explain(error) from None
            else:
                statements.append((bulk_sql, packed))
            rows.clear()
        if statements:
            self.submit(statements)

    def submit(self, statements: list[tuple[str, tuple]]) -> None:
        """Queue statements (each one SQL and its parameters); waits while the queue is full."""
        self._raise()
        self._queue.put(statements)

    def idle(self) -> bool:
        """Whether everything queued is written (the thread waits for work)."""
        return not self._queue.unfinished_tasks

    def drain(self) -> None:
        """Wait until everything queued is written; raise the first error of the thread."""
        self._queue.join()
        self._raise()

    def stop(self, *, discard: bool = False) -> None:
        """End the thread. `discard`: skip what is still queued (the transaction is failing)."""
        if discard:
            self._discard = True
        self._queue.put(None)
        self._thread.join()
        if not discard:
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._explain(self._error)

    def _run(self) -> None:
        conn = self._conn
        while True:
            statements = self._queue.get()
            try:
                if statements is None:
                    return
                if self._error is None and not self._discard:
                    for sql, params in statements:
                        conn.execute(sql, params)
            except BaseException as error:  # noqa: BLE001 - handed to the main thread
                self._error = error
            finally:
                self._queue.task_done()
