"""Format detection by content (the first readable lines), with the file name as a hint only.

A file whose name ends in `.jsonl` is read as a log. Any other file may be a SQLite
database, maybe a live store, so it is asked about through SQLite (`sqlite_probe`), never
read with plain file I/O (see `files`); only when SQLite says it is not a database is it
read as a log.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import LineError, iter_lines, parse_line
from .files import not_a_file, side_file_of

from core.agents import registry

CLAUDE_CODE, CODEX, PI, LANGGRAPH = "claude_code", "codex", "pi", "langgraph"
FORMATS = registry.formats()      # every agent's (core/agents/registry.py)
NOT_A_LOG = "not a log of any agent arbor reads (`arbor import --help` lists them)"
_PROBE_LINES = 20
_PROBE_BYTES = 64 * 1024 * 1024


class NotALog(Exception):
    """The file is not in a format arbor imports; the message says what it looks like."""

    status = "not-a-log"


class LeftAlone(NotALog):
    """A file arbor deliberately does not read (an arbor store, SQLite's own files)."""

    status = "skipped"


def detect_format(path: Path) -> str:
    """One of FORMATS, or NotALog (with a reason), or OSError when the file cannot be read."""
    path = Path(path)
    side = side_file_of(path.name)
    if side is not None:
        raise LeftAlone(f"{side}: never read by arbor")
    problem = not_a_file(path)   # a pipe would block the reader: judged by stat alone
    if problem is not None:
        error = NotALog(problem[1])
        error.status = problem[0]
        raise error
    if os.stat(path).st_size == 0:
        raise NotALog("empty file")
    # SQLite first, whatever the name: a store named *.jsonl is opened with plain I/O only
    # after SQLite has said it is not a database (~0.06 ms a file). (Imported here: an
    # import of files already known, by their records, never asks.)
    from core.store.sqlite_probe import ARBOR, EMPTY, HELD, NOT_SQLITE, SQLITE, UNREADABLE, probe

    found = probe(path)
    if found.kind == HELD:
        from core.store.held_files import left_alone

        raise LeftAlone(left_alone(found.reason))
    if found.kind == ARBOR:
        raise LeftAlone("an arbor store, not an agent log")
    if found.kind == SQLITE:
        fmt = registry.detect_database(frozenset(found.tables))
        if fmt is not None:
            return fmt
        raise NotALog(f"a SQLite database of no agent arbor reads ({registry.databases_text()})")
    if found.kind == UNREADABLE:
        raise NotALog(f"a file SQLite cannot read ({found.reason})")
    if found.kind == EMPTY:
        raise NotALog("empty file")
    if found.kind != NOT_SQLITE:  # (screened before: a folder, pipe or sidecar)
        raise LeftAlone(f"not a file arbor reads ({found.kind})")
    return _detect_log(path)


def _detect_log(path: Path) -> str:
    from core.store.held_files import HeldFile, open_unless_held

    probed = 0
    try:
        handle = open_unless_held(path)
    except HeldFile as held:
        raise LeftAlone(str(held)) from None
    with handle:
        read = 0
        for raw in iter_lines(handle):
            read += len(raw.data) + 1
            probed += 1
            try:
                first = parse_line(raw)
            except LineError:
                if probed >= _PROBE_LINES or read > _PROBE_BYTES:
                    break
                continue
            found = _detect_json(first)
            if found:
                return found
            if probed >= _PROBE_LINES or read > _PROBE_BYTES:
                break
    whole = _detect_document(path)
    if whole:
        return whole
    hint = _detect_by_name(path)
    if hint:
        return hint
    if probed == 0:
        raise NotALog("empty file")
    raise NotALog(NOT_A_LOG)


_DOCUMENT_BYTES = 64 * 1024 * 1024


def _detect_document(path: Path) -> str | None:
    """A `.json` file printed over many lines (opencode's `opencode export`): the format
    of the JSON object it holds, read whole (up to 64 MB)."""
    if path.suffix.lower() != ".json":
        return None
    from core.store.held_files import HeldFile, open_unless_held
    from core.util.fastjson import loads

    try:
        with open_unless_held(path) as handle:
            data = handle.read(_DOCUMENT_BYTES + 1)
    except (HeldFile, OSError):
        return None
    if len(data) > _DOCUMENT_BYTES:
        return None
    try:
        document = loads(data)
    except ValueError:
        return None
    return _detect_json(document) if isinstance(document, dict) else None


def _detect_json(first: dict) -> str | None:
    return registry.detect_json(first)


def _detect_by_name(path: Path) -> str | None:
    return registry.detect_by_name(str(path).replace("\\", "/"))
