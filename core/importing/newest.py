"""The order of a first import (`import_paths(newest_first=True)`): the files newest first,
each sub-agent's file after the file of the session it belongs to, and the head, the files
of the newest sessions, which the import reads before anything else.

A sub-agent's file is one in a `subagents` folder (Claude Code's
`<session>/subagents/agent-<id>.jsonl`, Qwen Code's `subagents/<session>/agent-*.jsonl`,
Kimi's `<session>/subagents/<id>/wire.jsonl`): the sessions list shows it under its
session, not as one of its own, so it is not counted as a session, and its session is read
first (an agent writes a sub-agent's file while the session's own file waits for the
answer, so the sub-agent's is often the newer: read first, it would stand alone until its
session came)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

SUBAGENTS = "subagents"


def is_subagent(path: str | os.PathLike) -> bool:
    """Whether `path` is a sub-agent's log (by its folders, see the module doc)."""
    parts = os.fspath(path).split(os.sep)
    return SUBAGENTS in parts[-3:-1]


def _parents_of(path: Path) -> tuple[str, ...]:
    """Where the log of the session a sub-agent's file belongs to may be, by agent."""
    folder = path.parent
    if folder.name == SUBAGENTS:   # Claude Code: <project>/<session>/subagents/agent-x.jsonl
        return (str(folder.parent) + ".jsonl",)
    # Qwen Code: <chats>/subagents/<session>/agent-x.jsonl; Kimi: <session>/subagents/<id>/wire.jsonl
    above = folder.parent.parent
    return (str(above / (folder.name + ".jsonl")), str(above / path.name))


def parents_first(found: list) -> list:
    """`found` (files.Found, newest first) with each sub-agent's file after its session's
    (the session's file moved up to just before it; the rest keep their order)."""
    where: dict[str, int] | None = None
    moved: dict[int, list[int]] = {}     # a sub-agent's index -> its session's, read before
    taken: set[int] = set()
    for index, item in enumerate(found):
        if not is_subagent(item.name):
            continue
        if where is None:
            where = {str(other.path): number for number, other in enumerate(found)}
        for candidate in _parents_of(item.path):
            parent = where.get(candidate)
            if parent is not None and parent > index and parent not in taken:
                moved.setdefault(index, []).append(parent)
                taken.add(parent)
                break
    if not moved:
        return found
    out = []
    for index, item in enumerate(found):
        if index in taken:
            continue
        out.extend(found[parent] for parent in moved.get(index, ()))
        out.append(item)
    return out


def head_length(paths: list, sessions: int) -> int:
    """How many of `paths` (in order) hold the first `sessions` sessions: up to and with the
    `sessions`-th file that is not a sub-agent's, and the sub-agents' files among them."""
    seen = 0
    for index, path in enumerate(paths):
        if not is_subagent(path):
            seen += 1
            if seen == sessions:
                return index + 1
    return len(paths)
