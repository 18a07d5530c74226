"""Which files a tool call changes, read from the call's input alone (never from the disk).

What an agent changed is in its tool calls: Claude Code's Edit / MultiEdit / Write /
NotebookEdit, pi's edit / write, Codex's `apply_patch` (as its own tool or run through the
shell), and shell commands that write files. A shell command is read as a shell would
split it, for the usual ways of writing a file: `>` and `>>` redirections, `tee`, `rm`,
`mv`, `cp`, `touch`, `sed -i`, `perl -i`, `truncate`, `git mv` / `git rm`, `mkdir` is
not a file. That is a reading of the command, not a record of what ran: a command built
by a script, a variable or a program of its own (`python fix.py`) is not seen through.
Line counts are those of the call's input (an edit's old and new text, a patch's hunk
lines, a written file's lines); where the input does not say, they are unknown (None).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterator

from core.model.entries import TOOL_CALL_BLOCKS, block_type

EDIT_TOOLS = frozenset({"edit", "str_replace", "replace", "str_replace_based_edit_tool",
                        "str_replace_editor", "notebookedit", "notebook_edit"})
MULTI_EDIT_TOOLS = frozenset({"multiedit", "multi_edit"})
WRITE_TOOLS = frozenset({"write", "write_file", "create_file"})
PATCH_TOOLS = frozenset({"apply_patch"})
SHELL_TOOLS = frozenset({"bash", "shell", "exec_command", "local_shell", "shell_command",
                         "run_terminal_cmd", "execute_command", "container.exec"})
PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "target_file")

# Edits longer than this many lines are counted without a diff (old lines removed, new
# lines added): difflib is quadratic at worst.
DIFF_LINES = 2000


@dataclass(frozen=True, slots=True)
class FileChange:
    """One change to one file by one tool call."""

    path: str
    action: str              # "edited", "written", "created", "deleted", "moved", "shell"
    added: int | None = None     # lines added, None when the input does not say
    removed: int | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call found in a message: its tool's name and its arguments as a dict."""

    name: str
    args: dict[str, Any]
    raw: Any = None          # the arguments as given (a string for custom tools)


def _as_args(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def calls_in(message: dict[str, Any] | None) -> Iterator[Call]:
    """The tool calls of a message: content blocks of any agent's shape, and a LangChain or
    OpenAI `tool_calls` list."""
    if not isinstance(message, dict):
        return
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block_type(block) in TOOL_CALL_BLOCKS:
                raw = block.get("arguments", block.get("input", block.get("args")))
                name = block.get("name")
                yield Call(name if isinstance(name, str) else "", _as_args(raw), raw)
    listed = message.get("tool_calls")
    if isinstance(listed, list):
        for call in listed:
            if not isinstance(call, dict):
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            raw = function.get("arguments", function.get("args"))
            name = function.get("name")
            yield Call(name if isinstance(name, str) else "", _as_args(raw), raw)


def _path(args: dict[str, Any]) -> str:
    for key in PATH_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _text(args: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return ""


def line_counts(old: str, new: str) -> tuple[int, int]:
    """(added, removed) lines from `old` to `new`."""
    a, b = old.splitlines(), new.splitlines()
    if len(a) + len(b) > DIFF_LINES:
        return len(b), len(a)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def _edit_pairs(args: dict[str, Any]) -> list[tuple[str, str]]:
    edits = args.get("edits")
    if isinstance(edits, list):
        return [(_text(e, "old_string", "oldText", "old_str"), _text(e, "new_string", "newText", "new_str"))
                for e in edits if isinstance(e, dict)]
    return [(_text(args, "old_string", "oldText", "old_str"),
             _text(args, "new_string", "newText", "new_str", "new_source", "insert_text"))]


# ------------------------------------------------------------------ patches
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\1\s*(?:\n|$)", re.S)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_MOVE_TO = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
_PATCH_ACTIONS = {"Add": "created", "Update": "edited", "Delete": "deleted"}


def patch_of(call: Call) -> str | None:
    """The patch text an apply_patch call carries (its own tool, or run through a shell)."""
    if isinstance(call.raw, str) and "*** Begin Patch" in call.raw:
        return call.raw
    for key in ("input", "patch"):
        value = call.args.get(key)
        if isinstance(value, str) and "*** Begin Patch" in value:
            return value
    command = call.args.get("command", call.args.get("cmd"))
    if isinstance(command, list) and command and command[0] == "apply_patch":
        return next((part for part in command[1:] if isinstance(part, str)
                     and "*** Begin Patch" in part), None)
    if isinstance(command, list) and len(command) >= 3 and command[1] in ("-c", "-lc"):
        command = command[2]
    if isinstance(command, str) and command.lstrip().startswith("apply_patch"):
        found = _HEREDOC.search(command)
        if found and "*** Begin Patch" in found.group(2):
            return found.group(2)
        rest = command.lstrip()[len("apply_patch"):]
        return rest if "*** Begin Patch" in rest else None
    return None


def patch_changes(patch: str) -> list[FileChange]:
    """Each file an apply_patch patch adds, updates, deletes or moves, with its + and - lines."""
    out: list[FileChange] = []
    current: list[Any] | None = None   # [path, action, added, removed]

    def close() -> None:
        if current is not None:
            out.append(FileChange(current[0], current[1],
                                  None if current[1] == "deleted" else current[2],
                                  None if current[1] == "deleted" else current[3]))

    for line in patch.splitlines():
        header = _PATCH_FILE.match(line)
        if header:
            close()
            current = [header.group(2), _PATCH_ACTIONS[header.group(1)], 0, 0]
            continue
        if current is None:
            continue
        moved = _MOVE_TO.match(line)
        if moved:
            out.append(FileChange(current[0], "moved"))
            current[0], current[1] = moved.group(1), "edited"
        elif line.startswith("*** "):
            continue
        elif line.startswith("+"):
            current[2] += 1
        elif line.startswith("-"):
            current[3] += 1
    close()
    return out


# -------------------------------------------------------------------- shell
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", "(", ")", "{", "}", "then", "do", "else"})
_REDIRECT = re.compile(r"^(\d*|&)(>>?|>\|)(.*)$")
_QUIET = ("/dev/", "&")


def _shell_words(line: str, *, whole: bool = True) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:
        if not whole:
            return []       # an unclosed quote in this piece: not read
    # an unclosed quote somewhere: the commands of the line one by one, but that one
    words: list[str] = []
    for piece in re.split(r";|&&|\|\|?", line):
        words.extend(_shell_words(piece, whole=False) + [";"])
    return words


def _command_lines(command: str) -> Iterator[str]:
    """The command's lines without the bodies of here-documents."""
    lines = command.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        yield line
        for marker in re.findall(r"<<-?\s*['\"]?(\w+)['\"]?", line):
            while index < len(lines) and lines[index].strip() != marker:
                index += 1
            index += 1


def _operands(words: list[str]) -> list[str]:
    return [w for w in words if not w.startswith("-")]


# a command without any of these writes no file the way shell_changes reads it (most
# commands an agent runs: tests, ls, grep, cat): not split into words at all
_MAY_WRITE = re.compile(r">|\b(?:tee|rm|mv|cp|touch|sed|perl|truncate)\b")


def shell_changes(command: str) -> list[FileChange]:
    """The files a shell command line writes, moves or deletes, as far as its words say."""
    if not _MAY_WRITE.search(command):
        return []
    return list(_shell_changes(command))


@lru_cache(maxsize=4096)
def _shell_changes(command: str) -> tuple[FileChange, ...]:
    """(Agents run the same commands again and again: shlex reads a character at a time.)"""
    out: list[FileChange] = []
    for line in _command_lines(command):
        words = _shell_words(line)
        if not words:
            continue
        simple: list[str] = []
        for word in words + [";"]:
            if word in _SEPARATORS:
                out.extend(_simple_changes(simple))
                simple = []
            else:
                simple.append(word)
    seen: set[tuple[str, str]] = set()
    unique = []
    for change in out:
        if (change.path, change.action) not in seen:
            seen.add((change.path, change.action))
            unique.append(change)
    return tuple(unique)


def _simple_changes(words: list[str]) -> list[FileChange]:
    """The changes of one simple command (its words, redirections included)."""
    out: list[FileChange] = []
    args: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word in (">", ">>", ">|") or (word in ("1", "2") and index < len(words)
                                         and words[index] in (">", ">>")):
            if word in ("1", "2"):
                index += 1
            target = words[index] if index < len(words) else ""
            index += 1
            if target and not target.startswith(_QUIET):
                out.append(FileChange(target, "shell"))
            continue
        if word == "<":
            index += 1
            continue
        args.append(word)
    while args and "=" in args[0] and not args[0].startswith(("=", "-")):
        args = args[1:]              # VAR=value before the command
    while args and args[0] in ("sudo", "env", "command", "nohup", "time", "xargs"):
        args = args[1:]
    if not args:
        return out
    program = args[0].rsplit("/", 1)[-1]
    rest = args[1:]
    if program == "git" and rest and rest[0] in ("mv", "rm"):
        program, rest = rest[0], rest[1:]
    if program == "rm":
        out.extend(FileChange(path, "deleted") for path in _operands(rest))
    elif program == "mv":
        paths = _operands(rest)
        if len(paths) >= 2:
            out.extend(FileChange(path, "moved") for path in paths[:-1])
            out.append(FileChange(paths[-1], "shell"))
    elif program in ("cp", "touch", "truncate", "tee"):
        paths = _operands(rest)
        if program == "truncate":
            paths = [p for i, p in enumerate(rest) if not p.startswith("-")
                     and not (i and rest[i - 1] in ("-s", "--size"))]
        if program == "cp":
            paths = paths[-1:] if len(paths) >= 2 else []
        out.extend(FileChange(path, "shell") for path in paths)
    elif program in ("sed", "perl") and any(w == "-i" or w.startswith(("-i", "--in-place"))
                                            or (program == "perl" and w.startswith("-") and "i" in w)
                                            for w in rest if w.startswith("-")):
        operands, has_script, skip = [], False, False
        for word in rest:
            if skip:
                skip = False
            elif word in ("-e", "--expression", "-f", "--file"):
                has_script = skip = True     # the script is the next word
            elif not word.startswith("-"):
                operands.append(word)
        # the first operand is the script unless -e or -f gave it
        out.extend(FileChange(path, "shell") for path in (operands if has_script else operands[1:]))
    return out


# -------------------------------------------------------------------- calls
def changes_of(call: Call) -> list[FileChange]:
    """The files one tool call changes, by its tool's name and input."""
    name = call.name.lower()
    args = call.args
    patch = patch_of(call) if name in PATCH_TOOLS or name in SHELL_TOOLS else None
    if patch is not None:
        return patch_changes(patch)
    if name in EDIT_TOOLS or name in MULTI_EDIT_TOOLS:
        path = _path(args)
        if not path:
            return []
        command = args.get("command")
        if command == "view":
            return []                # the editor tool also reads
        if command == "create":
            text = _text(args, "file_text", "content")
            return [FileChange(path, "written", len(text.splitlines()), None)]
        added = removed = 0
        for old, new in _edit_pairs(args):
            plus, minus = line_counts(old, new)
            added += plus
            removed += minus
        return [FileChange(path, "edited", added, removed)]
    if name in WRITE_TOOLS:
        path = _path(args)
        if not path:
            return []
        text = _text(args, "content", "file_text", "text", "contents")
        return [FileChange(path, "written", len(text.splitlines()), None)]
    if name in SHELL_TOOLS:
        command = args.get("command", args.get("cmd"))
        if isinstance(command, list) and all(isinstance(part, str) for part in command):
            if len(command) >= 3 and command[1] in ("-c", "-lc"):
                command = command[2]
            else:
                command = shlex.join(command)
        if not isinstance(command, str) and isinstance(call.raw, str) and not args:
            command = call.raw
        return shell_changes(command) if isinstance(command, str) else []
    return []
