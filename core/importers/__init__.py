"""Importers: Claude Code, Codex, pi (v1-v3) and LangGraph SqliteSaver logs into the store.

The public API (safe to call from a worker thread that owns the store):

    report = import_paths(store, [path, ...], progress=callback)
    paths = discover()

One file (or LangGraph thread) becomes one external session; its entry tree is kept and
every leaf becomes an internal session. Each file is imported in its own transaction, so
a file that fails leaves nothing half-written and does not stop the others. Lines that
cannot be read are skipped and reported with their line numbers.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Iterable

from ..errors import ArborError
from .base import (FileResult, ImportReport, Progress, ProgressCallback, ProgressTicker,
                   SessionResult, Skipped, file_head_hash, file_size, path_key)
from .detect import CLAUDE_CODE, CODEX, FORMATS, LANGGRAPH, PI, NotALog, detect_format
from .files import discover, expand_paths
from .session import record_source, source_state

__all__ = [
    "FORMATS", "FileResult", "ImportReport", "Progress", "SessionResult", "Skipped",
    "detect_format", "discover", "expand_paths", "import_paths", "import_file", "link_lineage",
]

def import_paths(store, paths: Iterable[str | os.PathLike], *,
                 progress: ProgressCallback | None = None) -> ImportReport:
    """Import files and folders (recursively); see the module doc."""
    started = time.monotonic()
    report = ImportReport()
    files = expand_paths(paths, report)
    planned: list[tuple[Path, str | None, str | None]] = []
    for path in files:
        try:
            fmt = detect_format(path)
            planned.append((path, fmt, None))
        except NotALog as reason:
            planned.append((path, None, (reason.status, str(reason))))
        except OSError as error:
            planned.append((path, None, ("unreadable", f"cannot read: {error.strerror or error}")))
    planned = _codex_parents_first(planned)
    for index, (path, fmt, problem) in enumerate(planned):
        if fmt is None:
            report.files.append(FileResult(str(path), status=problem[0], error=problem[1]))
            continue
        report.files.append(import_file(store, path, fmt, progress=progress, index=index,
                                        count=len(planned)))
    link_lineage(store)
    report.seconds = time.monotonic() - started
    return report


def link_lineage(store) -> int:
    """Attach sub-agents and forks to the sessions they came from, now that these may be in
    the store (see core.lineage); a failure here never fails the import."""
    from ..lineage import link_sessions

    try:
        with store.transaction():
            return link_sessions(store)
    except (ArborError, sqlite3.Error):
        return 0


def import_file(store, path: Path, fmt: str | None = None, *,
                progress: ProgressCallback | None = None, index: int = 0,
                count: int = 1) -> FileResult:
    path = Path(path)
    result = FileResult(str(path), format=fmt)
    if fmt is None:
        try:
            fmt = detect_format(path)
        except NotALog as reason:
            result.status, result.error = reason.status, str(reason)
            return result
        except OSError as error:
            result.status, result.error = "unreadable", f"cannot read: {error.strerror or error}"
            return result
        result.format = fmt
    size = file_size(path)
    ticker = ProgressTicker(progress, str(path), index, count, size)
    ticker(0, force=True)
    key = f"{fmt}:{path_key(path)}"
    try:
        stat = path.stat()
        head = _module(fmt).fingerprint(path) if fmt == LANGGRAPH else file_head_hash(path)
        with store.transaction():
            row = source_state(store, key)
            if row is not None and row[2] == stat.st_size and row[3] == stat.st_mtime and \
                    _state_head(row[4]) == head and store.get_external_session(row[0]) is not None:
                result.status = "unchanged"
                _unchanged_sessions(store, key, result)
                ticker(size, force=True)
                return result
            module = _module(fmt)
            module.import_file(store, path, result, ticker)
            if result.status == "imported" and result.sessions:
                first = store.get_external_session_by_uid(result.sessions[0].uid)
                record_source(store, key=key, path=str(path), external_session_id=first.id,
                              fmt=fmt, size=stat.st_size, mtime=stat.st_mtime,
                              state={"head": head, "lines": result.lines,
                                     "sessions": [s.uid for s in result.sessions]})
    except OSError as error:
        result.status, result.error = "failed", f"cannot read: {error.strerror or error}"
        result.sessions.clear()
    except ArborError as error:
        result.status, result.error = "failed", str(error)
        result.sessions.clear()
    except sqlite3.Error as error:
        result.status, result.error = "failed", f"database error: {error}"
        result.sessions.clear()
    except MemoryError:
        result.status, result.error = "failed", "out of memory while reading this file"
        result.sessions.clear()
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the others
        result.status = "failed"
        result.error = f"unexpected {type(error).__name__}: {error}"
        result.sessions.clear()
    ticker(size, force=True)
    return result


def _state_head(state: dict) -> str | None:
    return state.get("head")


def _unchanged_sessions(store, key: str, result: FileResult) -> None:
    row = store.import_source(key)
    state = row[4] if row else {}
    result.lines = int(state.get("lines") or 0)
    for uid in state.get("sessions") or []:
        session = store.get_external_session_by_uid(uid)
        if session is not None:
            totals = store.session_totals(session.id)
            result.sessions.append(SessionResult(uid=uid, name=session.session_name,
                                                 source=session.source, created=False,
                                                 entries_total=totals[0], branches_total=totals[1]))


def _module(fmt: str):
    if fmt == CLAUDE_CODE:
        from . import claude_code as module
    elif fmt == CODEX:
        from . import codex as module
    elif fmt == PI:
        from . import pi as module
    elif fmt == LANGGRAPH:
        from . import langgraph as module
    else:  # pragma: no cover
        raise ArborError(f"unknown format {fmt}")
    return module


def _codex_parents_first(planned):
    """Codex forks become branches of their parent's session, so a parent file is imported
    before the files that name it."""
    codex = [(i, item) for i, item in enumerate(planned) if item[1] == CODEX]
    if len(codex) < 2:
        return planned
    from .codex import read_meta

    ids: dict[str, int] = {}
    parent_of: dict[int, str] = {}
    for i, (path, _fmt, _p) in codex:
        meta = read_meta(path)
        if meta is None:
            continue
        if meta.id:
            ids.setdefault(meta.id, i)
        if meta.parent_id:
            parent_of[i] = meta.parent_id
    order: list[int] = []
    placed: set[int] = set()

    def place(i: int, depth: int = 0) -> None:
        if i in placed or depth > 64:
            return
        parent = parent_of.get(i)
        if parent is not None and parent in ids and ids[parent] != i:
            place(ids[parent], depth + 1)
        placed.add(i)
        order.append(i)

    for i, _item in codex:
        place(i)
    codex_slots = [i for i, _ in codex]
    out = list(planned)
    for slot, i in zip(codex_slots, order):
        out[slot] = planned[i]
    return out
