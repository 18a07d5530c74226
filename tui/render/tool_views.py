"""Tool calls as people read them: one line folded, the call's own shape opened.

A tool call and the result that answers it are drawn together (see core.history.responses for
how they are found). By the tool's name and arguments:

* Edit / MultiEdit / Write (Claude Code), edit / write (pi), `apply_patch` (Codex, also
  when run through its shell tool): a coloured diff (Claude Code's own `structuredPatch`
  of the applied edit when the result carries one, with the file's line numbers);
* Bash and the other shell tools: `$ command` and its output;
* Read: the file's lines with their numbers;
* TodoWrite, Codex's update_plan: a checklist;
* Task / Agent: what the sub-agent was asked and what it answered (its thread follows the
  message, see message_source);
* any other tool: its arguments as indented JSON (and a JSON result likewise).

Everything untrusted goes through `tui.render.safe_text`: a diff or JSON full of escapes shows
the escapes, never acts on them.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType
from rich.highlighter import JSONHighlighter
from rich.padding import Padding
from rich.text import Text

from core.model.entries import content_text

from .formatting import DIM, ERROR_STYLE, FAINT
from .safe_text import DISPLAY_LIMIT, LINE_LIMIT, safe_line, safe_markdown_source, safe_text

TOOL_STYLE = "bold #d7af5f"
ADDED = "#87d787 on #1d3320"
REMOVED = "#ff8787 on #3a1d1d"
HUNK = "#5fafd7"
FILE_STYLE = "bold #c8c8c8"
OK_STYLE = "#87d787"
# Diffs of more than this many characters are not computed inline (the whole message
# view shows the old and new text).
DIFF_LIMIT = 200_000
WHOLE_HINT = "f shows the whole message"

EDIT_TOOLS = {"edit", "str_replace", "replace", "str_replace_editor"}
MULTI_EDIT_TOOLS = {"multiedit", "multi_edit"}
WRITE_TOOLS = {"write", "write_file", "create_file"}
PATCH_TOOLS = {"apply_patch"}
SHELL_TOOLS = {"bash", "shell", "exec_command", "local_shell", "shell_command",
               "run_terminal_cmd", "execute_command", "container.exec"}
READ_TOOLS = {"read", "read_file", "view"}
TODO_TOOLS = {"todowrite", "todo_write", "update_plan"}
TASK_TOOLS = {"task", "agent", "spawn_agent"}

GLYPHS = {"edit": "✎", "multi": "✎", "write": "✎", "patch": "✎", "shell": "$", "read": "▤", "todo": "☑",
           "task": "⇢"}


@dataclass
class ToolCall:
    """A call and (when it came) the tool-result message answering it."""

    name: str
    arguments: Any
    call_id: str | None = None
    result: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)   # Claude Code's toolUseResult
    looked: bool = True     # False: drawn alone (the raw view), its result not looked for
    bare: bool = False      # a command the user ran (pi's `!command`): no tool name to show
    ended: list[str] = field(default_factory=list)   # how it ended: "exit 0", "cancelled"
    ended_badly: bool = False

    @property
    def kind(self) -> str:
        name = self.name.lower()
        if name in EDIT_TOOLS:
            return "multi" if isinstance(self.args.get("edits"), list) else "edit"
        if name in MULTI_EDIT_TOOLS:
            return "multi"
        if name in WRITE_TOOLS:
            return "write"
        if name in PATCH_TOOLS or (name in SHELL_TOOLS and patch_in_command(self.command)):
            return "patch"
        if name in SHELL_TOOLS:
            return "shell"
        if name in READ_TOOLS:
            return "read"
        if name in TODO_TOOLS:
            return "todo"
        if name in TASK_TOOLS:
            return "task"
        return "other"

    @property
    def args(self) -> dict[str, Any]:
        """The arguments as a dict (a JSON string is read; anything else: {})."""
        value = self.arguments
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return {}
        return value if isinstance(value, dict) else {}

    @property
    def command(self) -> str:
        """A shell tool's command line (a list given to exec as one line)."""
        args = self.args
        value = args.get("command", args.get("cmd"))
        if isinstance(value, list) and all(isinstance(part, str) for part in value):
            if len(value) >= 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-c", "-lc"):
                return value[2]
            return shlex.join(value)
        if isinstance(value, str):
            return value
        if isinstance(self.arguments, str) and not args:
            return self.arguments          # a custom tool's raw input
        return ""

    @property
    def path(self) -> str:
        args = self.args
        for key in ("file_path", "path", "filePath", "notebook_path"):
            if isinstance(args.get(key), str):
                return args[key]
        return ""

    @property
    def result_text(self) -> str:
        if self.result is None:
            return ""
        return content_text(self.result.get("content", self.result.get("output")))

    @property
    def failed(self) -> bool:
        return bool(self.result and self.result.get("isError"))


def shell_run(message: dict[str, Any]) -> ToolCall:
    """A command the user ran (pi's bashExecution message: `!command`), drawn as the shell
    tool is: `$ command`, its output, and how it ended."""
    from core.history.outcomes import shell_failed, shell_outcome

    command = message.get("command")
    output = message.get("output")
    return ToolCall("shell", {"command": command if isinstance(command, str) else ""},
                    result={"content": output if isinstance(output, str) else
                            ("" if output is None else str(output))},
                    bare=True, ended=shell_outcome(message), ended_badly=shell_failed(message))


# ------------------------------------------------------------------ patches
_HEREDOC = re.compile(r"<<\s*['\"]?(\w+)['\"]?\s*\n(.*?)\n\1\s*$", re.S)


def patch_in_command(command: str) -> str | None:
    """The patch text when a shell command runs `apply_patch` (Codex does that), else None."""
    text = command.strip()
    if not text.startswith("apply_patch"):
        return None
    heredoc = _HEREDOC.search(text)
    if heredoc:
        return heredoc.group(2)
    rest = text[len("apply_patch"):].strip()
    return rest if "*** Begin Patch" in rest else None


def patch_text(call: ToolCall) -> str:
    """The patch an apply_patch call gives (its `input`, or the command's here-document)."""
    if isinstance(call.arguments, str) and "*** Begin Patch" in call.arguments:
        return call.arguments
    args = call.args
    for key in ("input", "patch"):
        if isinstance(args.get(key), str):
            return args[key]
    value = args.get("command")
    if isinstance(value, list) and len(value) == 2 and value[0] == "apply_patch" and \
            isinstance(value[1], str):
        return value[1]
    return patch_in_command(call.command) or ""


def patch_files(patch: str) -> list[tuple[str, str]]:
    """(action, path) for each file an apply_patch touches: Add, Update, Delete."""
    found = []
    for match in re.finditer(r"^\*\*\* (Add|Update|Delete) File: (.+)$", patch, re.M):
        found.append((match.group(1), match.group(2)))
    return found


# ------------------------------------------------------------------- diffs
def diff_lines(old: str, new: str) -> list[str]:
    """A unified diff of two texts without its file header ('@@', ' ', '-', '+' lines)."""
    if len(old) + len(new) > DIFF_LIMIT:
        return []
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3))
    return lines[2:]


def diff_counts(lines: list[str]) -> tuple[int, int]:
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed


def structured_patch_lines(extra: dict[str, Any]) -> list[str] | None:
    """Claude Code's record of the edit it applied (with the file's line numbers)."""
    hunks = extra.get("structuredPatch") if isinstance(extra, dict) else None
    if not isinstance(hunks, list) or not hunks:
        return None
    lines: list[str] = []
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        lines.append(f"@@ -{hunk.get('oldStart', '?')},{hunk.get('oldLines', '?')} "
                     f"+{hunk.get('newStart', '?')},{hunk.get('newLines', '?')} @@")
        lines.extend(str(line) for line in hunk["lines"])
    return lines


def render_diff(lines: list[str], *, limit_lines: int = LINE_LIMIT) -> Text:
    """Diff lines coloured: additions green, removals red, hunk headers blue, files bold."""
    out = Text(end="")
    shown = 0
    for line in lines:
        if shown >= limit_lines:
            out.append(f"… {len(lines) - shown:,} more diff lines · {WHOLE_HINT}\n", f"italic {FAINT}")
            break
        if line.startswith("@@"):
            style = HUNK
        elif line.startswith("***") or line.startswith("diff ") or line.startswith("+++") or \
                line.startswith("---"):
            style = FILE_STYLE
        elif line.startswith("+"):
            style = ADDED
        elif line.startswith("-"):
            style = REMOVED
        else:
            style = DIM
        out.append_text(safe_text(line, limit=DISPLAY_LIMIT, max_lines=1, style=style))
        out.append("\n")
        shown += 1
    out.rstrip()
    return out


def _edit_pairs(call: ToolCall) -> list[tuple[str, str]]:
    args = call.args
    if call.kind == "multi":
        pairs = []
        for edit in args.get("edits") or []:
            if isinstance(edit, dict):
                pairs.append((_text_arg(edit, "old_string", "oldText", "old_str"),
                              _text_arg(edit, "new_string", "newText", "new_str")))
        return pairs
    return [(_text_arg(args, "old_string", "oldText", "old_str"),
             _text_arg(args, "new_string", "newText", "new_str"))]


def _text_arg(args: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def call_diff(call: ToolCall) -> list[str] | None:
    """The diff lines a file-changing call shows (None: not one, or too big to compute)."""
    kind = call.kind
    if kind in ("edit", "multi"):
        applied = structured_patch_lines(call.extra)
        if applied is not None:
            return applied
        lines: list[str] = []
        for old, new in _edit_pairs(call):
            if len(old) + len(new) > DIFF_LIMIT:
                return None
            lines.extend(diff_lines(old, new))
        return lines
    if kind == "write":
        content = _text_arg(call.args, "content", "contents", "text")
        if len(content) > DIFF_LIMIT:
            return None
        applied = structured_patch_lines(call.extra)
        if applied is not None:
            return applied
        return [f"@@ new file: {len(content.splitlines()):,} lines @@"] + \
            ["+" + line for line in content.splitlines()]
    if kind == "patch":
        patch = patch_text(call)
        return [line for line in patch.splitlines()
                if line not in ("*** Begin Patch", "*** End Patch")]
    return None


# -------------------------------------------------------------- one line
def status(call: ToolCall) -> Text:
    """How the call went: ✓ and the size of its output, ✗ error, or no result (yet)."""
    if not call.looked:
        return Text("")
    if call.result is None:
        return Text("· no result", f"italic {FAINT}")
    if call.ended_badly:
        return Text(f"✗ {call.ended[0]}", ERROR_STYLE)
    if call.failed:
        return Text("✗ error", ERROR_STYLE)
    text = call.result_text
    lines = text.count("\n") + 1 if text.strip() else 0
    out = Text("✓", OK_STYLE)
    if call.kind in ("shell", "read", "other", "task") and lines:
        out.append(f" {lines:,} line{'s' if lines != 1 else ''}", FAINT)
    return out


def call_line(call: ToolCall, width: int) -> Text:
    """The folded call: a glyph, the tool, what it acts on, and how it went."""
    kind = call.kind
    line = Text(end="")
    line.append(f"{GLYPHS.get(kind, '⚙')} ", TOOL_STYLE)
    if not call.bare:
        line.append_text(safe_line(call.name or "tool", 28, style=TOOL_STYLE))
        line.append("  ")
    right = status(call)
    detail = Text(end="")
    tail_path = ""            # a path shown by its end when it does not fit
    if kind in ("edit", "multi", "write", "patch"):
        lines = call_diff(call)
        target = call.path
        if kind == "patch":
            files = patch_files(patch_text(call))
            if len(files) > 1:     # several files: their names
                target = ", ".join(path.rsplit("/", 1)[-1] for _, path in files)
            elif files:
                target = files[0][1]
        tail_path = target or "(no file)"
        counts = Text(end="")
        if kind == "multi":
            counts.append(f"{len(_edit_pairs(call))} edits  ", FAINT)
        if lines:
            added, removed = diff_counts(lines)
            counts.append(f"+{added:,}", OK_STYLE)
            counts.append(f" −{removed:,}", "#ff8787")
        if right.cell_len and counts.cell_len:
            counts.append("  ")
        right = counts + right
    elif kind == "shell":
        detail.append_text(safe_line(call.command, 400))
    elif kind == "read":
        tail_path = call.path or _first_string(call.args)
        span = _read_span(call.args)
        if span:
            right = Text(f"{span}  ", FAINT) + right
    elif kind == "todo":
        items = todo_items(call.args)
        done = sum(1 for _, state in items if state == "completed")
        detail.append(f"{done} of {len(items)} done", DIM)
        current = next((text for text, state in items if state == "in_progress"), "")
        if current:
            detail.append("  ◐ ", "#d7af5f")
            detail.append_text(safe_line(current, 200, style=DIM))
    elif kind == "task":
        args = call.args
        agent = args.get("subagent_type") or args.get("agent_type")
        if isinstance(agent, str) and agent:
            detail.append_text(safe_line(agent, 30, style="bold #af87d7"))
            detail.append(" · ", FAINT)
        detail.append_text(safe_line(args.get("description") or args.get("prompt") or "", 200))
    else:
        flat = call.arguments if isinstance(call.arguments, str) else _json(call.arguments)
        detail.append_text(safe_line(flat, 400, style=DIM))
    room = width - line.cell_len - right.cell_len - 2
    if tail_path:
        detail = tail_line(tail_path, max(6, room))
    if room >= 6:
        detail.truncate(room, overflow="ellipsis")
        line.append_text(detail)
        line.append(" " * max(2, width - line.cell_len - right.cell_len))
    else:
        detail.truncate(max(0, width - line.cell_len), overflow="ellipsis")
        line.append_text(detail)
        right = Text("")
    line.append_text(right)
    line.truncate(width, overflow="ellipsis")
    return line


def tail_line(path: str, width: int) -> Text:
    """A path on one line; one too long keeps its end (the file's name), from a "/" on,
    after "…"."""
    text = safe_line(path, 10_000)
    if text.cell_len <= width:
        return text
    plain = text.plain
    tail = plain[-max(1, width - 1):]
    if "/" in tail[:-1]:
        tail = tail[tail.index("/"):]
    out = Text("…", FAINT, end="")
    out.append(tail)
    out.truncate(width, overflow="ellipsis")
    return out


def _first_string(args: dict[str, Any]) -> str:
    return next((value for value in args.values() if isinstance(value, str)), "")


def _read_span(args: dict[str, Any]) -> str:
    offset, limit = args.get("offset"), args.get("limit")
    if isinstance(offset, int) and isinstance(limit, int):
        return f"lines {offset:,}–{offset + limit - 1:,}"
    if isinstance(offset, int):
        return f"from line {offset:,}"
    if isinstance(limit, int):
        return f"first {limit:,} lines"
    return ""


# ---------------------------------------------------------------- opened
def call_body(call: ToolCall, width: int) -> list[RenderableType]:
    """What an opened call shows under its line (indented by the caller)."""
    kind = call.kind
    parts: list[RenderableType] = []
    if kind in ("edit", "multi", "write", "patch"):
        lines = call_diff(call)
        if lines is None:
            parts.append(Text(f"too large to diff here · {WHOLE_HINT}", f"italic {FAINT}"))
        elif lines:
            parts.append(render_diff(lines))
        else:
            parts.append(Text("(no change)", f"italic {FAINT}"))
        parts.extend(_result_parts(call, short=True))
    elif kind == "shell":
        command = Text("$ ", "bold #87d787")
        command.append_text(safe_text(call.command, style="bold"))
        parts.append(command)
        description = call.args.get("description")
        if isinstance(description, str) and description:
            parts.append(safe_line(f"# {description}", max(10, width), style=FAINT))
        parts.extend(_result_parts(call))
        if call.ended:
            parts.append(Text(" · ".join(call.ended), ERROR_STYLE if call.ended_badly else FAINT))
    elif kind == "read":
        if call.failed or call.result is None:
            parts.extend(_result_parts(call))
        else:
            parts.append(numbered(call.result_text, _start_line(call.args)))
    elif kind == "todo":
        parts.append(checklist(todo_items(call.args), call.args.get("explanation")))
    elif kind == "task":
        prompt = call.args.get("prompt")
        if isinstance(prompt, str) and prompt:
            parts.append(Text("asked", f"bold {FAINT}"))
            parts.append(Padding(safe_text(prompt, style=DIM), (0, 0, 0, 2)))
        if call.result is not None:
            parts.append(Text("answered" if not call.failed else "failed",
                              f"bold {FAINT}" if not call.failed else ERROR_STYLE))
            parts.extend(Padding(part, (0, 0, 0, 2)) for part in markdown_parts(call.result_text))
    else:
        parts.append(json_text(call.arguments))
        parts.extend(_result_parts(call, as_json=True))
    return parts


def markdown_parts(text: Any) -> list[RenderableType]:
    """Untrusted markdown: its controls made visible, cut to the display limit (with a note
    saying how to see the rest), links kept as text (see message_render)."""
    from rich.markdown import Markdown  # imported on first use: not needed for the first frame

    source, more = safe_markdown_source(text, hint=WHOLE_HINT)
    parts: list[RenderableType] = [Markdown(source, hyperlinks=False, code_theme="monokai",
                                            inline_code_lexer=None)]
    if more:
        parts.append(Text(more, DIM))
    return parts


def _result_parts(call: ToolCall, *, short: bool = False, as_json: bool = False) -> list[RenderableType]:
    if call.result is None:
        return [Text("no result", f"italic {FAINT}")]
    text = call.result_text
    if not text.strip():
        return [Text("(no output)" if not call.failed else "✗ error (no output)",
                     f"italic {FAINT}" if not call.failed else ERROR_STYLE)]
    style = "#ff8787" if call.failed else "#c8c8c8"
    if short and not call.failed:
        # an edit's result only confirms it: one line is enough
        line = Text("↳ ", FAINT)
        line.append_text(safe_line(text.strip(), 400, style=FAINT))
        return [line]
    head = Text("↳ error" if call.failed else "↳ output", ERROR_STYLE if call.failed else FAINT)
    if as_json:
        parsed = _parsed_json(text)
        if parsed is not None:
            return [head, Padding(json_text(parsed), (0, 0, 0, 2))]
    return [head, Padding(safe_text(text, style=style, hint=WHOLE_HINT), (0, 0, 0, 2))]


def _start_line(args: dict[str, Any]) -> int:
    offset = args.get("offset")
    return offset if isinstance(offset, int) and offset > 0 else 1


_NUMBERED = re.compile(r"^\s*(\d+)(→|\t)")


def numbered(text: str, start: int = 1, *, limit_lines: int = LINE_LIMIT) -> RenderableType:
    """A file's lines with their numbers (a line too long for the width wraps under its
    text, not under the number). Claude Code's Read output (`   12→text`) keeps its own
    numbers; other text is numbered from `start`."""
    from rich.console import Group
    from rich.table import Table

    lines = text.splitlines()
    own = bool(lines) and all(_NUMBERED.match(line) for line in lines[:5])
    shown = lines[:limit_lines]
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style=FAINT, no_wrap=True)
    table.add_column(style=FAINT, no_wrap=True)
    table.add_column(overflow="fold")
    for number, line in enumerate(shown, start):
        label = str(number)
        if own:
            match = _NUMBERED.match(line)
            label, line = (match.group(1), line[match.end():]) if match else ("", line)
        table.add_row(label, "│", safe_text(line, limit=DISPLAY_LIMIT, max_lines=1))
    if len(lines) > len(shown):
        more = Text(f"… {len(lines) - len(shown):,} more lines · {WHOLE_HINT}", f"italic {FAINT}")
        return Group(table, more)
    return table


TODO_MARKS = {"completed": ("☑", f"{DIM} strike"), "in_progress": ("◐", "bold #d7af5f"),
              "pending": ("☐", "")}


def todo_items(args: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, status) for each item of a TodoWrite list or an update_plan plan."""
    items = args.get("todos", args.get("plan"))
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            text = item.get("content", item.get("step", item.get("text", "")))
            state = item.get("status", "pending")
            out.append((text if isinstance(text, str) else _json(text),
                        state if isinstance(state, str) else "pending"))
    return out


def checklist(items: list[tuple[str, str]], explanation: Any = None) -> Text:
    out = Text(end="")
    if isinstance(explanation, str) and explanation:
        out.append_text(safe_text(explanation, style=DIM))
        out.append("\n")
    for text, state in items:
        mark, style = TODO_MARKS.get(state, ("☐", ""))
        out.append(f"{mark} ", style.replace(" strike", "") or DIM)
        out.append_text(safe_text(text, style=style))
        out.append("\n")
    if not items:
        out.append("(an empty list)", f"italic {FAINT}")
    out.rstrip()
    return out


def _json(value: Any, indent: int | None = None) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _parsed_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or len(stripped) > DISPLAY_LIMIT:
        return None
    try:
        return json.loads(stripped, strict=False)   # control characters inside strings too
    except ValueError:
        return None


_highlight_json = JSONHighlighter()


def json_text(value: Any) -> Text:
    """A value as indented JSON, coloured (a JSON string is read first; other text shown
    as it is). Made safe before colouring: the highlighter only adds styles."""
    if isinstance(value, str):
        parsed = _parsed_json(value)
        if parsed is None:
            return safe_text(value, style=DIM, hint=WHOLE_HINT)
        value = parsed
    text = safe_text(_json(value, indent=2), hint=WHOLE_HINT)
    _highlight_json.highlight(text)
    return text
