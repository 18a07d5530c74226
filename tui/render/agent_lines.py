"""What the bookkeeping entries of every agent say, in a few words each.

Beside the conversation, agents write records of their own, which the importers keep as
they were, in their place: Claude Code's lines (`claude:<type>`, tui.render.claude_lines),
Aider's run headers and output lines (`aider:run`, `aider:output`), Gemini CLI's `info`,
`warning` and `error` records (`gemini:<type>`), Qwen Code's telemetry and other system
records (`qwen:<subtype>`), Copilot CLI's system prompts, resumes and shutdowns
(`copilot:<type>`), and the requests an agent made to its model outside the conversation
(`model_request`: a compaction's summary). Shown raw, each is a line of JSON; here each
gets a name ("qwen · telemetry · api response") and one line of what it says
("qwen3-coder-plus · 108 in · 18 out · 540 ms"). What is not recognised falls back to its
JSON, less the fields the name already says.

`is_bookkeeping_line`, `name_of` and `says` answer for every agent (Claude Code's through
claude_lines). Plain strings: the caller makes them safe (tui.render.safe_text).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from core.model.entries import content_text
from core.usage.tokens import MODEL_REQUEST, fmt_tokens

from . import claude_lines
from .claude_lines import duration
from .formatting import count

_AGENTS = ("aider", "gemini", "qwen", "copilot")


def is_bookkeeping_line(entry_type: str) -> bool:
    """Whether an entry is one of an agent's own records (not conversation)."""
    if claude_lines.is_claude_line(entry_type) or entry_type == MODEL_REQUEST:
        return True
    agent, sep, _rest = entry_type.partition(":")
    return bool(sep) and agent in _AGENTS


def name_of(entry_type: str, data: Any) -> str:
    if claude_lines.is_claude_line(entry_type):
        return claude_lines.name_of(entry_type, data)
    data = data if isinstance(data, dict) else {}
    if entry_type == MODEL_REQUEST:
        return "model request"
    agent, _sep, kind = entry_type.partition(":")
    if agent == "qwen":
        return _joined(agent, *_qwen_name(kind, data))
    if agent == "copilot":
        return _joined(agent, _COPILOT_NAMES.get(kind, kind.replace(".", " ").replace("_", " ")))
    return _joined(agent, kind.replace("_", " ").replace("-", " "))


def says(entry_type: str, data: Any) -> str:
    """What the record says on one line, or the JSON of what its name does not."""
    if claude_lines.is_claude_line(entry_type):
        return claude_lines.says(entry_type, data)
    data = data if isinstance(data, dict) else {}
    agent, _sep, kind = entry_type.partition(":")
    reader = _model_request if entry_type == MODEL_REQUEST else _READERS.get(agent)
    try:
        said = reader(kind, data) if reader is not None else ""
    except (TypeError, ValueError, AttributeError, KeyError):
        said = ""
    return said or _json(_rest(agent, data))


# ------------------------------------------------------------------- helpers
def _joined(*parts: str) -> str:
    return " · ".join(part for part in parts if part)


def _line(value: Any, limit: int = 400) -> str:
    """Text (a string or content parts) on one line."""
    if isinstance(value, list):
        value = content_text(value) or "".join(
            str(p.get("text", "")) for p in value if isinstance(p, dict))
    if not isinstance(value, str):
        return ""
    return " ".join(value[:4000].split())[:limit]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _tokens(value: Any, what: str) -> str:
    number = _int(value)
    return f"{fmt_tokens(number)} {what}" if number is not None else ""


def _json(value: Any) -> str:
    if not value:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:2000]
    except (TypeError, ValueError):
        return repr(value)[:2000]


def _rest(agent: str, data: dict) -> Any:
    """What an entry holds beside what its name says (its record, less the type)."""
    kept = data.get(agent) if isinstance(data.get(agent), dict) else data
    if agent == "copilot" and isinstance(kept.get("data"), dict):
        return kept["data"]
    if agent == "qwen" and "systemPayload" in kept:
        return kept["systemPayload"]
    return {k: v for k, v in kept.items() if k not in ("type", "subtype", "id", "timestamp")}


# --------------------------------------------------------------------- Aider
def _aider(kind: str, data: dict) -> str:
    if kind == "output":
        return _line(data.get("text"))
    if kind == "run":
        lines = [line for line in data.get("output") or () if isinstance(line, str)]
        version = next((line for line in lines if line.startswith("Aider v")), "")
        model = next((line.split(":", 1)[1].strip() for line in lines
                      if line.startswith(("Model:", "Main model:"))), "")
        started = data.get("started") if isinstance(data.get("started"), str) else ""
        return _joined(version, model, f"started {started}" if started else "")
    return ""


# ---------------------------------------------------------------- Gemini CLI
def _gemini(kind: str, data: dict) -> str:
    return _line(data.get("content")) or _line(data.get("displayContent"))


# ----------------------------------------------------------------- Qwen Code
def _qwen_record(data: dict) -> dict:
    kept = data.get("qwen")
    return kept if isinstance(kept, dict) else data


def _qwen_name(kind: str, data: dict) -> tuple[str, ...]:
    if kind == "ui_telemetry":
        event = _qwen_event(data)
        name = str(event.get("event.name") or "")
        name = name[len("qwen-code."):] if name.startswith("qwen-code.") else name
        return ("telemetry", name.replace("_", " ")[:40])
    return (kind.replace("_", " ")[:40],)


def _qwen_event(data: dict) -> dict:
    payload = _qwen_record(data).get("systemPayload")
    event = payload.get("uiEvent") if isinstance(payload, dict) else None
    return event if isinstance(event, dict) else {}


def _qwen(kind: str, data: dict) -> str:
    record = _qwen_record(data)
    payload = record.get("systemPayload") if isinstance(record.get("systemPayload"), dict) else {}
    if kind == "ui_telemetry":
        event = _qwen_event(data)
        name = str(event.get("event.name") or "")
        took = duration(event.get("duration_ms"))
        if name.endswith("api_response") or name.endswith("api_error"):
            return _joined(_line(event.get("model"), 60),
                           _tokens(event.get("input_token_count"), "in"),
                           _tokens(event.get("output_token_count"), "out"),
                           _tokens(event.get("cached_content_token_count") or None, "cached"),
                           _line(event.get("error"), 120), took)
        if name.endswith("tool_call"):
            return _joined(_line(event.get("function_name"), 60),
                           _line(event.get("status") or event.get("decision"), 30), took)
        return _joined(_line(event.get("model"), 60), took)
    if kind == "attribution_snapshot":
        snapshot = payload.get("snapshot") if isinstance(payload.get("snapshot"), dict) else {}
        files = snapshot.get("fileStates")
        prompts = _int(snapshot.get("promptCount"))
        return _joined(count(prompts, "prompt") if prompts is not None else "",
                       count(len(files), "file") if isinstance(files, dict) else "")
    if kind == "custom_title":
        return _line(payload.get("customTitle"), 120)
    return ""


# --------------------------------------------------------------- Copilot CLI
_COPILOT_NAMES = {"system.message": "system prompt", "session.resume": "resumed",
                  "session.shutdown": "run ended", "session.model_change": "model change",
                  "session.compaction_complete": "compaction", "session.start": "start",
                  "session.info": "info", "session.error": "error", "session.warning": "warning"}


def _copilot(kind: str, data: dict) -> str:
    kept = data.get("copilot") if isinstance(data.get("copilot"), dict) else {}
    inner = kept.get("data") if isinstance(kept.get("data"), dict) else {}
    if kind == "system.message":
        text = inner.get("content") if isinstance(inner.get("content"), str) else ""
        return _joined(_line(text, 80), count(len(text), "character") if text else "")
    if kind in ("session.resume", "session.start"):
        context = inner.get("context") if isinstance(inner.get("context"), dict) else {}
        events = _int(inner.get("eventCount"))
        return _joined(_line(inner.get("selectedModel"), 60), _line(context.get("cwd"), 120),
                       f"after {count(events, 'event')}" if events is not None else "")
    if kind == "session.shutdown":
        snapshot = inner.get("accountingSnapshot") if isinstance(
            inner.get("accountingSnapshot"), dict) else inner
        requests, tokens_in, tokens_out = 0, 0, 0
        metrics = snapshot.get("modelMetrics")
        for figures in (metrics.values() if isinstance(metrics, dict) else ()):
            if isinstance(figures, dict):
                asked = figures.get("requests") if isinstance(figures.get("requests"), dict) else {}
                usage = figures.get("usage") if isinstance(figures.get("usage"), dict) else {}
                requests += _int(asked.get("count")) or 0
                tokens_in += _int(usage.get("inputTokens")) or 0
                tokens_out += _int(usage.get("outputTokens")) or 0
        return _joined(count(requests, "request"),
                       f"↑ {fmt_tokens(tokens_in)} ↓ {fmt_tokens(tokens_out)}" if requests else "",
                       duration(snapshot.get("totalApiDurationMs")),
                       _line(inner.get("shutdownType"), 30))
    if kind == "session.model_change":
        return _joined(f"→ {_line(inner.get('newModel'), 60)}" if inner.get("newModel") else "",
                       _line(inner.get("source"), 30))
    if kind == "session.compaction_complete":
        return _joined(_line(inner.get("outcome"), 30), _line(inner.get("trigger"), 30),
                       _line(inner.get("error"), 120))
    return _line(inner.get("message") or inner.get("content"), 400)


# ------------------------------------------------------------- model request
def _model_request(_kind: str, data: dict) -> str:
    request = data.get("request") if isinstance(data.get("request"), dict) else {}
    usage = request.get("usage") if isinstance(request.get("usage"), dict) else {}
    prompt = (_int(usage.get("input")) or 0) + (_int(usage.get("cacheRead")) or 0) + \
        (_int(usage.get("cacheWrite")) or 0)
    response = str(request.get("responseId") or "")
    why = "compaction" if ":compaction:" in response or \
        str(request.get("promptId") or "").startswith("compress") else ""
    return _joined(why, _line(request.get("model"), 60),
                   _tokens(prompt if usage else None, "in"), _tokens(usage.get("output"), "out"))


_READERS: dict[str, Callable[[str, dict], str]] = {
    "aider": _aider, "gemini": _gemini, "qwen": _qwen, "copilot": _copilot}
