"""Summaries for compaction and branch summaries.

`builtin_summary` works offline and is extractive: the goal (first user request), files and
tools touched, and the latest state. `CommandSummariser` hands the transcript to any command
on standard input and takes its standard output.

A summariser gets the messages as a list, or as a `Transcript`: a long range of a branch
that is read only as far as it is looked at. The built-in one looks at the first
GOAL_WINDOW messages and the last RECENT_WINDOW, so that summarising 100,000 messages reads
a few thousand; a command gets them all.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections import Counter
from typing import Any, Iterable, Iterator, Protocol, Sequence, runtime_checkable

from core.model.entries import TOOL_CALL_BLOCKS, content_text
from core.model.errors import ArborError

_PATH_KEYS = ("path", "file_path", "filePath", "file", "filename", "notebook_path")
_PATH_IN_TEXT = re.compile(r"(?<![\w/.-])((?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8})(?![\w/])")


GOAL_WINDOW = 200     # messages at the start searched for the goal
RECENT_WINDOW = 1000  # messages at the end searched for files, tools and the latest state


@runtime_checkable
class Transcript(Protocol):
    """Messages read on demand: their number, the first n, the last n, or all in order."""

    def __len__(self) -> int: ...

    def head(self, n: int) -> list[dict[str, Any]]: ...

    def tail(self, n: int) -> list[dict[str, Any]]: ...

    def __iter__(self) -> Iterator[dict[str, Any]]: ...


Messages = Sequence[dict[str, Any]] | Transcript


class Summariser(Protocol):
    def __call__(self, messages: Messages, previous_summary: str | None = None) -> str: ...


def _head(messages: Messages, n: int) -> Sequence[dict[str, Any]]:
    return messages.head(n) if isinstance(messages, Transcript) else messages[:n]


def _tail(messages: Messages, n: int) -> Sequence[dict[str, Any]]:
    if isinstance(messages, Transcript):
        return messages.tail(n)
    return messages[-n:] if len(messages) > n else messages


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _tool_calls(message: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in TOOL_CALL_BLOCKS:
                args = block.get("arguments", block.get("input", block.get("args")))
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        pass
                yield str(block.get("name", "tool")), args
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            function = call.get("function") or call
            yield str(function.get("name", "tool")), function.get("arguments")


def builtin_summary(messages: Messages, previous_summary: str | None = None) -> str:
    goal = ""
    latest = ""
    tools: Counter[str] = Counter()
    files: dict[str, None] = {}
    total = len(messages)
    for message in _head(messages, GOAL_WINDOW):
        text = content_text(message.get("content"))
        if message.get("role") == "user" and text.strip() and not message.get("kind"):
            goal = text
            break
    recent = _tail(messages, RECENT_WINDOW)
    for message in reversed(recent):
        if message.get("role") == "assistant":
            text = content_text(message.get("content"))
            if text.strip():
                latest = text
                break
    for message in recent:
        for name, args in _tool_calls(message):
            tools[name] += 1
            if isinstance(args, dict):
                for key in _PATH_KEYS:
                    if isinstance(args.get(key), str):
                        files[args[key]] = None
                command = args.get("command") or args.get("cmd")
                if isinstance(command, str):
                    for found in _PATH_IN_TEXT.findall(command):
                        files[found] = None
    parts = []
    # A section is written only when there is something to put under it: a heading "Goal"
    # over "(no user request in this part)" read as if the goal were that. What is missing
    # is said once, in the closing line.
    missing = []
    if previous_summary:
        parts.append("## Earlier\n" + _one_line(previous_summary, 600))
    if goal:
        parts.append("## Goal\n" + _one_line(goal, 400))
    elif total > GOAL_WINDOW:
        missing.append(f"no request of the user in the first {GOAL_WINDOW:,}")
    elif total:
        missing.append("no request of the user among them")
    recently = f" (in the last {len(recent):,} messages)" if total > len(recent) else ""
    if files:
        listed = list(files)[:20]
        more = f" (+{len(files) - 20} more)" if len(files) > 20 else ""
        parts.append(f"## Files touched{recently}\n" + ", ".join(listed) + more)
    if tools:
        parts.append(f"## Tools used{recently}\n" + ", ".join(f"{n} ×{c}" for n, c in tools.most_common(12)))
    if latest:
        parts.append("## Latest state\n" + _one_line(latest, 500))
    elif recently:
        missing.append(f"no reply of the assistant in the last {len(recent):,}")
    elif total:
        missing.append("no reply of the assistant")
    parts.append(f"({total:,} message{'' if total == 1 else 's'} summarised"
                 + "".join(f"; {m}" for m in missing) + ")")
    return "\n\n".join(parts)


def transcript(messages: Iterable[dict[str, Any]]) -> str:
    """Plain text of a conversation, one block per message, for an external summariser."""
    lines = []
    for message in messages:
        role = message.get("role", "?")
        text = content_text(message.get("content"))
        lines.append(f"### {role}\n{text}\n")
    return "\n".join(lines)


class CommandSummariser:
    """Runs a user's command with the transcript on stdin; its stdout is the summary."""

    def __init__(self, command: str | list[str], timeout: float = 300):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.timeout = timeout

    def __call__(self, messages: Messages, previous_summary: str | None = None) -> str:
        text = transcript(messages)  # all of them: the command decides what matters
        if previous_summary:
            text = f"### previous summary\n{previous_summary}\n\n{text}"
        try:
            done = subprocess.run(self.argv, input=text, capture_output=True, text=True,
                                  timeout=self.timeout, errors="replace")
        except FileNotFoundError:
            raise ArborError(f"summariser command not found: {self.argv[0]}") from None
        except subprocess.TimeoutExpired:
            raise ArborError(f"summariser command took longer than {self.timeout:.0f} s") from None
        if done.returncode != 0:
            detail = _one_line(done.stderr or "", 200)
            raise ArborError(f"summariser command failed with status {done.returncode}: {detail}")
        summary = done.stdout.strip()
        if not summary:
            raise ArborError("summariser command printed nothing")
        return summary


def get_summariser(command: str | None = None) -> Summariser:
    """The command given, else `ARBOR_SUMMARISER`, else the built-in one."""
    command = command or os.environ.get("ARBOR_SUMMARISER")
    return CommandSummariser(command) if command else builtin_summary
