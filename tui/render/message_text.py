"""The whole of one message as plain lines, nothing cut: for the full-screen view and $PAGER.

The messages pane shows a bounded preview of each body ("… 4,468 more bytes"); `f` shows
everything, here turned into lines of text with a style each (a role header, a diff's
added and removed lines, a tool's output). Every line is made safe with
`tui.render.safe_text.clean` (control characters become visible pictures), so the lines can go
to a pager as they are.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from core.model.clock import parse
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, TOOL_CALL_BLOCKS, TOOL_RESULT_BLOCKS,
    Entry, block_type, content_text)
from core.history.responses import result_call_id

from core.history.outcomes import (
    CONTENT_ROLES, NO_SUMMARY, SHELL_ROLE, SUMMARY_ROLES, empty_words, extension_message, marked,
    reply_outcome, role_of)

from .agent_lines import is_bookkeeping_line, name_of, says
from .formatting import ROLE_NAMES
from .safe_text import clean
from .tool_views import GLYPHS, ToolCall, call_diff, shell_run, todo_items

Line = tuple[str, str]   # (text, style)

HEAD = "bold #5fafff"
TOOL = "bold #d7af5f"
PLAIN = ""
DIMMED = "#808890"
ADDED = "#87d787"
REMOVED = "#ff8787"
HUNK = "#5fafd7"
ERROR = "#ff8787"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _lines(text: Any, style: str = PLAIN, indent: str = "") -> list[Line]:
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    if indent:
        return [(indent + line, style) for line in clean(raw).split("\n")]
    return [(line, style) for line in clean(raw).split("\n")]


def _when(entry: Entry) -> str:
    moment = parse(entry.timestamp)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment is not None else ""


def whole_message(entries: list[Entry]) -> list[Line]:
    """Every line of a message made of these entries (one, or a response and its results)."""
    out: list[Line] = []
    if not entries:
        return out
    out += _lines(heading(entries), HEAD)
    out.append(("", PLAIN))
    for kind, value in message_parts(entries):
        if kind == "text":
            out += _lines(value)
            out.append(("", PLAIN))
        elif kind == "thinking":
            out.append(("∴ thinking", DIMMED))
            out += _lines(value, DIMMED, "  ")
            out.append(("", PLAIN))
        elif kind == "call":
            _call(value, out)
        elif kind == "result":
            _result(value, out)
        elif kind == "block_result":
            out.append(("↳ result", DIMMED))
            out += _lines(value, PLAIN, "  ")
        elif kind == "summary":
            out += _lines(value)
        elif kind == "note":
            out += _lines(value, ERROR if value.startswith("✗") else DIMMED)
            out.append(("", PLAIN))
        else:       # "json": a block or an entry of no known shape
            out += _lines(_json(value), DIMMED)
    while out and not out[-1][0]:
        out.pop()
    return out


def heading(entries: list[Entry]) -> str:
    """Role, model, time and entry ids of a message made of these entries."""
    first = entries[0]
    message = first.message or {}
    role = role_of(message) or ("message" if first.message is not None else None)
    if first.type == CUSTOM_MESSAGE:
        role = "custom"
    head = ROLE_NAMES.get(role, role) if role else (
        name_of(first.type, first.data) if is_bookkeeping_line(first.type) else first.type)
    if isinstance(message.get("model"), str):
        head += f" · {message['model']}"
    head += f" · {_when(first)}"
    ids = ", ".join(entry.id for entry in entries)
    return head + f" · {'entries' if len(entries) > 1 else 'entry'} {ids}"


def message_parts(entries: list[Entry]) -> Iterator[tuple[str, Any]]:
    """The parts of a message made of these entries, in reading order, each a pair:
    ("text", str), ("thinking", str), ("call", ToolCall with its result), ("result", a
    tool-result message answering no call here), ("block_result", text of a result block),
    ("summary", a compaction's or branch summary's text), ("note", a line saying how a reply
    ended or that there is nothing to show: core.history.outcomes), ("json", anything else).
    The one walk over a message's content that the full view and the HTML export share."""
    if not entries:
        return
    several = len(entries) > 1
    results: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for entry in entries:
        current = entry.message
        call_id = result_call_id(current) if current is not None else None
        if call_id is not None and several:
            claude = entry.data.get("claude")
            extra = claude.get("toolUseResult") if isinstance(claude, dict) else None
            results[call_id] = (current, extra if isinstance(extra, dict) else {})
    answered = set()
    for entry in entries:
        current = entry.message
        if current is None:
            if entry.type != "claude:progress" or not several:
                if entry.type in (COMPACTION, BRANCH_SUMMARY):
                    yield _summary_part(entry.data.get("summary"))
                elif entry.type == CUSTOM_MESSAGE and extension_message(entry.data):
                    yield from _message_parts(extension_message(entry.data), results)
                elif is_bookkeeping_line(entry.type):
                    said = says(entry.type, entry.data)
                    if said:
                        yield "text", said
                    yield "json", entry.data
                else:
                    yield "json", entry.data
            continue
        call_id = result_call_id(current)
        if call_id is not None and several and call_id in answered:
            continue        # drawn with its call
        if call_id is not None:
            yield "result", current
            continue
        for part in _message_parts(current, results):
            if part[0] == "call" and part[1].result is not None:
                answered.add(part[1].call_id)
            yield part


def _summary_part(summary: Any) -> tuple[str, Any]:
    if summary is None or not str(summary).strip():
        return "note", NO_SUMMARY
    return "summary", summary


def _message_parts(message: dict[str, Any], results) -> Iterator[tuple[str, Any]]:
    role = role_of(message)
    if role == SHELL_ROLE:
        yield "call", shell_run(message)
        return
    if role in SUMMARY_ROLES:
        yield _summary_part(message.get("summary"))
        return
    shown = False
    for kind, value in _content_parts(message, results):
        shown = shown or kind != "text" or bool(str(value or "").strip())
        if kind != "text" or value:
            yield kind, value
    outcome = reply_outcome(message)
    if outcome is not None:
        yield "note", marked(outcome)
    elif not shown:
        if role in CONTENT_ROLES:
            yield "note", empty_words(message)
        else:       # a role of unknown shape: its fields
            yield "json", {key: value for key, value in message.items() if key != "role"}


def _content_parts(message: dict[str, Any], results) -> Iterator[tuple[str, Any]]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [content] if content is not None else []
    for block in blocks:
        if isinstance(block, str):
            yield "text", block
            continue
        if not isinstance(block, dict):
            yield "json", block
            continue
        kind = block_type(block)
        if kind in ("text", "input_text", "output_text"):
            yield "text", block.get("text", "")
        elif kind == "thinking":
            yield "thinking", block.get("thinking", "")
        elif kind in TOOL_CALL_BLOCKS:
            call_id = block.get("id", block.get("call_id"))
            call = ToolCall(str(block.get("name", "tool")),
                            block.get("arguments", block.get("input", block.get("args"))),
                            call_id if isinstance(call_id, str) else None)
            if call.call_id in results:
                call.result, call.extra = results[call.call_id]
            yield "call", call
        elif kind in TOOL_RESULT_BLOCKS:
            yield "block_result", content_text(block.get("content", block.get("output")))
        else:
            yield "json", block
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            found = ToolCall(str(function.get("name", "tool")), function.get("arguments"),
                             call.get("id") if isinstance(call.get("id"), str) else None)
            if found.call_id in results:
                found.result, found.extra = results[found.call_id]
            yield "call", found


def _call(call: ToolCall, out: list[Line]) -> None:
    kind = call.kind
    if call.bare:          # a command the user ran: the command is the title
        out += _lines("$ " + call.command, TOOL)
    else:
        title = f"{GLYPHS.get(kind, '⚙')} {call.name}"
        if call.path:
            title += f" {call.path}"
        out += _lines(title, TOOL)
    if call.bare:
        pass
    elif kind == "shell":
        out += _lines("$ " + call.command, "bold", "  ")
    elif kind in ("edit", "multi", "write", "patch"):
        lines = call_diff(call)
        if lines is None:       # too big to diff: the texts themselves
            out += _lines(_json(call.args), DIMMED, "  ")
        else:
            for line in lines:
                style = HUNK if line.startswith("@@") else ADDED if line.startswith("+") else \
                    REMOVED if line.startswith("-") else DIMMED
                out += _lines(line, style, "  ")
    elif kind == "todo":
        marks = {"completed": "[x]", "in_progress": "[~]"}
        for text, state in todo_items(call.args):
            out += _lines(f"{marks.get(state, '[ ]')} {text}", PLAIN, "  ")
    else:
        out += _lines(call.arguments if isinstance(call.arguments, str) else _json(call.arguments),
                      DIMMED, "  ")
    if call.result is not None:
        _result(call.result, out, "  ")
    if call.ended:
        out.append(("  " + " · ".join(call.ended), ERROR if call.ended_badly else DIMMED))
    out.append(("", PLAIN))


def _result(message: dict[str, Any], out: list[Line], indent: str = "") -> None:
    failed = bool(message.get("isError"))
    name = message.get("toolName") or ""
    out.append((f"{indent}↳ {'error' if failed else 'output'}" + (f" of {clean(name)}" if name else ""),
                ERROR if failed else DIMMED))
    out += _lines(content_text(message.get("content", message.get("output"))),
                  ERROR if failed else PLAIN, indent + "  ")


def as_text(lines: list[Line]) -> str:
    return "\n".join(text for text, _ in lines) + "\n"
