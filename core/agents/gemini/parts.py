"""Gemini API `Part`s (what Gemini CLI and Qwen Code keep in their logs) as arbor's message
blocks: `text` (a `thought: true` part is thinking), `functionCall` a tool call,
`functionResponse` a tool result, `inlineData` an image; any other part is kept as it is."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def text_of(parts: Any) -> str:
    """The plain text of a list of parts (or of a string)."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "".join(part["text"] for part in parts
                   if isinstance(part, dict) and isinstance(part.get("text"), str)
                   and not part.get("thought"))


def blocks_of(parts: Any) -> list[dict[str, Any]]:
    """Text, thinking and images of the parts (calls and responses are read apart:
    `calls_of`, `responses_of`), other parts as they are."""
    if isinstance(parts, str):
        return [{"type": "text", "text": parts}] if parts else []
    if not isinstance(parts, list):
        return []
    out: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            out.append({"type": "text", "text": json.dumps(part, ensure_ascii=False)})
            continue
        if "functionCall" in part or "functionResponse" in part:
            continue
        if isinstance(part.get("text"), str):
            rest = {k: v for k, v in part.items() if k not in ("text", "thought")}
            block: dict[str, Any] = {"type": "thinking", "thinking": part["text"]} \
                if part.get("thought") else {"type": "text", "text": part["text"]}
            if rest:
                block["gemini"] = rest
            out.append(block)
        elif isinstance(part.get("inlineData"), dict):
            data = part["inlineData"]
            out.append({"type": "image", "mimeType": str(data.get("mimeType", "")),
                        "data": str(data.get("data", ""))})
        else:
            out.append(dict(part))
    return out


def calls_of(parts: Any) -> list[dict[str, Any]]:
    """The `functionCall` parts, each as {id, name, args}."""
    if not isinstance(parts, list):
        return []
    return [part["functionCall"] for part in parts
            if isinstance(part, dict) and isinstance(part.get("functionCall"), dict)]


def responses_of(parts: Any) -> list[dict[str, Any]]:
    """The `functionResponse` parts, each as {id, name, response}."""
    if not isinstance(parts, list):
        return []
    return [part["functionResponse"] for part in parts
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)]


def tool_call(call_id: str, name: Any, args: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": str(name or ""),
            "arguments": args if isinstance(args, dict) else {"value": args}}


def result_text(response: Any) -> str:
    """A `functionResponse.response` as text: its `output` (or `error`), else its JSON."""
    if isinstance(response, dict):
        for key in ("output", "error", "result", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
        return json.dumps(response, ensure_ascii=False)
    return response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)


def tool_result(call_id: str, name: Any, response: Any, *, is_error: bool = False,
                timestamp_ms: int | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "toolResult", "toolCallId": call_id, "toolName": str(name or ""),
        "content": [{"type": "text", "text": result_text(response)}],
        "isError": bool(is_error or (isinstance(response, dict) and "error" in response
                                      and "output" not in response))}
    if timestamp_ms is not None:
        message["timestamp"] = timestamp_ms
    return message


def gemini_usage(prompt: Any, candidates: Any, cached: Any = 0, thoughts: Any = 0,
                 tool: Any = 0) -> dict[str, int]:
    """Gemini's `usageMetadata` counts as arbor's usage: `promptTokenCount` includes the
    cached part (read from the cache, priced apart) and the tool-use prompt is input too;
    thoughts are billed as output (and shown as reasoning)."""
    def count(value: Any) -> int:
        return value if type(value) is int and value > 0 else 0

    cached_n = min(count(cached), count(prompt))
    return {"input": count(prompt) - cached_n + count(tool),
            "output": count(candidates) + count(thoughts), "cacheRead": cached_n,
            "cacheWrite": 0, "reasoning": count(thoughts)}
