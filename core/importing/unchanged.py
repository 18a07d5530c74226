"""Telling files that have not changed since their last import from `stat` alone.

An import record (state.py) keeps what `stat` said of the file when it was written. A
complete record with the same size, mtime and inode means the file is not even opened.
`Store.imports.stamps` gives those few fields of every record in one query (the readers'
states are not read); `look` answers the commonest `arbor import --discover` of all,
"nothing changed", with that query and a `stat` a file, before the store's API or any
importer is loaded, and when something did change hands the import what it saw.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Iterable

from core.agents import registry

# Formats in the order a record is looked for (detect.FORMATS, without importing detect)
FORMATS = registry.formats()
# Formats whose logs are databases: never judged unchanged by `stat` (see `is_unchanged`)
DATABASES = frozenset(agent.source for agent in registry.agents() if agent.database is not None)
LANGGRAPH = "langgraph"
STATE_VERSION = 1       # state.STATE_VERSION (tests/test_import_unchanged.py checks both)


def stamp_of(stamps: dict[str, tuple], key: str) -> tuple[str, tuple] | None:
    """(format, stamp) of the file with this key, under whichever format it was imported
    as; None when it has no usable record. A stamp is (record version, complete, size,
    mtime_ns, inode, device, lines), as `Store.imports.stamps` gives it."""
    if not stamps:
        return None
    for fmt in FORMATS:
        stamp = stamps.get(f"{fmt}:{key}")
        if stamp is not None:
            return (fmt, stamp) if len(stamp) == 7 and stamp[0] == STATE_VERSION else None
    return None


def is_unchanged(fmt: str, stamp: tuple, st: os.stat_result) -> bool:
    """What `state.plan` calls UNCHANGED, from the stamp and stat alone. A database (a
    LangGraph one, opencode's) never is: it may change in its WAL without changing size
    or time, so it is asked through SQLite (driver._import_database)."""
    _version, complete, size, mtime_ns, inode, device, _lines = stamp
    return fmt not in DATABASES and complete == 1 and size == st.st_size and \
        mtime_ns == st.st_mtime_ns and inode == st.st_ino and device == st.st_dev


def sessions_of(text: str | None) -> list[str]:
    """The uids of the sessions a file wrote into (`Store.imports.record_sessions`: the
    record's "sessions", or the whole record where the backend returns that)."""
    from core.util.fastjson import loads

    try:
        value = loads(text.encode()) if isinstance(text, str) else None
    except ValueError:
        return []
    if isinstance(value, dict):
        value = value.get("sessions")
    return [uid for uid in value if isinstance(uid, str)] if isinstance(value, list) else []


class Look:
    """What `look` saw: the files `paths` hold (`files.Found`: each stat'ed once), the
    paths left alone as (name, status, reason), the records' stamps (None when the store
    was not read), and how many files there are when none changed (None otherwise). An
    import that has to run is given it (`import_paths(scanned=...)`) so as not to walk
    the folders and read the records a second time."""

    __slots__ = ("found", "problems", "stamps", "unchanged", "held")

    def __init__(self, found: list, problems: list[tuple[str, str, str]]):
        self.found = found
        self.problems = problems
        self.stamps: dict[str, tuple] | None = None
        self.unchanged: int | None = None
        self.held: list = []   # the connection the records were read through, when kept

    def release(self) -> None:
        """Close the connection the records were read through (`look(hold=True)`): once
        the import's own connection to the store is open, or when there is to be none."""
        while self.held:
            self.held.pop().close()


def grown_bytes(seen: Look) -> int | None:
    """How many bytes the files `look` saw grew by since their complete import records:
    what an import of them reads, when it only reads on from where each file ended.
    None when that is not all it does: no records read, a file without one (or one never
    judged by `stat`: a database), a file that shrank, or an interrupted import's record."""
    stamps = seen.stamps
    if not stamps or seen.problems:
        return None
    grown = 0
    for item in seen.found:
        known = stamp_of(stamps, item.key)
        if known is None or known[0] in DATABASES:
            return None
        _version, complete, size, _mtime_ns, _inode, _device, _lines = known[1]
        if complete != 1 or item.st.st_size < size:
            return None
        grown += item.st.st_size - size
    return grown


def unread_bytes(stamps: dict[str, tuple], key: str, size: int) -> int:
    """What is left to read of a file of `size` bytes: the bytes after those its complete
    import record holds when it grew (an import reads on from its end), else all of them."""
    known = stamp_of(stamps, key)
    if known is None or known[0] in DATABASES:
        return size
    _version, complete, recorded, _mtime_ns, _inode, _device, _lines = known[1]
    return size - recorded if complete == 1 and recorded <= size else size


def look(db_path: os.PathLike, paths: "Iterable[str | os.PathLike]", *, hold: bool = False
         ) -> Look:
    """Whether every file `paths` hold is unchanged since its last import (judged exactly
    as `import_paths` judges): `Look.unchanged` is then their number; it is None in any
    other case (a file to import or to report, no store yet, a store to migrate), and the
    caller runs the import. Reads the records through a read-only connection closed
    before it returns, so call it before this process opens the store (see
    `sqlite.peek_import_stamps`); `hold`: when something changed, that connection is kept
    in the Look until the caller's own is open (`Look.release`)."""
    from core.store.sqlite.backend import peek_import_stamps
    from .files import scan

    problems: list[tuple[str, str, str]] = []
    found = scan(paths, lambda name, status, reason: problems.append((name, status, reason)))
    seen = Look(found, problems)
    if problems or not found:
        return seen
    seen.stamps = stamps = peek_import_stamps(db_path, seen.held if hold else None)
    if not stamps:
        seen.release()
        return seen
    for item in found:
        known = stamp_of(stamps, item.key)
        if known is None or not is_unchanged(known[0], known[1], item.st):
            return seen
    seen.release()
    seen.unchanged = len(found)
    return seen
