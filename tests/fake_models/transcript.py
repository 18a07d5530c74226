"""A recorded request's messages, whatever the wire format, in one shape for assertions.

Each entry: ``{"role": "system"|"user"|"assistant"|"tool", "text": str,
"tool_calls": [(name, arguments dict)], "tool_call_ids": [id], "tool_call_id": id|None}``.
A user message holding tool results becomes one "tool" entry per result (then a "user" entry
for any text beside them); thinking is left out; consecutive assistant items of the
Responses API (a message, then function calls) become one assistant entry."""

from __future__ import annotations

import json
from typing import Any


def _entry(role: str, text: str = "", calls=(), call_id: str | None = None) -> dict:
    return {"role": role, "text": text, "tool_calls": [(n, a) for _, n, a in calls],
            "tool_call_ids": [i for i, _, _ in calls], "tool_call_id": call_id}


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _texts(content: Any, kinds=("text", "input_text", "output_text")) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type") in kinds and part.get("text"):
            out.append(part["text"])
    return "\n".join(out)


def conversation(request) -> list[dict]:
    body = request.body if isinstance(request.body, dict) else {}
    return {"anthropic": _anthropic, "openai-chat": _openai_chat,
            "openai-responses": _responses, "gemini": _gemini}.get(request.api,
                                                                   lambda b: [])(body)


def _anthropic(body: dict) -> list[dict]:
    out = []
    if body.get("system"):
        out.append(_entry("system", _texts(body["system"])))
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "system":   # Claude Code 2.1 puts its environment here
            out.append(_entry("system", _texts(content)))
            continue
        if message.get("role") == "assistant":
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            calls = [(b.get("id"), b.get("name"), b.get("input"))
                     for b in blocks if b.get("type") == "tool_use"]
            out.append(_entry("assistant", _texts(blocks), calls))
            continue
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if block.get("type") == "tool_result":
                out.append(_entry("tool", _texts(block.get("content")),
                                  call_id=block.get("tool_use_id")))
        text = _texts([b for b in blocks if b.get("type") != "tool_result"])
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            out.append(_entry("user", text))
    return out


def _openai_chat(body: dict) -> list[dict]:
    out = []
    for message in body.get("messages", []):
        role = message.get("role")
        if role in ("system", "developer"):
            out.append(_entry("system", _texts(message.get("content"))))
        elif role == "tool":
            out.append(_entry("tool", _texts(message.get("content")),
                              call_id=message.get("tool_call_id")))
        elif role == "assistant":
            calls = [(c.get("id"), c.get("function", {}).get("name"),
                      _arguments(c.get("function", {}).get("arguments")))
                     for c in message.get("tool_calls") or []]
            out.append(_entry("assistant", _texts(message.get("content")), calls))
        else:
            out.append(_entry(role or "user", _texts(message.get("content"))))
    return out


def _responses(body: dict) -> list[dict]:
    out: list[dict] = []
    if body.get("instructions"):
        out.append(_entry("system", body["instructions"]))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]

    def assistant() -> dict:
        if not out or out[-1]["role"] != "assistant":
            out.append(_entry("assistant"))
        return out[-1]

    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            text = _texts(item.get("content"))
            if role == "assistant":
                entry = assistant()
                entry["text"] = "\n".join(t for t in (entry["text"], text) if t)
            else:
                out.append(_entry("system" if role in ("system", "developer") else role, text))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            entry = assistant()
            arguments = _arguments(item.get("arguments", item.get("input", item.get("action"))))
            entry["tool_calls"].append((item.get("name", kind), arguments))
            entry["tool_call_ids"].append(item.get("call_id"))
        elif kind.endswith("_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else _texts(output) or json.dumps(output)
            out.append(_entry("tool", text, call_id=item.get("call_id")))
    return out


def _gemini(body: dict) -> list[dict]:
    out = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if system:
        out.append(_entry("system", "\n".join(p.get("text", "") for p in system.get("parts", [])
                                               if p.get("text"))))
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        texts = "\n".join(p["text"] for p in parts if p.get("text") and not p.get("thought"))
        if content.get("role") == "model":
            calls = [(p["functionCall"].get("id"), p["functionCall"].get("name"),
                      p["functionCall"].get("args")) for p in parts if "functionCall" in p]
            out.append(_entry("assistant", texts, calls))
            continue
        for part in parts:
            if "functionResponse" in part:
                response = part["functionResponse"].get("response")
                if isinstance(response, dict) and set(response) <= {"output", "error"}:
                    text = str(response.get("output", response.get("error", "")))
                else:
                    text = json.dumps(response)
                out.append(_entry("tool", text, call_id=part["functionResponse"].get("id")))
        if texts or not any("functionResponse" in p for p in parts):
            out.append(_entry("user", texts))
    return out


def tool_names(request) -> list[str]:
    body = request.body if isinstance(request.body, dict) else {}
    names = []
    for tool in body.get("tools") or []:
        if "functionDeclarations" in tool or "function_declarations" in tool:
            declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
            names.extend(d.get("name") for d in declarations)
        elif "function" in tool:
            names.append(tool["function"].get("name"))
        else:
            names.append(tool.get("name") or tool.get("type"))
    return names
