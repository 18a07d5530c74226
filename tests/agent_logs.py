"""Small writers of agent logs for the resume tests: Claude Code transcripts, Codex rollouts
and pi sessions, shaped as those agents write them (learned from their own code and the
fixtures in ../shared/fixtures), plus what the tests compare: a branch's messages, reduced
to what an agent sees (role, text, tool calls, tool results)."""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from core.agents import Ids
from core.model.entries import COMPACTION, MESSAGE, content_text

START = datetime(2026, 3, 1, 9, 0, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 3, 2, 12, 30, 0, tzinfo=timezone.utc)


def fixed_ids(start: int = 1) -> Ids:
    """Deterministic new ids for the writers (another `start`: other ids, as another run)."""
    count = itertools.count(start)
    return Ids(uuid4=lambda: f"aaaaaaaa-0000-4000-8000-{next(count):012d}",
               uuid7=lambda now: f"01900000-0000-7000-8000-{next(count):012d}",
               token=lambda n: f"{next(count):0{2 * n}x}")


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class Clock:
    def __init__(self, start: datetime = START):
        self.now = start

    def __call__(self) -> str:
        self.now += timedelta(seconds=5)
        return _stamp(self.now)


# ----------------------------------------------------------------- Claude Code
class ClaudeLog:
    """A Claude Code transcript, line by line (uuids counted, so runs are equal)."""

    def __init__(self, session_id: str, cwd: str, *, version: str = "2.1.90",
                 git_branch: str = "main"):
        self.session_id, self.cwd, self.version, self.git_branch = session_id, cwd, version, git_branch
        self.lines: list[dict[str, Any]] = []
        self.last: str | None = None
        self.clock = Clock()
        self.count = itertools.count(1)

    def uuid(self) -> str:
        return f"{next(self.count):08d}-1111-4111-8111-111111111111"

    def _line(self, kind: str, parent: str | None, **fields: Any) -> str:
        uuid = self.uuid()
        line = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                "cwd": self.cwd, "sessionId": self.session_id, "version": self.version,
                "gitBranch": self.git_branch, "type": kind, **fields,
                "uuid": uuid, "timestamp": self.clock()}
        self.lines.append(line)
        self.last = uuid
        return uuid

    def user(self, content: Any, *, parent: str | None | bool = True, **fields: Any) -> str:
        parent = self.last if parent is True else parent
        return self._line("user", parent, message={"role": "user", "content": content}, **fields)

    def assistant(self, *blocks: dict[str, Any], msg_id: str, parent: str | None | bool = True,
                  stop: str = "end_turn") -> str:
        parent = self.last if parent is True else parent
        return self._line("assistant", parent, requestId=f"req_{msg_id[4:]}", message={
            "id": msg_id, "type": "message", "role": "assistant", "model": "claude-opus-4-5",
            "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 50}})

    def result(self, call_id: str, text: str, *, is_error: bool = False,
               parent: str | None | bool = True) -> str:
        block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": text}
        if is_error:
            block["is_error"] = True
        return self.user([block], parent=parent, toolUseResult={"stdout": text})

    def compact(self, summary: str, *, kept: list[str] | None = None) -> str:
        """A compaction as Claude Code writes it: a boundary without a parent, then the summary."""
        metadata: dict[str, Any] = {"trigger": "manual", "preTokens": 48000}
        boundary_uuid = self.uuid()
        summary_uuid = self.uuid()
        if kept:
            metadata["preservedSegment"] = {"headUuid": kept[0], "anchorUuid": summary_uuid,
                                            "tailUuid": kept[-1]}
        self.lines.append({"parentUuid": None, "logicalParentUuid": self.last, "isSidechain": False,
                           "userType": "external", "cwd": self.cwd, "sessionId": self.session_id,
                           "version": self.version, "gitBranch": self.git_branch, "type": "system",
                           "subtype": "compact_boundary", "content": "Conversation compacted",
                           "isMeta": False, "timestamp": self.clock(), "uuid": boundary_uuid,
                           "level": "info", "compactMetadata": metadata})
        self.lines.append({"parentUuid": boundary_uuid, "isSidechain": False, "userType": "external",
                           "cwd": self.cwd, "sessionId": self.session_id, "version": self.version,
                           "gitBranch": self.git_branch, "type": "user",
                           "message": {"role": "user", "content": summary},
                           "isVisibleInTranscriptOnly": True, "isCompactSummary": True,
                           "uuid": summary_uuid, "timestamp": self.clock()})
        self.last = summary_uuid
        return boundary_uuid

    def title(self, text: str) -> None:
        self.lines.append({"type": "custom-title", "customTitle": text, "sessionId": self.session_id})

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.session_id}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines),
                        encoding="utf-8")
        return path


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def thinking(value: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value, "signature": "EqQBCkYIBxgCKkD" + "x" * 20}


def claude_session(cwd: str, session_id: str = "c0ffee00-0000-4000-8000-000000000001") -> ClaudeLog:
    """A session with thinking, a reply split over lines, parallel tool calls, a rewind and a
    last reply that ends in a tool call."""
    log = ClaudeLog(session_id, cwd)
    log.user("Find why the parser test fails — it's flaky on CI")
    log.assistant(thinking("Read the test first."), msg_id="msg_01AAAAAAAAAAAAAAAAAAAAAAAA")
    log.assistant(text("I'll read the test and the parser."), msg_id="msg_01AAAAAAAAAAAAAAAAAAAAAAAA")
    log.assistant(tool_use("toolu_01", "Read", file_path="tests/test_parser.py"),
                  msg_id="msg_01AAAAAAAAAAAAAAAAAAAAAAAA", stop="tool_use")
    first = log.last
    log.assistant(tool_use("toolu_02", "Read", file_path="src/parser.py"),
                  msg_id="msg_01AAAAAAAAAAAAAAAAAAAAAAAA", stop="tool_use")
    log.result("toolu_01", "def test_parse(): assert parse(now()) == ...", parent=first)
    log.result("toolu_02", "def parse(text): ...")
    fork_point = log.assistant(text("The test compares against `now()`: it races the clock."),
                               msg_id="msg_01BBBBBBBBBBBBBBBBBBBBBBBB")
    log.user("Fix it with a frozen clock.")
    log.assistant(tool_use("toolu_03", "Edit", file_path="tests/test_parser.py",
                           old_string="now()", new_string="FROZEN"),
                  msg_id="msg_01CCCCCCCCCCCCCCCCCCCCCCCC", stop="tool_use")
    log.result("toolu_03", "The file tests/test_parser.py has been updated.")
    log.assistant(text("Done: the test uses a frozen clock now."), msg_id="msg_01DDDDDDDDDDDDDDDDDDDDDD")
    # a rewind: another prompt below the same reply, whose reply ends in a tool call
    log.user("Instead, run the test 50 times first.", parent=fork_point)
    log.assistant(text("Running it."), tool_use("toolu_04", "Bash", command="pytest -x --count 50"),
                  msg_id="msg_01EEEEEEEEEEEEEEEEEEEEEEEE", stop="tool_use")
    log.title("Flaky parser test")
    return log


# ----------------------------------------------------------------------- Codex
class CodexLog:
    def __init__(self, session_id: str, cwd: str, *, provider: str = "openai"):
        self.session_id, self.cwd = session_id, cwd
        self.clock = Clock()
        self.lines: list[dict[str, Any]] = [
            {"timestamp": self.clock(), "type": "session_meta", "payload": {
                "id": session_id, "timestamp": _stamp(self.clock.now), "cwd": cwd,
                "originator": "codex_cli_rs", "cli_version": "0.171.0", "source": "cli",
                "model_provider": provider, "base_instructions": {"text": "You are Codex."}}},
            {"timestamp": self.clock(), "type": "turn_context", "payload": {
                "cwd": cwd, "approval_policy": "on-request", "model": "gpt-5.1-codex",
                "sandbox_policy": {"type": "workspace-write"}}}]

    def _add(self, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append({"timestamp": self.clock(), "type": kind, "payload": payload})

    def user(self, value: str) -> None:
        self._add("event_msg", {"type": "user_message", "message": value, "images": []})
        self._add("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": value}]})

    def reasoning(self, *parts: str) -> None:
        for part in parts:
            self._add("event_msg", {"type": "agent_reasoning", "text": part})
        self._add("response_item", {"type": "reasoning", "summary": [
            {"type": "summary_text", "text": part} for part in parts], "content": None,
            "encrypted_content": "gAAAA-secret"})

    def call(self, call_id: str, name: str, arguments: dict[str, Any], output: str) -> None:
        self._add("response_item", {"type": "function_call", "name": name,
                                    "arguments": json.dumps(arguments, separators=(",", ":")),
                                    "call_id": call_id})
        self._add("response_item", {"type": "function_call_output", "call_id": call_id,
                                    "output": output})

    def say(self, value: str) -> None:
        self._add("event_msg", {"type": "agent_message", "message": value})
        self._add("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": value}]})

    def tokens(self) -> None:
        self._add("event_msg", {"type": "token_count", "info": {"last_token_usage": {
            "input_tokens": 900, "output_tokens": 40, "total_tokens": 940}}})

    def roll_back(self, turns: int) -> None:
        self._add("event_msg", {"type": "thread_rolled_back", "num_turns": turns})

    def write(self, home: Path) -> Path:
        folder = home / "sessions" / "2026" / "03" / "01"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-2026-03-01T09-00-05-{self.session_id}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines),
                        encoding="utf-8")
        return path


def codex_session(cwd: str, session_id: str = "0199a000-0000-7000-8000-00000000c0de") -> CodexLog:
    log = CodexLog(session_id, cwd)
    log.user("Add a --dry-run flag to the deploy script")
    log.reasoning("Look at the argument parser.", "Then thread the flag through.")
    log.call("call_1", "shell", {"command": ["rg", "-n", "argparse", "deploy.py"]}, "12: parser = ...")
    log.say("The script parses its flags at line 12; I'll add --dry-run there.")
    log.tokens()
    log.user("Also print what would be deployed.")
    log.call("call_2", "apply_patch", {"input": "*** Begin Patch"}, "Success.")
    log.say("Done: --dry-run prints the plan and exits.")
    log.tokens()
    return log


# -------------------------------------------------------------------------- pi
class PiLog:
    def __init__(self, session_id: str, cwd: str):
        self.clock = Clock()
        self.count = itertools.count(1)
        self.lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": session_id,
                                             "timestamp": self.clock(), "cwd": cwd}]
        self.session_id = session_id
        self.last: str | None = None

    def add(self, kind: str, *, parent: str | None | bool = True, **fields: Any) -> str:
        entry_id = f"{next(self.count):08x}"
        parent = self.last if parent is True else parent
        self.lines.append({"type": kind, "id": entry_id, "parentId": parent,
                           "timestamp": self.clock(), **fields})
        self.last = entry_id
        return entry_id

    def message(self, message: dict[str, Any], **options: Any) -> str:
        return self.add("message", message=message, **options)

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"2026-03-01T09-00-00-000Z_{self.session_id}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines),
                        encoding="utf-8")
        return path


def pi_session(cwd: str, session_id: str = "01900000-0000-7000-8000-0000000000a1") -> PiLog:
    log = PiLog(session_id, cwd)
    log.add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    goal = log.message({"role": "user", "content": "Rename the config module", "timestamp": 1})
    log.message({"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Find the imports.", "thinkingSignature": "sig"},
        {"type": "toolCall", "id": "t1", "name": "bash", "arguments": {"command": "rg -l config"}}],
        "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse"})
    found = log.message({"role": "toolResult", "toolCallId": "t1", "toolName": "bash",
                         "content": [{"type": "text", "text": "app.py\ncli.py"}], "isError": False})
    log.add("label", targetId=found, label="imports found")
    answer = log.message({"role": "assistant", "content": [{"type": "text", "text": "Two files import it."}],
                          "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop"})
    log.message({"role": "user", "content": "Go ahead."})
    log.message({"role": "assistant", "content": [
        {"type": "toolCall", "id": "t2", "name": "edit", "arguments": {"path": "app.py"}}],
        "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse"})
    # the other branch: back to the answer, with a summary of what was left behind
    log.add("branch_summary", parent=answer, fromId=answer, summary="Started editing app.py.")
    log.message({"role": "user", "content": "Wait, list the tests first."})
    log.message({"role": "assistant", "content": [{"type": "text", "text": "tests/test_config.py"}],
                 "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop"})
    log.add("compaction", summary="Renaming config; tests listed.", firstKeptEntryId=goal,
            tokensBefore=5000)
    log.message({"role": "user", "content": "Now rename it."})
    return log


# --------------------------------------------------------------- comparisons
def seen(message: dict[str, Any] | None) -> tuple | None:
    """What an agent sees of a message: role, text, tool calls, tool result."""
    if not message:
        return None
    role = message.get("role")
    content = message.get("content")
    calls = tuple((b.get("id"), b.get("name"), json.dumps(b.get("arguments"), sort_keys=True))
                  for b in content if isinstance(b, dict) and b.get("type") == "toolCall") \
        if isinstance(content, list) else ()
    texts = content_text([b for b in content if isinstance(b, dict) and b.get("type") != "toolCall"]) \
        if isinstance(content, list) else content_text(content)
    if role == "toolResult":
        return ("toolResult", message.get("toolCallId"), texts, bool(message.get("isError")))
    return (role, texts, calls)


def path_view(store, head_seq: int) -> list[tuple]:
    """A branch's entries as the tests compare them: messages by what an agent sees,
    compactions by their summary and what they keep."""
    out = []
    entries = store.paths.entries(head_seq)
    ids = {e.id: n for n, e in enumerate(entries)}
    for n, entry in enumerate(entries):
        if entry.type == MESSAGE:
            out.append(seen(entry.message))
        elif entry.type == COMPACTION:
            kept = entry.data.get("firstKeptEntryId")
            out.append(("compaction", entry.data.get("summary"),
                        n - ids[kept] if kept in ids else None))
    return out
