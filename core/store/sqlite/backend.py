"""The SQLite backend: every SQL statement the store runs on SQLite, and how it opens a file.

`Statements` names each statement the store API runs; a PostgreSQL backend defines the
same names (`%s` for `?`, `GREATEST` for the two-argument `MAX`, `tsvector` for FTS5,
`FOR UPDATE` where a branch head is read to be moved), so the two can be read side by
side. `SQLiteBackend` holds what is not one statement: opening and checking a file,
transactions, the search index, the bulk writer of imports.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

from core.model.errors import (
    StoreBusy, StoreDamaged, StoreError, StoreNotFound, StoreOutdated, StoreUnavailable)
from core.store.location import can_create_in, can_read
from . import search_index as sqlite_search
from . import migrations
from core.store.statements import compose

TYPE_CHECKING = False   # `arbor import` with nothing changed reads the records through
if TYPE_CHECKING:       # `peek_import_stamps` here: it loads neither typing nor the bulk writer
    from typing import Any, Callable, Sequence

    from . import bulk as sqlite_bulk

BUSY_TIMEOUT_MS = 10_000
WRITE_POLL = 0.001      # seconds between tries while another process holds the write lock
BULK_CACHE_SIZE = -32 * 1024  # KiB, while an import's bulk writer runs
PAGE_SIZE = 4096  # bytes, for new stores (SQLite's own default)
# The WAL is written back into the file when it holds this much (SQLite counts it in pages:
# its 1000 pages were 16 MiB with the 16 KiB pages stores had; kept at that in bytes, an
# import of a 4 KiB-page store takes as long as it did, see bench/bench_wal.py).
CHECKPOINT_BYTES = 16 * 1024 * 1024
# A store that `arbor import` closes keeps a write-ahead log below this (`keep_log_small`,
# `close_keeping_log`): the next process to open it reads that much of it (~1 ms a MB here).
KEEP_LOG_BYTES = 1024 * 1024
SQLITE_NOTADB = 26  # the result code of a file that is not a SQLite database
SQLITE_FULL = 13  # the disk (or the file system's quota) is full
SQLITE_IOERR = 10  # a read or write failed (the low byte of every extended I/O code)


Statements = compose("SQLite")


def _full(path: Path) -> bool:
    """Whether the file system of `path` has no room left for a store's shared-memory file
    (SQLite reports that as an I/O error, not as a full disk)."""
    try:
        info = os.statvfs(path.parent)
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 64 * 1024


_OWN_FILES = (("", "store"), ("-wal", "write-ahead log (-wal)"),
              ("-shm", "shared-memory index (-shm)"), ("-journal", "rollback journal (-journal)"))


class SQLiteBackend:
    """One SQLite file: opening it, its transactions, and what is not a plain statement."""

    name = "sqlite"
    sql = Statements
    search_index = sqlite_search   # the full-text index's statements (core/store/search.py)
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    takes_scratch = True   # sessions of a worker's scratch store move in (sqlite_merge.py)

    def __init__(self, path: Path):
        self.path = path   # what `Store.path` gives back: the store's name
        self.location = str(path)
        self._bulk_supported: bool | None = None
        self._bulk_cache = -2000
        self._opened: tuple[int, int] | None = None   # the file's (device, inode) once open
        self._bases: tuple[str, ...] | None = None    # its path as given and resolved
        self._small_log = False   # keep_log_small(): the log is written back at KEEP_LOG_BYTES
        self._bulk_ran = False    # ... and the bulk writer ran since (with CHECKPOINT_BYTES)
        self._log_guard: sqlite3.Connection | None = None   # keep_log_small(guard=...)

    # ---------------------------------------------------------------- opening
    def identity(self) -> tuple:
        """What tells this store from others in the process: the file's device and inode
        (the same file by any path), or its resolved path while there is no file yet."""
        try:
            info = os.stat(self.path)
        except OSError:
            return ("sqlite", "path", str(Path(os.path.abspath(self.path)).resolve()))
        return ("sqlite", info.st_dev, info.st_ino)

    def _remember_file(self) -> None:
        try:
            info = os.stat(self.path)
        except OSError:
            return
        self._opened = (info.st_dev, info.st_ino)

    def held_files(self) -> dict[tuple[int, int], tuple[str, str]]:
        """(device, inode) of the store and of its -wal, -shm and -journal, those that exist,
        each with its suffix ("" for the store) and what it is (`core.store.held_files`). SQLite
        puts the side files beside the file a symbolic link to the store points at: both
        places are looked at."""
        out: dict[tuple[int, int], tuple[str, str]] = {}
        if self._opened is not None:
            out[self._opened] = ("", f"the store {self.location} itself")
        if self._bases is None:   # (resolved once: a path of many parts costs an lstat each)
            self._bases = tuple(dict.fromkeys((os.path.abspath(self.path),
                                               os.path.realpath(self.path))))
        for base in self._bases:
            for suffix, what in _OWN_FILES:
                try:
                    info = os.stat(base + suffix)
                except OSError:
                    continue
                out.setdefault((info.st_dev, info.st_ino), (suffix, (
                    f"the {what} of the store {self.location}" if suffix else
                    f"the store {self.location} itself")))
        return out

    def connect(self, *, create: bool, on_upgrade: Callable[[str], None] | None = None
                ) -> sqlite3.Connection:
        """A connection to the file, checked to be an arbor store and migrated.

        Only SQLite reads the file: opening, reading and closing a store with plain file
        I/O would drop the process's POSIX locks on it (a connection of this process may
        hold them), and whether a file is SQLite at all is SQLite's to say."""
        path = self.path
        shown = self.location
        try:
            info = os.stat(path)
        except FileNotFoundError:
            info = None
        except OSError as error:
            raise StoreUnavailable(f"cannot read {shown}: {error.strerror or error}") from None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                raise StoreUnavailable(f"{shown} is a folder, not an arbor store")
            if not stat.S_ISREG(info.st_mode):
                raise StoreUnavailable(f"{shown} is not a regular file, not an arbor store")
            if not can_read(path):
                raise StoreUnavailable(f"cannot read {shown}: permission denied")
        else:
            if not create:
                raise StoreNotFound(f"there is no arbor store at {shown}")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreUnavailable(
                    f"cannot create the folder for {shown}: {error.strerror or error}") from None
            if not can_create_in(path.parent):
                raise StoreUnavailable(f"cannot create {shown}: its folder is not writable")
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {shown}: {error}") from None
        try:
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "schema_migrations" not in tables:
                raise StoreDamaged(
                    f"{shown} is a SQLite database but not an arbor store; it was not changed")
            migrations.check_version(conn, shown)
            if not tables:
                # A new file: 4 KiB pages. Every append writes each page it touches to the
                # WAL (about 13): 16 KiB pages made that 213 KB for a 40-byte message, 4
                # KiB pages a quarter of it, and imports take as long (bench/bench_wal.py).
                # An existing store keeps the size it has (WAL cannot change it).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreUnavailable(f"cannot use {shown} in WAL mode (got {mode})")
            page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA wal_autocheckpoint = {max(1000, CHECKPOINT_BYTES // page_size)}")
            if tables:
                conn.execute("PRAGMA synchronous = NORMAL")
                migrations.apply_migrations(conn, shown, on_upgrade, backend=SQLiteBackend)
            else:
                # A new store is made without waiting for the disk: a crash (of the
                # machine) while it is made leaves a store with no tables, or none of the
                # creating transaction (the WAL's frames are checksummed, and no checkpoint
                # runs this early), and the next open makes it again, as here.
                conn.execute("PRAGMA synchronous = OFF")
                migrations.make_new(conn, shown, backend=SQLiteBackend)
                conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise _opening_error(error, path, shown, writing=True) from None
        except BaseException:
            conn.close()
            raise
        self._remember_file()
        return conn

    def connect_read_only(self) -> sqlite3.Connection:
        """A connection that cannot write (SQLite's read-only mode), for the commands that
        only read (`arbor list`, `usage`, `export`, push's source): it never creates a store,
        never turns an empty or foreign file into one, and works where the store cannot be
        written (a read-only folder, file system or mount).

        A WAL store needs its -shm to be read. SQLite's rule (wal.html, "Read-Only
        Databases"; walformat.html): a read-only connection can read a WAL database when
        its -wal and -shm exist, or when it may create them in the folder, or when it is
        opened `immutable`. So in a folder it cannot write, with neither a -wal nor a -shm
        there, the store is opened `immutable=1`: nobody can be writing it (a writer would
        have to create the -wal beside it first). With a -wal there but no -shm that can be
        made, the store cannot be read safely (the -wal's changes are found through the
        -shm), and that is said. StoreOutdated: an older arbor's store, to be updated
        first."""
        path = self.path
        shown = self.location
        try:
            info = os.stat(path)
        except FileNotFoundError:
            raise StoreNotFound(f"there is no arbor store at {shown}") from None
        except OSError as error:
            raise StoreUnavailable(f"cannot read {shown}: {error.strerror or error}") from None
        if stat.S_ISDIR(info.st_mode):
            raise StoreUnavailable(f"{shown} is a folder, not an arbor store")
        if not stat.S_ISREG(info.st_mode):
            raise StoreUnavailable(f"{shown} is not a regular file, not an arbor store")
        wal, shm = (os.path.lexists(f"{os.path.realpath(path)}{suffix}") for suffix in
                    ("-wal", "-shm"))
        if info.st_size == 0 and not wal:
            raise StoreNotFound(f"there is no arbor store at {shown} (the file is empty; "
                                "it was left as it is)")
        if not can_read(path):
            raise StoreUnavailable(f"cannot read {shown}: permission denied")
        folder_writable = can_create_in(os.path.dirname(os.path.realpath(path)))
        if wal and not shm and not folder_writable:
            raise StoreUnavailable(
                f"cannot read {shown}: its -wal holds changes that are read through a -shm "
                "file, and there is none beside it nor can one be made (its folder is "
                "read-only)")
        immutable = not wal and not shm and not folder_writable
        uri = f"file:{_uri_path(path)}?mode=ro" + ("&immutable=1" if immutable else "")
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False,
                                   timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error as error:
            raise StoreUnavailable(f"cannot open {shown}: {error}") from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            tables = {row[0] for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                raise StoreNotFound(f"there is no arbor store at {shown} (an empty SQLite "
                                    "database is there; it was left as it is)")
            if "schema_migrations" not in tables:
                raise StoreDamaged(
                    f"{shown} is a SQLite database but not an arbor store; it was not changed")
            if migrations.check_version(conn, shown) < migrations.CURRENT_VERSION:
                raise StoreOutdated(f"{shown} was written by an older arbor")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.DatabaseError as error:
            conn.close()
            raise _opening_error(error, path, shown, writing=False) from None
        except BaseException:
            conn.close()
            raise
        self._remember_file()
        return conn

    # ----------------------------------------------------------- transactions
    @staticmethod
    def begin_write(conn: sqlite3.Connection) -> None:
        """Take the store's write lock now (so that a transaction never fails half-way on it),
        asking again every millisecond while another process writes.

        SQLite's own busy handler sleeps longer and longer between tries (up to 100 ms), so
        a writer that waits behind an import keeps missing the short gaps between the
        import's transactions; asking often, within the same overall timeout, gets it in at
        the first gap."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as error:
                    message = str(error)
                    if "locked" not in message and "busy" not in message:
                        raise
                    if time.monotonic() >= deadline:
                        raise StoreBusy(
                            f"another program has been writing to the store for "
                            f"{BUSY_TIMEOUT_MS / 1000:g} s; nothing was changed, try again when "
                            "it is done") from None
                time.sleep(WRITE_POLL)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    @staticmethod
    def begin_read(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN")

    @staticmethod
    def commit(conn: sqlite3.Connection) -> None:
        conn.execute("COMMIT")

    @staticmethod
    def rollback(conn: sqlite3.Connection) -> None:
        # (none is open when the write lock could not be taken again after a commit, in
        # `Store.commit_and_continue`: the error that says so is the one to raise)
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    # ---------------------------------------------------------------- writing
    @staticmethod
    def executemany(conn: sqlite3.Connection, sql: str, rows: Any) -> None:
        conn.executemany(sql, rows)

    @staticmethod
    def executemany_text(conn: sqlite3.Connection, sql: str, rows: list[tuple]) -> None:
        """Rows whose last field is UTF-8 bytes, written as text. (Not with `sqlite_bulk.as_text`:
        that module loads threading and queue, which a small import writing inline need not.)"""
        conn.executemany(sql, [(*row[:-1], row[-1].decode("utf-8")) for row in rows])

    @staticmethod
    def inserted_id(cursor: sqlite3.Cursor) -> int:
        """The id the INSERT just run gave its row. (PostgreSQL: the statement ends with
        `RETURNING id` and this reads it. SQLite has RETURNING too, but a transaction that
        uses it takes twice as long here: its rows go through a temporary table.)"""
        return cursor.lastrowid

    @classmethod
    def insert_unless_taken(cls, conn: sqlite3.Connection, sql: str, args: Sequence[Any],
                            column: str) -> int | None:
        """Run an INSERT: the new row's id, or None when `column`'s value is taken (the
        transaction goes on). Any other failure raises."""
        try:
            return conn.execute(sql, args).lastrowid
        except sqlite3.IntegrityError as error:
            if cls.is_unique_violation(error, column):
                return None
            raise

    @staticmethod
    def is_unique_violation(error: BaseException, column: str | None = None) -> bool:
        """Whether `error` is a UNIQUE constraint failing (on `column`, when given)."""
        if not isinstance(error, sqlite3.IntegrityError):
            return False
        message = str(error)
        return "UNIQUE" in message and (column is None or column in message)

    @staticmethod
    def first_free_entry_seq(conn: sqlite3.Connection) -> int:
        """The seq the next entry written in this transaction gets; the write lock is held.

        `entries.seq` is AUTOINCREMENT, so it is above both max(seq) and sqlite_sequence."""
        row = conn.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'entries'), 0),"
            " COALESCE((SELECT MAX(seq) FROM entries), 0))").fetchone()
        return int(row[0] or 0) + 1

    @staticmethod
    def forget_session_entries(conn: sqlite3.Connection, external_session_id: int) -> None:
        """Before a session's entries are deleted: take them out of the search index (the
        FTS5 index is contentless: it is told each text to remove)."""
        sqlite_search.forget_session(conn, external_session_id)

    @staticmethod
    def merge_in_big_steps(conn: sqlite3.Connection, big: bool) -> None:
        """(In a write transaction) The search index merges in big steps during a big
        import (`big`), in its usual ones after (search_index.merge_in_big_steps)."""
        sqlite_search.merge_in_big_steps(conn, big)

    # ------------------------------------------------------------ bulk writes
    def start_bulk(self, conn: sqlite3.Connection,
                   explain: Callable[[BaseException], BaseException]
                   ) -> sqlite_bulk.BulkWriter | None:
        """A thread that writes entry batches for the open write transaction (None: this
        SQLite lacks the JSON functions it needs, and batches are written inline)."""
        from . import bulk as sqlite_bulk

        if self._bulk_supported is None:
            self._bulk_supported = sqlite_bulk.supported(conn)
        if not self._bulk_supported:
            return None
        # A big write touches index pages all over; a larger page cache for its length
        # keeps them from being written out and read back (restored after).
        self._bulk_cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute(f"PRAGMA cache_size = {BULK_CACHE_SIZE}")
        if self._small_log:   # a big write goes at the pace bench/bench_wal.py measured
            self._bulk_ran = True
            _write_back_at(conn, CHECKPOINT_BYTES)
        return sqlite_bulk.BulkWriter(conn, explain=explain, row_statements=(
            Statements.ENTRY_INSERT, Statements.SEARCH_INSERT, Statements.USAGE_INSERT))

    def stop_bulk(self, conn: sqlite3.Connection, bulk: sqlite_bulk.BulkWriter, *,
                  discard: bool = False) -> None:
        try:
            bulk.stop(discard=discard)
        finally:
            conn.execute(f"PRAGMA cache_size = {int(self._bulk_cache)}")
            if self._small_log:
                _write_back_at(conn, KEEP_LOG_BYTES)

    # ------------------------------------------------------------- closing
    def keep_log_small(self, conn: sqlite3.Connection,
                       guard: sqlite3.Connection | None = None) -> None:
        """SQLite writes the log back into the file (a passive checkpoint) at any commit of
        this connection that leaves it holding KEEP_LOG_BYTES or more (its own measure of
        the log: `wal_autocheckpoint`), not CHECKPOINT_BYTES; the bulk writer of a big
        import raises it again while it runs. So `close_keeping_log` may leave the log as
        it is: SQLite has kept it small. `guard`: another connection of this process to
        the store, which its owner closes only after this one (`arbor import`'s look at the
        records, `peek_import_stamps(held=...)`): `close_keeping_log` needs none of its own."""
        self._small_log = True
        self._log_guard = guard
        _write_back_at(conn, KEEP_LOG_BYTES)
        # (and the log's file is cut to what it holds each time SQLite starts it again, so
        # that its size is the log's as the store closes: `_empty_grown_log`)
        conn.execute("PRAGMA journal_size_limit = 0")

    def close_keeping_log(self, conn: sqlite3.Connection) -> None:
        """Close the connection without writing the log back into the file (which costs two
        fsyncs, 15 ms here: more than all the work of an import of a few appended lines),
        when SQLite kept the log small since `keep_log_small` (and the bulk writer did not
        run: it lets the log grow to CHECKPOINT_BYTES); otherwise close it as usual.

        SQLite checkpoints when the last connection to a store closes; a read-only
        connection, open while this one closes, is another one, and it cannot checkpoint
        when it closes in turn. Safe: with `synchronous = NORMAL` a commit is not on disk
        before a checkpoint anyway, so a power cut could always take back the last commits
        (an import's records with its entries: the next import reads those lines again);
        the next process to open the store reads the log, as after any crash."""
        if not self._small_log or self._bulk_ran:
            conn.close()
            return
        _empty_grown_log(conn, self.path)
        guard, self._log_guard = self._log_guard, None
        if guard is not None and _is_open(guard):
            conn.close()   # (the guard is open: SQLite does not write the log back)
            return
        try:
            held = sqlite3.connect(f"file:{_uri_path(self.path)}?mode=ro", uri=True,
                                   isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        except sqlite3.Error:
            conn.close()
            return
        try:
            held.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()   # (it opens the log)
            conn.close()
        except sqlite3.Error:
            conn.close()
        finally:
            held.close()

    # ---------------------------------------------------------------- reading
    @staticmethod
    def interrupt(conn: sqlite3.Connection) -> None:
        """(any thread) The running statement stops with "interrupted"."""
        conn.interrupt()

    @staticmethod
    def data_version(conn: sqlite3.Connection) -> int:
        """Changes whenever another connection commits to the file."""
        return conn.execute("PRAGMA data_version").fetchone()[0]

    @staticmethod
    def integrity_check(conn: sqlite3.Connection) -> str:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]

    @staticmethod
    def checkpoint_log(conn: sqlite3.Connection) -> None:
        """Move the write-ahead log into the file and empty it (a store about to be copied)."""
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @staticmethod
    def schema_version(conn: sqlite3.Connection) -> int:
        return migrations.recorded_version(conn)


def _opening_error(error: sqlite3.DatabaseError, path: Path, shown: str, *,
                   writing: bool) -> StoreError:
    """The sentence for what failed while a store was opened (`writing`: by an ordinary
    opening, which may write; else by `connect_read_only`)."""
    message = str(error)
    code = getattr(error, "sqlite_errorcode", None) or 0
    if code == SQLITE_NOTADB or "file is not a database" in message:
        return StoreDamaged(f"{shown} is not an arbor store (it is not a SQLite database)")
    io_error = code & 0xFF == SQLITE_IOERR
    if writing and (code == SQLITE_FULL or "disk is full" in message or
                    (io_error and _full(path))):
        return StoreUnavailable(f"cannot write {shown}: the disk is full")
    if io_error:   # the file system's fault, not the file's
        return StoreUnavailable(f"cannot {'read or write' if writing else 'read'} {shown}: "
                                f"{message}")
    if writing and "unable to open" in message and not can_create_in(path.parent):
        return StoreUnavailable(
            f"cannot open {shown}: its folder is read-only, and a store needs to write "
            "its -wal and -shm files beside it")
    if "readonly" in message or "unable to open" in message or "locked" in message:
        return StoreUnavailable(f"cannot {'open' if writing else 'read'} {shown}: {message}")
    return StoreDamaged(f"{shown} is damaged or not an arbor store ({message})")


def peek_import_stamps(path: Path, held: list | None = None) -> dict[str, tuple] | None:
    """`Statements.IMPORT_STAMPS` of the store at `path`, read through a read-only
    connection that is closed before this returns; None when that cannot answer (no
    store there, not an arbor store of exactly this version, locked, damaged): the caller
    then opens the store the ordinary way, which says what is wrong or migrates it.

    Only for a process holding no other connection to this store: closing this one drops
    every POSIX lock the process holds on the file. `arbor import` asks it before it opens
    the store, so that a run where nothing changed needs neither the store's API nor a
    write: one query and a `stat` a file.

    `held`: the connection is not closed but put in this list, for the caller to close once
    its own connection is open (SQLite, which both are, keeps each one's locks): that one
    then finds the log already read (a store closed with its log kept, `close_keeping_log`,
    is otherwise read again by the first connection of each process)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    try:
        conn = sqlite3.connect(f"file:{_uri_path(path)}?mode=ro", uri=True,
                               isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return None
    keep = False
    try:
        if migrations.recorded_version(conn) != migrations.CURRENT_VERSION:
            return None
        stamps = {row[0]: row[1:] for row in conn.execute(Statements.IMPORT_STAMPS)}
        keep = held is not None
        return stamps
    except sqlite3.Error:
        return None
    finally:
        if keep:
            held.append(conn)
        else:
            conn.close()


def _empty_grown_log(conn: sqlite3.Connection, path: Path) -> None:
    """Empty the log (`wal_checkpoint(TRUNCATE)`) when it has grown to KEEP_LOG_BYTES, as
    the store is closed with its log kept. SQLite wrote it back at the commit that took it
    there (`keep_log_small`), but starts it again from its beginning only at a later
    commit of the same process: the next process's first connection reads the log anew
    and counts none of it as written back. So the log of many `arbor import`s of a few
    appended lines grew by each one's pages (~240 KB here) for good, each of their commits
    wrote all of it back again (2 MB after 8 of them), and every process read all of it.
    Emptying it costs a truncation (that commit wrote it back). Never waits: a reader of
    another process (the app) keeps the log as it is, until a later close. (How long the
    log is, is told by its file's size, which `journal_size_limit` keeps to the log: a
    `stat` opens no file; SQLite's only answer, `wal_checkpoint`, would write it back.)"""
    try:
        size = os.stat(f"{path}-wal").st_size
    except OSError:
        return
    if size < KEEP_LOG_BYTES:
        return
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass


def _is_open(conn: sqlite3.Connection) -> bool:
    try:
        conn.total_changes   # (asking a closed connection raises)
    except sqlite3.ProgrammingError:
        return False
    return True


def _write_back_at(conn: sqlite3.Connection, size: int) -> None:
    """SQLite checkpoints at the commit that leaves the log holding `size` bytes or more."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute(f"PRAGMA wal_autocheckpoint = {max(1, size // page_size)}")


def _uri_path(path: Path) -> str:
    """A file path as the path of a `file:` URI: the characters a URI gives meaning to
    (%, ? and #) escaped."""
    return os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
