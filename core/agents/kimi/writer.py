"""`o` / `arbor resume` for Kimi CLI: a branch as a new Kimi CLI session, written the way Kimi
CLI's own fork (`kimi_cli/session_fork.py`, `/fork`) makes one, then `kimi -r <new id>` from
the work folder.

Kimi's fork is a new folder `<share dir>/sessions/<md5 of the work folder>/<new uuid>/`
(`$KIMI_SHARE_DIR`, else `~/.kimi`) holding `wire.jsonl` (the event log, from which Kimi
shows the session and arbor reads it), `context.jsonl` (what the model is sent) and
`state.json` (the title). Kimi forks at a turn; arbor writes the path from the root to the
branch's head, which may end within a turn:

* `wire.jsonl`: the `metadata` line, then per message the events Kimi logs for it: a user
  message is a `TurnBegin` (the turn before ended by `TurnEnd`), an answer a step
  (`StepBegin`, a `ContentPart` per text or thinking block, a `ToolCall` per call, the
  `StatusUpdate` with its `token_usage` and `message_id`), a result a `ToolResult`, a
  compaction `CompactionBegin`/`CompactionEnd`; a last `TurnEnd`.
* `context.jsonl`: Kimi's records from the last compaction on (its summary as Kimi writes
  it: "Previous context has been compacted. Here is the compaction output:"): OpenAI-style
  messages, a `_checkpoint` before each prompt and step, `_usage` after an answer whose
  tokens are known, the session's own system prompt first (Kimi writes its own where there
  is none). A call left without a result gets an error result.
* `state.json`: the branch's title (`BranchToWrite.title`) as `custom_title`.

Kimi finds a session through `~/.kimi/kimi.json`, where it lists the work folders it ran
in: for a folder it does not list, `kimi -r <id>` makes a new session under that id and
empties its context. arbor never edits kimi.json, so it refuses then and says why.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import COMPACTION, MESSAGE, Entry, content_text
from core.agents.native import (
    BranchToWrite, ResumeError, as_text, env_dir, home, own_end, write_new_file)
from core.importing.base import timestamp_of
from .importer import COMPACTED, FORMAT

EXECUTABLE = "kimi"
PROTOCOL = "1.10"
SUMMARY_HEAD = f"{COMPACTED} Here is the compaction output:</system>"
INTERRUPTED = "Tool execution was interrupted before it returned a result."
_SLASH = re.compile(r"^/[a-z][\w-]*(\s|$)")


def share_dir(env: Mapping[str, str]) -> Path:
    return env_dir(env, "KIMI_SHARE_DIR") or home(env) / ".kimi"


def sessions_dir(cwd: str, env: Mapping[str, str]) -> Path:
    return share_dir(env) / "sessions" / hashlib.md5(cwd.encode("utf-8")).hexdigest()


def known_work_dir(cwd: str, env: Mapping[str, str]) -> bool:
    """Whether `kimi.json` lists the work folder (Kimi finds its sessions through it)."""
    try:
        known = json.loads((share_dir(env) / "kimi.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    dirs = known.get("work_dirs") if isinstance(known, dict) else None
    return any(isinstance(d, dict) and d.get("path") == cwd and d.get("kaos", "local") == "local"
               for d in dirs if isinstance(dirs, list)) if isinstance(dirs, list) else False


def _seconds(entry: Entry, job: BranchToWrite) -> float:
    moment = timestamp_of(entry.timestamp) or job.now
    return round(moment.timestamp(), 6)


def _parts(blocks: Any) -> list[dict[str, Any]]:
    """arbor's blocks as Kimi's content parts (text, think); a string is one text part."""
    if isinstance(blocks, str):
        return [{"type": "text", "text": blocks}] if blocks else []
    out = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append({"type": "text", "text": str(block.get("text", ""))})
        elif block.get("type") == "thinking":
            out.append({"type": "think", "think": str(block.get("thinking", ""))})
    return out


def _plain(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """One text part as a string (as Kimi writes a prompt or an answer), else the parts."""
    if len(parts) == 1 and parts[0].get("type") == "text":
        return parts[0]["text"]
    return parts


def _calls(blocks: Any) -> list[dict[str, Any]]:
    return [{"type": "function", "id": str(b.get("id", "")),
             "function": {"name": str(b.get("name", "")),
                          "arguments": json.dumps(b.get("arguments") or {}, ensure_ascii=False)}}
            for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"] \
        if isinstance(blocks, list) else []


def _token_usage(usage: Any) -> dict[str, int] | None:
    if not isinstance(usage, dict):
        return None

    def count(key: str) -> int:
        value = usage.get(key)
        return value if type(value) is int and value > 0 else 0

    return {"input_other": count("input"), "output": count("output"),
            "input_cache_read": count("cacheRead"), "input_cache_creation": count("cacheWrite")}


class _Session:
    """The wire events and the context records of the path (see the module doc)."""

    def __init__(self, job: BranchToWrite):
        self.job = job
        self.own = job.session.source == FORMAT
        self.wire: list[dict[str, Any]] = [{"type": "metadata", "protocol_version": PROTOCOL}]
        if job.provenance:      # a branch handed over from another agent: where it came from
            self.wire[0]["handoff"] = job.provenance
        self.context: list[dict[str, Any]] = []
        self.checkpoint = 0
        self.in_turn = False
        self.step = 0
        self.open_calls: dict[str, str] = {}
        self.slash = False          # the turn is a slash command of Kimi's

    def event(self, entry: Entry | None, kind: str, payload: dict[str, Any]) -> None:
        """An event at the entry's time (None: the time of the event before)."""
        if entry is not None:
            moment = _seconds(entry, self.job)
        else:
            moment = next((e["timestamp"] for e in reversed(self.wire) if "timestamp" in e),
                          round(self.job.now.timestamp(), 6))
        self.wire.append({"timestamp": moment, "message": {"type": kind, "payload": payload}})

    def mark(self) -> None:
        self.context.append({"role": "_checkpoint", "id": self.checkpoint})
        self.checkpoint += 1

    def build(self) -> None:
        entries = list(self.job.path())
        last = max((n for n, e in enumerate(entries) if e.type == COMPACTION), default=-1)
        prompt = self.system_prompt()
        if prompt is not None:
            self.context.append({"role": "_system_prompt", "content": prompt})
        for n, entry in enumerate(entries):
            in_context = n > last
            if entry.type == COMPACTION:
                self.compaction(entry, in_context=n == last)
            elif entry.type == MESSAGE and entry.message:
                self.message(entry, in_context)
        self.interrupted(None, True)
        if self.in_turn:
            self.event(None, "TurnEnd", {})

    def system_prompt(self) -> str | None:
        """The session's own system prompt (the first record of its first context)."""
        path = self.job.metadata.get("path")
        if not self.own or not isinstance(path, str):
            return None
        folder = Path(path).parent
        for name in ("context_1.jsonl", "context.jsonl"):
            try:
                with open(folder / name, "rb") as handle:
                    first = json.loads(handle.readline() or b"null")
            except (OSError, ValueError):
                continue
            if isinstance(first, dict) and first.get("role") == "_system_prompt" and \
                    isinstance(first.get("content"), str):
                return first["content"]
        return None

    def message(self, entry: Entry, in_context: bool) -> None:
        message = entry.message or {}
        role = message.get("role")
        if role == "toolResult":
            self.result(entry, message, in_context)
            return
        self.interrupted(entry, in_context)
        if role == "assistant":
            self.answer(entry, message, in_context)
            return
        parts = _parts(message.get("content")) if role == "user" else \
            [{"type": "text", "text": as_text(message)}]
        kept = entry.data.get(FORMAT) if self.own and isinstance(entry.data.get(FORMAT), dict) else {}
        steer = kept.get("event") == "SteerInput" and self.in_turn
        # (a slash command of Kimi's is a turn of its own, never sent to the model)
        command = self.own and isinstance(_plain(parts), str) and _SLASH.match(_plain(parts))
        if not steer:
            if self.in_turn:
                self.event(entry, "TurnEnd", {})
            self.in_turn, self.step = True, 0
        self.event(entry, "SteerInput" if steer else "TurnBegin", {"user_input": _plain(parts)})
        if not steer:
            self.slash = bool(command)
        if in_context and not command:
            self.mark()
            self.context.append({"role": "user", "content": _plain(parts)})

    def answer(self, entry: Entry, message: dict[str, Any], in_context: bool) -> None:
        if not self.in_turn:
            self.event(entry, "TurnBegin", {"user_input": ""})
            self.in_turn, self.step = True, 0
        self.step += 1
        blocks = message.get("content")
        parts = _parts(blocks)
        calls = _calls(blocks)
        self.event(entry, "StepBegin", {"n": self.step})
        for part in parts:
            self.event(entry, "ContentPart", part)
        for call in calls:
            self.event(entry, "ToolCall", {**call, "extras": None})
            self.open_calls[call["id"]] = call["function"]["name"]
        usage = _token_usage(message.get("usage"))
        if usage is not None:
            response = message.get("responseId")
            self.event(entry, "StatusUpdate", {
                "token_usage": usage,
                "message_id": response if isinstance(response, str) and response else None})
        if in_context and not self.slash:      # (a slash command's output is not sent)
            self.mark()
            record: dict[str, Any] = {"role": "assistant", "content": _plain(parts) if parts else ""}
            if calls:
                record["tool_calls"] = calls
            self.context.append(record)
            if usage is not None:
                self.context.append({"role": "_usage", "token_count": sum(usage.values())})

    def result(self, entry: Entry, message: dict[str, Any], in_context: bool) -> None:
        call = str(message.get("toolCallId", ""))
        self.open_calls.pop(call, None)
        kept = entry.data.get(FORMAT) if self.own and isinstance(entry.data.get(FORMAT), dict) else {}
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        output: Any = texts[0]["text"] if len(texts) == len(blocks) == 1 else \
            ("" if not blocks else [dict(b) for b in blocks])
        value = {"is_error": bool(message.get("isError")), "output": output, **kept}
        value.setdefault("message", "")
        value.setdefault("display", [])
        value.setdefault("extras", None)
        self.event(entry, "ToolResult", {"tool_call_id": call, "return_value": value})
        if in_context:
            text = content_text(blocks)
            content: Any = [{"type": "text", "text": f"<system>{value['message']}</system>"},
                            {"type": "text", "text": text}] if value["message"] else text
            self.context.append({"role": "tool", "content": content, "tool_call_id": call})

    def interrupted(self, entry: Entry | None, in_context: bool) -> None:
        """An error result for each call left without one before what comes next."""
        for call in list(self.open_calls):
            del self.open_calls[call]
            value = {"is_error": True, "output": "", "message": INTERRUPTED, "display": [],
                     "extras": None}
            self.event(entry, "ToolResult", {"tool_call_id": call, "return_value": value})
            if in_context:
                self.context.append({"role": "tool", "tool_call_id": call, "content": [
                    {"type": "text", "text": f"<system>ERROR: {INTERRUPTED}</system>"}]})

    def compaction(self, entry: Entry, *, in_context: bool) -> None:
        self.interrupted(entry, False)
        self.event(entry, "CompactionBegin", {})
        self.event(entry, "CompactionEnd", {})
        if not in_context:
            return
        self.context = [r for r in self.context if r.get("role") == "_system_prompt"]
        self.checkpoint = 0
        self.mark()
        self.context.append({"role": "user", "content": [
            {"type": "text", "text": SUMMARY_HEAD},
            {"type": "text", "text": str(entry.data.get("summary") or "")}]})
        for kept in self.job.kept_before(entry):
            if kept.type == MESSAGE and kept.message:
                self.kept(kept)

    def kept(self, entry: Entry) -> None:
        """A message the compaction kept, in the context only (the wire has it already)."""
        wire, in_turn, step, calls, slash = (self.wire, self.in_turn, self.step,
                                             self.open_calls, self.slash)
        self.wire, self.slash = [], False
        try:
            self.message(entry, True)
        finally:
            self.wire, self.in_turn, self.step = wire, in_turn, step
            self.open_calls, self.slash = calls, slash


def ready(job: BranchToWrite, cwd: str | None = None) -> None:
    """Refuses (ResumeError) a work folder Kimi CLI would not find the session in."""
    cwd = job.cwd if cwd is None else cwd
    if not known_work_dir(cwd, job.env):
        raise ResumeError(
            f"Kimi CLI has not run in {cwd} yet, and it finds sessions only in the folders "
            f"it lists in {share_dir(job.env) / 'kimi.json'} (which arbor does not change): run "
            "kimi there once, then try again (or export the branch and give it as a prompt)")


def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = job.ids.uuid4()
    return sessions_dir(job.cwd, job.env) / session_id / "wire.jsonl", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    session = _Session(job)
    session.build()
    folder = target.parent
    if folder.exists():
        raise ResumeError(f"{folder} already exists; arbor never writes over a session")
    write_new_file(folder / "context.jsonl", session.context)
    write_new_file(folder / "state.json", [{
        "version": 1, "approval": {"yolo": False, "afk": False, "auto_approve_actions": []},
        "additional_dirs": [], "custom_title": job.title, "title_generated": True,
        "title_generate_attempts": 0, "plan_mode": False, "plan_session_id": None,
        "plan_slug": None, "wire_mtime": None, "archived": False, "archived_at": None,
        "auto_archive_exempt": False, "todos": []}])
    write_new_file(target, session.wire)     # (last: the file arbor follows and finds again)


def adds_nothing(line: Any) -> bool:
    """Whether an event Kimi appended leaves the conversation where it was (the state it
    logs when it opens a session)."""
    if not isinstance(line, dict):
        return False
    message = line.get("message")
    kind = message.get("type") if isinstance(message, dict) else None
    return kind in ("MCPLoadingBegin", "MCPLoadingEnd", "MCPStatusSnapshot", "MCPServerSnapshot")


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "-r", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """A new session for the branch (or the one written for it before); at the end of a
    session Kimi CLI wrote, that session is resumed as it is."""
    import sys

    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("a Kimi CLI sub-agent's session cannot be resumed on its own; "
                          "open its parent session and press o there")
    if own_end(job, FORMAT, _own_entry) is not None:
        plan.native_id = session_id
        plan.summary = (f"The branch ends where Kimi CLI's session {session_id} ends: "
                        "nothing to write")
        plan.argv = command(session_id)
        return
    ready(job, plan.cwd)
    new_session(plan, job, sessions_dir(plan.cwd, env), sys.modules[__name__],
                lambda target, new_id: write(job, target, new_id))
    plan.argv = command(plan.native_id)


def _own_entry(entry_id: str) -> bool:
    """Whether an entry is one of Kimi CLI's records (named by its line in wire.jsonl,
    `L<n>`, a part of it after a colon), not one made in arbor."""
    return re.match(r"L\d+(?::|$)", entry_id) is not None
