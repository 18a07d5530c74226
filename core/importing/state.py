"""How far each imported file got: the per-file import state, and what to do next time.

One record per source file (the store's `import_sources`: what `stat` said and whether it
is complete also in columns, for telling unchanged files apart without reading any JSON,
see unchanged.py; the whole record in its `state` JSON). It is written in the same transaction as the entries it
describes, so it never claims more than the store holds: an import commits in short
transactions (so agents writing to the store wait milliseconds, not minutes), and each
commit moves the recorded offset forward with it. An import that is interrupted (Ctrl-C,
a crash, the machine going down) leaves a record with `complete` false, and the next
import of the file resumes at its offset; a file that grew is read from its offset too.
Live follow of running agents calls the same `import_file` on every change of a file.

The record (`FileState`):

    offset    bytes of the file that are fully in the store; the next read starts here.
              Always at the start of a line. A torn last line (no newline yet, not valid
              JSON: the agent is still writing it) is never consumed, so it is read again,
              whole, next time.
    line      how many lines lie before `offset` (line numbers and `L<n>` entry ids of a
              resumed read continue from it)
    tail      sha1 of the (up to) 1 KiB just before `offset`: the end of the last line
              consumed. If those bytes changed, the file was rewritten.
    head      sha1 of the first `head_len` bytes (4 KiB, or less for a smaller file)
    size, mtime_ns, inode, device
              what stat said when the record was written
    complete  the import reached the end of the file (False: it was interrupted)
    format    the format detected the first time (not detected again)
    reader    what the format's reader needs to go on from `offset` without reading what
              came before (None: this format re-reads from 0, which is safe because entry
              ids are deterministic, only slower). Claude Code keeps, for example, the
              line defaults, which user prompts have been answered by a rewind, the
              message ids whose usage was counted and recent tool names; see
              `claude_code.ResumeState`.
    sessions  uids of the sessions the file wrote into
    lines     lines read in all (for the report)
    aliases   {session uid: {id in the file: id in the store}}: entries the file names by
              ids other than the store's (a log its agent rewrote; see session.py); kept
              when the file is read again from 0

What the next import does (`plan`), from `os.stat` alone where it can:

    no record                                  read from 0
    complete, same size, mtime_ns and inode    unchanged: the file is not even opened
    smaller than offset                        truncated or replaced: read from 0
    head or tail bytes differ                  rewritten: read from 0
    otherwise (grew, or an incomplete record)  resume at offset with `reader`

Reading from 0 never duplicates anything: entries are identified by the log's own ids (or
`L<line>`), so lines already in the store are recognised and skipped.

Formats that cannot go on from an offset (Codex, pi) still commit about every 0.1 s, as
their entries are written (`Pacer.commit_written`, through `session.PACING`), without an
offset: an interrupted import of such a file is read again from 0. LangGraph databases are
never opened with plain file I/O: what changed is asked through SQLite, and a database is
read whole, in one transaction.
"""

from __future__ import annotations

import os
import time

from core.util.digests import sha1
from core.util.fastjson import dumps, loads
from core.model.values import Frozen, Record

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

HEAD_BYTES = 4096
TAIL_BYTES = 1024
STATE_VERSION = 1

# what plan() decides
UNCHANGED, RESUME, FROM_START = "unchanged", "resume", "from-start"


class FileState(Record):
    """The record of a file's import: where it stopped and what the file was then."""

    _fields = ("format", "offset", "line", "tail", "head", "head_len", "size", "mtime_ns",
               "inode", "device", "complete", "sessions", "lines", "version", "aliases")
    format: str
    offset: int
    line: int
    tail: str
    head: str
    head_len: int
    size: int
    mtime_ns: int
    inode: int
    device: int
    complete: bool
    sessions: list[str]
    lines: int
    version: int
    aliases: dict[str, dict[str, str]]

    def __init__(self, format: str, offset: int = 0, line: int = 0, tail: str = "",
                 head: str = "", head_len: int = 0, size: int = 0, mtime_ns: int = 0,
                 inode: int = 0, device: int = 0, complete: bool = False,
                 sessions: list[str] | None = None, lines: int = 0,
                 version: int = STATE_VERSION, aliases: dict[str, dict[str, str]] | None = None):
        self.format = format
        self.offset = offset
        self.line = line
        self.tail = tail
        self.head = head
        self.head_len = head_len
        self.size = size
        self.mtime_ns = mtime_ns
        self.inode = inode
        self.device = device
        self.complete = complete
        self.sessions = [] if sessions is None else sessions
        self.lines = lines
        self.version = version
        self.aliases = aliases if isinstance(aliases, dict) else {}

    def to_dict(self) -> dict[str, Any]:
        fields = {name: getattr(self, name) for name in self._fields}
        # the reader's state as text inside the record: the common question (did the file
        # change?) reads the record without building the reader's lists and maps
        fields["reader"] = None if self.reader is None else dumps(self.reader)
        return fields

    def to_json(self) -> str:
        return dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str | None, fmt: str) -> "FileState | None":
        """The record, or None when there is none or it is of an older kind (the
        file is then read from 0, which is always safe)."""
        try:
            value = loads(text.encode()) if text else None
        except ValueError:
            return None
        return cls.from_dict(value, fmt)

    @classmethod
    def from_dict(cls, value: Any, fmt: str) -> "FileState | None":
        if not isinstance(value, dict) or value.get("version") != STATE_VERSION:
            return None
        known = {k: v for k, v in value.items() if k in cls._fields}
        known.setdefault("format", fmt)
        reader = value.get("reader")
        try:
            state = cls(**known)
        except TypeError:
            return None
        state._reader_text = reader if isinstance(reader, str) else None
        return state

    @property
    def reader(self) -> dict[str, Any] | None:
        text = self.__dict__.pop("_reader_text", None)
        if text is not None:
            try:
                value = loads(text.encode())
            except ValueError:
                value = None
            self.__dict__["_reader"] = value if isinstance(value, dict) else None
        return self.__dict__.get("_reader")

    @reader.setter
    def reader(self, value: dict[str, Any] | None) -> None:
        self.__dict__.pop("_reader_text", None)
        self.__dict__["_reader"] = value

    def same_file(self, st: os.stat_result) -> bool:
        return (self.size == st.st_size and self.mtime_ns == st.st_mtime_ns
                and self.inode == st.st_ino and self.device == st.st_dev)

    def stamp(self, st: os.stat_result) -> None:
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns
        self.inode, self.device = st.st_ino, st.st_dev


class Plan(Frozen):
    """What an import does with a file (`plan`): its action and where it starts."""

    __slots__ = _fields = ("action", "offset", "line", "reader", "why")
    action: str                     # UNCHANGED | RESUME | FROM_START
    offset: int
    line: int
    reader: dict[str, Any] | None
    why: str

    def __init__(self, action: str, offset: int = 0, line: int = 0,
                 reader: dict[str, Any] | None = None, why: str = ""):
        setattr_ = object.__setattr__
        setattr_(self, "action", action)
        setattr_(self, "offset", offset)
        setattr_(self, "line", line)
        setattr_(self, "reader", reader)
        setattr_(self, "why", why)


def plan(state: FileState | None, st: os.stat_result, fd: int | None = None) -> Plan:
    """What to do with a file given its record and `os.stat`. `fd` (open for reading) is
    needed only to check the head and tail bytes; without it, anything but UNCHANGED
    is decided later by calling again with one."""
    if state is None:
        return Plan(FROM_START, why="first import")
    if state.complete and state.same_file(st):
        return Plan(UNCHANGED)
    if st.st_size < state.offset:
        return Plan(FROM_START, why="the file is shorter than what was imported")
    if fd is None:
        return Plan(RESUME, state.offset, state.line, state.reader, why="to be checked")
    if state.head_len and head_hash(fd, state.head_len) != state.head:
        return Plan(FROM_START, why="the start of the file changed")
    if state.offset and tail_hash(fd, state.offset) != state.tail:
        return Plan(FROM_START, why="the file changed before the imported offset")
    return Plan(RESUME, state.offset, state.line, state.reader,
                why="grew" if state.complete else "an interrupted import")


def head_hash(fd: int, length: int = HEAD_BYTES) -> str:
    return sha1(os.pread(fd, length, 0)).hexdigest()


def tail_hash(fd: int, offset: int) -> str:
    start = max(0, offset - TAIL_BYTES)
    return sha1(os.pread(fd, offset - start, start)).hexdigest()


class Pacer:
    """Ends an import's write transaction about every `budget` seconds, at a point the
    reader says is safe, with the file's record (not complete yet) in the same
    transaction; then lets writers that wait for the store in, and goes on.

    A reader calls `due()` between lines (cheap) and, when it says so, `commit(offset,
    line, reader_state, uid)` with its safe point (see `FileState.offset`)."""

    def __init__(self, store, state: FileState, fd: int, save, *, budget: float = 0.1,
                 first: float | None = None):
        """`first`: the first transaction ends this long after the first line is read
        (then every `budget` s), so that it holds what that much reading made."""
        self.store, self.state, self.fd, self.save = store, state, fd, save
        self.budget = budget if first is None else first
        self._then = budget
        self.since = time.monotonic() if first is None else None
        self.commits = 0
        # asked after each commit (with the offset recorded; None where none is): True
        # stops the read there (ImportStopped, with nothing written since the commit)
        self.enough: Callable[[int | None], bool] | None = None

    def due(self) -> bool:
        if self.since is None:   # (the first line: `first` counts from here)
            self.since = time.monotonic()
        return time.monotonic() - self.since >= self.budget

    def commit_written(self) -> None:
        """Commit what is written, with no record of an offset: for formats read again
        from their start after an interruption (their ids make that add only the rest)."""
        self.store.commit_and_continue()
        self.commits += 1
        self.budget = self._then
        self.since = time.monotonic()
        self._stop_if_enough(None)

    def commit(self, offset: int, line: int, reader: dict[str, Any] | None, uid: str | None) -> None:
        state = self.state
        if offset >= state.offset:          # never move backwards past what is recorded
            state.offset, state.line, state.reader = offset, line, reader
            state.tail = tail_hash(self.fd, offset) if offset else ""
        state.complete = False
        if uid and uid not in state.sessions:
            state.sessions.append(uid)
        if state.sessions:
            self.save(state)
        self.store.commit_and_continue()
        self.commits += 1
        self.budget = self._then
        self.since = time.monotonic()
        self._stop_if_enough(state.offset)

    def _stop_if_enough(self, offset: int | None) -> None:
        if self.enough is not None and self.enough(offset):
            from .base import ImportStopped

            raise ImportStopped("at a commit")
