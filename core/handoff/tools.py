"""Tool calls across agents: the tools the agents share, each agent's own name and
arguments for them, and the conversion of a call from one agent's spelling to another's.

A call is read into a *kind* (shell, read, write, edit, plan) with arguments in one neutral
shape, then written in the target's own name and arguments. A call of a tool the target has
no equivalent for stays a generic call, under its own name with its own arguments (all three
agents' formats hold a call of any tool). `docs/handoff.md` has the same table in words.

| kind  | Claude Code                         | Codex                                   | pi                          |
|-------|-------------------------------------|-----------------------------------------|-----------------------------|
| shell | Bash {command, timeout ms}          | exec_command {cmd, workdir}; read from  | bash {command, timeout s}   |
|       |                                     | shell {command: argv}, shell_command,   |                             |
|       |                                     | local_shell_call                        |                             |
| read  | Read {file_path, offset, limit}     | (none: kept generic)                    | read {path, offset, limit}  |
| write | Write {file_path, content}          | apply_patch "*** Add File"              | write {path, content}       |
| edit  | Edit {file_path, old_string,        | apply_patch "*** Update File" hunks     | edit {path, edits:          |
|       | new_string, replace_all}            |                                         | [{oldText, newText}]}       |
| plan  | TodoWrite {todos: [{content,        | update_plan {plan: [{step, status}],    | (none: kept generic)        |
|       | status, activeForm}]}               | explanation}                            |                             |

Every other agent's tools are a `Row` of `ROWS` below: its tool for each kind, with its own
name for each neutral argument, and how its numbers and paths differ (the first line of a
read offset, the timeout's unit, absolute paths). Calls are read from and written to that
spelling by the same two functions, so an agent whose writer can write a session becomes a
hand-off target by adding its row here (core/handoff/targets.py) and in docs/handoff.md.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable

from core.agents.codex import writer as codex_writer

SHELL, READ, WRITE, EDIT, PLAN = "shell", "read", "write", "edit", "plan"
KINDS = (SHELL, READ, WRITE, EDIT, PLAN)


@dataclass(frozen=True)
class Tool:
    """An agent's tool for one kind: its name, and its own name for each neutral argument
    (shell: command, description, timeout_ms, workdir; read: path, offset, limit, and end,
    the last line read, for a tool that takes a range, or range, for one that takes
    [first, last] in one list (-1: to the end); write: path, content; edit: path,
    old, new, all, and edits, the object (or list) holding old/new/all for a tool that nests
    them; plan: items, and text, status, id of each item, explanation)."""

    name: str
    args: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "_own", dict(self.args))     # (looked up per call)

    def own(self, neutral: str) -> str | None:
        return self._own.get(neutral)


def tool(name: str, **args: str) -> Tool:
    return Tool(name, tuple(args.items()))


@dataclass(frozen=True)
class Row:
    """One agent's tools for the shared kinds (a kind it has no tool for stays generic)."""

    tools: tuple[tuple[str, Tool], ...]
    offset_base: int = 1          # the number its read offset gives a file's first line
    timeout_unit_ms: int = 1      # its timeout's unit, in milliseconds
    absolute_paths: bool = False  # its file tools take absolute paths
    statuses: tuple[tuple[str, str], ...] = ()   # a plan item's status: (neutral, its own)
    item_defaults: tuple[tuple[str, Any], ...] = ()   # fields its plan items must have

    def status(self, neutral: str) -> str:
        return next((own for key, own in self.statuses if key == neutral), neutral)

    def neutral_status(self, own: str) -> str:
        return next((key for key, found in self.statuses if found == own), own)

    def __post_init__(self) -> None:     # (looked up per call)
        object.__setattr__(self, "_by_kind", dict(self.tools))
        object.__setattr__(self, "_by_name", {t.name: (k, t) for k, t in self.tools})

    def tool(self, kind: str) -> Tool | None:
        return self._by_kind.get(kind)

    def named(self, name: str) -> tuple[str | None, Tool | None]:
        """The kind and tool of the agent's tool called `name` ((None, None): none)."""
        return self._by_name.get(name, (None, None))


ROWS: dict[str, Row] = {
    # Qwen Code 0.24.4 (packages/core/src/tools: shell.ts, read-file.ts, write-file.ts,
    # edit.ts, todoWrite.ts): read_file's offset is 0-based, its paths absolute
    "qwen": Row((
        (SHELL, tool("run_shell_command", command="command", description="description",
                     timeout_ms="timeout", workdir="directory")),
        (READ, tool("read_file", path="file_path", offset="offset", limit="limit")),
        (WRITE, tool("write_file", path="file_path", content="content")),
        (EDIT, tool("edit", path="file_path", old="old_string", new="new_string",
                    all="replace_all")),
        (PLAN, tool("todo_write", items="todos", text="content", status="status", id="id")),
    ), offset_base=0, absolute_paths=True),
    # Gemini CLI 0.61.0 (the tool declarations it sends: packages/core/src/tools): read_file
    # reads a range of lines (start_line, end_line, from 1); replace's `instruction` (a
    # sentence for its fixer model) has no counterpart and is left out of a call written
    "gemini": Row((
        (SHELL, tool("run_shell_command", command="command", description="description",
                     workdir="dir_path")),
        (READ, tool("read_file", path="file_path", offset="start_line", end="end_line")),
        (WRITE, tool("write_file", path="file_path", content="content")),
        (EDIT, tool("replace", path="file_path", old="old_string", new="new_string",
                    all="allow_multiple")),
        (PLAN, tool("write_todos", items="todos", text="description", status="status")),
    )),
    # Factory droid 0.215.0 (the tools `droid exec --auto high` declares; TodoWrite's items
    # from its schema): Execute's timeout in seconds, Read's path absolute; a summary of the
    # command is its description
    "droid": Row((
        (SHELL, tool("Execute", command="command", description="summary", timeout_ms="timeout")),
        (READ, tool("Read", path="file_path", offset="offset", limit="limit")),
        (WRITE, tool("Create", path="file_path", content="content")),
        (EDIT, tool("Edit", path="file_path", old="old_str", new="new_str", all="change_all")),
        (PLAN, tool("TodoWrite", items="todos", text="content", status="status", id="id")),
    ), timeout_unit_ms=1000, absolute_paths=True),
    # Kimi CLI 1.50.0 (kimi_cli/tools: shell, file/read.py, write.py, replace.py, todo):
    # Shell's timeout in seconds; StrReplaceFile's old/new inside `edit` (one, or a list);
    # a finished to-do is "done"
    "kimi": Row((
        (SHELL, tool("Shell", command="command", timeout_ms="timeout")),
        (READ, tool("ReadFile", path="path", offset="line_offset", limit="n_lines")),
        (WRITE, tool("WriteFile", path="path", content="content")),
        (EDIT, tool("StrReplaceFile", path="path", edits="edit", old="old", new="new",
                    all="replace_all")),
        (PLAN, tool("SetTodoList", items="todos", text="title", status="status")),
    ), timeout_unit_ms=1000, statuses=(("completed", "done"),)),
    # opencode 1.18.33 (the tools it declares to its model): bash's timeout in
    # milliseconds and its own `workdir`; the file tools take absolute paths; read's offset
    # from 1; every to-do has a priority (required: "medium" for an item that had none)
    "opencode": Row((
        (SHELL, tool("bash", command="command", timeout_ms="timeout", workdir="workdir")),
        (READ, tool("read", path="filePath", offset="offset", limit="limit")),
        (WRITE, tool("write", path="filePath", content="content")),
        (EDIT, tool("edit", path="filePath", old="oldString", new="newString",
                    all="replaceAll")),
        (PLAN, tool("todowrite", items="todos", text="content", status="status")),
    ), absolute_paths=True, item_defaults=(("priority", "medium"),)),
    # GitHub Copilot CLI 1.0.102 (the tools it declares to its model): bash has no timeout
    # (its `initial_wait` is how long it waits before answering, not a limit) and no folder;
    # view reads `view_range` [first, last] (from 1, -1: to the end); create, edit: absolute
    # paths, one replacement; no to-do tool (its plan is a table of its `sql` tool)
    "copilot": Row((
        (SHELL, tool("bash", command="command", description="description")),
        (READ, tool("view", path="path", range="view_range")),
        (WRITE, tool("create", path="path", content="file_text")),
        (EDIT, tool("edit", path="path", old="old_str", new="new_str")),
    ), absolute_paths=True),
}
CODED = ("claude_code", "codex", "pi")      # the agents whose calls are read and written in code
AGENTS = (*CODED, *ROWS)


def has_row(agent: str) -> bool:
    """Whether the agent's tools are known here (a writer that writes makes it a target)."""
    return agent in CODED or agent in ROWS

# The target's own tool for each kind (None: it has none, the call stays generic).
TOOL_NAMES: dict[str, dict[str, str | None]] = {
    SHELL: {"claude_code": "Bash", "codex": "exec_command", "pi": "bash"},
    READ: {"claude_code": "Read", "codex": None, "pi": "read"},
    WRITE: {"claude_code": "Write", "codex": "apply_patch", "pi": "write"},
    EDIT: {"claude_code": "Edit", "codex": "apply_patch", "pi": "edit"},
    PLAN: {"claude_code": "TodoWrite", "codex": "update_plan", "pi": None},
}
for _agent, _row in ROWS.items():
    for _kind in KINDS:
        _found = _row.tool(_kind)
        TOOL_NAMES[_kind][_agent] = _found.name if _found is not None else None
# Codex's apply_patch is a free-form tool: its call is a `custom_tool_call` with the patch
# as `input` (how Codex itself records it), not a function call with JSON arguments.
CUSTOM_TOOLS = {"codex": codex_writer.CUSTOM_TOOLS}


@dataclass
class Call:
    """A tool call in neutral form: its kind and arguments (see the module doc)."""

    kind: str
    args: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- small helpers
def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _argv_command(argv: Any) -> str | None:
    """A command given as argv (Codex's older `shell`): the script of `bash -lc SCRIPT`, else
    the words joined as a shell would read them."""
    if isinstance(argv, str):
        return argv
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return None
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and \
            argv[1] in ("-lc", "-c"):
        return argv[2]
    return shlex.join(argv)


def _whole(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _drop_none(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v is not None}


# ------------------------------------------------------------- Codex's patches
BEGIN, END = "*** Begin Patch", "*** End Patch"


def parse_patch(text: str) -> list[Call] | None:
    """Codex's apply_patch text as write and edit calls, one per file; None when it holds
    anything else (a deleted or moved file, a form not understood)."""
    lines = text.strip("\n").split("\n")
    if len(lines) < 2 or lines[0].strip() != BEGIN or lines[-1].strip() != END:
        return None
    calls: list[Call] = []
    index = 1
    while index < len(lines) - 1:
        line = lines[index]
        if line.startswith("*** Add File: "):
            path = line[len("*** Add File: "):].strip()
            body = []
            index += 1
            while index < len(lines) - 1 and not lines[index].startswith("*** "):
                if not lines[index].startswith("+"):
                    return None
                body.append(lines[index][1:])
                index += 1
            calls.append(Call(WRITE, {"path": path, "content": "\n".join(body) + ("\n" if body else "")}))
        elif line.startswith("*** Update File: "):
            path = line[len("*** Update File: "):].strip()
            index += 1
            edits: list[dict[str, Any]] = []
            old: list[str] = []
            new: list[str] = []

            def close() -> None:
                if old or new:
                    edits.append({"old": "\n".join(old), "new": "\n".join(new)})
                old.clear()
                new.clear()

            while index < len(lines) - 1 and not lines[index].startswith("*** "):
                hunk = lines[index]
                if hunk.startswith("@@"):
                    close()
                elif hunk.startswith("-"):
                    old.append(hunk[1:])
                elif hunk.startswith("+"):
                    new.append(hunk[1:])
                elif hunk.startswith(" ") or hunk == "":
                    old.append(hunk[1:])
                    new.append(hunk[1:])
                else:
                    return None
                index += 1
            if index < len(lines) - 1 and lines[index].startswith("*** Move to:"):
                return None
            close()
            if not edits:
                return None
            calls.append(Call(EDIT, {"path": path, "edits": edits}))
        else:
            return None
    return calls or None


def _patch_lines(call: Call) -> list[str]:
    path = call.args.get("path", "")
    if call.kind == WRITE:
        content = str(call.args.get("content", ""))
        body = content[:-1] if content.endswith("\n") else content
        return [f"*** Add File: {path}", *("+" + line for line in body.split("\n"))]
    out = [f"*** Update File: {path}"]
    for edit in call.args.get("edits") or []:
        out.append("@@")
        out.extend("-" + line for line in str(edit.get("old", "")).split("\n"))
        out.extend("+" + line for line in str(edit.get("new", "")).split("\n"))
    return out


def make_patch(calls: list[Call]) -> str:
    """Write and edit calls as one apply_patch text, as Codex's model writes one."""
    lines = [BEGIN]
    for call in calls:
        lines.extend(_patch_lines(call))
    lines.append(END)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- reading calls
def _claude_edits(args: dict[str, Any]) -> list[dict[str, Any]] | None:
    if isinstance(args.get("edits"), list):          # MultiEdit
        edits = [{"old": e.get("old_string"), "new": e.get("new_string"),
                  "all": bool(e.get("replace_all"))} for e in args["edits"] if isinstance(e, dict)]
    else:
        edits = [{"old": args.get("old_string"), "new": args.get("new_string"),
                  "all": bool(args.get("replace_all"))}]
    if not edits or not all(isinstance(e["old"], str) and isinstance(e["new"], str) for e in edits):
        return None
    return edits


def _read_claude(name: str, args: dict[str, Any]) -> Call | None:
    if name == "Bash" and _text(args.get("command")) is not None:
        return Call(SHELL, _drop_none({"command": args["command"],
                                       "timeout_ms": _number(args.get("timeout")),
                                       "description": _text(args.get("description"))}))
    path = _text(args.get("file_path"))
    if path is None:
        if name == "TodoWrite" and isinstance(args.get("todos"), list):
            return Call(PLAN, {"items": [{"text": str(t.get("content", "")),
                                          "status": str(t.get("status", "pending"))}
                                         for t in args["todos"] if isinstance(t, dict)]})
        return None
    if name == "Read":
        return Call(READ, _drop_none({"path": path, "offset": _number(args.get("offset")),
                                      "limit": _number(args.get("limit"))}))
    if name == "Write" and _text(args.get("content")) is not None:
        return Call(WRITE, {"path": path, "content": args["content"]})
    if name in ("Edit", "MultiEdit"):
        edits = _claude_edits(args)
        return Call(EDIT, {"path": path, "edits": edits}) if edits else None
    return None


def _read_codex(name: str, args: dict[str, Any]) -> Call | list[Call] | None:
    if name in ("exec_command", "shell_command", "shell", "local_shell", "container.exec"):
        command = _text(args.get("cmd")) if name == "exec_command" else \
            _argv_command(args.get("command"))
        if command is None and isinstance(args.get("exec"), dict):     # local_shell_call
            command = _argv_command(args["exec"].get("command"))
            args = {**args, **args["exec"]}
        if command is None:
            return None
        timeout = _number(args.get("timeout_ms"))
        return Call(SHELL, _drop_none({"command": command, "timeout_ms": timeout,
                                       "workdir": _text(args.get("workdir")
                                                        or args.get("working_directory"))}))
    if name == "apply_patch":
        patch = _text(args.get("input")) or _text(args.get("patch"))
        calls = parse_patch(patch) if patch is not None else None
        return calls if calls else None
    if name == "update_plan" and isinstance(args.get("plan"), list):
        return Call(PLAN, _drop_none({
            "items": [{"text": str(p.get("step", "")), "status": str(p.get("status", "pending"))}
                      for p in args["plan"] if isinstance(p, dict)],
            "explanation": _text(args.get("explanation"))}))
    return None


def _read_pi(name: str, args: dict[str, Any]) -> Call | None:
    if name == "bash" and _text(args.get("command")) is not None:
        timeout = _number(args.get("timeout"))
        return Call(SHELL, _drop_none({"command": args["command"],
                                       "timeout_ms": timeout * 1000 if timeout else None}))
    path = _text(args.get("path"))
    if path is None:
        return None
    if name == "read":
        return Call(READ, _drop_none({"path": path, "offset": _number(args.get("offset")),
                                      "limit": _number(args.get("limit"))}))
    if name == "write" and _text(args.get("content")) is not None:
        return Call(WRITE, {"path": path, "content": args["content"]})
    if name == "edit":
        raw = args.get("edits") if isinstance(args.get("edits"), list) else [args]
        edits = [{"old": e.get("oldText"), "new": e.get("newText")} for e in raw
                 if isinstance(e, dict)]
        if edits and all(isinstance(e["old"], str) and isinstance(e["new"], str) for e in edits):
            return Call(EDIT, {"path": path, "edits": edits})
    return None


def _read_row(row: Row, name: str, args: dict[str, Any]) -> Call | None:
    """A call of an agent of ROWS, by its row."""
    kind, found = row.named(name)
    if found is None:
        return None

    def arg(neutral: str) -> Any:
        own = found.own(neutral)
        return args.get(own) if own is not None else None

    if kind == SHELL:
        if _text(arg("command")) is None:
            return None
        timeout = _number(arg("timeout_ms"))
        return Call(SHELL, _drop_none({"command": arg("command"),
                                       "timeout_ms": timeout * row.timeout_unit_ms if timeout else None,
                                       "workdir": _text(arg("workdir")),
                                       "description": _text(arg("description"))}))
    if kind == PLAN:
        items = arg("items")
        if not isinstance(items, list):
            return None
        text, status = found.own("text") or "", found.own("status") or ""
        return Call(PLAN, _drop_none({
            "items": [{"text": str(i.get(text, "")),
                       "status": row.neutral_status(str(i.get(status, "pending")))}
                      for i in items if isinstance(i, dict)],
            "explanation": _text(arg("explanation"))}))
    path = _text(arg("path"))
    if path is None:
        return None
    if kind == READ:
        offset, limit, end = _number(arg("offset")), _number(arg("limit")), _number(arg("end"))
        span = arg("range")
        if isinstance(span, list) and span and all(_number(n) is not None for n in span):
            offset = span[0]      # [first, last] from 1 (last -1: to the end)
            end = span[1] if len(span) > 1 and span[1] != -1 else None
        if limit is None and end is not None:
            limit = end - (offset if offset is not None else row.offset_base) + 1
        return Call(READ, _drop_none({"path": path,
                                      "offset": offset + 1 - row.offset_base if offset is not None else None,
                                      "limit": limit}))
    if kind == WRITE and _text(arg("content")) is not None:
        return Call(WRITE, {"path": path, "content": arg("content")})
    if kind == EDIT:
        nested = arg("edits")
        raw = nested if isinstance(nested, list) else [nested if isinstance(nested, dict) else args]
        own = {key: found.own(key) or key for key in ("old", "new", "all")}
        edits = [{"old": e.get(own["old"]), "new": e.get(own["new"]), "all": bool(e.get(own["all"]))}
                 for e in raw if isinstance(e, dict)]
        if edits and all(_text(e["old"]) is not None and _text(e["new"]) is not None for e in edits):
            return Call(EDIT, {"path": path, "edits": edits})
    return None


READERS: dict[str, Callable[[str, dict[str, Any]], Any]] = {
    "claude_code": _read_claude, "codex": _read_codex, "pi": _read_pi}


def _reader(agent: str) -> Callable[[str, dict[str, Any]], Any] | None:
    if agent in READERS:
        return READERS[agent]
    row = ROWS.get(agent)
    return (lambda name, args: _read_row(row, name, args)) if row is not None else None


def read_call(agent: str, name: str, args: Any) -> list[Call] | None:
    """A call of `agent`'s tool `name` in neutral form (several for a Codex patch that
    touches several files), or None when it has no shared kind."""
    reader = _reader(agent)
    if reader is None or not isinstance(args, dict):
        return None
    found = reader(name, args)
    if found is None:
        return None
    return found if isinstance(found, list) else [found]


# ---------------------------------------------------------------- writing calls
def _write_claude(call: Call, cwd: str) -> tuple[str, dict[str, Any]] | None:
    a = call.args
    if call.kind == SHELL:
        command = a["command"]
        if a.get("workdir") and a["workdir"] != cwd:
            command = f"cd {shlex.quote(a['workdir'])} && {command}"
        return "Bash", _drop_none({"command": command, "description": a.get("description"),
                                   "timeout": a.get("timeout_ms")})
    if call.kind == READ:
        return "Read", _drop_none({"file_path": a["path"], "offset": a.get("offset"),
                                   "limit": a.get("limit")})
    if call.kind == WRITE:
        return "Write", {"file_path": a["path"], "content": a["content"]}
    if call.kind == EDIT:
        edits = a["edits"]
        if len(edits) != 1:
            return None
        edit = edits[0]
        out = {"file_path": a["path"], "old_string": edit["old"], "new_string": edit["new"]}
        if edit.get("all"):
            out["replace_all"] = True
        return "Edit", out
    if call.kind == PLAN:
        return "TodoWrite", {"todos": [{"content": i["text"], "status": i["status"],
                                        "activeForm": i["text"]} for i in a["items"]]}
    return None


def _write_codex(call: Call, cwd: str) -> tuple[str, dict[str, Any]] | None:
    a = call.args
    if call.kind == SHELL:
        return "exec_command", _drop_none({"cmd": a["command"], "workdir": a.get("workdir")})
    if call.kind in (WRITE, EDIT):
        if any(e.get("all") for e in a.get("edits") or []):
            return None      # a patch replaces one place; "replace all" has no patch form
        return "apply_patch", {"input": make_patch([call])}
    if call.kind == PLAN:
        return "update_plan", _drop_none({"explanation": a.get("explanation"),
                                          "plan": [{"step": i["text"], "status": i["status"]}
                                                   for i in a["items"]]})
    return None


def _write_pi(call: Call, cwd: str) -> tuple[str, dict[str, Any]] | None:
    a = call.args
    if call.kind == SHELL:
        command = a["command"]
        if a.get("workdir") and a["workdir"] != cwd:
            command = f"cd {shlex.quote(a['workdir'])} && {command}"
        timeout = a.get("timeout_ms")
        return "bash", _drop_none({"command": command,
                                   "timeout": timeout / 1000 if timeout else None})
    if call.kind == READ:
        return "read", _drop_none({"path": a["path"], "offset": a.get("offset"),
                                   "limit": a.get("limit")})
    if call.kind == WRITE:
        return "write", {"path": a["path"], "content": a["content"]}
    if call.kind == EDIT:
        if any(e.get("all") for e in a["edits"]):
            return None      # pi's edit replaces one unique place
        return "edit", {"path": a["path"], "edits": [{"oldText": e["old"], "newText": e["new"]}
                                                     for e in a["edits"]]}
    return None


def _write_row(row: Row, call: Call, cwd: str) -> tuple[str, dict[str, Any]] | None:
    """A call as an agent of ROWS writes it, by its row (None: it has no such tool, or the
    call does not fit it)."""
    found = row.tool(call.kind)
    if found is None:
        return None
    a = call.args
    out: dict[str, Any] = {}

    def put(neutral: str, value: Any) -> bool:
        own = found.own(neutral)
        if own is None:
            return False
        if value is not None:
            out[own] = value
        return True

    if call.kind == SHELL:
        command = a["command"]
        workdir = a.get("workdir")
        if workdir and workdir != cwd and found.own("workdir") is None:
            command = f"cd {shlex.quote(workdir)} && {command}"
        put("command", command)
        put("workdir", workdir if workdir and workdir != cwd else None)
        put("description", a.get("description"))
        timeout = a.get("timeout_ms")
        put("timeout_ms", _whole(timeout / row.timeout_unit_ms) if timeout else None)
        return found.name, out
    if call.kind == PLAN:
        text, status, item_id = found.own("text"), found.own("status"), found.own("id")
        items = []
        for index, item in enumerate(a["items"], 1):
            one = {text or "text": item["text"], status or "status": row.status(item["status"]),
                   **dict(row.item_defaults)}
            if item_id:
                one[item_id] = str(index)
            items.append(one)
        put("items", items)
        put("explanation", a.get("explanation"))
        return found.name, out
    path = a["path"]
    if row.absolute_paths and cwd and not path.startswith("/"):
        path = f"{cwd.rstrip('/')}/{path}"
    put("path", path)
    if call.kind == READ:
        offset, limit = a.get("offset"), a.get("limit")
        if found.own("range") is not None:
            if offset is not None or limit is not None:
                first = offset if offset is not None else 1
                put("range", [_whole(first), _whole(first + limit - 1) if limit else -1])
            return found.name, out
        if found.own("end") is not None and limit is not None:
            offset = offset if offset is not None else 1      # a range: from line 1
            put("end", _whole(offset + limit - 1))
        put("offset", offset - 1 + row.offset_base if offset is not None else None)
        put("limit", limit)
    elif call.kind == WRITE:
        put("content", a["content"])
    elif call.kind == EDIT:
        edits = a["edits"]
        nested = found.own("edits")
        if (len(edits) != 1 and nested is None) or \
                (any(e.get("all") for e in edits) and found.own("all") is None):
            return None      # several edits, or "replace all" it cannot say: generic
        own = {key: found.own(key) for key in ("old", "new", "all")}
        items = [{own["old"]: e["old"], own["new"]: e["new"],
                  **({own["all"]: True} if e.get("all") else {})} for e in edits]
        if nested is not None:
            out[nested] = items[0] if len(items) == 1 else items
        else:
            out.update(items[0])
    return found.name, out


WRITERS: dict[str, Callable[[Call, str], tuple[str, dict[str, Any]] | None]] = {
    "claude_code": _write_claude, "codex": _write_codex, "pi": _write_pi}


def _writer(agent: str) -> Callable[[Call, str], tuple[str, dict[str, Any]] | None] | None:
    if agent in WRITERS:
        return WRITERS[agent]
    row = ROWS.get(agent)
    return (lambda call, cwd: _write_row(row, call, cwd)) if row is not None else None


@dataclass
class Mapped:
    """A call as the target writes it: its name and arguments, and whether it is the
    target's own tool (`kind`) or kept generic (kind None)."""

    name: str
    args: dict[str, Any]
    kind: str | None = None


def map_call(source: str, target: str, name: str, args: Any, cwd: str = "") -> Mapped:
    """A call of `source`'s tool as `target` writes it: its own tool where there is an
    equivalent, else the same call, generic."""
    if source == target:
        return Mapped(name, args if isinstance(args, dict) else {"input": args})
    calls = read_call(source, name, args)
    writer = _writer(target)
    if calls and writer is not None:
        if len(calls) > 1 and target == "codex" and all(c.kind in (WRITE, EDIT) for c in calls):
            return Mapped("apply_patch", {"input": make_patch(calls)}, calls[0].kind)
        if len(calls) == 1:
            written = writer(calls[0], cwd)
            if written is not None:
                return Mapped(written[0], written[1], calls[0].kind)
    return Mapped(name, args if isinstance(args, dict) else {"input": args})


def is_custom(target: str, name: str) -> bool:
    """Whether the target records a call of this tool as a free-form (custom) call."""
    return name in CUSTOM_TOOLS.get(target, ())


def arguments_text(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
