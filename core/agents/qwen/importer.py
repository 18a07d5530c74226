"""Qwen Code sessions (`~/.qwen/projects/<project>/chats/<session>.jsonl`, 0.24 and later).

Facts: docs/agents/qwen-code.md. A file is appended to, never rewritten: one record a
line, a tree by `uuid` / `parentUuid` (a rewind re-roots the chain, so what follows is a
branch), each message in Gemini API `parts` (core/agents/gemini/parts.py). What arbor makes
of them, read whole each time (entry ids are the uuids, so a second read adds only what is
new):

* `user`: a user message (a `notification` subtype, a background sub-agent's report, too).
* `assistant`: an assistant message, its text, thoughts and `functionCall` parts as
  text, thinking and tool calls; `usageMetadata` is the response's usage, keyed by the
  record's uuid (a fork's copies keep their uuids: counted once in any total).
* `tool_result`: one tool result per `functionResponse` part (an error where
  `toolCallResult.status` says so).
* `system/chat_compression`: a `compaction` entry (the `<state_snapshot>` summary;
  `compressedHistory` kept whole, it is what Qwen Code sends from there on).
* `system/ui_telemetry`: kept as it was, in its place. An `api_response` event of a
  request outside the conversation (the compression's own requests: a `prompt_id`
  neither the session's turns nor a sub-agent's) is a `model_request` entry, so that its
  tokens count as Qwen Code's `/stats` counts them. A sub-agent's requests are counted
  from the sub-agent's own file.
* Other system records (attribution snapshots, titles, rewinds …) and unknown lines: kept
  raw (`qwen:<subtype>`), in their place.
* A fork (`--fork-session`: a new file, the same uuids under a new `sessionId`, each copy
  with `forkedFrom`) is a session of kind `fork` under the one it came from.
* A sub-agent's file (`subagents/<parent session>/agent-<type>-<call id>.jsonl`, its
  `.meta.json` beside it) is a session of kind `subagent` under the `agent` call that
  started it.
* The project folder is the records' `cwd`. Fields every record repeats (`sessionId`,
  `cwd`, `version`, ...) are kept once, in the session's metadata (`lineDefaults`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.usage.tokens import MODEL_REQUEST
from core.importing.base import (
    SHAPE_ERRORS, FileResult, ProgressTicker, epoch_ms, file_mtime, object_lines, odd_shape,
    short_hash, timestamp_of, title_from_text)
from core.importing.nodes import Nodes, write_session
from core.agents.gemini.parts import (
    blocks_of, calls_of, gemini_usage, responses_of, text_of, tool_call, tool_result)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "qwen"
RESUMABLE = False
EXTRA = "qwen"        # the key of what a record holds beside its message
# Fields of the record that the entry itself holds (or the session's lineDefaults)
_OWN = frozenset({"uuid", "parentUuid", "type", "timestamp", "message"})
DEFAULT_KEYS = ("sessionId", "cwd", "version", "gitBranch", "agentId", "agentName",
                "isSidechain")
_SPAWN_TOOLS = frozenset({"agent", "task"})
# `prompt_id`s of the session's own turns (`<session>########<n>`, maybe `/automatic/<n>`
# after) and of a sub-agent's (`<session>#<agent id>#<n>`)
_TURN_PROMPT = re.compile(r"^[^#]+#(?:#{7}|[^#]+#)\d")


class _Read:
    def __init__(self, result: FileResult):
        self.result = result
        self.nodes = Nodes()
        self.head: str | None = None            # the last entry written (for lines without a uuid)
        self.last_of: dict[str, str] = {}       # record uuid -> its last entry
        self.defaults: dict[str, Any] = {}
        self.first_prompt = ""
        self.title = ""
        self.model = ""
        self.forked_from: tuple[str, str] | None = None    # (source session, newest copy)
        self.call_names: dict[str, str] = {}

    def parent(self, d: dict[str, Any]) -> str | None:
        parent = d.get("parentUuid")
        if isinstance(parent, str) and parent:
            return self.last_of.get(parent, parent)
        return None

    def extra(self, d: dict[str, Any]) -> dict[str, Any]:
        """The record's fields beyond the entry's own (defaults left out)."""
        defaults = self.defaults
        if not defaults:
            for key in DEFAULT_KEYS:
                if key in d:
                    defaults[key] = d[key]
        return {k: v for k, v in d.items()
                if k not in _OWN and not (k in defaults and defaults[k] == v)}

    def add(self, entry_id: str, parent: str | None, kind: str, data: dict[str, Any],
            d: dict[str, Any], line: int) -> str:
        self.head = self.nodes.add(entry_id, parent, kind, data, d.get("timestamp"), line)
        return self.head

    # ------------------------------------------------------------------ lines
    def take(self, d: dict[str, Any], line: int) -> None:
        uid, kind = d.get("uuid"), d.get("type")
        if not isinstance(uid, str) or not uid or not isinstance(kind, str):
            self.raw(d, line, None, "line")
            return
        forked = d.get("forkedFrom")
        if isinstance(forked, dict) and isinstance(forked.get("sessionId"), str) and \
                isinstance(forked.get("messageUuid"), str):
            self.forked_from = (forked["sessionId"], forked["messageUuid"])
        message = d.get("message")
        if kind == "user" and isinstance(message, dict):
            self.user(d, uid, line)
        elif kind == "assistant" and isinstance(message, dict):
            self.assistant(d, uid, line)
        elif kind == "tool_result" and isinstance(message, dict):
            self.results(d, uid, line)
        elif kind == "system":
            self.system(d, uid, line)
        else:
            self.raw(d, line, uid, kind)

    def raw(self, d: dict[str, Any], line: int, uid: str | None, kind: str) -> None:
        """A record or line kept as it was, in its place on the branch."""
        parent = self.parent(d) if uid else self.head
        kept = dict(d)
        if uid:     # (its type and message too: the record is written back as it was)
            kept = {**self.extra(d), "type": d.get("type")}
            if "message" in d:
                kept["message"] = d["message"]
        entry = self.add(uid or f"L{line}", parent, f"{FORMAT}:{kind}", {EXTRA: kept}, d, line)
        if uid:
            self.last_of[uid] = entry

    def user(self, d: dict[str, Any], uid: str, line: int) -> None:
        parts = d["message"].get("parts")
        message: dict[str, Any] = {"role": "user", "content": blocks_of(parts)}
        ms = epoch_ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        if d.get("subtype") is None and d.get("provenance") in (None, "real_user") and \
                not self.first_prompt:
            self.first_prompt = text_of(parts)
        self.last_of[uid] = self.add(uid, self.parent(d), MESSAGE,
                                     {"message": message, EXTRA: self.extra(d)}, d, line)

    def assistant(self, d: dict[str, Any], uid: str, line: int) -> None:
        parts = d["message"].get("parts")
        content = blocks_of(parts)
        for call in calls_of(parts):
            cid = str(call.get("id") or f"{uid}#{len(content)}")
            self.call_names[cid] = str(call.get("name") or "")
            content.append(tool_call(cid, call.get("name"), call.get("args")))
        message: dict[str, Any] = {"role": "assistant", "content": content,
                                   "responseId": f"{FORMAT}:{uid}"}
        model = d.get("model")
        if isinstance(model, str) and model:
            self.model = model
        if self.model:     # (a sub-agent's records name none: its .meta.json does)
            message["model"] = self.model
        usage = d.get("usageMetadata")
        if isinstance(usage, dict):
            message["usage"] = _usage(usage)
        ms = epoch_ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        entry = self.add(uid, self.parent(d), MESSAGE, {"message": message, EXTRA: self.extra(d)},
                         d, line)
        self.last_of[uid] = entry
        for block in content:
            if block.get("type") == "toolCall" and block["name"] in _SPAWN_TOOLS:
                self.nodes.spawns.append((block["id"], entry))

    def results(self, d: dict[str, Any], uid: str, line: int) -> None:
        responses = responses_of(d["message"].get("parts"))
        outcome = d.get("toolCallResult")
        status = outcome.get("status") if isinstance(outcome, dict) else None
        extra = self.extra(d)
        parent = self.parent(d)
        ms = epoch_ms(d.get("timestamp"))
        others = [p for p in d["message"].get("parts") or () if not (
            isinstance(p, dict) and isinstance(p.get("functionResponse"), dict))]
        if others:
            extra["otherParts"] = others
        if not responses:
            self.raw(d, line, uid, "tool_result")
            return
        for n, response in enumerate(responses):
            cid = str(response.get("id") or "")
            message = tool_result(cid, response.get("name") or self.call_names.get(cid),
                                  response.get("response"),
                                  is_error=status not in (None, "success"), timestamp_ms=ms)
            data: dict[str, Any] = {"message": message}
            rest = {k: v for k, v in response.items() if k not in ("id", "name", "response")}
            if n == 0:
                data[EXTRA] = {**extra, **({"response": rest} if rest else {})}
            elif rest:
                data[EXTRA] = {"response": rest}
            parent = self.add(uid if n == 0 else f"{uid}#{n + 1}", parent, MESSAGE, data, d, line)
        self.last_of[uid] = parent

    def system(self, d: dict[str, Any], uid: str, line: int) -> None:
        subtype = d.get("subtype")
        payload = d.get("systemPayload")
        if subtype == "chat_compression" and isinstance(payload, dict) and \
                isinstance(payload.get("compressedHistory"), list):
            history = payload["compressedHistory"]
            summary = "\n\n".join(text_of(c.get("parts")) for c in history
                                  if isinstance(c, dict) and c.get("role") == "user"
                                  and "<state_snapshot>" in text_of(c.get("parts")))
            info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
            before = info.get("originalTokenCount")
            data = {"summary": summary or text_of(history[0].get("parts") if history and
                                                  isinstance(history[0], dict) else None),
                    "firstKeptEntryId": None,
                    "tokensBefore": before if type(before) is int else 0,
                    EXTRA: self.extra(d)}
            self.last_of[uid] = self.add(uid, self.parent(d), COMPACTION, data, d, line)
            return
        if subtype == "custom_title" and isinstance(payload, dict) and \
                isinstance(payload.get("customTitle"), str):
            self.title = payload["customTitle"]
        if subtype == "ui_telemetry" and isinstance(payload, dict):
            request = _side_request(payload.get("uiEvent"))
            if request is not None:
                self.last_of[uid] = self.add(uid, self.parent(d), MODEL_REQUEST,
                                             {"request": request, EXTRA: self.extra(d)}, d, line)
                return
        self.raw(d, line, uid, str(subtype or "system"))


def _usage(meta: dict[str, Any]) -> dict[str, int]:
    return gemini_usage(meta.get("promptTokenCount"), meta.get("candidatesTokenCount"),
                        meta.get("cachedContentTokenCount"), meta.get("thoughtsTokenCount"),
                        meta.get("toolUsePromptTokenCount"))


def _side_request(event: Any) -> dict[str, Any] | None:
    """The usage of an `api_response` event of a request outside the session's turns and
    its sub-agents' (the compression's), else None."""
    if not isinstance(event, dict) or event.get("event.name") != "qwen-code.api_response":
        return None
    prompt = event.get("prompt_id")
    if not isinstance(prompt, str) or _TURN_PROMPT.match(prompt):
        return None
    usage = gemini_usage(event.get("input_token_count"), event.get("output_token_count"),
                         event.get("cached_content_token_count"),
                         event.get("thoughts_token_count"))
    response = event.get("response_id")
    return {"model": str(event.get("model") or ""), "provider": "", "usage": usage,
            "responseId": f"{FORMAT}:{response}" if isinstance(response, str) and response
            else "", "promptId": prompt}


def _meta_of(path: Path) -> dict[str, Any]:
    """A sub-agent's `.meta.json` beside its file ({} when there is none)."""
    side = path.with_suffix(".meta.json")
    try:
        if side.is_file() and side.stat().st_size < 1 << 20:
            value = json.loads(side.read_text("utf-8"))
            return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        pass
    return {}


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    read = _Read(result)
    meta = _meta_of(path) if path.parent.parent.name == "subagents" else {}
    if isinstance(meta.get("model"), str):
        read.model = meta["model"]
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            try:
                read.take(d, raw.number)
            except SHAPE_ERRORS as error:
                result.skip(raw.number, odd_shape(error))
                read.raw(d, raw.number, None, "line")
    if not read.nodes:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no Qwen Code records in this file"
        return
    defaults = read.defaults
    session_id = defaults.get("sessionId") if isinstance(defaults.get("sessionId"), str) else ""
    cwd = defaults.get("cwd") if isinstance(defaults.get("cwd"), str) else ""
    agent_id = defaults.get("agentId") if isinstance(defaults.get("agentId"), str) else ""
    subagent = bool(agent_id) and defaults.get("isSidechain") is True
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_id, "model": read.model,
                                "lineDefaults": defaults}
    kind, parent, spawn = "session", None, None
    if subagent:
        metadata["agent"] = meta
        call = meta.get("toolUseId") if isinstance(meta.get("toolUseId"), str) else ""
        name = str(defaults.get("agentName") or "")
        if not call and name and agent_id.startswith(name + "-"):
            call = agent_id[len(name) + 1:]
        uid = f"{session_id}:{agent_id}"
        kind, parent = "subagent", str(meta.get("parentSessionId") or session_id)
        spawn = f"key:{call}" if call else None
    else:
        uid = session_id or f"{FORMAT}-{short_hash(str(path.resolve()))}"
        if read.forked_from is not None and read.forked_from[0] != uid:
            kind, parent = "fork", read.forked_from[0]
            spawn = f"entry:{read.forked_from[1]}"
            metadata["forkedFrom"] = read.forked_from[0]
    name = title_from_text(read.title or read.first_prompt) or path.stem
    write_session(store, result, ticker, read.nodes, uid=uid, name=name, source=FORMAT,
                  cwd=cwd, metadata=metadata, kind=kind, parent_session=parent,
                  spawn_ref=spawn, created_at=timestamp_of(read.nodes.times[0]),
                  fallback=file_mtime(path))
