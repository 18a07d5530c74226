"""Factory droid sessions (`~/.factory/sessions/<dashed cwd>/<uuid>.jsonl`, droid 0.215).

Facts: docs/agents/droid.md. A file is appended to and holds:

* `session_start` (the first line): the session id, title, `cwd`; a fork adds `parent`
  and `forkedAtMessageId`, a sub-agent `callingSessionId` and `callingToolUseId`;
* `message` records: `id`, `parentId` (a chain), `message: {role, content}` with
  Anthropic-style blocks. An assistant message is one entry (text, thinking, tool calls);
  a user message's `tool_result` blocks are one `toolResult` entry each, its other blocks
  one user entry (the record's id names the last of them, so `parentId` finds it). The
  `context-<prompt id>` user message droid sends before each prompt (system reminders) is
  kept, marked `droid.context`;
* `agent_turn_outcome` and records of other types: kept in the session's metadata
  (`records`), not on the branch (they have no place in the `parentId` chain).

`/compress` (the TUI's compaction) asks the model for a summary and goes on in a new
session whose `session_start` names the old one as `parent` (no `forkedAtMessageId`) and
whose first record is `compaction_state` (`summaryText`, `removedCount`): that record is
a `compaction` entry at the root of the new session, the messages after it below it, and
the session is nested under its parent at the parent's last message.

A fork is a session of its own (`fork` under its parent, at `forkedAtMessageId`) holding
copies of its parent's records with the same ids. `/rewind-conversation` writes the same:
droid goes on in a new session that copies the messages before the prompt rewound to and
names the last of them `forkedAtMessageId`; the session rewound from is left whole (the
abandoned turns stay its branch). `forkedFrom.command` in the metadata says which it was; a sub-agent (`Task`) is a `subagent`
session under the call that started it. droid keeps no tokens per message: the totals of
`<uuid>.settings.json` (`tokenUsage`: this session's own requests) are given to the file's
last answer under the key `droid:<session id>`; read again with larger totals, the record
replaces itself (the store keeps the larger copy of a response), never adds.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.importing.base import (
    SHAPE_ERRORS, FileResult, ProgressTicker, epoch_ms, file_mtime, object_lines, odd_shape,
    short_hash, timestamp_of, title_from_text)
from core.importing.nodes import Nodes, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "droid"
RESUMABLE = False
CONTEXT_PREFIX = "context-"
_MESSAGE_KEYS = ("type", "id", "parentId", "timestamp", "message")
_INNER_KEYS = ("role", "content", "modelId", "openaiMessageId")
_SETTINGS_LIMIT = 4 * 1024 * 1024


def convert_block(block: Any) -> dict[str, Any]:
    """An Anthropic content block as arbor's (tool results are read apart)."""
    if not isinstance(block, dict):
        return {"type": "text", "text": block if isinstance(block, str) else json.dumps(block)}
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if block.get("signature"):
            out["thinkingSignature"] = block["signature"]
        return out
    if kind == "tool_use":
        arguments = block.get("input")
        return {"type": "toolCall", "id": str(block.get("id", "")), "name": str(block.get("name", "")),
                "arguments": arguments if isinstance(arguments, dict) else {"value": arguments}}
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "base64":
            return {"type": "image", "data": source.get("data", ""),
                    "mimeType": source.get("media_type", "")}
    return dict(block)


def last_message_id(path: Path) -> str | None:
    """The id of the last `message` record of a session file (where a compaction of it
    went on from), or None."""
    last = None
    try:
        with open(path, "rb") as handle:
            for line in handle:
                if b'"type":"message"' not in line and b'"type": "message"' not in line:
                    continue
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if isinstance(d, dict) and d.get("type") == "message" and \
                        isinstance(d.get("id"), str):
                    last = d["id"]
    except OSError:
        return None
    return last


def fork_origin(path: Path, parent: str, at: str) -> dict[str, str]:
    """Where a session that names `parent` and `forkedAtMessageId` came from, and how:
    `droid --fork` copies the whole session (it leaves at the parent's last message),
    `/rewind-conversation` goes back to before an earlier prompt. Both write the same
    `session_start`; the parent's file tells them apart (no "command" when it is absent)."""
    origin = {"session": parent, "at": at}
    last = last_message_id(path.with_name(f"{parent}.jsonl"))
    if last is not None:
        origin["command"] = "fork" if last == at else "rewind-conversation"
    return origin


def result_content(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [convert_block(b) for b in content]
    return [{"type": "text", "text": json.dumps(content, ensure_ascii=False)}]


class _Read:
    def __init__(self, result: FileResult):
        self.result = result
        self.nodes = Nodes()
        self.header: dict[str, Any] = {}
        self.records: list[dict[str, Any]] = []
        self.last_of: dict[str, str] = {}       # record id -> its last entry
        self.tool_names: dict[str, str] = {}
        self.first_prompt = ""
        self.model = ""
        self.last_answer: str | None = None
        self.compaction: str | None = None     # the `compaction_state` entry the file starts with

    def take(self, d: dict[str, Any], line: int) -> None:
        kind = d.get("type")
        if kind == "message":
            self.message(d, line)
        elif kind == "compaction_state" and not self.nodes and isinstance(d.get("id"), str) \
                and isinstance(d.get("summaryText"), str):
            # (no `tokensBefore`: droid records no size of what it summarised)
            data = {"summary": d["summaryText"], "firstKeptEntryId": None,
                    "droid": {k: v for k, v in d.items()
                              if k not in ("type", "id", "timestamp", "summaryText")}}
            self.compaction = self.nodes.add(d["id"], None, COMPACTION, data,
                                             d.get("timestamp"), line)
        elif kind == "session_start" and not self.header:
            self.header = d
        else:
            self.records.append(d)

    def message(self, d: dict[str, Any], line: int) -> None:
        rid, inner = d["id"], d["message"]
        if not isinstance(rid, str) or not rid or not isinstance(inner, dict):
            raise TypeError("a message record without an id or a message")
        parent = d.get("parentId")
        parent = self.last_of.get(parent, parent) if isinstance(parent, str) and parent \
            else self.compaction
        stamp = d.get("timestamp")
        ms = epoch_ms(timestamp_of(stamp))
        extra = {k: v for k, v in d.items() if k not in _MESSAGE_KEYS}
        rest = {k: v for k, v in inner.items() if k not in _INNER_KEYS}
        content = inner.get("content")
        blocks = content if isinstance(content, list) else \
            ([{"type": "text", "text": content}] if isinstance(content, str) and content else [])
        role = inner.get("role")
        if role == "assistant":
            converted = [convert_block(b) for b in blocks]
            for block in converted:
                if block.get("type") == "toolCall":
                    self.tool_names[block["id"]] = block["name"]
                    if block["name"] == "Task":
                        self.nodes.spawns.append((block["id"], rid))
            message: dict[str, Any] = {"role": "assistant", "content": converted, "api": "droid"}
            model = inner.get("modelId")
            if isinstance(model, str) and model:
                message["model"] = self.model = model
            response = inner.get("openaiMessageId")
            if isinstance(response, str) and response:
                message["responseId"] = response
            if ms is not None:
                message["timestamp"] = ms
            data = {"message": message, "droid": {**extra, **rest}} if extra or rest else \
                {"message": message}
            self.last_of[rid] = self.nodes.add(rid, parent, MESSAGE, data, stamp, line)
            self.last_answer = self.last_of[rid]
            return
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        made: list[tuple[str, dict[str, Any]]] = []
        for block in results:
            call_id = str(block.get("tool_use_id", ""))
            result_message: dict[str, Any] = {
                "role": "toolResult", "toolCallId": call_id,
                "toolName": self.tool_names.get(call_id, ""),
                "content": result_content(block.get("content")),
                "isError": bool(block.get("is_error"))}
            if ms is not None:
                result_message["timestamp"] = ms
            kept = {k: v for k, v in block.items()
                    if k not in ("type", "tool_use_id", "content", "is_error")}
            made.append((f"{rid}:result:{call_id}",
                         {"message": result_message, **({"droid": kept} if kept else {})}))
        if others or not made:
            user: dict[str, Any] = {"role": "user" if role in (None, "user") else str(role),
                                    "content": [convert_block(b) for b in others]}
            if ms is not None:
                user["timestamp"] = ms
            note = {**extra, **rest}
            if rid.startswith(CONTEXT_PREFIX):
                note["context"] = True
            else:
                text = "".join(b.get("text", "") for b in user["content"] if b.get("type") == "text")
                if text.strip() and not self.first_prompt:
                    self.first_prompt = text
            made.append((rid, {"message": user, **({"droid": note} if note else {})}))
        elif extra or rest:
            made[-1][1].setdefault("droid", {}).update({**extra, **rest})
        # the record's id names its last entry (what `parentId` of the next one names)
        last_id, last_data = made.pop()
        head = parent
        for entry_id, data in made:
            head = self.nodes.add(entry_id, head, MESSAGE, data, stamp, line)
        self.last_of[rid] = self.nodes.add(rid, head, MESSAGE, last_data, stamp, line)


def settings_of(path: Path) -> dict[str, Any]:
    """The `<uuid>.settings.json` beside a session file ({} when there is none)."""
    settings = path.with_name(path.name[:-len(".jsonl")] + ".settings.json") \
        if path.name.endswith(".jsonl") else None
    try:
        if settings is None or settings.stat().st_size > _SETTINGS_LIMIT:
            return {}
        value = json.loads(settings.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def session_usage(tokens: Any) -> dict[str, int] | None:
    """droid's `tokenUsage` in arbor's usage shape (`inputTokens` excludes cache reads)."""
    if not isinstance(tokens, dict):
        return None

    def count(key: str) -> int:
        value = tokens.get(key)
        return value if type(value) is int and value > 0 else 0

    out = {"input": count("inputTokens"), "output": count("outputTokens"),
           "cacheRead": count("cacheReadTokens"), "cacheWrite": count("cacheCreationTokens"),
           "reasoning": min(count("thinkingTokens"), count("outputTokens"))}
    return out if any(out.values()) else None


def custom_model(path: Path, model: str) -> str:
    """The model a BYOK `custom:<display name>-<n>` stands for: the `model` of the n-th
    custom model in `~/.factory/config.json` (`custom_models`) or `settings.json`
    (`customModels`), whose display name, dashed, matches; "" when none does."""
    if not model.startswith("custom:"):
        return ""
    name, _, index = model[len("custom:"):].rpartition("-")
    factory = path.parent.parent.parent      # sessions/<project>/<uuid>.jsonl
    for file, key in (("config.json", "custom_models"), ("settings.json", "customModels")):
        try:
            found = json.loads((factory / file).read_bytes())
        except (OSError, ValueError):
            continue
        models = found.get(key) if isinstance(found, dict) else None
        if not isinstance(models, list) or not index.isdigit() or int(index) >= len(models):
            continue
        chosen = models[int(index)]
        if isinstance(chosen, dict) and isinstance(chosen.get("model"), str) and \
                "-".join(str(chosen.get("model_display_name") or chosen.get("displayName")
                             or "").split()) == name:
            return chosen["model"]
    return ""


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    read = _Read(result)
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            try:
                read.take(d, raw.number)
            except SHAPE_ERRORS as error:
                result.skip(raw.number, odd_shape(error, "kept in the session's metadata"))
                read.records.append(d)
    if not read.header and not read.nodes:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no droid records in this file"
        return
    header = read.header
    session_id = header.get("id") if isinstance(header.get("id"), str) else ""
    uid = session_id or f"{FORMAT}-{short_hash(str(path.resolve()))}"
    settings = settings_of(path)
    usage = session_usage(settings.get("tokenUsage"))
    if usage is not None and read.last_answer is not None:
        message = read.nodes.get(read.last_answer)["message"]
        message["usage"] = usage
        message["responseId"] = f"{FORMAT}:{uid}"
        if not message.get("model") and isinstance(settings.get("model"), str) and \
                not settings["model"].startswith("custom:"):
            message["model"] = settings["model"]
    if read.model.startswith("custom:"):     # (priced as the model it stands for)
        real = custom_model(path, read.model)
        if real:
            for data in read.nodes.data:
                message = data.get("message")
                if message.get("model") == read.model:
                    message["model"] = real
                    data.setdefault("droid", {})["modelId"] = read.model
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
    title = header.get("title") if isinstance(header.get("title"), str) else ""
    name = title_from_text(title or read.first_prompt) or path.stem
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_id, "model": read.model,
                                "header": header}
    if read.records:
        metadata["records"] = read.records
    if settings:
        metadata["settings"] = {k: v for k, v in settings.items() if k != "systemPrompt"}
    kind, parent, spawn = "session", None, None
    calling = header.get("callingSessionId")
    if isinstance(calling, str) and calling:
        kind, parent = "subagent", calling
        call = header.get("callingToolUseId")
        spawn = f"key:{call}" if isinstance(call, str) and call else None
    elif isinstance(header.get("parent"), str) and header["parent"]:
        kind, parent = "fork", header["parent"]
        at = header.get("forkedAtMessageId")
        if read.compaction is not None and not (isinstance(at, str) and at):
            at = last_message_id(path.with_name(f"{parent}.jsonl"))
            metadata["compactedFrom"] = parent
        elif isinstance(at, str) and at:
            metadata["forkedFrom"] = fork_origin(path, parent, at)
        spawn = f"entry:{at}" if isinstance(at, str) and at else "shared"
    write_session(store, result, ticker, read.nodes, uid=uid, name=name, source=FORMAT,
                  cwd=cwd, metadata=metadata, kind=kind, parent_session=parent,
                  spawn_ref=spawn, fallback=file_mtime(path))
