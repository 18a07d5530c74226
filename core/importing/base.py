"""What every importer shares: the report, the line reader, timestamps, source bookkeeping.

Nothing here reads a whole file into memory: JSONL files are read line by line in binary
mode (a line is decoded only when it is parsed), and a line that is not JSON is reported
with its line number instead of stopping the import.
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

from core.model.clock import parse as parse_time
from core.util.digests import sha1
from core.util.fastjson import loads as fast_loads
from core.util.fastjson import nested_deeper_than
from core.model.values import Frozen, Record

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterator

# One line may be large (real Claude Code lines of many megabytes occur), but not unbounded.
MAX_LINE_BYTES = 256 * 1024 * 1024
READ_BUFFER = 1 << 20  # big reads: a log is read once, front to back
HEAD_BYTES = 4096
# Containers inside one another in one line, at most. orjson writes 254 levels and no more
# (the standard library's encoder recurses and overflows near 1,000), an entry wraps a line
# in a few levels of its own, and every reader after the import recurses too.
MAX_JSON_DEPTH = 200


class Skipped(Frozen):
    """A line (or record) that was not imported, and why."""

    __slots__ = _fields = ("path", "line", "reason")
    path: str
    line: int | None
    reason: str

    def __init__(self, path: str, line: int | None, reason: str):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "line", line)
        object.__setattr__(self, "reason", reason)

    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


class SessionResult(Record):
    """A session an import wrote to or found unchanged: what was added, what it holds."""

    _fields = ("uid", "name", "source", "created", "entries_added", "messages_added",
               "branches_added", "entries_total", "branches_total", "recognised", "spawned")
    uid: str
    name: str
    source: str
    created: bool
    entries_added: int
    messages_added: int
    branches_added: int
    entries_total: int
    branches_total: int
    recognised: int      # entries found under new ids (a log its agent rewrote: session.py)
    spawned: bool        # a sub-agent's (or sub-graph's) thread: the list shows it under its session

    def __init__(self, uid: str, name: str, source: str, created: bool, entries_added: int = 0,
                 messages_added: int = 0, branches_added: int = 0, entries_total: int = 0,
                 branches_total: int = 0, recognised: int = 0, spawned: bool = False):
        self.uid = uid
        self.name = name
        self.source = source
        self.created = created
        self.entries_added = entries_added
        self.messages_added = messages_added
        self.branches_added = branches_added
        self.entries_total = entries_total
        self.branches_total = branches_total
        self.recognised = recognised
        self.spawned = spawned


class FileResult(Record):
    """What happened to one path."""

    _fields = ("path", "format", "status", "lines", "sessions", "skipped", "duplicates", "error",
               "first_line")
    path: str
    format: str | None
    # imported | unchanged | not-a-log | skipped (left alone on purpose: an arbor store,
    # SQLite's -wal/-shm/-journal, a pipe or socket) | unreadable | failed
    status: str
    lines: int              # the file's lines up to where this import stopped reading
    sessions: list[SessionResult]
    skipped: list[Skipped]
    duplicates: int
    error: str | None
    first_line: int         # lines before where it started (a file that grew: read on from there)

    def __init__(self, path: str, format: str | None = None, status: str = "imported",
                 lines: int = 0, sessions: list[SessionResult] | None = None,
                 skipped: list[Skipped] | None = None, duplicates: int = 0,
                 error: str | None = None, first_line: int = 0):
        self.path = path
        self.format = format
        self.status = status
        self.lines = lines
        self.sessions = [] if sessions is None else sessions
        self.skipped = [] if skipped is None else skipped
        self.duplicates = duplicates
        self.error = error
        self.first_line = first_line

    @property
    def lines_read(self) -> int:
        """Lines this import read (none of a file found unchanged)."""
        return 0 if self.status == "unchanged" else max(0, self.lines - self.first_line)

    @property
    def sessions_added(self) -> int:
        return sum(1 for s in self.sessions if s.created)

    @property
    def threads_added(self) -> int:
        """Of the new sessions, sub-agents' threads (shown under their sessions)."""
        return sum(1 for s in self.sessions if s.created and s.spawned)

    @property
    def entries_added(self) -> int:
        return sum(s.entries_added for s in self.sessions)

    @property
    def messages_added(self) -> int:
        return sum(s.messages_added for s in self.sessions)

    @property
    def branches_added(self) -> int:
        return sum(s.branches_added for s in self.sessions)

    @property
    def session_uid(self) -> str | None:
        return self.sessions[0].uid if self.sessions else None

    @property
    def session_name(self) -> str:
        return self.sessions[0].name if self.sessions else ""

    def skip(self, line: int | None, reason: str) -> None:
        self.skipped.append(Skipped(self.path, line, reason))


class ImportReport(Record):
    """What an import of some paths did: a FileResult a file, and how long it took."""

    _fields = ("files", "seconds", "converted", "stopped")
    files: list[FileResult]
    seconds: float
    converted: int   # files read by worker processes (core.importing.workers.parallel)
    stopped: int     # files left unread (or read part-way) because the import was stopped

    def __init__(self, files: list[FileResult] | None = None, seconds: float = 0.0,
                 converted: int = 0, stopped: int = 0):
        self.files = [] if files is None else files
        self.seconds = seconds
        self.converted = converted
        self.stopped = stopped

    @property
    def sessions_added(self) -> int:
        return sum(f.sessions_added for f in self.files)

    @property
    def threads_added(self) -> int:
        """Of the new sessions, sub-agents' threads (shown under their sessions)."""
        return sum(f.threads_added for f in self.files)

    @property
    def entries_added(self) -> int:
        return sum(f.entries_added for f in self.files)

    @property
    def recognised(self) -> int:
        """Entries found under the new ids a log's agent gave them (see session.py)."""
        return sum(session.recognised for f in self.files for session in f.sessions)

    @property
    def messages_added(self) -> int:
        return sum(f.messages_added for f in self.files)

    @property
    def branches_added(self) -> int:
        return sum(f.branches_added for f in self.files)

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    @property
    def lines_read(self) -> int:
        return sum(f.lines_read for f in self.files)

    @property
    def skipped(self) -> list[Skipped]:
        return [s for f in self.files for s in f.skipped]

    @property
    def imported_files(self) -> list[FileResult]:
        return [f for f in self.files if f.status in ("imported", "unchanged")]

    @property
    def failed_files(self) -> list[FileResult]:
        return [f for f in self.files if f.status in ("failed", "not-a-log", "unreadable")]

    def summary(self) -> str:
        """A few sentences saying exactly what happened (for a notification)."""
        imported = [f for f in self.files if f.status == "imported"]
        unchanged = [f for f in self.files if f.status == "unchanged"]
        failed = [f for f in self.files if f.status == "failed"]
        not_logs = [f for f in self.files if f.status == "not-a-log"]
        unreadable = [f for f in self.files if f.status == "unreadable"]
        left_alone = [f for f in self.files if f.status == "skipped"]
        threads = self.threads_added
        sessions = self.sessions_added - threads   # (counted as the list shows them)
        also = f" and {threads:,} sub-agent thread{'s' if threads != 1 else ''}" if threads else ""
        parts = [f"{len(imported):,} file{'s' if len(imported) != 1 else ''} imported: "
                 f"{sessions:,} new session{'s' if sessions != 1 else ''}{also}, "
                 f"{self.entries_added:,} entries ({self.messages_added:,} messages), "
                 f"{self.branches_added:,} new branch{'es' if self.branches_added != 1 else ''}."]
        if unchanged:
            parts.append(f"{len(unchanged):,} unchanged since the last import.")
        if self.recognised:
            parts.append(f"{self.recognised} entr{'ies' if self.recognised != 1 else 'y'} "
                         "already here under other ids (a log its agent rewrote): kept once.")
        skipped = self.skipped
        if skipped:
            first = skipped[0]
            parts.append(f"{len(skipped)} line{'s' if len(skipped) != 1 else ''} skipped "
                         f"(first: {first.where()}: {first.reason}).")
        if not_logs:
            parts.append(f"{len(not_logs)} not a log (first: {not_logs[0].path}: {not_logs[0].error}).")
        if left_alone:
            parts.append(f"{len(left_alone)} left alone (first: {left_alone[0].path}: "
                         f"{left_alone[0].error}).")
        if unreadable:
            parts.append(f"{len(unreadable)} unreadable (first: {unreadable[0].path}: "
                         f"{unreadable[0].error}).")
        if failed:
            parts.append(f"{len(failed)} failed (first: {failed[0].path}: {failed[0].error}).")
        if self.stopped:
            parts.append(f"Stopped with {self.stopped} file{'s' if self.stopped != 1 else ''} "
                         "still to read (what was read is kept; the next import goes on "
                         "from there).")
        return " ".join(parts)


class Progress(Frozen):
    """One progress update: which file, how far (bytes), how many files in all."""

    __slots__ = _fields = ("path", "file_index", "file_count", "done", "total", "phase")
    path: str
    file_index: int
    file_count: int
    done: int
    total: int
    phase: str

    def __init__(self, path: str, file_index: int, file_count: int, done: int, total: int,
                 phase: str = "reading"):
        setattr_ = object.__setattr__
        setattr_(self, "path", path)
        setattr_(self, "file_index", file_index)
        setattr_(self, "file_count", file_count)
        setattr_(self, "done", done)
        setattr_(self, "total", total)
        setattr_(self, "phase", phase)


if TYPE_CHECKING:
    ProgressCallback = Callable[[Progress], None]


class ImportStopped(BaseException):
    """Raised from a progress callback to stop the file being read: its write transaction
    is rolled back to its last commit, whose record says where the next import goes on.
    A BaseException, as KeyboardInterrupt is, so that no importer takes it for a bad
    line; `import_file` gives the file's result with status "stopped"."""


class ProgressTicker:
    """Calls the user's progress callback at most every `interval` seconds."""

    def __init__(self, callback: ProgressCallback | None, path: str, index: int, count: int,
                 total: int, interval: float = 0.1):
        self.callback = callback
        self.path, self.index, self.count, self.total = path, index, count, total
        self.interval = interval
        self._last = 0.0
        self.phase = "reading"

    def __call__(self, done: int, *, force: bool = False) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        if force or now - self._last >= self.interval:
            self._last = now
            self.callback(Progress(self.path, self.index, self.count, done, self.total, self.phase))


# ----------------------------------------------------------------------------- lines
class RawLine(Record):
    """One line of a log as read: its number, where it starts, and its bytes."""

    __slots__ = _fields = ("number", "offset", "data", "complete", "end")
    number: int      # 1-based
    offset: int      # byte offset of the line's start
    data: bytes      # without the line ending
    complete: bool   # ended with a newline (False: the last line of a file still being written)
    end: int         # byte offset just past the line (where the next read starts: the file's
    #                  tell(), which costs a system call that lets the writer thread in)

    def __init__(self, number: int, offset: int, data: bytes, complete: bool, end: int = 0):
        self.number = number
        self.offset = offset
        self.data = data
        self.complete = complete
        self.end = end


def iter_lines(handle, start_offset: int = 0, start_number: int = 1) -> Iterator[RawLine]:
    """Lines of a binary file, with their byte offsets. Blank lines are skipped.

    A line without its newline is the last one given: the end of the file as it was when
    read. A writer may finish that line while the file is read; what it then reads is the
    rest of the same line, not a line of its own (two bad lines, one lost message)."""
    offset = start_offset
    number = start_number - 1
    readline = handle.readline
    while True:
        data = readline(MAX_LINE_BYTES)
        if not data:
            return
        number += 1
        length = len(data)
        complete = data.endswith(b"\n")
        if not complete and length >= MAX_LINE_BYTES:
            # A line longer than the limit: skip the rest of it.
            rest = length
            while True:
                more = readline(1 << 20)
                rest += len(more)
                if not more or more.endswith(b"\n"):
                    break
            yield RawLine(number, offset, b"", False, offset + rest)
            offset += rest
            continue
        line_start = offset
        offset += length
        stripped = data.rstrip(b"\r\n")
        if not stripped or stripped.isspace():
            if not complete:
                return
            continue
        yield RawLine(number, line_start, stripped, complete, offset)
        if not complete:
            return


# A line that is not valid UTF-8 is read with U+FFFD in place of the bytes that are not;
# its original bytes (base64) go with it under this key, and so into its entry's data (the
# importers keep a line's fields they do not use). Valid lines never carry it.
RAW_LINE_KEY = "arbor:rawLine"


def raw_lines_of(data: dict[str, Any]) -> list[bytes]:
    """The original bytes of the lines not valid UTF-8 that an entry's data holds (each
    importer keeps a line's leftover fields in its own place: at the top, under "claude",
    under "codex" with the lines folded into it), in the order they are found."""
    from base64 import b64decode

    out = []
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            raw = value.get(RAW_LINE_KEY)
            if isinstance(raw, str):
                out.append(b64decode(raw))
            stack.extend(reversed([v for v in value.values() if isinstance(v, (dict, list))]))
        elif isinstance(value, list):
            stack.extend(reversed([v for v in value if isinstance(v, (dict, list))]))
    return out


class LineError(Exception):
    """A line that cannot be read as a JSON object."""


# What reading a valid JSON line of a shape no importer expected can raise. An importer
# catches these around its pure reading of one line (never around a write), keeps the
# line as it was (raw) and reports it, so one odd line never fails the file.
SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)


def odd_shape(error: BaseException, outcome: str = "kept as it was, raw") -> str:
    """The report of a line `SHAPE_ERRORS` came from."""
    return f"a line of an unexpected shape ({type(error).__name__}: {error}): {outcome}"


def object_lines(handle, result: "FileResult", ticker: "ProgressTicker",
                 start_offset: int = 0, start_number: int = 1) -> Iterator[tuple[RawLine, dict[str, Any]]]:
    """The lines of a log read as JSON objects; a line that is not one is reported as skipped."""
    for raw in iter_lines(handle, start_offset, start_number):
        result.lines = raw.number
        if raw.number % 2048 == 0:
            ticker(raw.offset)
        try:
            value = parse_line(raw)
        except LineError as error:
            result.skip(raw.number, str(error))
            continue
        yield raw, value


def parse_line(raw: RawLine) -> dict[str, Any]:
    """The line as a JSON object, or LineError with a reason a user can read."""
    if not raw.data:
        raise LineError(f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MB")
    try:
        value = fast_loads(raw.data)
    except UnicodeDecodeError:
        try:
            value = json.loads(raw.data.decode("utf-8", "replace"))
        except ValueError:
            raise LineError("not JSON (binary data)") from None
        if isinstance(value, dict):
            from base64 import b64encode   # (a line not UTF-8 is rare: ~1 ms of start-up)

            value[RAW_LINE_KEY] = b64encode(raw.data).decode("ascii")
    except RecursionError:
        raise LineError("JSON nested too deeply") from None
    except ValueError as error:
        if not raw.complete:
            raise LineError("truncated last line (incomplete JSON, the file may still be "
                            "being written)") from None
        if _looks_binary(raw.data):
            raise LineError("not JSON (binary data)") from None
        raise LineError(f"not valid JSON ({_short_json_error(error)})") from None
    if not isinstance(value, dict):
        raise LineError(f"a JSON {type(value).__name__}, not an object")
    if nested_too_deeply(raw.data, value):
        raise LineError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    return value


_NOT_OPENING = bytes(byte for byte in range(256) if byte not in b"[{")


def nested_too_deeply(data: bytes, value: Any) -> bool:
    """Whether the parsed line `value` (read from `data`) nests containers more than
    MAX_JSON_DEPTH deep. A line with fewer opening brackets than that cannot, so the
    common line costs one pass over its bytes and no walk."""
    if len(data.translate(None, _NOT_OPENING)) <= MAX_JSON_DEPTH:   # (one pass, not two counts)
        return False
    return nested_deeper_than(value, MAX_JSON_DEPTH)


def _short_json_error(error: ValueError) -> str:
    text = str(error)
    return text.split(":")[0] if ":" in text else text


def _looks_binary(data: bytes) -> bool:
    sample = data[:512]
    if b"\x00" in sample:
        return True
    bad = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return bad > len(sample) // 20


# ------------------------------------------------------------------------ timestamps
_ISO_Z_PATTERN = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$"
_iso_z = None   # compiled on first use (`stored_time` reads the common form without it)


def timestamp_of(value: Any) -> datetime | None:
    """A log's timestamp (ISO text or epoch seconds/milliseconds) as an aware datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return parse_time(value)  # type: ignore[arg-type]
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        global _iso_z
        if _iso_z is None:
            _iso_z = re.compile(_ISO_Z_PATTERN)
        if not _iso_z.match(value):
            return None
        return parse_time(value)
    return None


_FAST_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def stored_time(value: Any) -> str | None:
    """A log's timestamp in the store's text form (UTC, milliseconds, "+00:00"), or None.

    The common form "2025-07-01T10:00:00.000Z" is converted by slicing, without parsing."""
    if isinstance(value, str) and len(value) == 24 and _FAST_Z.match(value):
        return value[:23] + "+00:00"
    moment = timestamp_of(value)
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class Clockwork:
    """Timestamps as stored text; a line without a readable one gets the last good one seen
    (else the file's mtime), so entries keep their order and never look "just now"."""

    def __init__(self, fallback: datetime | str):
        self.last = fallback if isinstance(fallback, str) else \
            fallback.astimezone(timezone.utc).isoformat(timespec="milliseconds")
        self.first: str | None = None

    def take(self, value: Any) -> str:
        text = stored_time(value)
        if text is None:
            return self.last
        self.last = text
        if self.first is None or text < self.first:
            self.first = text
        return text


def file_mtime(path: Path) -> datetime:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)


def iso_ms(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_ms(moment: datetime | str | None) -> int | None:
    if isinstance(moment, str):
        moment = timestamp_of(moment.replace("+00:00", "Z")) or parse_time(moment)
    return int(moment.timestamp() * 1000) if moment is not None else None


# ----------------------------------------------------------------------- fingerprints
def file_head_hash(path: Path) -> str:
    with open(path, "rb") as handle:
        return sha1(handle.read(HEAD_BYTES)).hexdigest()


def short_hash(text: str, length: int = 10) -> str:
    return sha1(text.encode("utf-8", "replace")).hexdigest()[:length]


# ------------------------------------------------------------------------- naming
def title_from_text(text: str, limit: int = 80) -> str:
    """A one-line session name from a message's text."""
    flat = " ".join(str(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return flat


def file_size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
