"""Replay: the context an agent resumes with, from a root-to-head path of entries.

The newest compaction on the path wins: its summary first, then the entries from its
`firstKeptEntryId` on (the compaction entry itself and older ones are markers, not
messages). Branch summaries and custom messages take part as messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from .entries import BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry
from .errors import ReplayError


@dataclass
class ReplayState:
    messages: list[dict[str, Any]] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    compaction: Entry | None = None


def compaction_summary_message(entry: Entry) -> dict[str, Any]:
    return {
        "role": "user",
        "content": str(entry.data.get("summary", "")),
        "kind": "compaction_summary",
        "tokensBefore": entry.data.get("tokensBefore", 0),
        "timestamp": entry.timestamp,
    }


def branch_summary_message(entry: Entry) -> dict[str, Any]:
    return {
        "role": "user",
        "content": str(entry.data.get("summary", "")),
        "kind": "branch_summary",
        "fromId": entry.data.get("fromId"),
        "timestamp": entry.timestamp,
    }


def as_message(entry: Entry) -> dict[str, Any] | None:
    if entry.type == MESSAGE:
        return entry.message
    if entry.type == BRANCH_SUMMARY:
        return branch_summary_message(entry)
    if entry.type == CUSTOM_MESSAGE:
        message = dict(entry.data.get("message") or {})
        if not message:
            message = {"role": "custom", "content": entry.data.get("content", "")}
        return message
    return None


def first_kept_position(path: Sequence[Entry], compaction_index: int) -> int:
    """Index in `path` where a compaction's kept entries start; raises if it is off the path."""
    compaction = path[compaction_index]
    kept_id = compaction.data.get("firstKeptEntryId")
    if not kept_id:
        return compaction_index + 1
    for index in range(compaction_index, -1, -1):
        if path[index].id == kept_id:
            return index
    raise ReplayError(
        f"compaction {compaction.id} keeps entry {kept_id}, which is not on the path to "
        f"{path[-1].id}; showing the raw entries instead"
    )


def replay_kept(compaction: Entry | None, kept: Sequence[Entry]) -> ReplayState:
    state = ReplayState(compaction=compaction)
    if compaction is not None:
        state.messages.append(compaction_summary_message(compaction))
        state.entry_ids.append(compaction.id)
    for entry in kept:
        if entry.type == COMPACTION:
            continue
        message = as_message(entry)
        if message is not None:
            state.messages.append(message)
            state.entry_ids.append(entry.id)
    return state


def replay_entries(path: Sequence[Entry]) -> ReplayState:
    """Replay a whole root-to-head path held in memory."""
    for index in range(len(path) - 1, -1, -1):
        if path[index].type == COMPACTION:
            start = first_kept_position(path, index)
            return replay_kept(path[index], path[start:])
    return replay_kept(None, path)
