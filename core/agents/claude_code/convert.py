"""Claude API messages (as Claude Code logs them) in pi's message shape: blocks, tool results,
usage. What does not map is kept under "claude"."""

from __future__ import annotations

import math

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
               "cache_creation_input_tokens")
_MESSAGE_MOVED = frozenset({"role", "content", "model", "usage"})
_STOP_REASONS = {"end_turn": "stop", "tool_use": "toolUse", "max_tokens": "length",
                 "stop_sequence": "stop", "refusal": "error", "pause_turn": "stop"}


def learn_tools(message: Any, tool_names: dict[str, str]) -> None:
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                tool_names[str(block.get("id"))] = str(block.get("name", ""))


def convert_usage(usage: dict[str, Any]) -> dict[str, Any]:
    counts = []
    for key in _USAGE_KEYS:
        value = usage.get(key)
        kind = type(value)
        counts.append(value if kind is int else
                      int(value) if kind is float and math.isfinite(value) else 0)
    read, write = counts[2], counts[3]
    return {"input": counts[0], "output": counts[1], "cacheRead": read, "cacheWrite": write,
            "totalTokens": counts[0] + counts[1] + read + write}


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
    get = message.get
    content = get("content")
    rest = {k: v for k, v in message.items() if k not in _MESSAGE_MOVED}
    usage = None
    if line_type == "assistant":
        blocks = [convert_block(b, tool_names) for b in content] if isinstance(content, list) \
            else content
        out: dict[str, Any] = {"role": "assistant", "content": blocks if blocks is not None else []}
        model = get("model")
        if model:
            out["model"] = model
            out["provider"] = "anthropic"
            out["api"] = "anthropic-messages"
        stop = get("stop_reason")
        if isinstance(stop, str):
            out["stopReason"] = _STOP_REASONS.get(stop, stop)
        response_id = get("id")
        if isinstance(response_id, str):
            out["responseId"] = response_id
        raw_usage = get("usage")
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
    if rest:
        out["claude"] = rest
    return out, usage
