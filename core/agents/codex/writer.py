"""Codex CLI: resume the rollout itself, or write the branch as a new rollout, as Codex's fork does.

A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`, CODEX_HOME
`~/.codex` by default) is linear, so a branch whose head is the rollout's own last entry is
what `codex resume <id>` loads: nothing is written. Any other head (an earlier message, a
rolled-back or compacted branch, a branch with entries arbor added, a file that grew since
it was imported) becomes a new rollout, the way `codex fork` writes one: a `session_meta`
with a new id (uuid v7) and `forked_from_id` naming the rollout it came from, then the
branch's lines. Codex's `thread/read` builds turns from `event_msg` lines and its resumed
history from `response_item` lines, so every message is written as both, as Codex does.

Lines an entry was imported from are rebuilt from what the importer kept (the line's
fields, the payload less what it moved into the message, the twin lines); entries arbor
added are written as Codex writes such items. A `thread_rolled_back` marker is left out:
the path already ends where the rollback went. The new thread is named as Codex's rename
names one (`write`), after the branch (`BranchToWrite.title`). Command: `codex resume <id>`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, MODEL_CHANGE, Entry, content_text)
from core.agents.native import (
    BranchToWrite, as_text, entry_stamp, env_dir, home, local_time, stamp, write_new_file)

NAME = "codex"
EXECUTABLE = "codex"
INDEX = "session_index.jsonl"
SUMMARY_PREFIX = ("Another language model started to solve this problem and produced a summary of "
                  "its thinking process. You also have access to the state of the tools that were "
                  "used by that language model. Use this to build on the work that has already been "
                  "done and avoid duplicating work. Here is the summary produced by the other "
                  "language model, use the information in this summary to assist with your own "
                  "analysis:")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_LINE_ID = re.compile(r"^(?:(?P<child>[^:]+):)?L(?P<line>\d+)$")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call",
          "tool_search_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
            "tool_search_output")
TAIL_LINES = 64
# Codex's free-form tools: a call is a `custom_tool_call` with the text as `input`.
CUSTOM_TOOLS = frozenset({"apply_patch"})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def codex_home(env: Mapping[str, str]) -> Path:
    return env_dir(env, "CODEX_HOME") or home(env) / ".codex"


def rollout_path(env: Mapping[str, str], session_id: str, now) -> Path:
    local = local_time(now)
    day = time.strftime("%Y/%m/%d", local)
    return codex_home(env) / "sessions" / day / \
        f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', local)}-{session_id}.jsonl"


# ------------------------------------------------------------ the file's tip
def source_of(job: BranchToWrite, entry: Entry) -> tuple[str, str | None, int | None, str]:
    """(rollout id, its file, line number, id prefix) of an entry read from a rollout; the
    line is None when arbor wrote the entry. Entries of a fork merged into its parent's
    session carry the fork's id as a prefix ("<id>:L<n>")."""
    meta = job.metadata
    match = _LINE_ID.match(entry.id)
    own = str(meta.get("sessionId") or job.session.uid)
    if match is None:
        return own, meta.get("path"), None, ""
    child = match.group("child")
    if child:
        fork = (meta.get("forks") or {}).get(child) or {}
        return child, fork.get("path"), int(match.group("line")), child
    return own, meta.get("path"), int(match.group("line")), ""


def is_rollout_tip(job: BranchToWrite) -> tuple[bool, str]:
    """Whether the branch head is the last entry of the rollout it came from, and that
    rollout has not grown since (so `codex resume <id>` loads exactly the branch).
    Returns the answer and the rollout's id."""
    head = job.head()
    rollout_id, path, line, prefix = source_of(job, head)
    if line is None or not path or not _UUID.match(rollout_id):
        return False, rollout_id
    if job.store.entries.children(head.seq):
        return False, rollout_id
    newest = 0
    for entry_id in job.store.entries.seqs(job.session.id):
        match = _LINE_ID.match(entry_id)
        if match is not None and (match.group("child") or "") == prefix:
            newest = max(newest, int(match.group("line")))
    if line != newest:
        return False, rollout_id
    return _nothing_new_after(Path(path), line, _rebuilt(head)), rollout_id


def _nothing_new_after(path: Path, line: int, head_lines: list[dict[str, Any]]) -> bool:
    """Whether the file has nothing after `line` but lines of the head entry itself (the
    twin of a message, which Codex writes after it and arbor folds into it). A file that
    is gone, grew with anything else, or ends in a torn line (the agent is writing) is not
    the tip. The file is read once, keeping only its last lines."""
    tail: deque[bytes] = deque(maxlen=TAIL_LINES + 1)
    count = 0
    from core.store.held_files import open_unless_held

    try:
        with open_unless_held(path) as handle:
            for raw in handle:
                count += 1
                tail.append(raw)
    except OSError:
        return False
    extra = count - line
    if extra < 0 or extra > TAIL_LINES:
        return False
    own = [json.dumps(d, sort_keys=True) for d in head_lines]
    for raw in list(tail)[len(tail) - extra:] if extra else []:
        if not raw.strip():
            continue
        if not raw.endswith(b"\n"):
            return False
        try:
            d = json.loads(raw)
        except ValueError:
            return False
        if json.dumps(d, sort_keys=True) not in own:
            return False
    return True


# ------------------------------------------------------------ lines, rebuilt
def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, dict):
        if set(arguments) == {"raw"} and isinstance(arguments["raw"], str):
            return arguments["raw"]
        if set(arguments) == {"value"}:
            return json.dumps(arguments["value"], ensure_ascii=False, separators=(",", ":"))
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _content(blocks: Any, role: str) -> Any:
    """Message content back in Codex's spelling (input_text / output_text / input_image)."""
    if isinstance(blocks, str):
        return [{"type": "output_text" if role == "assistant" else "input_text", "text": blocks}]
    if not isinstance(blocks, list):
        return []
    out = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            item = {"type": "output_text" if role == "assistant" else "input_text",
                    "text": block.get("text", "")}
            item.update(block.get("codex") or {})
            out.append(item)
        elif kind == "image":
            url = block.get("url") or f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"
            out.append({"type": "input_image", "image_url": url})
        else:
            out.append(block)
    return out


def _output(blocks: Any, extra: Any) -> Any:
    if isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], dict) and \
            blocks[0].get("type") == "text" and not blocks[0].get("codex"):
        value: Any = blocks[0].get("text", "")
    else:
        value = _content(blocks, "tool")
    if isinstance(extra, dict) and extra:
        return {"content": value, **extra}
    return value


def _summary_parts(message: dict[str, Any], duplicates: list[Any]) -> list[dict[str, Any]]:
    events = [d["payload"].get("text", d["payload"].get("message", "")) for d in duplicates
              if isinstance(d, dict) and d.get("type") == "event_msg"
              and isinstance(d.get("payload"), dict) and d["payload"].get("type") == "agent_reasoning"]
    if len(events) > 1:
        return [{"type": "summary_text", "text": str(text)} for text in events]
    texts = [str(b.get("thinking", "")) for b in message.get("content") or []
             if isinstance(b, dict) and b.get("type") == "thinking" and not b.get("redacted")]
    return [{"type": "summary_text", "text": texts[0]}] if texts and texts[0] else []


def _rebuilt(entry: Entry) -> list[dict[str, Any]]:
    """The rollout lines an imported entry came from, in the order Codex writes them."""
    data = entry.data
    codex = data.get("codex") if isinstance(data.get("codex"), dict) else {}
    duplicates = [d for d in codex.get("duplicates") or data.get("duplicates") or []
                  if isinstance(d, dict)]
    if entry.type.startswith("codex:"):
        line = {k: v for k, v in data.items() if k not in ("duplicates", "fp", "rolledBackFrom")}
        return _ordered(line, duplicates)
    if entry.type == MODEL_CHANGE:
        return [{"timestamp": entry_stamp(entry.timestamp, _EPOCH), "type": "turn_context",
                 "payload": codex.get("payload") or {"model": data.get("modelId")}}]
    if entry.type == COMPACTION:
        payload = {"message": str(data.get("summary", "")), **(codex.get("payload") or {})}
        return [{"timestamp": entry_stamp(entry.timestamp, _EPOCH), "type": "compacted",
                 "payload": payload}]
    message = entry.message or {}
    line = dict(codex.get("line") or {})
    payload = dict(codex.get("payload") or {})
    if line.get("type") == "event_msg":
        payload = {"type": payload.get("type"), "message": content_text(message.get("content")),
                   **{k: v for k, v in payload.items() if k != "type"}}
        if payload.get("type") == "agent_reasoning":
            payload["text"] = payload.pop("message")
        line["payload"] = payload
        return _ordered(line, duplicates)
    ptype = payload.get("type")
    content = message.get("content")
    if ptype == "message":
        role = message.get("role", "user")
        payload = {"type": "message", "role": role, "content": _content(content, role),
                   **{k: v for k, v in payload.items() if k != "type"}}
    elif ptype == "reasoning":
        payload = {**payload, "summary": _summary_parts(message, duplicates)}
    elif ptype in _CALLS:
        call = next((b for b in content or [] if isinstance(b, dict) and b.get("type") == "toolCall"), {})
        if ptype == "function_call":
            payload.update(name=call.get("name", ""), arguments=_arguments_text(call.get("arguments")),
                           call_id=call.get("id", ""))
        elif ptype == "custom_tool_call":
            arguments = call.get("arguments") or {}
            payload.update(name=call.get("name", ""), input=arguments.get("input", "")
                           if isinstance(arguments, dict) else arguments, call_id=call.get("id", ""))
        elif payload.get("id") != call.get("id"):
            payload["call_id"] = call.get("id", "")
    elif ptype in _OUTPUTS:
        extra = payload.pop("outputExtra", None)
        payload.update(call_id=message.get("toolCallId", ""), output=_output(content, extra))
    line["payload"] = payload
    return _ordered(line, duplicates)


def _ordered(line: dict[str, Any], duplicates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Event lines first, then the response item, as Codex records a turn."""
    events = [d for d in duplicates if d.get("type") == "event_msg"]
    others = [d for d in duplicates if d.get("type") != "event_msg"]
    if line.get("type") == "event_msg":
        return [line, *events, *others]
    return [*events, line, *others]




# ---------------------------------------------------- lines for arbor's entries
def _item(timestamp: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": timestamp, "type": "response_item", "payload": payload}


def _event(timestamp: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": timestamp, "type": "event_msg", "payload": payload}


def written_by_arbor(entry: Entry, message: dict[str, Any], when: str) -> list[dict[str, Any]]:
    """A message that no rollout line holds, as Codex writes such a message."""
    role = message.get("role")
    content = message.get("content")
    if role == "toolResult":
        kind = "custom_tool_call_output" if message.get("toolName") in CUSTOM_TOOLS else \
            "function_call_output"
        return [_item(when, {"type": kind, "call_id": str(message.get("toolCallId", "")),
                             "output": _output(content if isinstance(content, list) else
                                               [{"type": "text", "text": content_text(content)}], None)})]
    if role == "assistant":
        out = []
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content_text(content)}]
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "thinking" and block.get("thinking"):
                out.append(_event(when, {"type": "agent_reasoning", "text": block["thinking"]}))
                if block.get("display") != "event":     # (another agent's: shown, not sent)
                    out.append(_item(when, {"type": "reasoning", "summary": [
                        {"type": "summary_text", "text": block["thinking"]}], "content": None}))
            elif kind == "text" and block.get("text"):
                out.append(_event(when, {"type": "agent_message", "message": block["text"]}))
                out.append(_item(when, {"type": "message", "role": "assistant",
                                        "content": [{"type": "output_text", "text": block["text"]}]}))
            elif kind in ("toolCall", "tool_call") and block.get("name") in CUSTOM_TOOLS:
                arguments = block.get("arguments")
                out.append(_item(when, {"type": "custom_tool_call", "name": block["name"],
                                        "input": arguments.get("input", "") if
                                        isinstance(arguments, dict) else str(arguments),
                                        "call_id": block.get("id", "")}))
            elif kind in ("toolCall", "tool_call"):
                out.append(_item(when, {"type": "function_call", "name": block.get("name", ""),
                                        "arguments": _arguments_text(block.get("arguments", {})),
                                        "call_id": block.get("id", "")}))
        return out
    text = content_text(content) if role == "user" else as_text(message)
    images = [block for block in content if isinstance(block, dict) and block.get("type") == "image"] \
        if role == "user" and isinstance(content, list) else []
    parts = _content(images, "user")
    return [_event(when, {"type": "user_message", "message": text,
                          "images": [part["image_url"] for part in parts]}),
            _item(when, {"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": text}, *parts]})]


class _Lines:
    def __init__(self, job: BranchToWrite, session_id: str, parent_id: str):
        self.job = job
        self.session_id = session_id
        self.parent_id = parent_id

    def meta(self) -> dict[str, Any]:
        meta = self.job.metadata
        original = dict(meta.get("sessionMeta") or {})
        for key in ("instructions", "base_instructions"):
            if meta.get(key):
                original[key] = meta[key]
        payload: dict[str, Any] = {"session_id": self.session_id, "id": self.session_id,
                                   "forked_from_id": self.parent_id,
                                   "timestamp": stamp(self.job.now), "cwd": self.job.cwd}
        for key, value in original.items():
            if key not in ("id", "session_id", "forked_from_id", "timestamp", "cwd",
                           "parent_thread_id", "thread_name"):
                payload.setdefault(key, value)
        if self.job.provenance:
            payload["handoff"] = self.job.provenance
        payload.setdefault("originator", "arbor")
        payload.setdefault("source", "cli")
        return {"timestamp": stamp(self.job.now), "type": "session_meta", "payload": payload}

    def lines(self) -> Iterator[dict[str, Any]]:
        yield self.meta()
        for entry in self.job.path():
            when = entry_stamp(entry.timestamp, self.job.now)
            codex = entry.data.get("codex")
            if entry.type == "codex:thread_rolled_back":
                continue
            if entry.type.startswith("codex:") or isinstance(codex, dict):
                yield from _rebuilt(entry)
            elif entry.type == MESSAGE and entry.message is not None:
                yield from written_by_arbor(entry, entry.message, when)
            elif entry.type == BRANCH_SUMMARY:
                yield from written_by_arbor(entry, {"role": "branchSummary",
                                                    "summary": entry.data.get("summary", "")}, when)
            elif entry.type == CUSTOM_MESSAGE:
                content = entry.data.get("content", (entry.data.get("message") or {}).get("content"))
                yield from written_by_arbor(entry, {"role": "user", "content": content}, when)
            elif entry.type == COMPACTION:
                yield self.compaction(entry, when)

    def compaction(self, entry: Entry, when: str) -> dict[str, Any]:
        """A compaction arbor made: Codex's `compacted` line, with the history it leaves
        (the summary, then the kept messages) as its replacement history."""
        summary = str(entry.data.get("summary", ""))
        history: list[dict[str, Any]] = [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": f"{SUMMARY_PREFIX}\n{summary}"}]}]
        for old in self.job.kept_before(entry):
            lines = _rebuilt(old) if (old.type.startswith("codex:") or
                                      isinstance(old.data.get("codex"), dict)) else \
                written_by_arbor(old, old.message, when) if old.message is not None else []
            history.extend(line["payload"] for line in lines
                           if line.get("type") == "response_item")
        return {"timestamp": when, "type": "compacted",
                "payload": {"message": summary, "replacement_history": history}}


# ------------------------------------------------------------------ writing
def place(job: BranchToWrite) -> tuple[Path, str]:
    """Where the new rollout goes and its thread id (nothing is written)."""
    session_id = job.ids.uuid7(job.now)
    return rollout_path(job.env, session_id, job.now), session_id


def write(job: BranchToWrite, target: Path, session_id: str, parent_id: str) -> None:
    """Write the branch as a new rollout at `target` (from `place`) forked from `parent_id`,
    and name the thread with a line in `$CODEX_HOME/session_index.jsonl`, the append-only
    index Codex's rename writes to and its picker (`thread/list`) and `thread/read` take
    names from, the newest line for an id winning. (Codex's rename also appends a
    `thread_name_updated` event to the rollout; Codex 0.171 reads no name from it, and in
    the rollout it would be one more entry when arbor imports the fork back.)"""
    write_new_file(target, _Lines(job, session_id, parent_id).lines())
    index_thread_name(job.env, session_id, job.title, job.now)


def index_thread_name(env: Mapping[str, str], thread_id: str, name: str, now: datetime) -> None:
    line = json.dumps({"id": thread_id, "thread_name": name, "updated_at": stamp(now)},
                      ensure_ascii=False) + "\n"
    path = codex_home(env) / INDEX
    # one write of one line with O_APPEND, as Codex appends: lines never interleave
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


# events in which Codex records its own state, not the conversation (it writes
# thread_settings_applied as it resumes a thread)
_QUIET_EVENTS = frozenset({"thread_settings_applied", "token_count", "thread_name_updated",
                           "session_configured", "mcp_startup_update", "mcp_startup_complete"})


def adds_nothing(line: Any) -> bool:
    """Whether a line Codex appended leaves the conversation where it was."""
    if not isinstance(line, dict):
        return False
    payload = line.get("payload")
    return line.get("type") == "turn_context" or (
        line.get("type") == "event_msg" and isinstance(payload, dict)
        and payload.get("type") in _QUIET_EVENTS)


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "resume", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """`o` / `arbor resume` (see core.agents.resume): the rollout itself where the branch ends
    where it ends, else the branch as a rollout forked from it; `codex resume <id>`."""
    import sys

    tip, rollout_id = is_rollout_tip(job)
    if tip:
        plan.native_id = rollout_id
        plan.summary = f"The branch ends where Codex's rollout {rollout_id} ends: nothing to write"
    else:
        new_session(plan, job, codex_home(env), sys.modules[__name__],
                    lambda target, new_id: write(job, target, new_id, rollout_id),
                    forked_from=rollout_id)
    plan.argv = command(plan.native_id)
