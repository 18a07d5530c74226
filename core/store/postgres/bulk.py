"""Entry batches of an import written to PostgreSQL by a second thread, so the server's
work (the rows, their indexes and foreign keys, the search vectors) overlaps the import's
Python on the other core, as SQLite's bulk writer does (`sqlite_bulk`).

Entries go in with COPY, usage rows with one pipelined `executemany`. A search row's words
(`to_tsvector` of its text, the larger part of the server's work) are computed by a second
server process on a spare connection of the pool while the first writes the batch's
entries, then inserted by the first as `tsvector` text: the same function in the same
database, so the same words. For a small batch, or without a spare connection, the first
computes them itself. A third connection keeps the search index's pending list short
meanwhile (`_Cleaner`). Small imports take neither spare connection.

The thread shares the store's connection, and so its transaction: the store drains the
queue before anything else touches the connection (`Store._conn`) and stops the thread
before the transaction commits or rolls back; psycopg's connection lock makes each use whole.

The search rows whose words come from the spare connection are inserted by the words'
thread itself, on the store's connection, once their entries are copied: the store's
reads do not wait for them (they never read the search rows an import is writing), so the
end of a file (its branches, usage, import record) runs on while the last words are
computed. The connection waits for them before a commit, and before any statement that
reads search rows or deletes (`Connection.execute`, `_waits_for_search`). Words travel as
binary `tsvector`s (no text to print and parse again).
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from .reconnect import broke
from .search_index import CONFIG, LEXEMES
from core.store.sqlite.bulk import BulkWriter

COPY_ENTRIES = ("COPY entries (seq, external_session_id, id, parent_seq, type, timestamp, depth,"
                " chain, msg_index, role, data) FROM STDIN (FORMAT BINARY)")
# (binary: the server reads each field as it is, without parsing digits or unescaping text)
_ENTRY_TYPES = ("int8", "int8", "text", "int8", "text", "text", "int8", "int8", "int8", "text",
                "text")
# A search text's words as `Statements.SEARCH_INSERT` makes them, for many texts at once.
_WORDS = LEXEMES.format(text="r.text")
# the same of texts whose punctuation is blank already (`_Punctuation`), read in binary
WORDS_OF_BLANKED = (f"SELECT to_tsvector('{CONFIG}', left(r.text, 250000))"
                    " FROM unnest(%b::text[]) WITH ORDINALITY AS r(text, i) ORDER BY i")
PUNCTUATION_OF = "SELECT c FROM unnest(%b::text[]) AS c WHERE c ~ '[[:punct:]]'"
SEARCH_INSERT_WORDS = ("INSERT INTO entries_search(seq, words)"
                       " SELECT r.seq, r.words FROM unnest(%b::bigint[], %b::tsvector[]) AS r(seq, words)")
SEARCH_INSERT_MANY = (f"INSERT INTO entries_search(seq, words) SELECT r.seq, {_WORDS}"
                      " FROM unnest(%b::bigint[], %b::text[]) AS r(seq, text)")
CLEAN_PENDING = "SELECT gin_clean_pending_list('idx_entries_search'::regclass)"
SPARE_WAIT = 0.5   # seconds to wait for a spare connection of the pool
WORDS_APART_FROM = 32   # texts in a batch from which their words are computed apart
CLEAN_FROM = 1000       # search rows an import writes before the index is cleaned apart, and between cleanings


def search_text(text: bytes | str) -> str:
    """Search text as PostgreSQL takes it: text cannot hold NUL."""
    if type(text) is bytes:
        text = text.decode("utf-8")
    return text.replace("\x00", " ") if "\x00" in text else text


class Lexemes(bytes):
    """A `tsvector` in PostgreSQL's binary form, as the server sent it (`postgres.adapt`
    sends it back as a `tsvector`)."""

    __slots__ = ()


_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


class _Punctuation:
    """Blanks what the server's `[[:punct:]]` matches (its locale decides which characters
    those are; each is asked once), so that `to_tsvector` reads the same words as after
    `_WORDS`'s `regexp_replace` (a space for each mark instead of one for a run of them,
    which splits the text into the same words at the same positions) without the server
    scanning every text with a regular expression. NUL is blanked too, as `search_text`
    does. (Each piece of a text was once sent only once, for words without positions;
    since migration 11 the index keeps positions, for phrases and ranking.)"""

    def __init__(self, conn: Any):
        self._conn = conn   # a psycopg connection to the store's database
        marks = "".join(sorted(self._ask([chr(c) for c in range(1, 128)])))
        self._ascii = bytes.maketrans(b"\0" + marks.encode(), b" " * (1 + len(marks)))
        self._known: dict[str, bool] = {}

    def _ask(self, chars: list[str]) -> set[str]:
        return {row[0] for row in self._conn.execute(PUNCTUATION_OF, (chars,))}

    def blank(self, texts: list[bytes]) -> list[str]:
        out = []
        wide = []   # (index, its characters beyond ASCII)
        for raw in texts:
            text = raw.translate(self._ascii).decode("utf-8")
            if not text.isascii():
                wide.append((len(out), set(_NOT_ASCII.findall(text))))
            out.append(text)
        unknown = {c for _, chars in wide for c in chars} - self._known.keys()
        if unknown:
            marks = self._ask(sorted(unknown))
            self._known.update((c, c in marks) for c in unknown)
        for i, chars in wide:
            text = out[i]
            for c in chars:
                if self._known[c]:
                    text = text.replace(c, " ")
            out[i] = text
        return out


class _Spare:
    """A spare connection of the store's pool with a thread of its own, for work outside
    the store's transaction, one task after another."""

    def __init__(self, conn: Any, name: str):
        self._store_conn = conn    # postgres.Connection: whose pool lends the spare one
        self.conn: Any = None
        self._asked = False
        self._thread = ThreadPoolExecutor(1, thread_name_prefix=name)

    @property
    def usable(self) -> bool:
        """Whether it has a working connection (asked of the pool when first needed)."""
        if not self._asked:
            self._asked = True
            self.conn = self._store_conn.spare(SPARE_WAIT)
        return self.conn is not None and not self.conn.broken

    def submit(self, task: Callable[..., Any], *args: Any) -> Future:
        return self._thread.submit(task, *args)

    def close(self) -> None:
        self._thread.shutdown(wait=True, cancel_futures=True)
        spare, self.conn = self.conn, None
        if spare is not None:
            self._store_conn.give_back(spare)


class _Words(_Spare):
    """Computes the words of search texts, one batch after another."""

    def __init__(self, conn: Any):
        super().__init__(conn, "arbor-words")
        self._punctuation: _Punctuation | None = None

    def compute(self, texts: list[bytes]) -> list[Lexemes]:
        """The words of each text (run on this thread)."""
        if self._punctuation is None:
            self._punctuation = _Punctuation(self.conn)
        blanked = self._punctuation.blank(texts)
        with self.conn.cursor(binary=True) as cursor:
            return [Lexemes(row[0]) for row in cursor.execute(WORDS_OF_BLANKED, (blanked,))]


class _Cleaner(_Spare):
    """Moves the search index's pending entries into its tree (`gin_clean_pending_list`,
    what autovacuum does) while the import goes on, so that the store's connection rarely
    finds the pending list full and does it itself in the middle of a batch. The same
    index, sooner; it stops at the first refusal (only the index's owner may)."""

    def __init__(self, conn: Any):
        super().__init__(conn, "arbor-gin-clean")
        self._running: Future | None = None
        self._rows = 0   # search rows written since the last cleaning began

    def wrote(self, rows: int) -> None:
        """Search rows were inserted: clean once CLEAN_FROM more are in the pending list
        (a small import needs no third connection) and no cleaning is under way. Each
        cleaning reads the whole list and moves each of its words' entries once: cleaning
        after every batch cost the bench's 6,768 search rows 1.96-1.99 s of server CPU
        against 1.43-1.48 s every ten batches (1,300 rows) or at the list's 4 MB limit."""
        self._rows += rows
        if self._rows >= CLEAN_FROM and (self._running is None or self._running.done()) \
                and self.usable:
            self._rows = 0
            self._running = self.submit(self._clean)

    def _clean(self) -> None:
        import psycopg

        try:
            self.conn.execute(CLEAN_PENDING)
        except psycopg.Error:
            spare, self.conn = self.conn, None
            self._store_conn.give_back(spare)


class _Sender:
    """What the writer thread runs a queued statement on: COPY for the entry rows, the
    search rows with their words, `executemany` for a list of usage rows."""

    def __init__(self, conn: Any, cleaner: _Cleaner):
        self._conn = conn   # postgres.Connection
        self._cleaner = cleaner

    def execute(self, sql: str, params: Any) -> None:
        self._conn.send_later()   # (what the store's thread left to go with its next statement)
        conn = self._conn._live()
        try:
            self._execute(conn, sql, params)
        except Exception as error:
            if broke(conn):   # the server went away: the transaction is lost, and says where
                raise self._conn._broke(error, in_transaction=True) from None
            raise

    def _execute(self, conn: Any, sql: str, params: Any) -> None:
        if sql is COPY_ENTRIES:
            rows, copied = params
            try:
                with conn.cursor() as cursor, cursor.copy(COPY_ENTRIES) as copy:
                    copy.set_types(_ENTRY_TYPES)
                    for row in rows:
                        copy.write_row((*row[:-1], row[-1].decode("utf-8")))
            finally:
                copied.set()
        elif sql is SEARCH_INSERT_MANY:
            seqs, texts = params
            conn.execute(SEARCH_INSERT_MANY, (seqs, [search_text(text) for text in texts]))
            self._cleaner.wrote(len(seqs))
        else:
            with conn.cursor() as cursor:
                cursor.executemany(sql, params)


class CopyWriter(BulkWriter):
    """The queue and thread of `sqlite_bulk.BulkWriter` (order kept, first error raised by
    `drain`/`stop`, what follows it skipped), with PostgreSQL's statements."""

    def __init__(self, conn: Any, explain: Callable[[BaseException], BaseException],
                 usage_insert: str):
        self._store_conn = conn   # postgres.Connection
        self._words = _Words(conn)
        self._cleaner = _Cleaner(conn)
        super().__init__(_Sender(conn, self._cleaner), depth=4, explain=explain)
        self._usage_insert = usage_insert
        self._copied = threading.Event()   # set once the newest COPY queued has run
        self._copied.set()
        self._later: list[Future] = []     # search rows the words' thread writes
        conn.deferred = self

    def write(self, entries: list[tuple], texts: list[tuple], usage: list[tuple]) -> None:
        """Queue an EntryWriter's buffered rows (entry rows and search texts end with UTF-8
        bytes) and empty the lists."""
        statements = []
        apart = None
        if entries:
            self._copied = threading.Event()
            statements.append((COPY_ENTRIES, (list(entries), self._copied)))
            entries.clear()
        if texts:
            seqs = [row[0] for row in texts]
            raw = [row[1] for row in texts]
            if len(raw) >= WORDS_APART_FROM and self._words.usable:
                apart = (seqs, raw, self._copied)
            else:
                statements.append((SEARCH_INSERT_MANY, (seqs, raw)))
            texts.clear()
        if usage:
            statements.append((self._usage_insert, list(usage)))
            usage.clear()
        if statements:
            self.submit(statements)
        if apart is not None:   # (after the COPY: its rows start while the words are blanked)
            self._later = [task for task in self._later if not task.done()]
            self._later.append(self._words.submit(self._search_rows, *apart))

    def _search_rows(self, seqs: list[int], texts: list[bytes], copied: threading.Event
                     ) -> None:
        """(the words' thread) The words of the texts, inserted on the store's connection
        once their entries are there."""
        import psycopg

        try:
            words = self._words.compute(texts)
        except psycopg.Error:
            words = None   # the spare connection failed: the store's connection computes them
        while not copied.wait(0.05):
            if self._error is not None or self._discard:
                return
        if self._error is not None or self._discard:
            return
        conn = None
        try:
            conn = self._store_conn._live()
            if words is None:
                conn.execute(SEARCH_INSERT_MANY, (seqs, [search_text(text) for text in texts]))
            else:
                conn.execute(SEARCH_INSERT_WORDS, (seqs, words))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            if conn is not None and isinstance(error, Exception) and broke(conn):
                error = self._store_conn._broke(error, in_transaction=True)
            if self._error is None:
                self._error = error
            return
        self._cleaner.wrote(len(seqs))

    @property
    def pending(self) -> bool:
        """Whether search rows are still being written apart."""
        return bool(self._later)

    def settle(self) -> None:
        """Wait until every search row handed to the words' thread is written; raise the
        first error of either thread (once: the transaction is then rolled back)."""
        later, self._later = self._later, []
        for task in later:
            task.result()
        error, self._error = self._error, None
        if error is not None:
            raise self._explain(error)

    def stop(self, *, discard: bool = False) -> None:
        try:
            super().stop(discard=discard)
            if not discard:
                self.settle()
        finally:
            self._discard = True   # (what is still queued on the words' thread is skipped)
            self._words.close()
            self._cleaner.close()
            if self._store_conn.deferred is self:
                self._store_conn.deferred = None
