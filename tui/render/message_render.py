"""Turning one entry into the lines the messages pane draws.

Everything untrusted goes through `tui.render.safe_text` first. Assistant text is rendered as
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

from core.usage.tokens import fmt_tokens, fmt_usd
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, LABEL, MESSAGE, MODEL_CHANGE, SESSION_INFO,
    THINKING_LEVEL_CHANGE, TOOL_CALL_BLOCKS, TOOL_RESULT_BLOCKS, block_type, content_text,
    langgraph_checkpoint)
from core.history.outcomes import (
    CONTENT_ROLES, NO_SUMMARY, SHELL_ROLE, SUMMARY_ROLES, empty_words, extension_message, marked,
    reply_outcome, role_of)
from core.history.responses import result_call_id

from .agent_lines import is_bookkeeping_line, name_of, says
from .formatting import (
    DIM, ERROR_STYLE, FAINT, LABEL_STYLE, MARKER_STYLE, ROLE_NAMES, ROLE_STYLES, clock_time,
    short_id)
from tui.message_source import Item
from .safe_text import clean, safe_line, safe_text, strip_links
from .tool_views import (
    WHOLE_HINT, ToolCall, call_body, call_line, json_text, markdown_parts, shell_run)

FOLDED_LINES = 14        # an unopened long body shows this many lines
ARGS_PREVIEW = 160

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
    """A summary (markdown from a summariser), compact: see tui.render.summary_markdown."""
    from .summary_markdown import SummaryMarkdown

    if text is None or not str(text).strip():
        return Text(NO_SUMMARY, f"italic {FAINT}")
    return SummaryMarkdown(text)


class Body:
    """Collects the renderables of one item and whether opening it would show more.
    A part added with `cut=True` (text) shows at most FOLDED_LINES lines until opened."""

    def __init__(self) -> None:
        self.parts: list[tuple[RenderableType, bool]] = []
        self.foldable = False

    def add(self, renderable: RenderableType, cut: bool = True) -> None:
        self.parts.append((renderable, cut))


def _indented(renderable: RenderableType) -> Padding:
    return Padding(renderable, (0, 0, 0, 2))


def _result_of(message: dict[str, Any], width: int, expanded: bool, body: Body) -> None:
    """A tool result shown on its own (its call is not in the same message)."""
    text = content_text(message.get("content"))
    is_error = bool(message.get("isError"))
    line = Text(end="")
    line.append("↳ ", FAINT)
    line.append_text(safe_line(message.get("toolName") or message.get("name") or "result", 30,
                               style="bold #d7af5f"))
    line.append("  ✗ error  " if is_error else "  ✓  ", ERROR_STYLE if is_error else "#87d787")
    lines = text.count("\n") + 1 if text else 0
    size = f"{lines:,} lines" if lines > 1 else f"{len(text):,} chars"
    line.append(f"{size}  ", FAINT)
    body.foldable = bool(text)
    if not expanded:
        line.append_text(safe_line(text.strip(), max(10, width - line.cell_len - 1), style=DIM))
        body.add(line, cut=False)
        return
    body.add(line, cut=False)
    body.add(_indented(safe_text(text, style="#c8c8c8", hint=WHOLE_HINT)), cut=False)


def _text_part(role: str, text: Any, body: Body) -> None:
    if text is None or not str(text).strip():
        return          # (a message of blank text says so, see _nothing)
    if role == "assistant":
        markdown, *more = markdown_parts(text)
        body.add(markdown)
        for note in more:
            body.add(note, cut=False)
    else:
        body.add(safe_text(text, hint=WHOLE_HINT))


def _message_body(message: dict[str, Any], expanded: bool, width: int, body: Body,
                  results: dict[str, tuple[dict[str, Any], dict[str, Any]]] | None = None) -> None:
    """One message's blocks; with `results` (call id -> (tool-result message, Claude
    Code's toolUseResult)), each tool call is drawn with the result answering it."""
    role = str(message.get("role", "?"))
    content = message.get("content")
    if role in ("toolResult", "tool") or message.get("toolCallId"):
        _result_of(message, width, expanded, body)
        return
    if role == SHELL_ROLE:
        _tool_call(shell_run(message), {}, expanded, width, body)
        return
    if role in SUMMARY_ROLES:
        body.add(_summary(message.get("summary")))
        return
    for block in _blocks(content):
        if isinstance(block, str):
            _text_part(role, block, body)
            continue
        if not isinstance(block, dict):
            body.add(safe_text(_json(block)))
            continue
        kind = block_type(block)
        if kind in ("text", "input_text", "output_text"):
            _text_part(role, block.get("text", ""), body)
        elif kind == "thinking":
            thinking = str(block.get("thinking", ""))
            if block.get("redacted") and not thinking:
                body.add(Text("∴ thinking (redacted)", f"italic {FAINT}"), cut=False)
            elif expanded:
                body.add(Text("∴ thinking", f"italic {DIM}"), cut=False)
                body.add(_indented(safe_text(thinking, style=f"italic {DIM}", hint=WHOLE_HINT)), cut=False)
            else:
                line = Text("∴ ", DIM)
                line.append_text(safe_line(thinking.strip(), max(10, width - 4), style=f"italic {DIM}"))
                body.add(line, cut=False)
            body.foldable = True
        elif kind in TOOL_CALL_BLOCKS:
            call_id = block.get("id", block.get("call_id"))
            _tool_call(ToolCall(_name(block.get("name")),
                                block.get("arguments", block.get("input", block.get("args"))),
                                call_id if isinstance(call_id, str) else None),
                       results, expanded, width, body)
        elif kind in TOOL_RESULT_BLOCKS:
            text = content_text(block.get("content", block.get("output")))
            if expanded:
                body.add(Text("↳ result", FAINT), cut=False)
                body.add(_indented(safe_text(text, hint=WHOLE_HINT)), cut=False)
            else:
                line = Text("↳ result ", FAINT)
                line.append_text(safe_line(text.strip(), max(10, width - 10), style=DIM))
                body.add(line, cut=False)
            body.foldable = True
        elif kind == "image":
            source = block.get("source") if isinstance(block.get("source"), dict) else {}
            mime = block.get("mimeType") or source.get("media_type") or "image"
            body.add(Text(f"▣ image ({clean(mime)[:40]})", DIM), cut=False)
        else:
            line = Text(end="")
            line.append_text(safe_line(kind or "block", 30, style=DIM))
            line.append(" ")
            line.append_text(safe_line(_json(block), max(10, width - 34), style=FAINT))
            body.add(line, cut=False)
            if expanded:
                body.add(_indented(json_text(block)), cut=False)
            body.foldable = True
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:  # OpenAI shape
        if isinstance(call, dict):
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            call_id = call.get("id")
            _tool_call(ToolCall(_name(function.get("name")), function.get("arguments"),
                                call_id if isinstance(call_id, str) else None),
                       results, expanded, width, body)
    outcome = reply_outcome(message)
    if outcome is not None:
        body.add(_outcome_line(outcome), cut=False)
    if not body.parts:
        _nothing(message, expanded, width, body)


def _outcome_line(outcome: str) -> Text:
    """How a reply ended (core.history.outcomes), under what it said: ⊘ aborted, ✗ error: …"""
    return Text(marked(outcome), ERROR_STYLE if outcome.startswith("error") else f"italic {DIM}")


def _nothing(message: dict[str, Any], expanded: bool, width: int, body: Body) -> None:
    """A message with nothing to draw: one of a role of unknown shape shows its fields (as
    an unknown entry does), any other says it is empty."""
    role = message.get("role")
    if isinstance(role, str) and role in CONTENT_ROLES:
        body.add(Text(empty_words(message), f"italic {FAINT}"), cut=False)
        return
    fields = {key: value for key, value in message.items() if key != "role"}
    if expanded:
        body.add(json_text(fields), cut=False)
    else:
        body.add(safe_line(_json(fields), max(10, width), style=FAINT), cut=False)
    body.foldable = True


def _name(value: Any) -> str:
    return value if isinstance(value, str) else ("tool" if value is None else str(value))


def _tool_call(call: ToolCall, results, expanded: bool, width: int, body: Body) -> None:
    if results is None:
        call.looked = False
    elif call.call_id is not None and call.call_id in results:
        call.result, call.extra = results[call.call_id]
    body.add(call_line(call, width), cut=False)
    if expanded:
        for part in call_body(call, max(10, width - 2)):
            body.add(_indented(part), cut=False)
    body.foldable = True


def group_body(items: list[Item], expanded: bool, width: int) -> Body:
    """The body of one message made of several entries: a response written as several
    entries, and the tool results answering its calls (see core.history.responses)."""
    out = Body()
    results: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    messages = []
    for item in items:
        message = item.entry.message
        if message is None:
            continue                  # progress lines: shown in the raw view
        call_id = result_call_id(message)
        if call_id is not None:
            claude = item.entry.data.get("claude")
            extra = claude.get("toolUseResult") if isinstance(claude, dict) else None
            results[call_id] = (message, extra if isinstance(extra, dict) else {})
        else:
            messages.append(message)
    for message in messages:
        _message_body(message, expanded, width, out, results)
    return out


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


def header(item: Item, label: str | None, now: datetime, width: int, entries: int = 1) -> Text:
    """The first line of a message: role, model and the response's usage, label, and at the
    right its time and id (those of its first entry, and how many entries it is made of
    when several and there is room)."""
    entry = item.entry
    line = Text(end="")
    fallback: Text | None = None   # the cost alone, where the time and id do not fit
    if item.kind == "summary":
        line.append("◆ compacted context", MARKER_STYLE)
        tokens = entry.data.get("tokensBefore")
        if isinstance(tokens, int):
            # (the label first: the figure shortens, then goes, where they do not both fit)
            room = width - line.cell_len - (len(label) + 7 if label else 0)
            for words in (f"  {tokens:,} tokens summarised", f"  {tokens:,} tok"):
                if len(words) <= room:
                    line.append(words, DIM)
                    break
    elif entry.type == MESSAGE and role_of(entry.message or {}) in SUMMARY_ROLES:
        message = entry.message
        role = message["role"]
        line.append(f"{'◇' if role == 'branchSummary' else '◆'} {ROLE_NAMES[role]}", MARKER_STYLE)
        tokens, from_id = message.get("tokensBefore"), message.get("fromId")
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            line.append(f"  {tokens:,} tokens before", DIM)
        elif isinstance(from_id, str) and from_id:
            line.append("   of ", DIM)
            line.append_text(safe_line(short_id(from_id), 12, style=DIM))
    elif entry.type == MESSAGE:
        message = entry.message or {}
        # (a role that is not a word, as a damaged line may have: the message is shown raw)
        role = (role_of(message) if "role" in message else entry.role) or "message"
        name = ROLE_NAMES.get(role, role)
        line.append_text(safe_line(name, 20, style=ROLE_STYLES.get(role, "bold")))
        _custom_type(message, line)
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
    elif entry.type == CUSTOM_MESSAGE:
        line.append(ROLE_NAMES["custom"], f"bold {DIM}")
        _custom_type(entry.data, line)
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
    elif is_bookkeeping_line(entry.type):
        room = width - len(clock_time(entry.timestamp, now)) - 14   # (the time and id fit)
        line.append_text(safe_line(name_of(entry.type, entry.data), max(12, min(40, room)),
                                   style=f"bold {DIM}"))
    else:
        line.append_text(safe_line(entry.type, 30, style=f"bold {DIM}"))
    if label:
        line.append("  ")
        line.append_text(safe_line(f" ⚑ {label} ", 30, style=LABEL_STYLE))
    right = Text(end="")
    right.append(clock_time(entry.timestamp, now), FAINT)
    right.append(f"  {short_id(entry.id)}", FAINT)
    if entries > 1 and width - line.cell_len - right.cell_len - 2 >= 16:
        right = Text(f"{entries} entries  ", FAINT, end="") + right
    gap = width - line.cell_len - right.cell_len
    if gap >= 2:
        line.append(" " * gap)
        line.append_text(right)
    elif fallback is not None and line.cell_len + fallback.cell_len <= width:
        line.append_text(fallback)
    return line


def _custom_type(data: dict[str, Any], line: Text) -> None:
    """An extension's message names its kind (pi's customType) after the role."""
    kind = data.get("customType")
    if isinstance(kind, str) and kind:
        line.append(" · ", FAINT)
        line.append_text(safe_line(kind, 24, style=FAINT))


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
        elif str(data.get("summary") or "").strip():
            out.add(safe_line(data.get("summary", ""), max(10, width), style="#d7afd7"))
        else:
            out.add(_summary(None))
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
    if entry.type == CUSTOM_MESSAGE and (message := extension_message(data)) is not None:
        _message_body(message, expanded, width, out)
        return out
    if not expanded and langgraph_checkpoint(entry.type, data) is not None:
        out.foldable = True   # a marker line; opened, its data
        return out
    if is_bookkeeping_line(entry.type):   # what it says on one line; opened, the line as written
        said = says(entry.type, data)
        if said:
            out.add(safe_line(said, max(10, width), style=FAINT))
        if expanded:
            out.add(json_text(data))
        out.foldable = True
        return out
    # custom and unknown types: raw, one line until opened
    if expanded:
        out.add(json_text(data))
    else:
        out.add(safe_line(_json(data), max(10, width), style=FAINT))
    out.foldable = True
    return out


SPAWN_STYLE = "#af87d7"
NEST_GUIDE = "│ "
_SPAWN_KINDS = {"subagent": ("↳", "sub-agent"), "subgraph": ("↳", "sub-graph"),
                "fork": ("↱", "fork")}
# a fork that an agent's rewind wrote as a session of its own (`forkedFrom.command`)
_REWIND_COMMANDS = frozenset({"rewind-conversation"})


def spawn_lines(item: Item, expanded: bool, now: datetime, width: int) -> list[Text]:
    """A session that started at this entry: what it is, how big, and the keys."""
    from .formatting import age

    child = item.child
    meta = child.metadata if isinstance(child.metadata, dict) else {}
    glyph, what = _SPAWN_KINDS.get(child.kind, ("↳", child.kind or "session"))
    origin = meta.get("forkedFrom")
    if child.kind == "fork" and isinstance(origin, dict) and \
            origin.get("command") in _REWIND_COMMANDS:
        what = "rewind"
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
                now: datetime, group: list[Item] | None = None) -> tuple[list[Strip], bool]:
    """The strips of one item at `width` (without the cursor gutter) and whether it folds.
    `group`: the items of the message it begins (itself first), drawn as one message."""
    if item.nest:
        inner = max(8, width - len(NEST_GUIDE) * item.nest)
        strips, foldable = render_item(console, _flat(item), width=inner, expanded=expanded,
                                       label=label, now=now,
                                       group=[_flat(member) for member in group] if group else None)
        return nest_strips(strips, item.nest, width), foldable
    if item.kind == "spawn":
        return render_spawn(console, item, width=width, expanded=expanded, now=now), True
    several = group is not None and len(group) > 1
    content = group_body(group, expanded, width) if several else body(item, expanded, width)
    lines: list[list[Segment]] = _render(console, header(item, label, now, width,
                                                         len(group) if several else 1), width)
    body_lines: list[list[Segment]] = []
    for part, cut in content.parts:
        rendered = _render(console, part, width)
        if cut and not expanded and len(rendered) > FOLDED_LINES:
            hidden = len(rendered) - FOLDED_LINES
            rendered = rendered[:FOLDED_LINES]
            rendered.extend(_render(console, Text(f"… {hidden:,} more lines (space opens)",
                                                  f"italic {FAINT}"), width))
            content.foldable = True
        body_lines.extend(rendered)
        if len(body_lines) > 4000:
            break
    lines.extend(body_lines)
    lines.extend(_render(console, Text(""), width))  # a blank line between messages
    strips = [Strip(list(strip_links(line)), width).crop_extend(0, width, None) for line in lines]
    return strips, content.foldable
