"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).

Every line is `{timestamp, type, payload}` and a file is linear. What arbor makes of it:

* The first `session_meta` is the session's metadata (not an entry).
* `response_item` messages, reasoning, function and custom tool calls and their outputs
  become pi-shaped messages (a tool output is its own `toolResult` message). Encrypted
  reasoning is kept in the entry's data, never in the displayed content.
* User and assistant text appears twice, as an `event_msg` (user_message, agent_message,
  agent_reasoning) and as a `response_item`: the two lines become ONE entry (the id of the
  first line; the other line is kept inside it under `codex.duplicates`). A reasoning
  summary of several parts has one `agent_reasoning` event per part: all of them fold into
  the one reasoning entry, whichever came first. An event without its twin stays a
  message of its own.
* `turn_context` becomes a `model_change` when the model changes, else a raw
  `codex:turn_context` entry; `compacted` becomes a `compaction` entry.
* `event_msg` `thread_rolled_back` (num_turns) moves the head back before the last turns:
  a `codex:thread_rolled_back` marker is attached where the kept history ends, so the
  dropped turns stay browsable on their own branch and what follows continues after it.
* Every other line (other events, unknown types) is kept as a raw `codex:<type>` entry.
* Forks: a file whose `session_meta` has `forked_from_id` is written into its PARENT's
  session when the parent is in the store: the repeated history is matched against the
  parent's entries (by content fingerprint, timestamps ignored) and only what differs is
  written, as a branch from the last shared entry. Without the parent it is a session of
  its own.
* Sub-agents (`source.subagent.thread_spawn.parent_thread_id`): a session of kind
  `subagent`, attached (core.history.lineage) under the `spawn_agent` call that started it: the
  parent records that call as a spawn point for the thread id its output (or the
  CollabAgentToolCall / collab_agent_spawn_end event) names.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.model.entries import COMPACTION, MESSAGE, MODEL_CHANGE, content_text
from core.importing.base import (
    RAW_LINE_KEY, SHAPE_ERRORS, Clockwork, FileResult, LineError, ProgressTicker, epoch_ms,
    file_mtime, iter_lines, object_lines, odd_shape, parse_line, raw_lines_of, short_hash,
    title_from_text)
from core.importing.session import SessionTarget, first_text_title
from core.importing.tree import sync_branches

FORMAT = "codex"
WINDOW = 24
_EVENT_TWINS = {"user_message": "user", "agent_message": "assistant", "agent_reasoning": "reasoning"}


@dataclass
class Meta:
    id: str = ""
    parent_id: str | None = None
    relation: str = ""   # "fork" | "subagent" | ""
    payload: dict[str, Any] = field(default_factory=dict)
    timestamp: Any = None


def meta_of(d: dict[str, Any]) -> Meta | None:
    if d.get("type") != "session_meta" or not isinstance(d.get("payload"), dict):
        return None
    payload = d["payload"]
    meta = Meta(id=str(payload.get("id") or payload.get("session_id") or ""), payload=payload,
                timestamp=payload.get("timestamp") or d.get("timestamp"))
    source = payload.get("source")
    spawn = None
    if isinstance(source, dict):
        sub = source.get("subagent")
        if isinstance(sub, dict) and isinstance(sub.get("thread_spawn"), dict):
            spawn = sub["thread_spawn"].get("parent_thread_id")
    if isinstance(spawn, str) and spawn:
        meta.parent_id, meta.relation = spawn, "subagent"
    elif isinstance(payload.get("forked_from_id"), str) and payload["forked_from_id"]:
        meta.parent_id, meta.relation = payload["forked_from_id"], "fork"
    elif isinstance(payload.get("parent_thread_id"), str) and payload["parent_thread_id"]:
        meta.parent_id, meta.relation = payload["parent_thread_id"], "subagent"
    return meta


def read_meta(path: Path) -> Meta | None:
    """The first session_meta of a rollout (read from the first lines only)."""
    try:
        with open(path, "rb") as handle:
            for raw in iter_lines(handle):
                if raw.number > 5:
                    return None
                try:
                    d = parse_line(raw)
                except LineError:
                    continue
                meta = meta_of(d)
                if meta is not None:
                    return meta
    except OSError:
        return None
    return None


def _blocks(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in ("input_text", "output_text", "text"):
            converted = {"type": "text", "text": block.get("text", "")}
            rest = {k: v for k, v in block.items() if k not in ("type", "text")}
            if rest:
                converted["codex"] = rest
            out.append(converted)
        elif isinstance(block, dict) and block.get("type") == "input_image":
            url = str(block.get("image_url", ""))
            if url.startswith("data:") and ";base64," in url:
                mime, data = url[5:].split(";base64,", 1)
                out.append({"type": "image", "mimeType": mime, "data": data})
            else:
                out.append({"type": "image", "url": url})
        else:
            out.append(block)
    return out


def _arguments(text: Any) -> Any:
    if isinstance(text, str):
        try:
            value = json.loads(text)
            return value if isinstance(value, dict) else {"value": value}
        except ValueError:
            return {"raw": text}
    return text if isinstance(text, dict) else {"value": text}


def _output(output: Any) -> tuple[list[Any], bool, Any]:
    """(content blocks, is_error, what else the output carried)."""
    extra = None
    is_error = False
    if isinstance(output, dict):
        extra = {k: v for k, v in output.items() if k not in ("content", "output")}
        if output.get("success") is False:
            is_error = True
        output = output.get("content", output.get("output", ""))
    if isinstance(output, str):
        return [{"type": "text", "text": output}], is_error, extra
    if isinstance(output, list):
        blocks = _blocks(output)
        return blocks if isinstance(blocks, list) else [], is_error, extra
    return [{"type": "text", "text": json.dumps(output, ensure_ascii=False)}], is_error, extra


@dataclass
class Item:
    """One future entry: its main line and the twin lines folded into it."""

    lineno: int
    line: dict[str, Any]
    twin_role: str | None = None   # for text that may have a twin: "user"/"assistant"/"reasoning"
    twin_text: str = ""
    from_event: bool = False
    matched: bool = False
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    parts_left: list[str] = field(default_factory=list)  # summary parts not yet seen as events
    folded: bool = False           # folded into another item (a part of a reasoning summary)

    def take(self, line: dict[str, Any]) -> None:
        """An event came first: the response item's line takes its place (and so its
        position and id); the event's own line is kept with the duplicates."""
        self.duplicates.append(self.line)
        self.line = line
        self.from_event = False


class _Convert:
    def __init__(self, meta: Meta | None):
        self.tool_names: dict[str, str] = {}
        self.model = ""
        self.provider = str((meta.payload.get("model_provider") if meta else "") or "")

    def entry(self, item: Item, timestamp) -> tuple[str, dict[str, Any]]:
        d = item.line
        t = d.get("type")
        payload = d.get("payload") if isinstance(d.get("payload"), dict) else {}
        ptype = payload.get("type")
        ms = epoch_ms(timestamp)
        codex: dict[str, Any] = {"line": {k: v for k, v in d.items() if k not in ("payload",)}}
        if item.duplicates:
            codex["duplicates"] = item.duplicates
        message: dict[str, Any] | None = None
        if t == "response_item":
            rest = {k: v for k, v in payload.items()}
            if ptype == "message":
                role = payload.get("role") or "user"
                message = {"role": role, "content": _blocks(payload.get("content"))}
                if role == "assistant" and self.model:
                    message["model"] = self.model
                rest.pop("content", None)
                rest.pop("role", None)
            elif ptype == "reasoning":
                summary = payload.get("summary")
                text = "\n".join(str(s.get("text", "")) for s in summary if isinstance(s, dict)) \
                    if isinstance(summary, list) else ""
                blocks: list[Any] = [{"type": "thinking", "thinking": text}] if text else []
                content = payload.get("content")
                if isinstance(content, list):
                    raw_text = "\n".join(str(c.get("text", "")) for c in content
                                         if isinstance(c, dict))
                    if raw_text and not text:
                        blocks.append({"type": "thinking", "thinking": raw_text})
                if not blocks and payload.get("encrypted_content"):
                    blocks.append({"type": "thinking", "thinking": "", "redacted": True})
                message = {"role": "assistant", "content": blocks}
                rest.pop("summary", None)
            elif ptype in ("function_call", "custom_tool_call", "local_shell_call",
                           "web_search_call", "tool_search_call"):
                call_id = str(payload.get("call_id") or payload.get("id") or "")
                name = str(payload.get("name") or ptype.replace("_call", ""))
                if ptype == "function_call":
                    arguments = _arguments(payload.get("arguments"))
                elif ptype == "custom_tool_call":
                    arguments = {"input": payload.get("input", "")}
                else:
                    arguments = payload.get("action") if isinstance(payload.get("action"), dict) \
                        else {k: v for k, v in payload.items() if k not in ("type",)}
                self.tool_names[call_id] = name
                message = {"role": "assistant",
                           "content": [{"type": "toolCall", "id": call_id, "name": name,
                                        "arguments": arguments}]}
                if self.model:
                    message["model"] = self.model
                for key in ("name", "arguments", "input", "call_id"):
                    rest.pop(key, None)
            elif ptype in ("function_call_output", "custom_tool_call_output",
                           "local_shell_call_output", "tool_search_output"):
                call_id = str(payload.get("call_id") or "")
                blocks, is_error, extra = _output(payload.get("output"))
                message = {"role": "toolResult", "toolCallId": call_id,
                           "toolName": self.tool_names.get(call_id, ""), "content": blocks,
                           "isError": is_error}
                if extra:
                    rest["outputExtra"] = extra
                rest.pop("output", None)
                rest.pop("call_id", None)
            if message is not None:
                if ms is not None:
                    message["timestamp"] = ms
                codex["payload"] = rest
                return MESSAGE, {"message": message, "codex": codex}
        elif t == "event_msg" and item.twin_role in ("user", "assistant", "reasoning"):
            text = item.twin_text
            if item.twin_role == "reasoning":
                message = {"role": "assistant", "content": [{"type": "thinking", "thinking": text}]}
            else:
                message = {"role": item.twin_role, "content": text}
                images = payload.get("images")
                if images:
                    message["content"] = [{"type": "text", "text": text}] + [
                        {"type": "image", "url": str(u)} for u in images]
            if ms is not None:
                message["timestamp"] = ms
            codex["payload"] = {k: v for k, v in payload.items() if k != "message"}
            return MESSAGE, {"message": message, "codex": codex}
        elif t == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model and model != self.model:
                self.model = model
                return MODEL_CHANGE, {"provider": self.provider, "modelId": model,
                                      "codex": {"payload": payload}}
            return "codex:turn_context", dict(d)
        elif t == "compacted":
            return COMPACTION, {"summary": str(payload.get("message", "")),
                                "firstKeptEntryId": None, "tokensBefore": 0,
                                "codex": {"payload": {k: v for k, v in payload.items()
                                                      if k != "message"}}}
        if t == "event_msg" and isinstance(ptype, str):
            out = dict(d)
            if item.duplicates:
                out["duplicates"] = item.duplicates
            return f"codex:event_msg.{ptype}", out
        if t == "response_item" and isinstance(ptype, str):
            return f"codex:response_item.{ptype}", dict(d)
        return f"codex:{t if isinstance(t, str) else 'unknown'}", dict(d)


def fingerprint(d: dict[str, Any]) -> str:
    body = json.dumps([d.get("type"), d.get("payload")], sort_keys=True, ensure_ascii=False,
                      default=str)
    return hashlib.sha1(body.encode("utf-8", "replace")).hexdigest()[:16]


def _is_context_text(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith(("<environment_context", "<user_instructions", "<permissions",
                                "# AGENTS.md", "<INSTRUCTIONS"))


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    fallback = file_mtime(path)
    clock = Clockwork(fallback)
    meta: Meta | None = None
    first_ts = None
    # ---- find the session_meta and the parent (first lines only)
    meta = read_meta(path)
    own_id = meta.id if meta and meta.id else f"{FORMAT}-{short_hash(str(path.resolve()))}"
    parent_session = None
    if meta and meta.parent_id:
        candidate = store.sessions.by_uid(meta.parent_id)
        existing_own = store.sessions.by_uid(own_id)
        if existing_own is not None and (existing_own.metadata or {}).get("mergedInto"):
            existing_own = None   # imported alone before its parent, since merged into it
        if candidate is not None and candidate.source == FORMAT and existing_own is None and \
                meta.relation == "fork":
            parent_session = candidate
    into_parent = parent_session is not None
    uid = parent_session.uid if into_parent else own_id
    prefix = f"{own_id}:" if into_parent else ""
    cwd = str(meta.payload.get("cwd") or "") if meta else ""
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": own_id}
    if meta:
        metadata["sessionMeta"] = {k: v for k, v in meta.payload.items()
                                   if k not in ("instructions", "base_instructions")}
        for key in ("instructions", "base_instructions"):
            if meta.payload.get(key):
                metadata[key] = meta.payload[key]
        if meta.parent_id:
            metadata["parentThreadId"] = meta.parent_id
            metadata["relation"] = meta.relation
    created_at = None
    if meta is not None:
        from core.importing.base import timestamp_of

        created_at = timestamp_of(meta.timestamp)
    if into_parent:
        forks = dict((parent_session.metadata or {}).get("forks") or {})
        forks[own_id] = {"path": str(path), "relation": meta.relation if meta else "",
                         "cwd": cwd}
        target = SessionTarget(store, uid=uid, name=parent_session.session_name, source=FORMAT,
                               metadata={"forks": forks})
    else:
        target = SessionTarget(store, uid=uid, name="", source=FORMAT, cwd=cwd, metadata=metadata,
                               created_at=created_at or fallback,
                               kind=meta.relation if meta and meta.relation else "session",
                               parent_session=meta.parent_id if meta else None,
                               spawn_ref=f"key:codex-thread:{own_id}"
                               if meta and meta.relation == "subagent" else None)
    converter = _Convert(meta)

    # ---- matching the repeated history of a fork against the parent's entries
    matching = into_parent
    children: dict[int | None, dict[str, int]] = {}
    if matching:
        for seq, parent_seq, fp in store.entries.data_field(target.id, "fp"):
            if fp:
                children.setdefault(parent_seq, {}).setdefault(fp, seq)
    cursor: int | None = None   # seq of the last entry written or matched
    turns: list[int | None] = []
    title = ""
    thread_name = ""
    pending: deque[Item] = deque()
    seen_meta = False
    spawn_calls: dict[str, int] = {}   # spawn_agent call id -> the call's entry seq

    def emit(item: Item) -> None:
        nonlocal cursor, matching
        if item.folded:
            return
        d = item.line
        timestamp = clock.take(d.get("timestamp"))
        try:
            entry_type, data = converter.entry(item, timestamp)
        except SHAPE_ERRORS as error:
            result.skip(item.lineno, odd_shape(error))
            t = d.get("type")
            entry_type, data = f"codex:{t if isinstance(t, str) else 'unknown'}", dict(d)
        fp = fingerprint(d)
        if matching:
            seq = children.get(cursor, {}).get(fp)
            if seq is not None:
                cursor = seq
                _track_turn(entry_type, data, seq)
                return
            matching = False
        data["fp"] = fp
        if RAW_LINE_KEY in d and not raw_lines_of(data):  # (kinds that keep no line fields)
            data[RAW_LINE_KEY] = d[RAW_LINE_KEY]
        entry_id = f"{prefix}L{item.lineno}"
        if d.get("type") == "event_msg" and isinstance(d.get("payload"), dict) and \
                d["payload"].get("type") == "thread_rolled_back":
            count = d["payload"].get("num_turns")
            count = int(count) if isinstance(count, (int, float)) and count > 0 else 1
            if count <= len(turns):
                back_to = turns[-count]
                del turns[-count:]
            else:
                back_to = turns[0] if turns else cursor
                turns.clear()
            target.flush()
            data["rolledBackFrom"] = _entry_id_of(cursor)
            seq, _written = target.add(entry_id, back_to, "codex:thread_rolled_back", data,
                                       timestamp)
            cursor = seq
            return
        seq, written = target.add(entry_id, cursor, entry_type, data, timestamp)
        _track_turn(entry_type, data, seq, parent=cursor)
        cursor = seq
        if d.get("type") in ("response_item", "event_msg"):
            _spawn_points(d, seq, spawn_calls, target)

    def _entry_id_of(seq: int | None) -> str | None:
        if seq is None:
            return None
        return store.entries.id_of(seq)

    def _track_turn(entry_type: str, data: dict[str, Any], seq: int, parent: int | None = None) -> None:
        nonlocal title
        message = data.get("message") if entry_type == MESSAGE else None
        if isinstance(message, dict) and message.get("role") == "user":
            text = content_text(message.get("content"))
            if text.strip() and not _is_context_text(text):
                if parent is None:
                    target.flush()
                    parent = store.entries.parent_of(seq)
                turns.append(parent)
                if not title:
                    title = title_from_text(text)

    def push(item: Item) -> None:
        pending.append(item)
        while len(pending) > WINDOW:
            emit(pending.popleft())

    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            t = d.get("type")
            payload = d.get("payload") if isinstance(d.get("payload"), dict) else None
            if first_ts is None:
                first_ts = clock.take(d.get("timestamp"))
            if t == "session_meta" and not seen_meta:
                seen_meta = True
                continue
            if t == "session_meta" and matching:
                continue  # the parent's own header, repeated in a fork
            ptype = payload.get("type") if payload is not None else None
            if type(ptype) is not str:
                ptype = None
            if t == "event_msg" and ptype in _EVENT_TWINS:
                role = _EVENT_TWINS[ptype]
                text = str(payload.get("message", payload.get("text", "")) or "")
                twin = _find_twin(pending, role, text, from_event=False)
                if twin is not None:
                    twin.matched = True
                    twin.duplicates.append(d)
                    continue
                if role == "reasoning":
                    whole = _reasoning_waiting_for(pending, text)
                    if whole is not None:  # one part of a summary already written whole
                        whole.parts_left.pop(0)
                        whole.duplicates.append(d)
                        whole.matched = not whole.parts_left
                        continue
                push(Item(raw.number, d, twin_role=role, twin_text=text, from_event=True))
                continue
            if t == "response_item" and payload is not None:
                ptype = payload.get("type")
                role = None
                text = ""
                if ptype == "message" and payload.get("role") in ("user", "assistant"):
                    role = payload["role"]
                    text = content_text(payload.get("content"))
                elif ptype == "reasoning":
                    role = "reasoning"
                    summary = payload.get("summary")
                    parts = [str(s.get("text", "")) for s in summary if isinstance(s, dict)] \
                        if isinstance(summary, list) else []
                    text = "\n".join(parts)
                    if len(parts) > 1:
                        # Codex writes one agent_reasoning event per summary part: the
                        # events and this item become one entry, whichever came first.
                        item = Item(raw.number, d, twin_role=role, twin_text=text)
                        _fold_reasoning_parts(pending, item, parts)
                        if item.folded:
                            continue
                        push(item)
                        continue
                if role is not None:
                    twin = _find_twin(pending, role, text, from_event=True)
                    if twin is not None:
                        twin.take(d)
                        twin.matched = True
                        continue
                    push(Item(raw.number, d, twin_role=role, twin_text=text))
                    continue
            if t == "event_msg" and payload is not None and \
                    payload.get("type") in ("thread_name_updated", "session_name_updated"):
                name = payload.get("thread_name") or payload.get("name")
                if isinstance(name, str) and name.strip():
                    thread_name = title_from_text(name)
            push(Item(raw.number, d))
    while pending:
        emit(pending.popleft())
    if not target.known and not result.lines:
        result.status = "not-a-log"
        result.error = "empty file"
        return
    if meta is None and not result.sessions and not target.result.entries_added and \
            not target.known:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no Codex lines in this file"
        return
    name = thread_name or title or path.stem

    def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
        leaf_id = store.entries.id_of(leaf) or ""
        text = first_text_title(store, path_, 40)
        if ":" in leaf_id:
            child = leaf_id.split(":", 1)[0]
            relation = "sub-agent" if meta and meta.relation == "subagent" else "fork"
            return f"{relation} {child[:8]}" + (f": {text}" if text else "")
        if fork is None:
            return "main" if not store.branches.of_session(target.id) else (text or "root")
        return text or "rolled back" if not text else text

    target.flush()
    sync = sync_branches(store, target.id, key_prefix=f"{FORMAT}:{uid}", name_for=name_for)
    target.result.branches_added = sync.added
    session_result = target.finish(name=None if into_parent else name)
    if into_parent:
        session_result.name = f"{session_result.name} (fork {own_id[:8]} added as branches)"
    result.sessions.append(session_result)
    if not into_parent:
        _merge_orphans(store, own_id, result)


def _spawn_points(d: dict[str, Any], seq: int, spawn_calls: dict[str, int], target) -> None:
    """A `spawn_agent` call, and the lines that name the thread it started: the call's
    entry is where that sub-agent's session is attached."""
    payload = d.get("payload")
    if not isinstance(payload, dict):
        return
    ptype = payload.get("type")
    call = payload.get("call_id")
    threads: list[Any] = []
    if ptype == "function_call" and payload.get("name") == "spawn_agent" and isinstance(call, str):
        spawn_calls[call] = seq
        return
    if ptype == "function_call_output" and isinstance(call, str) and call in spawn_calls:
        output = payload.get("output")
        if isinstance(output, dict):
            output = output.get("content", output.get("output"))
        if isinstance(output, str):
            try:
                output = json.loads(output)
            except ValueError:
                output = None
        if isinstance(output, dict):
            threads = [output.get("agent_id")]
    elif ptype == "item_completed" and isinstance(payload.get("item"), dict):
        item = payload["item"]
        if item.get("type") == "CollabAgentToolCall" and item.get("tool") == "spawn_agent":
            call = item.get("id")
            ids = item.get("receiver_thread_ids")
            threads = list(ids) if isinstance(ids, list) else []
    elif ptype == "collab_agent_spawn_end":
        threads = [payload.get("new_thread_id")]
    where = spawn_calls.get(call) if isinstance(call, str) else None
    for thread in threads:
        if isinstance(thread, str) and thread and where is not None:
            target.spawn(f"codex-thread:{thread}", where)


def _merge_orphans(store, parent_id: str, result: FileResult) -> None:
    """Forks and sub-agents imported before their parent were sessions of their own: now
    that the parent is here, their files are read again as branches of the parent, and
    the lone copies are archived (not deleted) with `mergedInto` in their metadata."""
    for session in store.sessions.by_metadata(
            FORMAT, {"parentThreadId": parent_id, "relation": "fork"}, unset="mergedInto"):
        uid = session.uid
        child_path = (session.metadata or {}).get("path")
        if not isinstance(child_path, str) or not child_path or not Path(child_path).is_file():
            result.skip(None, f"fork {uid} was imported before its parent and its file "
                        f"{child_path} is gone: it stays a session of its own")
            continue
        meta = dict(session.metadata or {})
        meta["mergedInto"] = parent_id
        with store.transaction():
            store.sessions.set_metadata(session.id, meta)
            store.sessions.set_active(session.id, False)
            # Its next import must go to the parent, not stop at "unchanged".
            store.imports.forget_sources(session.id)
        nested = FileResult(child_path, format=FORMAT)
        import_file(store, Path(child_path), nested, ProgressTicker(None, child_path, 0, 1, 0))
        for item in nested.sessions:
            item.name = f"{item.name} (merged from {child_path})"
        result.sessions.extend(nested.sessions)
        result.skipped.extend(nested.skipped)


def _fold_reasoning_parts(pending: deque, item: Item, parts: list[str]) -> None:
    """Fold the agent_reasoning events already waiting that are `parts`, in order, into
    the reasoning item. It takes the place of the first of them (and so its position and
    id); the parts not seen yet are left for events still to come."""
    wanted = [part.strip() for part in parts]
    events = [p for p in pending
              if p.twin_role == "reasoning" and p.from_event and not p.matched and not p.folded]
    for start in range(len(events)):
        run = 0
        while run < len(wanted) and start + run < len(events) and \
                events[start + run].twin_text.strip() == wanted[run]:
            run += 1
        if run == 0:
            continue
        first = events[start]
        first.take(item.line)
        first.twin_text = item.twin_text
        for other in events[start + 1:start + run]:
            other.folded = True
            first.duplicates.append(other.line)
        first.parts_left = wanted[run:]
        first.matched = not first.parts_left
        item.folded = True
        return
    item.parts_left = wanted


def _reasoning_waiting_for(pending: deque, text: str) -> Item | None:
    """A reasoning item whose next unseen summary part is `text`."""
    wanted = text.strip()
    for item in pending:
        if item.parts_left and not item.folded and item.parts_left[0] == wanted:
            return item
    return None


def _find_twin(pending: deque, role: str, text: str, *, from_event: bool) -> Item | None:
    wanted = text.strip()
    for item in reversed(pending):
        if item.matched or item.twin_role != role or item.from_event != from_event:
            continue
        if item.twin_text.strip() == wanted:
            return item
    return None
