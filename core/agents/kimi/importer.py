"""Kimi CLI sessions (`~/.kimi/sessions/<md5 of the work dir>/<uuid>/wire.jsonl`, Kimi CLI
1.50).

Facts: docs/agents/kimi-cli.md. `wire.jsonl` is the session's event log, appended to and
never rotated (the model context, `context.jsonl`, is rotated by each compaction; the
wire keeps everything), so it is the file arbor reads: a `metadata` line, then
`{"timestamp", "message": {"type", "payload"}}` events. Lines have no ids: an entry is
named by the line it starts on (`L<n>`). What arbor makes of the events:

* `TurnBegin` / `SteerInput`: a user message (`user_input`, text or content parts);
* a step's `ContentPart`s (text, `think`) and `ToolCall`s: one assistant message, written
  once the step's `StatusUpdate` (its `token_usage`, keyed by `message_id`) or the next
  event says it is whole (a step still being written is read on the next read); then
  each `ToolResult` a `toolResult` message;
* `CompactionBegin`/`CompactionEnd`: a `compaction` entry whose summary is the
  compaction output Kimi put at the head of the next context file (`context_<n+1>.jsonl`,
  or `context.jsonl` for the last one), its first kept entry the first message kept
  after it;
* `SubagentEvent`s mirror a sub-agent's events in its parent: not read again (the
  sub-agent's own `subagents/<agent id>/wire.jsonl` is its session, of kind `subagent`,
  under the `Agent` call that started it); they name the spawn point;
* other events (`StepBegin`, `TurnEnd`, approvals, hooks, notifications, …) carry no
  message: `StepInterrupted`, `StepRetry` and those not known are kept in the session's
  metadata (`events`), the rest are structure.

`/fork` and `/undo` (shell commands) write a new session whose wire is a copy of the
current one's lines (all of them; for `/undo`, those before the undone turn), titled
"Fork: <title>" / "Undo: <title>" in its `state.json`, and name the original nowhere. Such
a session is a `fork` nested under the session of the same work folder it shares the most
leading lines with (not one titled as its own fork or undo), at the last entry they share:
an undo reads as a branch from the turn it went back to, and the undone turns stay in the
original.

The work folder is the one `~/.kimi/kimi.json` lists whose md5 is the session's folder
name. The wire names no model: the model is `default_model` of `~/.kimi/config.toml`
where it has one (what `kimi` uses without `-m`), marked as such in the metadata.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.importing.base import (
    SHAPE_ERRORS, FileResult, ProgressTicker, file_mtime, object_lines, odd_shape, short_hash,
    timestamp_of, title_from_text)
from core.importing.nodes import Nodes, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "kimi"
RESUMABLE = False
COMPACTED = "<system>Previous context has been compacted."
_STRUCTURE = frozenset({"StepBegin", "TurnEnd", "CompactionBegin", "StatusUpdate",
                        "MCPLoadingBegin", "MCPLoadingEnd", "MCPStatusSnapshot",
                        "MCPServerSnapshot", "ToolCallPart"})
_SMALL = 4 * 1024 * 1024


def parts_of(value: Any) -> list[dict[str, Any]]:
    """Kimi's content parts (or a string) as arbor's blocks."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}] if value else []
    if not isinstance(value, list):
        return []
    out = []
    for part in value:
        if not isinstance(part, dict):
            out.append({"type": "text", "text": json.dumps(part, ensure_ascii=False)})
        elif part.get("type") == "text":
            out.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "think":
            out.append({"type": "thinking", "thinking": str(part.get("think", ""))})
        else:
            out.append(dict(part))
    return out


def usage_of(tokens: Any) -> dict[str, int] | None:
    if not isinstance(tokens, dict):
        return None

    def count(key: str) -> int:
        value = tokens.get(key)
        return value if type(value) is int and value > 0 else 0

    out = {"input": count("input_other"), "output": count("output"),
           "cacheRead": count("input_cache_read"), "cacheWrite": count("input_cache_creation")}
    return out if any(out.values()) else None


class _Read:
    def __init__(self, result: FileResult, model: str, summaries: list[list[Any]]):
        self.result = result
        self.nodes = Nodes()
        self.head: str | None = None
        self.header: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []
        self.step: dict[str, Any] | None = None      # the assistant message being read
        self.calls: dict[str, str] = {}              # tool call id -> its message's entry
        self.call_names: dict[str, str] = {}
        self.spawned: set[str] = set()
        self.first_prompt = ""
        self.model = model
        self.summaries = summaries                   # each compaction's next context
        self.compactions = 0
        self.context_tokens = 0
        self.in_compaction: tuple[int, Any] | None = None

    def take(self, d: dict[str, Any], line: int) -> None:
        message = d.get("message")
        if message is None and d.get("type") == "metadata":
            self.header = d
            return
        kind, payload = message["type"], message["payload"]
        if not isinstance(kind, str) or not isinstance(payload, dict):
            raise TypeError("an event without a type or a payload")
        stamp = d.get("timestamp")          # (epoch seconds: stored as the entry's time)
        if kind == "ContentPart":
            self.open_step(line, stamp)["content"].extend(parts_of([payload]))
        elif kind == "ToolCall":
            function = payload.get("function") if isinstance(payload.get("function"), dict) else {}
            arguments = function.get("arguments")
            try:
                parsed = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
            except ValueError:
                parsed = {"value": arguments}
            call_id = str(payload.get("id") or f"L{line}")
            name = str(function.get("name", ""))
            self.call_names[call_id] = name
            self.open_step(line, stamp)["content"].append({
                "type": "toolCall", "id": call_id, "name": name,
                "arguments": parsed if isinstance(parsed, dict) else {"value": parsed}})
        elif kind == "StatusUpdate":
            if isinstance(payload.get("context_tokens"), int):
                self.context_tokens = payload["context_tokens"]
            usage = usage_of(payload.get("token_usage"))
            if self.step is not None:
                if usage is not None:
                    self.step["message"]["usage"] = usage
                    response = payload.get("message_id")
                    if isinstance(response, str) and response:
                        self.step["message"]["responseId"] = response
                self.close_step()
        elif kind in ("TurnBegin", "SteerInput"):
            self.close_step()
            blocks = parts_of(payload.get("user_input"))
            message = {"role": "user", "content": blocks}
            ms = _ms(stamp)
            if ms is not None:
                message["timestamp"] = ms
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if text.strip() and not self.first_prompt:
                self.first_prompt = text
            data: dict[str, Any] = {"message": message}
            if kind != "TurnBegin":
                data["kimi"] = {"event": kind}
            self.head = self.nodes.add(f"L{line}", self.head, MESSAGE, data, stamp, line)
        elif kind == "ToolResult":
            self.close_step()
            call_id = str(payload.get("tool_call_id", ""))
            value = payload.get("return_value") if isinstance(payload.get("return_value"), dict) else {}
            output = value.get("output")
            content = parts_of(output) if isinstance(output, list) else \
                [{"type": "text", "text": output if isinstance(output, str) else
                  json.dumps(output, ensure_ascii=False)}]
            message = {"role": "toolResult", "toolCallId": call_id,
                       "toolName": self.call_names.get(call_id, ""), "content": content,
                       "isError": bool(value.get("is_error"))}
            ms = _ms(stamp)
            if ms is not None:
                message["timestamp"] = ms
            rest = {k: v for k, v in value.items() if k not in ("output", "is_error")
                    and v not in (None, "", [], {})}
            data = {"message": message, **({"kimi": rest} if rest else {})}
            self.head = self.nodes.add(f"L{line}", self.head, MESSAGE, data, stamp, line)
        elif kind == "CompactionEnd":
            self.close_step()
            self.compaction(line, stamp)
        elif kind == "SubagentEvent":
            agent, call_id = payload.get("agent_id"), payload.get("parent_tool_call_id")
            if isinstance(agent, str) and agent not in self.spawned and call_id in self.calls:
                self.spawned.add(agent)
                self.nodes.spawns.append((agent, self.calls[call_id]))
        elif kind not in _STRUCTURE:
            self.events.append(d)

    def open_step(self, line: int, stamp: Any) -> dict[str, Any]:
        if self.step is None:
            message: dict[str, Any] = {"role": "assistant", "content": [], "api": "kimi"}
            if self.model:
                message["model"] = self.model
            ms = _ms(stamp)
            if ms is not None:
                message["timestamp"] = ms
            self.step = {"id": f"L{line}", "message": message, "stamp": stamp, "line": line}
        return self.step["message"]

    def close_step(self) -> None:
        step, self.step = self.step, None
        if step is None:
            return
        entry = self.nodes.add(step["id"], self.head, MESSAGE, {"message": step["message"]},
                               step["stamp"], step["line"])
        self.head = entry
        for block in step["message"]["content"]:
            if block.get("type") == "toolCall":
                self.calls[block["id"]] = entry

    def compaction(self, line: int, stamp: Any) -> None:
        context = self.summaries[self.compactions] if self.compactions < len(self.summaries) else []
        self.compactions += 1
        summary, first_kept = "", None
        for n, record in enumerate(context):
            if record.get("role") == "user" and COMPACTED in _text(record.get("content")):
                parts = parts_of(record.get("content"))
                summary = "\n\n".join(b["text"] for b in parts if b.get("type") == "text"
                                      and not b["text"].startswith(COMPACTED))
                first_kept = self.kept(context[n + 1:])
                break
        data = {"summary": summary, "firstKeptEntryId": first_kept,
                "tokensBefore": self.context_tokens}
        self.head = self.nodes.add(f"L{line}", self.head, COMPACTION, data, stamp, line)

    def kept(self, records: list[Any]) -> str | None:
        """The entry of the first message the compaction kept (by its tool calls, else its
        role and text, the newest such entry on the branch)."""
        for record in records:
            if not isinstance(record, dict) or record.get("role") not in ("user", "assistant", "tool"):
                continue
            calls = record.get("tool_calls")
            if isinstance(calls, list):
                for call in calls:
                    if isinstance(call, dict) and call.get("id") in self.calls:
                        return self.calls[call["id"]]
            role = {"tool": "toolResult"}.get(record["role"], record["role"])
            text = _text(record.get("content")).strip()
            for entry_id in reversed(self.nodes.path_to(self.head)):
                message = (self.nodes.get(entry_id) or {}).get("message") or {}
                if message.get("role") == role and _text(message.get("content")).strip() == text:
                    return entry_id
            return None
        return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content
                       if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _ms(stamp: Any) -> int | None:
    moment = timestamp_of(stamp)
    return int(moment.timestamp() * 1000) if moment is not None else None


def _json_lines(path: Path) -> list[Any]:
    out = []
    try:
        with open(path, "rb") as handle:
            for line in handle:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        return []
    return [r for r in out if isinstance(r, dict)]


def contexts_after_compactions(folder: Path) -> list[list[Any]]:
    """The context each compaction started, in order: `context_2.jsonl`, … then
    `context.jsonl` (Kimi renames the current context to `context_<n>.jsonl` and starts a
    new one with the compaction output)."""
    numbered = []
    for path in folder.glob("context_*.jsonl"):
        number = path.stem[len("context_"):]
        if number.isdigit():
            numbered.append((int(number), path))
    files = [path for _n, path in sorted(numbered)][1:] + [folder / "context.jsonl"]
    return [_json_lines(path) for path in files]


def work_dir(sessions: Path, folder_name: str) -> str:
    """The work folder whose md5 names the session's folder, from `~/.kimi/kimi.json`."""
    try:
        known = json.loads((sessions.parent / "kimi.json").read_bytes())
    except (OSError, ValueError):
        return ""
    dirs = known.get("work_dirs") if isinstance(known, dict) else None
    for entry in dirs if isinstance(dirs, list) else ():
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and hashlib.md5(path.encode("utf-8")).hexdigest() == folder_name:
            return path
    return ""


def default_model(share: Path) -> str:
    """The model `default_model` of `~/.kimi/config.toml` names ("" when there is none)."""
    try:
        import tomllib

        with open(share / "config.toml", "rb") as handle:
            config = tomllib.load(handle)
    except (OSError, ValueError, ImportError):
        return ""
    name = config.get("default_model")
    models = config.get("models")
    chosen = models.get(name) if isinstance(models, dict) and isinstance(name, str) else None
    model = chosen.get("model") if isinstance(chosen, dict) else None
    return model if isinstance(model, str) else ""


def _small_json(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > _SMALL:
            return {}
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    folder = path.parent
    subagent = folder.parent.name == "subagents"
    session_folder = folder.parent.parent if subagent else folder
    sessions = session_folder.parent.parent
    model = default_model(sessions.parent)
    read = _Read(result, model, contexts_after_compactions(folder))
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            try:
                read.take(d, raw.number)
            except SHAPE_ERRORS as error:
                result.skip(raw.number, odd_shape(error, "kept in the session's metadata"))
                read.events.append(d)
    # (a step not yet closed is still being written: read next time)
    if not read.header and not read.nodes:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no Kimi CLI events in this file"
        return
    state = _small_json(folder / "state.json")
    meta = _small_json(folder / "meta.json") if subagent else {}
    if subagent:
        uid = f"{session_folder.name}/{folder.name}"
        description = meta.get("description") if isinstance(meta.get("description"), str) else ""
        kind = meta.get("subagent_type") if isinstance(meta.get("subagent_type"), str) else ""
        name = f"{description} ({kind})" if description and kind else description or kind
    else:
        uid = folder.name if folder.name else f"{FORMAT}-{short_hash(str(path.resolve()))}"
        title = state.get("custom_title")
        name = title if isinstance(title, str) else ""
    name = title_from_text(name or read.first_prompt) or folder.name
    cwd = work_dir(sessions, session_folder.parent.name)
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_folder.name, "model": model,
                                "header": read.header}
    if model:
        metadata["modelFrom"] = "config.toml default_model"
    if state:
        metadata["state"] = state
    if meta:
        metadata["subagent"] = meta
    if read.events:
        metadata["events"] = read.events
    if read.compactions:
        metadata["compactions"] = read.compactions
    copied = None if subagent else copied_from(path, state)
    spawn_ref = f"key:{folder.name}" if subagent else None
    parent = session_folder.name if subagent else None
    if copied is not None:
        parent, shared = copied
        metadata["forkedFrom"] = {"session": parent, "lines": shared,
                                  "command": "undo" if name.startswith("Undo:") else "fork"}
        at = [read.nodes.ids[i] for i, line in enumerate(read.nodes.lines) if line <= shared]
        spawn_ref = f"entry:{at[-1]}" if at else None
    write_session(store, result, ticker, read.nodes, uid=uid, name=name, source=FORMAT, cwd=cwd,
                  metadata=metadata,
                  kind="subagent" if subagent else "fork" if copied else "session",
                  parent_session=parent, spawn_ref=spawn_ref, fallback=file_mtime(path))


_COPIES = ("Fork: ", "Undo: ")
_COPY_LIMIT = 64 << 20


def copied_from(path: Path, state: dict[str, Any]) -> tuple[str, int] | None:
    """The session `/fork` or `/undo` copied this one from and how many leading lines of
    its wire they share (more than the metadata line), or None (see the module doc)."""
    title = state.get("custom_title")
    if not isinstance(title, str) or not title.startswith(_COPIES):
        return None
    try:
        if path.stat().st_size > _COPY_LIMIT:
            return None
        ours = [line.strip() for line in path.read_bytes().splitlines() if line.strip()]
    except OSError:
        return None
    own_copies = {prefix + title for prefix in _COPIES}
    best: tuple[str, int] | None = None
    for folder in sorted(path.parent.parent.iterdir()):
        wire = folder / "wire.jsonl"
        if folder == path.parent or not wire.is_file():
            continue
        if _small_json(folder / "state.json").get("custom_title") in own_copies:
            continue        # (a copy of this session, not its original)
        shared = 0
        try:
            with open(wire, "rb") as handle:
                for line in handle:
                    if not line.strip():
                        continue
                    if shared >= len(ours) or line.strip() != ours[shared]:
                        break
                    shared += 1
        except OSError:
            continue
        if shared > 1 and (best is None or shared > best[1]):
            best = (folder.name, shared)
    return best
