"""Records of the store as the compact JSON `arbor mcp` answers with: ids to pass back (a
session's `uid`, a branch's `id`, an entry's `seq`), short fields, and every string that came
from a log escaped as the app shows it (core/util/visible_text.py) and capped.

Text read from the store is data: the agent that reads it gets it inside a JSON value,
never as instructions of the server, and with no control character a terminal would act on.
"""

from __future__ import annotations

from typing import Any

from core.model.entries import (BRANCH_SUMMARY, COMPACTION, MESSAGE, TOOL_CALL_BLOCKS,
                                TOOL_RESULT_BLOCKS, block_type, content_text)
from core.util.visible_text import clean

TEXT_LIMIT = 4000       # characters of one message's text in a window of messages
ENTRY_LIMIT = 100_000   # characters of one entry's text (get_entry)
ARGS_LIMIT = 300        # characters of a folded tool call's arguments


def text(value: Any, limit: int = TEXT_LIMIT) -> str:
    """Untrusted text, escaped, at most `limit` characters (then how many were left out)."""
    raw = value if isinstance(value, str) else ("" if value is None else str(value))
    if len(raw) > limit:
        return clean(raw[:limit]) + f" … [{len(raw) - limit:,} more characters]"
    return clean(raw)


def stamp(value: Any) -> str | None:
    if value is None:
        return None
    iso = getattr(value, "isoformat", None)
    return text(iso() if iso else value, 64)


def session(s: Any) -> dict[str, Any]:
    """An ExternalSession's identity and place."""
    return {"session": s.uid, "name": text(s.session_name, 200), "source": s.source,
            "cwd": text(s.cwd, 500), "kind": s.kind, "archived": not s.is_active,
            "created": stamp(s.created_at), "updated": stamp(s.updated_at),
            "messages": s.message_count, "branches": s.branch_count}


def branch(b: Any, labels: dict[int, str] | None = None) -> dict[str, Any]:
    out = {"branch": b.id, "name": text(b.name, 200), "current": bool(b.is_current),
           "head": b.head_seq, "head_id": text(b.head_id, 200) if b.head_id else None,
           "fork_entry": b.fork_seq, "parent_branch": b.parent_session_id,
           "messages": b.message_count, "hidden": bool(b.is_hidden)}
    if labels and b.id in labels:
        out["label"] = text(labels[b.id], 200)
    return out


def checkpoint(c: Any) -> dict[str, Any]:
    return {"checkpoint": c.id, "name": text(c.checkpoint_name, 200), "branch": c.internal_session_id,
            "entry": c.entry_seq, "created": stamp(c.created_at)}


def figure(f: Any) -> dict[str, Any]:
    """A usage figure (core.usage.tokens.Figure)."""
    if f is None:
        return {"total_tokens": 0, "cost_usd": 0.0, "responses": 0}
    out = f.as_json(with_key=False)
    out["responses"] = f.responses
    out["models"] = [text(m, 100) for m in out.get("models", [])]
    return out


def response(u: Any) -> dict[str, Any]:
    """One response's usage (core.store.usage.queries.ResponseUsage)."""
    return {"model": text(u.model, 100), "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens, "cache_creation_tokens": u.cache_creation_tokens,
            "cache_read_tokens": u.cache_read_tokens, "total_tokens": u.total_tokens,
            "cost_usd": None if u.cost_usd is None else round(u.cost_usd, 6)}


def _tool_call(block: dict[str, Any], full: bool) -> dict[str, Any]:
    import json

    args = block.get("arguments", block.get("input", block.get("args")))
    shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    return {"tool": text(block.get("name", ""), 200),
            "arguments": text(shown, TEXT_LIMIT if full else ARGS_LIMIT)}


def message(entry: Any, *, tools: bool = False, limit: int = TEXT_LIMIT) -> dict[str, Any]:
    """One entry of a branch as a message of a window: role and text; a tool call folded to
    its name and the start of its arguments, a tool result to its size (both whole when
    `tools`); a compaction or branch summary as its summary."""
    out: dict[str, Any] = {"entry": entry.seq, "position": entry.depth, "type": entry.type,
                           "time": stamp(entry.timestamp)}
    if entry.type in (COMPACTION, BRANCH_SUMMARY):
        out["text"] = text(entry.data.get("summary", ""), limit)
        return out
    body = entry.message if entry.type == MESSAGE else entry.data.get("message")
    if not isinstance(body, dict):
        label = entry.data.get("label") if isinstance(entry.data, dict) else None
        if label is not None:
            out["text"] = text(label, 200)
        return out
    role = body.get("role")
    out["role"] = text(role, 40) if role is not None else None
    content = body.get("content")
    blocks = content if isinstance(content, list) else None
    calls = [b for b in blocks or () if isinstance(b, dict) and block_type(b) in TOOL_CALL_BLOCKS]
    results = [b for b in blocks or () if isinstance(b, dict) and block_type(b) in TOOL_RESULT_BLOCKS]
    is_result = bool(results) or role in ("toolResult", "tool")
    if calls:
        out["tool_calls"] = [_tool_call(b, tools) for b in calls]
        words = [b for b in blocks if not (isinstance(b, dict) and block_type(b) in TOOL_CALL_BLOCKS)]
        said = content_text(words)
    else:
        said = content_text(content)
    if is_result and not tools:
        out["tool_result"] = f"{len(said):,} characters (folded: tools=true shows them)"
        name = body.get("toolName") or body.get("name")
        if name:
            out["tool"] = text(name, 200)
    elif said:
        out["text"] = text(said, limit)
    return out


def hit(h: Any, *, session_row: Any, branch_id: int | None, snippet: str) -> dict[str, Any]:
    return {"session": session_row.uid, "session_name": text(session_row.session_name, 120),
            "source": session_row.source, "branch": branch_id, "entry": h.seq,
            "entry_id": text(h.entry_id, 200), "role": h.role, "type": h.type,
            "time": stamp(h.timestamp), "snippet": text(snippet, 400)}
