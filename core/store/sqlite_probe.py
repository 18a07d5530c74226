"""What is at a path (nothing, a folder, a SQLite database, an arbor store…), asked of SQLite.

SQLite's locks are POSIX locks, which a process loses on a file as soon as it closes ANY
descriptor of that file. Reading a store's first bytes with `open()` while this process (or
a library in it) holds a connection to it drops that connection's locks, and the next process
to close the store deletes a `-wal` that is still in use. SQLite itself never does that: it
keeps one set of descriptors per file and process. So every "is this a database?" question
goes through a read-only SQLite connection, and a store's `-wal`, `-shm` or `-journal` is
never opened at all, not even by SQLite: not by its name, and not by a link of any name to
a side file of a store this process has open (`core.store.held_files`: SQLite would open the
`-shm` as a database and, closing it, drop this process's locks on it).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

SIDECAR_SUFFIXES = ("-wal", "-shm", "-journal")
_NOT_A_DATABASE = 26  # SQLITE_NOTADB
_PROBE_TIMEOUT_S = 2.0

MISSING = "missing"
FOLDER = "folder"
SPECIAL = "special"  # a FIFO, socket or device: opening it may block or consume it
SIDECAR = "sidecar"  # the -wal, -shm or -journal of a database beside it
HELD = "held"  # by any name, a -wal, -shm or -journal of a store this process has open
UNREADABLE = "unreadable"
EMPTY = "empty"  # a file of no bytes (SQLite would take it for an empty database)
NOT_SQLITE = "not-sqlite"
SQLITE = "sqlite"  # a SQLite database that is not an arbor store
ARBOR = "arbor"  # an arbor store


@dataclass(frozen=True)
class Probe:
    kind: str
    reason: str = ""  # for UNREADABLE: why; for HELD: which file of which store
    meta: dict[str, str] = field(default_factory=dict)  # for ARBOR: its store_meta
    tables: frozenset[str] = frozenset()  # for SQLITE and ARBOR: the names of its tables

    @property
    def is_database(self) -> bool:
        """A SQLite database or part of one: never to be overwritten, replaced or read as text."""
        return self.kind in (SQLITE, ARBOR, SIDECAR, HELD)


def sidecar_of(path: str | os.PathLike) -> Path | None:
    """The database whose -wal, -shm or -journal `path` is, if that database exists."""
    text = os.fspath(path)
    for suffix in SIDECAR_SUFFIXES:
        if text.endswith(suffix) and os.path.lexists(text[: -len(suffix)]):
            return Path(text[: -len(suffix)])
    return None


def _held_side_file(info: os.stat_result) -> str | None:
    """What the file is, in words, when it is a side file of a store this process has open.
    (The store itself is asked about as any file is: SQLite shares one set of descriptors
    and locks per file and process, whatever the name it is opened by.)"""
    from .held_files import held_files

    found = held_files().get((info.st_dev, info.st_ino))
    return found[1] if found is not None and found[0] else None


def probe(path: str | os.PathLike) -> Probe:
    """What `path` is. Only `stat` and a read-only SQLite connection look at it."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return Probe(MISSING)
    except (OSError, RuntimeError) as error:  # a symlink loop, a permission on the way
        return Probe(UNREADABLE, getattr(error, "strerror", None) or str(error))
    if stat.S_ISDIR(info.st_mode):
        return Probe(FOLDER)
    if not stat.S_ISREG(info.st_mode):
        return Probe(SPECIAL)
    if sidecar_of(path) is not None:
        return Probe(SIDECAR)
    held = _held_side_file(info)
    if held is not None:
        return Probe(HELD, held)
    if info.st_size == 0 and not os.path.lexists(f"{path}-wal"):
        # (a database of no bytes with a -wal beside it may have all its pages in the -wal)
        return Probe(EMPTY)
    try:
        conn = sqlite3.connect(path.absolute().as_uri() + "?mode=ro", uri=True,
                               timeout=_PROBE_TIMEOUT_S)
    except sqlite3.Error as error:
        return Probe(UNREADABLE, str(error))
    try:
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_migrations" not in tables:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            return Probe(SQLITE, tables=frozenset(tables)) if tables or pages else Probe(EMPTY)
        meta = dict(conn.execute("SELECT key, value FROM store_meta")) \
            if "store_meta" in tables else {}
        return Probe(ARBOR, meta={str(k): str(v) for k, v in meta.items()},
                     tables=frozenset(tables))
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorcode", None) == _NOT_A_DATABASE:
            return Probe(NOT_SQLITE)
        return Probe(UNREADABLE, str(error))
    finally:
        conn.close()
