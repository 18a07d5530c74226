"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`).

The tree is `uuid`/`parentUuid`, but many nodes with several children are not real
branches. Two passes over the file, memory bounded by the number of lines (a few small
fields each), never by their size:

1. Scan: parse every line, keep for each its id, declared parent, kind, offset.
2. Decide the effective tree, in file order (a child whose parent comes later waits for
   it; dangling parents make roots; cycles are cut):
   * A *real fork* is a user prompt (typed text, not a tool result, not meta, not a compact
     summary) whose declared parent already has a user or assistant child: a rewind. It
     is attached to its declared parent, and so starts a branch.
   * Anything else is a *continuation*: it is attached to the newest node written below
     its declared parent (the "tip"), not to the parent itself. That collapses the false
     forks: lines of one reply that share `message.id`, parallel tool calls whose results
     all point at their own tool_use line, progress and attachment lines.
   * Lines without a uuid (summary, custom-title, file-history-snapshot, queue-operation,
     unknown types) are chained just before the next node, so they never make branches.
   * `system/compact_boundary` becomes a `compaction` entry attached to its
     `logicalParentUuid`; its summary is the following `isCompactSummary` message; with a
     preserved segment, `firstKeptEntryId` is the segment's head. When the logical parent
     comes later in the file (the preserved tail was re-parented below the summary), the
     boundary is attached to the newest preserved message written before it.
3. Write: read the lines again in that order and write entries (ids = uuids).

Usage is counted once per request: on the last line of each `message.id`.
Sidechain (sub-agent) lines are kept: their roots make branches of their own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..entries import COMPACTION, MESSAGE, SESSION_INFO
from .base import (Clockwork, FileResult, LineError, ProgressTicker, epoch_ms, file_mtime,
                   iter_lines, parse_line, short_hash, title_from_text)
from .session import SessionTarget, first_text_title
from .tree import processing_order, sync_branches

FORMAT = "claude_code"

META, PROMPT, USER_OTHER, ASSISTANT, BOUNDARY, OTHER = range(6)
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_LINE_SKIP = frozenset({"type", "uuid", "timestamp", "message"})
_STOP_REASONS = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length",
                 "stop_sequence": "stop", "refusal": "error", "pause_turn": "stop"}


def looks_like(first: dict[str, Any]) -> bool:
    t = first.get("type")
    if t in ("user", "assistant", "system", "progress", "attachment") and (
            "parentUuid" in first or "sessionId" in first or "uuid" in first):
        return True
    if t in ("summary", "custom-title", "file-history-snapshot", "queue-operation", "ai-title",
             "agent-name", "last-prompt", "permission-mode") and "payload" not in first:
        return True
    return False


def _kind(d: dict[str, Any]) -> int:
    t = d.get("type")
    if t == "assistant":
        return ASSISTANT
    if t == "user":
        if d.get("isMeta") or d.get("isCompactSummary") or d.get("isVisibleInTranscriptOnly"):
            return USER_OTHER
        message = d.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return PROMPT
        if isinstance(content, list):
            kinds = {b.get("type") for b in content if isinstance(b, dict)}
            if "tool_result" in kinds:
                return USER_OTHER
            if kinds & {"text", "image", "document"}:
                return PROMPT
        return USER_OTHER
    if t == "system" and d.get("subtype") == "compact_boundary":
        return BOUNDARY
    return OTHER


def _text_of_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


class _Scan:
    """What pass 1 keeps: a few small fields per line."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.parent_uuid: list[str | None] = []
        self.kind = bytearray()
        self.side = bytearray()
        self.offset: list[int] = []
        self.lineno: list[int] = []
        self.index: dict[str, int] = {}
        self.hashes: dict[int, int] = {}
        self.last_of_msgid: dict[str, int] = {}
        self.summary_for: dict[str, str] = {}
        self.preserved: dict[int, list[str]] = {}
        self.titles: dict[str, str] = {}
        self.first_prompt = ""
        self.session_id = ""
        self.cwd = ""
        self.model = ""
        self.version = ""
        self.git_branch = ""
        self.agent_id = ""
        self.all_sidechain = True
        self.first_ts: Any = None
        self.lines = 0


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    scan = _Scan()
    fallback = file_mtime(path)
    clock = Clockwork(fallback)
    with open(path, "rb") as handle:
        for raw in iter_lines(handle):
            scan.lines = raw.number
            if raw.number % 2048 == 0:
                ticker(raw.offset)
            try:
                d = parse_line(raw)
            except LineError as error:
                result.skip(raw.number, str(error))
                continue
            _scan_line(scan, d, raw, result, clock)
    result.lines = scan.lines
    count = len(scan.ids)
    if count == 0:
        if not result.skipped:
            result.status = "not-a-log"
            result.error = "no Claude Code lines in this file"
        else:
            result.status = "failed"
            result.error = "no line of this file could be read"
        return

    # ---- pass 2: the effective tree
    parents: list[int | None] = [None] * count
    index = scan.index
    dangling = 0
    for i in range(count):
        parent = scan.parent_uuid[i]
        if parent is None:
            continue
        j = index.get(parent)
        if j is None or j == i:
            dangling += 1
            continue
        if scan.kind[i] == BOUNDARY and j > i:
            j = _boundary_fallback(scan, i)
        parents[i] = j
    order: list[int] = []
    eff: list[int] = [-1] * count
    fwd: dict[int, int] = {}
    msg_child = bytearray(count)
    pending: list[int] = []
    kind = scan.kind

    def tip(node: int) -> int:
        last = node
        nxt = fwd.get(last)
        if nxt is None:
            return last
        trail = []
        while nxt is not None:
            trail.append(last)
            last = nxt
            nxt = fwd.get(last)
        for node_ in trail[:-1]:
            fwd[node_] = last
        return last

    def visit(i: int) -> None:
        k = kind[i]
        if k == META:
            pending.append(i)
            return
        p = parents[i]
        if p is None:
            e = -1
        else:
            if k == PROMPT and msg_child[p]:
                e = p
            else:
                e = tip(p)
            if k in (PROMPT, USER_OTHER, ASSISTANT):
                msg_child[p] = 1
        if pending:
            for m in pending:
                eff[m] = e
                order.append(m)
                if e >= 0:
                    fwd[e] = m
                e = m
            pending.clear()
        eff[i] = e
        order.append(i)
        if e >= 0:
            fwd[e] = i

    broken = processing_order(parents, visit)
    if pending:
        last_node = -1
        for node in reversed(order):
            if kind[node] != META:
                last_node = node
                break
        e = tip(last_node) if last_node >= 0 else -1
        if e < 0 and order:
            e = tip(order[-1])
        for m in pending:
            eff[m] = e
            order.append(m)
            if e >= 0:
                fwd[e] = m
            e = m
        pending.clear()
    for i in broken:
        result.skip(scan.lineno[i], f"parent cycle: entry {scan.ids[i]} was made a root "
                    "(kept, not dropped)")
    del fwd, msg_child, parents

    # ---- pass 3: write
    uid, kind_name, parent_session = _identity(scan, path)
    name = scan.titles.get("custom-title") or scan.titles.get("ai-title") or \
        scan.titles.get("summary") or title_from_text(scan.first_prompt) or path.stem
    metadata = {"format": FORMAT, "path": str(path), "cwd": scan.cwd, "model": scan.model,
                "sessionId": scan.session_id, "version": scan.version,
                "gitBranch": scan.git_branch}
    if scan.agent_id:
        metadata["agentId"] = scan.agent_id
    if dangling:
        metadata["danglingParents"] = dangling
    created_at = clock.first or fallback
    target = SessionTarget(store, uid=uid, name=name, source=FORMAT, cwd=scan.cwd,
                           metadata=metadata, created_at=created_at, kind=kind_name,
                           parent_session=parent_session)
    seq_of_node: list[int] = [0] * count
    tool_names: dict[str, str] = {}
    ticker.phase = "writing"
    clock = Clockwork(created_at)
    with open(path, "rb") as handle:
        position = 0
        for n, i in enumerate(order):
            if n % 2048 == 0:
                ticker(scan.offset[i])
            offset = scan.offset[i]
            if offset != position:
                handle.seek(offset)
            data = handle.readline()
            position = offset + len(data)
            entry_id = scan.ids[i]
            e = eff[i]
            parent_seq = seq_of_node[e] if e >= 0 else None
            if target.has(entry_id):
                seq_of_node[i] = target.known[entry_id]
                _learn_tools(data, tool_names)
                continue
            d = _reparse(data)
            timestamp = clock.take(d.get("timestamp"))
            entry_type, payload, usage = _convert(d, i, scan, tool_names, timestamp, eff, seq_of_node)
            seq, written = target.add(entry_id, parent_seq, entry_type, payload, timestamp)
            seq_of_node[i] = seq
            if written and usage is not None:
                target.record_usage(provider="anthropic", protocol="anthropic-messages",
                                    model=payload["message"].get("model", ""),
                                    input_tokens=usage["input"] + usage["cacheRead"] + usage["cacheWrite"],
                                    output_tokens=usage["output"],
                                    total_tokens=usage["totalTokens"], timestamp=timestamp)
    ticker(scan.offset[order[-1]] if order else 0, force=True)
    del seq_of_node

    def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
        title = first_text_title(store, path_, 40)
        first = store.get_entry(path_[0]) if path_ else None
        side = bool(first and isinstance(first.data.get("claude"), dict)
                    and first.data["claude"].get("isSidechain"))
        if fork is None:
            if side:
                return f"sidechain: {title}" if title else "sidechain"
            return "main" if not store.internal_sessions(target.id) else (title or "root")
        return title or "branch"

    target.flush()
    sync = sync_branches(store, target.id, key_prefix=f"{FORMAT}:{uid}", name_for=name_for)
    target.result.branches_added = sync.added
    result.sessions.append(target.finish(name=name))


def _scan_line(scan: _Scan, d: dict[str, Any], raw, result: FileResult, clock: Clockwork) -> None:
    t = d.get("type")
    uuid = d.get("uuid")
    clock.take(d.get("timestamp"))
    if not isinstance(uuid, str) or not uuid:
        if t in ("summary",) and isinstance(d.get("summary"), str):
            scan.titles.setdefault("summary", title_from_text(d["summary"]))
        elif t == "custom-title" and isinstance(d.get("customTitle"), str):
            scan.titles["custom-title"] = title_from_text(d["customTitle"])
        elif t == "ai-title" and isinstance(d.get("aiTitle", d.get("title")), str):
            scan.titles["ai-title"] = title_from_text(d.get("aiTitle", d.get("title")))
        scan.index.setdefault(f"L{raw.number}", len(scan.ids))
        _append(scan, f"L{raw.number}", None, META, 0, raw)
        return
    line_hash = hash(raw.data)
    if uuid in scan.index:
        first = scan.index[uuid]
        if scan.hashes.get(first) == line_hash:
            result.duplicates += 1
            return
        entry_id = f"{uuid}~L{raw.number}"
        result.skip(raw.number, f"duplicate uuid {uuid} (first at line {scan.lineno[first]}); "
                    f"kept as entry {entry_id}")
    else:
        entry_id = uuid
        scan.index[uuid] = len(scan.ids)
    k = _kind(d)
    parent = d.get("parentUuid")
    if k == BOUNDARY:
        logical = d.get("logicalParentUuid")
        parent = logical if isinstance(logical, str) and logical else parent
        meta = d.get("compactMetadata")
        if isinstance(meta, dict):
            kept = meta.get("preservedMessages")
            uuids = kept.get("uuids") if isinstance(kept, dict) else None
            if isinstance(uuids, list):
                scan.preserved[len(scan.ids)] = [u for u in uuids if isinstance(u, str)]
    if not isinstance(parent, str) or not parent:
        parent = None
    side = bool(d.get("isSidechain"))
    scan.hashes[len(scan.ids)] = line_hash
    _append(scan, entry_id, parent, k, side, raw)
    if not side:
        scan.all_sidechain = False
    if not scan.session_id and isinstance(d.get("sessionId"), str):
        scan.session_id = d["sessionId"]
    if not scan.cwd and isinstance(d.get("cwd"), str):
        scan.cwd = d["cwd"]
    if isinstance(d.get("version"), str):
        scan.version = d["version"]
    if not scan.git_branch and isinstance(d.get("gitBranch"), str):
        scan.git_branch = d["gitBranch"]
    if not scan.agent_id and isinstance(d.get("agentId"), str):
        scan.agent_id = d["agentId"]
    message = d.get("message")
    if k == ASSISTANT and isinstance(message, dict):
        msgid = message.get("id") or d.get("requestId")
        if isinstance(msgid, str):
            scan.last_of_msgid[msgid] = len(scan.ids) - 1
        if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
            scan.model = message["model"]
    elif k == PROMPT and not scan.first_prompt and not side and isinstance(message, dict):
        text = _text_of_content(message.get("content"))
        if text.strip() and not text.lstrip().startswith("<"):
            scan.first_prompt = text
    if d.get("isCompactSummary") and isinstance(parent, str) and isinstance(message, dict):
        scan.summary_for[parent] = _text_of_content(message.get("content"))


def _append(scan: _Scan, entry_id: str, parent: str | None, kind: int, side: int, raw) -> None:
    scan.ids.append(entry_id)
    scan.parent_uuid.append(parent)
    scan.kind.append(kind)
    scan.side.append(1 if side else 0)
    scan.offset.append(raw.offset)
    scan.lineno.append(raw.number)


def _boundary_fallback(scan: _Scan, i: int) -> int | None:
    """A compact boundary whose logical parent comes later in the file: attach it to the
    newest preserved message written before it, else to the previous main-thread node."""
    for uuid in reversed(scan.preserved.get(i, [])):
        j = scan.index.get(uuid)
        if j is not None and j < i:
            return j
    for j in range(i - 1, -1, -1):
        if scan.kind[j] != META and not scan.side[j]:
            return j
    return None


def _identity(scan: _Scan, path: Path) -> tuple[str, str, str | None]:
    stem = path.stem
    if scan.all_sidechain and scan.agent_id:
        parent = scan.session_id or None
        return f"{scan.session_id or short_hash(str(path))}:agent-{scan.agent_id}", "subagent", parent
    if _UUID_RE.match(stem):
        return stem, "session", None
    return f"{FORMAT}-{short_hash(str(path.resolve()))}", "session", None


def _reparse(data: bytes) -> dict[str, Any]:
    from .base import RawLine

    return parse_line(RawLine(0, 0, data.rstrip(b"\r\n"), True))


def _learn_tools(data: bytes, tool_names: dict[str, str]) -> None:
    if b'"tool_use"' not in data:
        return
    try:
        d = _reparse(data)
    except LineError:
        return
    message = d.get("message")
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                tool_names[str(block.get("id"))] = str(block.get("name", ""))


def convert_usage(usage: dict[str, Any]) -> dict[str, Any]:
    def num(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    out = {"input": num("input_tokens"), "output": num("output_tokens"),
           "cacheRead": num("cache_read_input_tokens"),
           "cacheWrite": num("cache_creation_input_tokens")}
    out["totalTokens"] = out["input"] + out["output"] + out["cacheRead"] + out["cacheWrite"]
    return out


def convert_block(block: Any, tool_names: dict[str, str]) -> Any:
    if not isinstance(block, dict):
        return {"type": "text", "text": block} if isinstance(block, str) else block
    kind = block.get("type")
    if kind == "text":
        return block
    if kind == "thinking":
        out = {"type": "thinking", "thinking": block.get("thinking", "")}
        if block.get("signature"):
            out["thinkingSignature"] = block["signature"]
        return out
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "redacted": True, "data": block.get("data")}
    if kind in ("tool_use", "server_tool_use"):
        call_id = str(block.get("id", ""))
        name = str(block.get("name", ""))
        tool_names[call_id] = name
        out = {"type": "toolCall", "id": call_id, "name": name, "arguments": block.get("input", {})}
        if kind != "tool_use":
            out["claudeType"] = kind
        return out
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict) and source.get("type") == "base64":
            return {"type": "image", "data": source.get("data", ""),
                    "mimeType": source.get("media_type", "")}
        return block
    if kind == "tool_result":
        return {"type": "toolResult", "toolCallId": block.get("tool_use_id", ""),
                "toolName": tool_names.get(str(block.get("tool_use_id", "")), ""),
                "content": _result_content(block.get("content"), tool_names),
                "isError": bool(block.get("is_error"))}
    return block


def _result_content(content: Any, tool_names: dict[str, str]) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [convert_block(b, tool_names) for b in content]
    return [{"type": "text", "text": str(content)}]


def convert_message(message: dict[str, Any], line_type: str, timestamp, tool_names: dict[str, str],
                    counted: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A Claude API message as pi's message shape; what does not map is kept under "claude"."""
    content = message.get("content")
    rest = {k: v for k, v in message.items() if k not in ("role", "content", "model", "usage")}
    usage = None
    if line_type == "assistant":
        blocks = [convert_block(b, tool_names) for b in content] if isinstance(content, list) \
            else content
        out: dict[str, Any] = {"role": "assistant", "content": blocks if blocks is not None else []}
        if message.get("model"):
            out["model"] = message["model"]
            out["provider"] = "anthropic"
            out["api"] = "anthropic-messages"
        if isinstance(message.get("stop_reason"), str):
            out["stopReason"] = _STOP_REASONS.get(message["stop_reason"], message["stop_reason"])
        if isinstance(message.get("id"), str):
            out["responseId"] = message["id"]
        raw_usage = message.get("usage")
        if isinstance(raw_usage, dict):
            if counted:
                usage = convert_usage(raw_usage)
                out["usage"] = usage
            rest["usage"] = raw_usage
            if not counted:
                rest["usageCountedOnAnotherLine"] = True
    else:
        role = message.get("role") or "user"
        if isinstance(content, list):
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
            if len(results) == 1 and len(content) == 1:
                block = results[0]
                call_id = str(block.get("tool_use_id", ""))
                out = {"role": "toolResult", "toolCallId": call_id,
                       "toolName": tool_names.get(call_id, ""),
                       "content": _result_content(block.get("content"), tool_names),
                       "isError": bool(block.get("is_error"))}
                extra = {k: v for k, v in block.items()
                         if k not in ("type", "tool_use_id", "content", "is_error")}
                if extra:
                    rest["toolResultExtra"] = extra
            else:
                out = {"role": role, "content": [convert_block(b, tool_names) for b in content]}
        else:
            out = {"role": role, "content": content if content is not None else ""}
    ms = epoch_ms(timestamp)
    if ms is not None:
        out["timestamp"] = ms
    if rest:
        out["claude"] = rest
    return out, usage


def _convert(d: dict[str, Any], i: int, scan: _Scan, tool_names: dict[str, str], timestamp,
             eff: list[int], seq_of_node: list[int]):
    t = d.get("type")
    k = scan.kind[i]
    extra = {key: value for key, value in d.items() if key not in _LINE_SKIP}
    message = d.get("message")
    if t in ("user", "assistant") and isinstance(message, dict):
        counted = False
        if t == "assistant":
            msgid = message.get("id") or d.get("requestId")
            counted = not isinstance(msgid, str) or scan.last_of_msgid.get(msgid) == i
        pimsg, usage = convert_message(message, t, timestamp, tool_names, counted)
        if d.get("isCompactSummary"):
            pimsg["kind"] = "compaction_summary"
        return MESSAGE, {"message": pimsg, "claude": extra}, usage
    if k == BOUNDARY:
        meta = d.get("compactMetadata") if isinstance(d.get("compactMetadata"), dict) else {}
        summary = scan.summary_for.get(str(d.get("uuid"))) or str(d.get("content") or "")
        kept = None
        segment = meta.get("preservedSegment")
        if isinstance(segment, dict) and isinstance(segment.get("headUuid"), str):
            head = scan.index.get(segment["headUuid"])
            if head is not None and _is_ancestor(head, i, eff):
                kept = segment["headUuid"]
        data = {"summary": summary, "firstKeptEntryId": kept,
                "tokensBefore": meta.get("preTokens", 0), "claude": extra}
        if meta.get("trigger"):
            data["trigger"] = meta["trigger"]
        return COMPACTION, data, None
    if t == "custom-title" and isinstance(d.get("customTitle"), str):
        return SESSION_INFO, {"name": d["customTitle"], "claude": extra}, None
    return f"claude:{t if isinstance(t, str) else 'unknown'}", dict(d), None


def _is_ancestor(node: int, start: int, eff: list[int]) -> bool:
    current = eff[start]
    steps = 0
    while current >= 0 and steps < 10_000_000:
        if current == node:
            return True
        current = eff[current]
        steps += 1
    return False
