"""The files of the stores this process has open, which nothing but the store's own
connection may open: the store itself, its `-wal`, `-shm` and `-journal`.

SQLite's locks are POSIX locks: they belong to the process, and closing ANY descriptor of
a file drops all of them. A symbolic or hard link named `notes.jsonl` that points at the
store's `-shm`, found in a folder an import or the watcher reads, would be opened (by the
SQLite probe of `detect`, or as a log) and closed: this process would lose its lock on
the `-shm`, the next process to open the store would take it for abandoned and reset it,
and this one would die of SIGBUS on its mapping (or its readers would see "locking
protocol" errors). Names cannot tell such a link; the device and inode can. So before a
file is opened, its `stat` is compared with every file of every store this process holds
open (`held`), and `open_unless_held` checks the descriptor it opened once more (a link
swapped in between): a descriptor that turns out to be one of those files is kept open,
never closed, since closing it is the harm.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import BinaryIO

# Descriptors that turned out, once open, to be a held store's file: closing one would drop
# this process's locks on it, so they stay open while the process lives.
_kept_open: list = []


class HeldFile(OSError):
    """A file of a store this process has open: left alone, never opened (the message says
    which file of which store)."""

    status = "skipped"


def held_files() -> dict[tuple[int, int], tuple[str, str]]:
    """(device, inode) of every file of every store this process holds open, each with its
    suffix ("" for the store itself, "-wal", "-shm", "-journal") and what it is in words
    ("the shared-memory index (-shm) of the store /x/arbor.db")."""
    from .registry import held_files as from_registry

    return from_registry()


def held(st: os.stat_result, files: dict[tuple[int, int], tuple[str, str]] | None = None, *,
         side_files_only: bool = False) -> str | None:
    """The report's line for `st`, if it is a file of a store this process holds open
    (`files`: a `held_files()` the caller already has; `side_files_only`: only its -wal,
    -shm or -journal, not the store itself); None for any other file."""
    files = held_files() if files is None else files
    if not files:
        return None
    found = files.get((st.st_dev, st.st_ino))
    if found is None or (side_files_only and not found[0]):
        return None
    suffix, what = found
    return left_alone(what, store_itself=not suffix)


def left_alone(what: str, *, store_itself: bool = False) -> str:
    """The line a report gives a held file (`held_files()` says what it is)."""
    if store_itself:
        return "an arbor store, not an agent log"   # (as any other store is reported)
    return (f"{what}, which this arbor has open: left alone (opening it would drop the "
            "store's locks)")


def check_path(path: str | os.PathLike,
               files: dict[tuple[int, int], tuple[str, str]] | None = None) -> None:
    """Raise HeldFile when `path` (links followed) is a file of a store this process holds
    open (`files`: see `held`); other stat errors are left to the caller's own open."""
    files = held_files() if files is None else files
    if not files:
        return
    try:
        st = os.stat(path)
    except OSError:
        return
    line = held(st, files)
    if line is not None:
        raise HeldFile(line)


def open_unless_held(path: str | os.PathLike, buffering: int = -1) -> BinaryIO:
    """`open(path, "rb")`, unless it is a file of a store this process holds open
    (HeldFile, an OSError: callers that treat an unreadable file as such need no change)."""
    files = held_files()
    if not files:
        return open(path, "rb", buffering=buffering)
    check_path(path, files)
    handle = open(path, "rb", buffering=buffering)
    try:
        line = held(os.fstat(handle.fileno()), files)
    except BaseException:
        handle.close()
        raise
    if line is not None:   # swapped for a link after the check: kept open, see the module doc
        _kept_open.append(handle)
        raise HeldFile(line)
    return handle
