"""Turning one entry into the lines the messages pane draws.

Everything untrusted goes through `tui.safe_text` first. Assistant text is rendered as
markdown (rich, with hyperlinks off, and every link or action stripped from the result),
tool calls and tool results fold to one line until opened, and long bodies are cut to a
few lines until opened (and to a bounded preview even then).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from rich.console import Console, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip

from core.usage import fmt_tokens, fmt_usd
from core.entries import (BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, LABEL, MESSAGE,
                          MODEL_CHANGE, SESSION_INFO, THINKING_LEVEL_CHANGE, TOOL_CALL_BLOCKS,
                          TOOL_RESULT_BLOCKS, block_type, content_text, langgraph_checkpoint)

from .formatting import (DIM, ERROR_STYLE, FAINT, LABEL_STYLE, MARKER_STYLE, ROLE_STYLES,
                         clock_time, short_id)
from .message_source import Item
from .safe_text import clean, safe_line, safe_markdown_source, safe_text, strip_links

FOLDED_LINES = 14        # an unopened long body shows this many lines
ARGS_PREVIEW = 160

ROLE_NAMES = {"toolResult": "tool result"}
CHECKPOINT_STYLE = "#af87d7"   # (LangGraph's colour in the sessions pane)


def _json(value: Any, indent: int | None = None) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    if content is None:
        return []
    return [content]


def _render(console: Console, renderable: RenderableType, width: int) -> list[list[Segment]]:
    options = console.options.update(width=max(1, width), height=None, highlight=False,
                                     markup=False)
    return console.render_lines(renderable, options, pad=True, new_lines=False)


def _summary(text: Any) -> RenderableType:
    """A summary (markdown from a summariser), compact: see tui.summary_markdown."""
    from .summary_markdown import SummaryMarkdown

    return SummaryMarkdown(text)


def _markdown(text: Any) -> tuple[RenderableType, str]:
    from rich.markdown import Markdown  # imported on first use: it is not needed for the first frame

    source, more = safe_markdown_source(text)
    return Markdown(source, hyperlinks=False, code_theme="monokai", inline_code_lexer=None), more


class Body:
    """Collects the renderables of one item and whether opening it would show more."""

    def __init__(self) -> None:
        self.parts: list[RenderableType] = []
        self.foldable = False

    def add(self, renderable: RenderableType) -> None:
        self.parts.append(renderable)


def _tool_call_line(block: dict[str, Any], width: int) -> Text:
    line = Text(end="")
    line.append("⚙ ", "#d7af5f")
    line.append_text(safe_line(block.get("name", "tool"), 40, style="bold #d7af5f"))
    args = block.get("arguments", block.get("input", block.get("args")))
    if args is not None:
        line.append(" ")
        flat = args if isinstance(args, str) else _json(args)
        line.append_text(safe_line(flat, max(10, width - line.cell_len - 2), style=DIM))
    return line


def _message_body(message: dict[str, Any], expanded: bool, width: int, body: Body) -> None:
    role = str(message.get("role", "?"))
    content = message.get("content")
    if role in ("toolResult", "tool") or message.get("toolCallId"):
        text = content_text(content)
        is_error = bool(message.get("isError"))
        line = Text(end="")
        line.append("↳ ", FAINT)
        line.append_text(safe_line(message.get("toolName") or message.get("name") or "result", 30,
                                   style="bold #d7af5f"))
        line.append("  ✗ error  " if is_error else "  ✓  ", ERROR_STYLE if is_error else "#87d787")
        lines = text.count("\n") + 1 if text else 0
        size = f"{lines:,} lines" if lines > 1 else f"{len(text):,} chars"
        line.append(f"{size}  ", FAINT)
        if not expanded:
            line.append_text(safe_line(text.strip(), max(10, width - line.cell_len - 1), style=DIM))
            body.foldable = bool(text)
            body.add(line)
            return
        body.add(line)
        body.add(Padding(safe_text(text, style="#c8c8c8"), (0, 0, 0, 2)))
        body.foldable = True
        return
    blocks = _blocks(content)
    for block in blocks:
        if isinstance(block, str):
            if role == "assistant":
                markdown, more = _markdown(block)
                body.add(markdown)
                if more:
                    body.add(Text(more, DIM))
            else:
                body.add(safe_text(block))
            continue
        if not isinstance(block, dict):
            body.add(safe_text(_json(block)))
            continue
        kind = block_type(block)
        if kind in ("text", "input_text", "output_text"):
            text = block.get("text", "")
            if role == "assistant":
                markdown, more = _markdown(text)
                body.add(markdown)
                if more:
                    body.add(Text(more, DIM))
            else:
                body.add(safe_text(text))
        elif kind == "thinking":
            thinking = str(block.get("thinking", ""))
            if expanded:
                body.add(Text("∴ thinking", f"italic {DIM}"))
                body.add(Padding(safe_text(thinking, style=f"italic {DIM}"), (0, 0, 0, 2)))
            else:
                line = Text("∴ ", DIM)
                line.append_text(safe_line(thinking.strip(), max(10, width - 4), style=f"italic {DIM}"))
                body.add(line)
            body.foldable = True
        elif kind in TOOL_CALL_BLOCKS:
            body.add(_tool_call_line(block, width))
            if expanded:
                args = block.get("arguments", block.get("input", block.get("args")))
                shown = args if isinstance(args, str) else _json(args, indent=2)
                body.add(Padding(safe_text(shown, style=DIM), (0, 0, 0, 2)))
            body.foldable = True
        elif kind in TOOL_RESULT_BLOCKS:
            text = content_text(block.get("content", block.get("output")))
            if expanded:
                body.add(Text("↳ result", FAINT))
                body.add(Padding(safe_text(text), (0, 0, 0, 2)))
            else:
                line = Text("↳ result ", FAINT)
                line.append_text(safe_line(text.strip(), max(10, width - 10), style=DIM))
                body.add(line)
            body.foldable = True
        elif kind == "image":
            source = block.get("source") if isinstance(block.get("source"), dict) else {}
            mime = block.get("mimeType") or source.get("media_type") or "image"
            body.add(Text(f"▣ image ({clean(mime)[:40]})", DIM))
        else:
            line = Text(end="")
            line.append_text(safe_line(kind or "block", 30, style=DIM))
            line.append(" ")
            line.append_text(safe_line(_json(block), max(10, width - 34), style=FAINT))
            body.add(line)
            if expanded:
                body.add(Padding(safe_text(_json(block, indent=2), style=FAINT), (0, 0, 0, 2)))
            body.foldable = True
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:  # OpenAI shape
        if isinstance(call, dict):
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            body.add(_tool_call_line({"name": function.get("name"), "arguments": function.get("arguments")}, width))
    if not body.parts:
        body.add(Text("(empty)", f"italic {FAINT}"))


def _flat(item: Item) -> Item:
    from dataclasses import replace

    return replace(item, nest=0)


def _usage_texts(usage) -> list[Text]:
    """A response's usage in the header, longest first: "  1.2k tok $0.0042", "  $0.0042"."""
    cost = Text(f" {fmt_usd(usage.cost_usd)}", DIM) if usage.cost_usd is not None \
        else Text(" no price", "#d7af5f")
    full = Text(f"  {fmt_tokens(usage.total_tokens)} tok", FAINT, end="")
    full.append_text(cost)
    short = Text(" ", end="")
    short.append_text(cost)
    return [full, short]


def header(item: Item, label: str | None, now: datetime, width: int) -> Text:
    entry = item.entry
    line = Text(end="")
    fallback: Text | None = None   # the cost alone, where the time and id do not fit
    if item.kind == "summary":
        line.append("◆ compacted context", MARKER_STYLE)
        tokens = entry.data.get("tokensBefore")
        if isinstance(tokens, int):
            line.append(f"  {tokens:,} tokens summarised", DIM)
    elif entry.type == MESSAGE:
        message = entry.message or {}
        role = str(message.get("role") or entry.role or "?")
        name = ROLE_NAMES.get(role, role)
        line.append_text(safe_line(name, 20, style=ROLE_STYLES.get(role, "bold")))
        model = message.get("model")
        model = model if role == "assistant" and isinstance(model, str) and model else ""
        usage = item.usage
        shown, model_width = Text(""), 28
        if usage is not None:
            # the response's tokens and cost beside the model, before the time and id: what
            # does not fit goes, tokens first, then the model's name is shortened
            room = width - line.cell_len - len(clock_time(entry.timestamp, now)) - 12
            fits = [f for f in _usage_texts(usage)
                    if f.cell_len + (min(len(model), 12) + 2 if model else 0) <= room]
            if fits:
                shown = fits[0]
                model_width = max(6, min(28, room - shown.cell_len - 2))
            else:   # the cost alone, in place of the time and id
                fallback = _usage_texts(usage)[-1]
                model_width = max(6, min(28, width - line.cell_len - 2 - fallback.cell_len))
        if model:
            line.append("  ")
            line.append_text(safe_line(model, model_width, style=FAINT))
        line.append_text(shown)
    elif entry.type == COMPACTION:
        line.append("◆ compaction", MARKER_STYLE)
        tokens = entry.data.get("tokensBefore")
        if isinstance(tokens, int):
            line.append(f"  {tokens:,} tokens before", DIM)
    elif (checkpoint := langgraph_checkpoint(entry.type, entry.data)) is not None:
        line.append("◆ checkpoint", CHECKPOINT_STYLE)
        step, source = checkpoint.get("step"), checkpoint.get("source")
        if isinstance(step, int):
            line.append(f"  step {step}", FAINT)
        if isinstance(source, str) and source:
            line.append_text(safe_line(f" · {source}", 20, style=FAINT))
    elif entry.type == BRANCH_SUMMARY:
        line.append("◇ branch summary", MARKER_STYLE)
        from_id = entry.data.get("fromId")
        if from_id:
            line.append("   of ", DIM)
            line.append_text(safe_line(short_id(str(from_id)), 12, style=DIM))
    else:
        line.append_text(safe_line(entry.type, 30, style=f"bold {DIM}"))
    if label:
        line.append("  ")
        line.append_text(safe_line(f" ⚑ {label} ", 30, style=LABEL_STYLE))
    right = Text(end="")
    right.append(clock_time(entry.timestamp, now), FAINT)
    right.append(f"  {short_id(entry.id)}", FAINT)
    gap = width - line.cell_len - right.cell_len
    if gap >= 2:
        line.append(" " * gap)
        line.append_text(right)
    elif fallback is not None and line.cell_len + fallback.cell_len <= width:
        line.append_text(fallback)
    return line


def body(item: Item, expanded: bool, width: int) -> Body:
    entry = item.entry
    out = Body()
    data = entry.data
    if item.kind == "summary":
        out.add(_summary(data.get("summary", "")))
        kept = data.get("firstKeptEntryId")
        if kept:
            note = Text("context continues from ", FAINT)
            note.append_text(safe_line(short_id(str(kept)), 12, style=FAINT))
            out.add(note)
        return out
    if entry.type == MESSAGE:
        message = entry.message
        if message is None:
            out.add(safe_text(_json(data), style=FAINT))
        else:
            _message_body(message, expanded, width, out)
        return out
    if entry.type == COMPACTION:
        line = Text("summary of everything before ", DIM)
        line.append_text(safe_line(short_id(str(data.get("firstKeptEntryId") or "")), 12, style=DIM))
        out.add(line)
        if expanded:
            out.add(_summary(data.get("summary", "")))
        else:
            out.add(safe_line(data.get("summary", ""), max(10, width), style="#d7afd7"))
        out.foldable = True
        return out
    if entry.type == BRANCH_SUMMARY:
        out.add(_summary(data.get("summary", "")))
        return out
    if entry.type == MODEL_CHANGE:
        line = Text("model → ", DIM)
        line.append_text(safe_line(f"{data.get('provider', '?')}/{data.get('modelId', '?')}", 60))
        out.add(line)
        return out
    if entry.type == THINKING_LEVEL_CHANGE:
        line = Text("thinking level → ", DIM)
        line.append_text(safe_line(data.get("thinkingLevel", "?"), 30))
        out.add(line)
        return out
    if entry.type == SESSION_INFO:
        line = Text("session name → ", DIM)
        line.append_text(safe_line(data.get("name", ""), 60))
        out.add(line)
        return out
    if entry.type == LABEL:
        line = Text("label → ", DIM)
        line.append_text(safe_line(data.get("label") or "(cleared)", 40))
        out.add(line)
        return out
    if entry.type == CUSTOM_MESSAGE and isinstance(data.get("message"), dict):
        _message_body(data["message"], expanded, width, out)
        return out
    if not expanded and langgraph_checkpoint(entry.type, data) is not None:
        out.foldable = True   # a marker line; opened, its data
        return out
    # custom and unknown types: raw, one line until opened
    if expanded:
        out.add(safe_text(_json(data, indent=2), style=FAINT))
    else:
        out.add(safe_line(_json(data), max(10, width), style=FAINT))
    out.foldable = True
    return out


SPAWN_STYLE = "#af87d7"
NEST_GUIDE = "│ "
_SPAWN_KINDS = {"subagent": ("↳", "sub-agent"), "subgraph": ("↳", "sub-graph"),
                "fork": ("↱", "fork")}


def spawn_lines(item: Item, expanded: bool, now: datetime, width: int) -> list[Text]:
    """A session that started at this entry: what it is, how big, and the keys."""
    from .formatting import age

    child = item.child
    meta = child.metadata if isinstance(child.metadata, dict) else {}
    glyph, what = _SPAWN_KINDS.get(child.kind, ("↳", child.kind or "session"))
    top = Text(end="")
    top.append(f"{'▾' if expanded else '▸'} {glyph} {what} ", f"bold {SPAWN_STYLE}")
    kind = agent_kind(meta)
    if kind:
        top.append_text(safe_line(kind, 24, style="bold"))
        top.append(" · ", FAINT)
    title = meta.get("description") if isinstance(meta.get("description"), str) else ""
    right = Text(f"{child.message_count:,} msg · {age(child.updated_at, now)}", FAINT)
    room = width - top.cell_len - right.cell_len - 2
    if room < 12:                       # narrow: the title first, the figures go
        right = Text("")
        room = width - top.cell_len
    top.append_text(safe_line(title or child.name or "(unnamed)", max(4, room)))
    gap = width - top.cell_len - right.cell_len
    if right and gap >= 2:
        top.append(" " * gap)
        top.append_text(right)
    keys = "space folds it · enter opens the session" if expanded else \
        "space shows it here · enter opens the session"
    hint = Text("  ", end="")
    hint.append_text(safe_line(keys, max(4, width - 2), style=FAINT))
    return [top, hint]


def agent_kind(meta: dict[str, Any]) -> str:
    """What sort of sub-agent a session is: Claude Code's agentType, Codex's role or nickname."""
    kind = meta.get("agentType")
    if isinstance(kind, str) and kind:
        return kind
    spawn: Any = meta.get("sessionMeta")
    for key in ("source", "subagent", "thread_spawn"):
        spawn = spawn.get(key) if isinstance(spawn, dict) else None
    if isinstance(spawn, dict):
        for key in ("agent_role", "agent_nickname"):
            if isinstance(spawn.get(key), str) and spawn[key]:
                return spawn[key]
    return ""


def render_spawn(console: Console, item: Item, *, width: int, expanded: bool,
                 now: datetime) -> list[Strip]:
    lines: list[list[Segment]] = []
    for line in spawn_lines(item, expanded, now, width):
        lines.extend(_render(console, line, width))
    lines.extend(_render(console, Text(""), width))
    return [Strip(list(strip_links(line)), width).crop_extend(0, width, None) for line in lines]


def nest_strips(strips: list[Strip], nest: int, width: int) -> list[Strip]:
    """Rows of an opened child session: a guide per level at their left."""
    if nest <= 0:
        return strips
    guide = Strip([Segment(NEST_GUIDE * nest, console_style(SPAWN_STYLE))], len(NEST_GUIDE) * nest)
    return [Strip.join([guide, strip]).crop_extend(0, width, None) for strip in strips]


def console_style(style: str):
    from rich.style import Style

    return Style.parse(style)


def render_item(console: Console, item: Item, *, width: int, expanded: bool, label: str | None,
                now: datetime) -> tuple[list[Strip], bool]:
    """The strips of one item at `width` (without the cursor gutter) and whether it folds."""
    if item.nest:
        inner = max(8, width - len(NEST_GUIDE) * item.nest)
        strips, foldable = render_item(console, _flat(item), width=inner, expanded=expanded,
                                       label=label, now=now)
        return nest_strips(strips, item.nest, width), foldable
    if item.kind == "spawn":
        return render_spawn(console, item, width=width, expanded=expanded, now=now), True
    content = body(item, expanded, width)
    lines: list[list[Segment]] = _render(console, header(item, label, now, width), width)
    body_lines: list[list[Segment]] = []
    for part in content.parts:
        body_lines.extend(_render(console, part, width))
        if len(body_lines) > 4000:
            break
    if not expanded and len(body_lines) > FOLDED_LINES:
        hidden = len(body_lines) - FOLDED_LINES
        body_lines = body_lines[:FOLDED_LINES]
        body_lines.extend(_render(console, Text(f"… {hidden:,} more lines (space opens)",
                                                f"italic {FAINT}"), width))
        content.foldable = True
    lines.extend(body_lines)
    lines.extend(_render(console, Text(""), width))  # a blank line between messages
    strips = [Strip(list(strip_links(line)), width).crop_extend(0, width, None) for line in lines]
    return strips, content.foldable

