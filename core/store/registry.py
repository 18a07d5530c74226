"""One connection per store per process (plus one reader and one background writer), shared
by every `Store` handle.

SQLite's locks are POSIX locks, held per process: two independent openings of one file in
a process are a trap (closing either drops the other's locks when it is not SQLite that
closes it), and two connections of one process to one store can also wait on each other.
So every `Store` of a process on the same store shares one `Link`: the connection and the
state of its transaction (the lock, the depth of nested transactions, the bulk writer),
counted by reference so that closing one handle leaves the connection to the others. A
handle keeps only what is its caller's (the path as given, the clock, the id factory).

A store is known by its backend's `identity()`: for a file, its device and inode (the same
file by any path, symlink or hard link), or its resolved path while it does not exist yet.
"""

from __future__ import annotations

import os
import weakref
from _thread import allocate_lock
from collections import OrderedDict

from .reach import StoreLock

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

# (The locks `threading.RLock()` and `threading.Lock()` hand out, made without loading the
# `threading` module: an import of a few appended lines starts no thread.)

MAIN = "main"
READER = "reader"  # a second connection, for reads in background threads
WRITER = "writer"  # a third, for writes in background threads (Store.write_handle)
SEARCHER = "searcher"  # one for searches as a person types (Store.searcher): interrupted at will


class Link:
    """An open connection to a store, shared by the process's handles on that store."""

    def __init__(self, key: tuple, backend: Any, db: Any):
        self.key = key
        self.backend = backend
        self.db = db
        self.lock = StoreLock()  # an RLock the screen's thread never waits long for
        self.depth = 0           # nested transaction() / reading() levels
        self.read_only = False   # the open transaction is a read snapshot
        self.bulk: Any = None    # the backend's bulk writer of the open write transaction
        self.bulk_keep = 0       # Store.bulk_writes() levels: the bulk writer outlives transactions
        self.segments_cache: OrderedDict[int, tuple] = OrderedDict()  # paths never change
        self.write_generation = 0  # commits of a long write that went on (commit_and_continue)
        self.writers: weakref.WeakSet = weakref.WeakSet()  # entry writers of the transaction
        # what the open write transaction made (sessions: [name, metadata], branches: their
        # session), which no one else can have changed: asked without a query (Store)
        self.made: dict[tuple[str, int], Any] = {}
        # called after each commit of a write on this connection (Store.on_commit)
        self.commit_watchers: list[Callable[[], None]] = []
        self.refs = 0


_links: dict[tuple, Link] = {}
_registry_lock = allocate_lock()


def acquire(backend: Any, role: str, *, create: bool,
            on_upgrade: Callable[[str], None] | None = None, read_only: bool = False) -> Link:
    """The process's link to the store `backend` names, opened if it is not open yet.
    `read_only`: a connection of its own that cannot write, where the backend has one."""
    opener = getattr(backend, "connect_read_only", None) if read_only else None
    if opener is not None:
        role = f"{role}/read-only"
    with _registry_lock:
        key = (role, *backend.identity())
        link = _links.get(key)
        if link is None:
            db = opener() if opener is not None else \
                backend.connect(create=create, on_upgrade=on_upgrade)
            key = (role, *backend.identity())  # a file made just now has an inode now
            link = _links.get(key)
            if link is None:
                link = _links[key] = Link(key, backend, db)
            else:  # pragma: no cover - the file appeared under another name meanwhile
                db.close()
        link.refs += 1
        return link


def release(link: Link, *, keep_log: bool = False) -> None:
    """One user fewer; the last one closes the connection (`keep_log`: through the backend's
    `close_keeping_log`, where it has one)."""
    with _registry_lock:
        link.refs -= 1
        if link.refs > 0:
            return
        if _links.get(link.key) is link:
            del _links[link.key]
    with link.lock:
        bulk, link.bulk = link.bulk, None
        if bulk is not None:
            link.backend.stop_bulk(link.db, bulk, discard=True)
        if link.db is not None:
            closer = getattr(link.backend, "close_keeping_log", None) if keep_log else None
            if closer is not None:
                closer(link.db)
            else:
                link.db.close()
            link.db = None


def held_files() -> dict[tuple, tuple[str, str]]:
    """(device, inode) of every file of the stores this process holds open, with its suffix
    ("" for a store itself, "-wal", "-shm", "-journal") and what it is in words
    (`core.store.held_files`: never to be opened by anything but their own connection)."""
    # (a copy of the links without the registry's lock, which an opening holds while it
    # migrates a store: an import must not wait for that to look at its files)
    backends = [link.backend for link in tuple(_links.values())]
    out: dict[tuple, tuple[str, str]] = {}
    for backend in backends:
        files = getattr(backend, "held_files", None)
        if files is not None:
            for key, what in files().items():
                out.setdefault(key, what)
    return out


def open_links() -> int:
    """How many connections the process has open to stores (for tests)."""
    with _registry_lock:
        return len(_links)


def _forget_in_child() -> None:
    # A forked child must not use (or close) its parent's connections: it starts afresh.
    global _registry_lock
    _links.clear()
    _registry_lock = allocate_lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
