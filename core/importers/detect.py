"""Format detection by content (the first readable lines), with the file name as a hint only."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .base import LineError, iter_lines, parse_line

SQLITE_MAGIC = b"SQLite format 3\x00"
CLAUDE_CODE, CODEX, PI, LANGGRAPH = "claude_code", "codex", "pi", "langgraph"
FORMATS = (CLAUDE_CODE, CODEX, PI, LANGGRAPH)
_PROBE_LINES = 20
_PROBE_BYTES = 64 * 1024 * 1024


class NotALog(Exception):
    """The file is not in a format arbor imports; the message says what it looks like."""


def detect_format(path: Path) -> str:
    """One of FORMATS, or NotALog (with a reason), or OSError when the file cannot be read."""
    with open(path, "rb") as handle:
        head = handle.read(16)
        if not head:
            raise NotALog("empty file")
        if head == SQLITE_MAGIC:
            return _detect_sqlite(path)
        handle.seek(0)
        probed = 0
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
    hint = _detect_by_name(path)
    if hint:
        return hint
    if probed == 0:
        raise NotALog("empty file")
    raise NotALog("not a Claude Code, Codex, pi or LangGraph log")


def _detect_json(first: dict) -> str | None:
    from . import claude_code

    t = first.get("type")
    if t == "session" and ("version" in first or "id" in first) and "payload" not in first:
        return PI
    if "payload" in first and t in ("session_meta", "turn_context", "response_item", "event_msg",
                                    "compacted"):
        return CODEX
    if claude_code.looks_like(first):
        return CLAUDE_CODE
    if t == "message" and isinstance(first.get("message"), dict) and "role" in first["message"]:
        return PI  # a pi file whose header line was lost
    return None


def _detect_by_name(path: Path) -> str | None:
    text = str(path).replace("\\", "/")
    if path.name.startswith("rollout-") and path.suffix == ".jsonl":
        return CODEX
    if "/.claude/projects/" in text and path.suffix == ".jsonl":
        return CLAUDE_CODE
    if "/.pi/agent/sessions/" in text and path.suffix == ".jsonl":
        return PI
    return None


def _detect_sqlite(path: Path) -> str:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise NotALog(f"a SQLite file that cannot be opened ({error})") from None
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as error:
        raise NotALog(f"a damaged SQLite file ({error})") from None
    finally:
        conn.close()
    if "schema_migrations" in tables and "entries" in tables:
        raise NotALog("an arbor store, not an agent log")
    if "checkpoints" in tables:
        return LANGGRAPH
    raise NotALog("a SQLite database without LangGraph checkpoints")
