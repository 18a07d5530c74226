"""Writers that append to a log the way each agent does: one JSON line at a time, ids
chained, shapes as in the real files (tests/fixtures/lineage, ../shared/fixtures).

Used by the live-follow tests (core, `arbor watch`, the app in tmux) and bench_follow."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

START = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _stamp(n: int) -> str:
    return (START + timedelta(seconds=n)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Writer:
    """Appends lines to one log file; `torn` writes a line in two parts."""

    format = ""

    def __init__(self, path: Path, session: str, cwd: str = "/work/project"):
        self.path = Path(path)
        self.session = session
        self.cwd = cwd
        self.n = 0
        self.last: str | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def line(self, role: str, text: str) -> str:  # pragma: no cover - per format
        raise NotImplementedError

    def header(self) -> list[str]:
        return []

    def start(self, text: str = "Start the work") -> None:
        with open(self.path, "w", encoding="utf-8") as handle:
            for line in self.header():
                handle.write(line + "\n")
            handle.write(self.line("user", text) + "\n")

    def append(self, role: str, text: str) -> None:
        self._write((self.line(role, text) + "\n").encode())

    def torn(self, role: str, text: str, cut: int = 20) -> bytes:
        """Write the first `cut` bytes of a line; returns the rest (write it with `finish`)."""
        data = (self.line(role, text) + "\n").encode()
        self._write(data[:cut])
        return data[cut:]

    def finish(self, rest: bytes) -> None:
        self._write(rest)

    def _write(self, data: bytes) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


class ClaudeWriter(Writer):
    format = "claude_code"

    def line(self, role: str, text: str) -> str:
        self.n += 1
        uuid = f"{self.session[:8]}-0000-4000-8000-{self.n:012d}"
        message = {"role": role, "content": text} if role == "user" else {
            "id": f"msg_{self.session[:8]}{self.n:06d}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                      "cache_creation_input_tokens": 0}}
        d = {"parentUuid": self.last, "isSidechain": False, "type": role, "message": message,
             "uuid": uuid, "timestamp": _stamp(self.n), "userType": "external", "cwd": self.cwd,
             "sessionId": self.session, "version": "2.1.197", "gitBranch": "main"}
        self.last = uuid
        return json.dumps(d)


class CodexWriter(Writer):
    format = "codex"

    def header(self) -> list[str]:
        return [json.dumps({"timestamp": _stamp(0), "type": "session_meta", "payload": {
            "id": self.session, "timestamp": _stamp(0), "cwd": self.cwd, "originator": "codex_exec",
            "cli_version": "0.171.0", "source": "exec", "model_provider": "openai"}})]

    def line(self, role: str, text: str) -> str:
        self.n += 1
        kind = "input_text" if role == "user" else "output_text"
        return json.dumps({"timestamp": _stamp(self.n), "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": kind, "text": text}]}})


class PiWriter(Writer):
    format = "pi"

    def header(self) -> list[str]:
        return [json.dumps({"type": "session", "version": 3, "id": self.session,
                            "timestamp": _stamp(0), "cwd": self.cwd})]

    def line(self, role: str, text: str) -> str:
        self.n += 1
        entry_id = f"{self.n:08x}"
        message = {"role": role, "content": text, "timestamp": 1796115600000 + self.n} \
            if role == "user" else {
                "role": "assistant", "content": [{"type": "text", "text": text}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                          "totalTokens": 15},
                "stopReason": "stop", "timestamp": 1796115600000 + self.n}
        d = {"type": "message", "id": entry_id, "parentId": self.last,
             "timestamp": _stamp(self.n), "message": message}
        self.last = entry_id
        return json.dumps(d)


def agent_home(home: Path) -> dict[str, Writer]:
    """One writer per agent, each at its usual place under `home`."""
    return {
        "claude_code": ClaudeWriter(home / ".claude" / "projects" / "-work-project" /
                                    "aaaaaaaa-1111-4111-8111-111111111111.jsonl",
                                    "aaaaaaaa-1111-4111-8111-111111111111"),
        "codex": CodexWriter(home / ".codex" / "sessions" / "2026" / "12" / "01" /
                             "rollout-2026-12-01T09-00-00-bbbbbbbb-2222-4222-8222-222222222222.jsonl",
                             "bbbbbbbb-2222-4222-8222-222222222222"),
        "pi": PiWriter(home / ".pi" / "agent" / "sessions" / "--work-project--" /
                       "2026-12-01T09-00-00-000Z_cccccccc-3333-4333-8333-333333333333.jsonl",
                       "cccccccc-3333-4333-8333-333333333333"),
    }
