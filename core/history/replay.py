"""Replay: the context an agent resumes with, from a root-to-head path of entries.

The newest compaction on the path wins: its summary first, then the entries from its
`firstKeptEntryId` on (the compaction entry itself and older ones are markers, not
messages). Branch summaries and custom messages take part as messages.

Replay never raises on stored data. A compaction whose first kept entry cannot be found
on the path (an id of another branch, or a value that is not an id at all, from a log or
an older arbor) makes the replay fall back to every message of the path, as the app
falls back to the raw entries, and `ReplayState.warning` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from core.model.entries import BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry
from core.model.errors import ReplayError


@dataclass
class ReplayState:
    messages: list[dict[str, Any]] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    compaction: Entry | None = None
    warning: str | None = None  # set when the compaction could not be applied (see the doc)


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
        message = entry.data.get("message")
        if isinstance(message, dict) and message:
            return dict(message)
        return {"role": "custom", "content": entry.data.get("content", "")}
    return None


def first_kept_id(compaction: Entry) -> str | None:
    """The id of the compaction's first kept entry; None when it keeps nothing before itself.
    ReplayError when the stored value is not an entry id at all."""
    kept_id = compaction.data.get("firstKeptEntryId")
    if kept_id is None or kept_id == "":
        return None
    if not isinstance(kept_id, str):
        raise ReplayError(
            f"compaction {compaction.id} names its first kept entry with a "
            f"{type(kept_id).__name__}, not an entry id; the branch is shown without it")
    return kept_id


def off_path(compaction: Entry, kept_id: str) -> ReplayError:
    """The error for a kept entry that is not on the path being replayed."""
    return ReplayError(
        f"compaction {compaction.id} keeps entry {kept_id}, which is not on this branch's "
        "path; the branch is shown without it")


def first_kept_position(path: Sequence[Entry], compaction_index: int) -> int:
    """Index in `path` where a compaction's kept entries start; ReplayError if it is off the path."""
    compaction = path[compaction_index]
    kept_id = first_kept_id(compaction)
    if kept_id is None:
        return compaction_index + 1
    for index in range(compaction_index, -1, -1):
        if path[index].id == kept_id:
            return index
    raise off_path(compaction, kept_id)


def repeats_summary(entry: Entry | None, compaction: Entry) -> bool:
    """Whether `entry` is the compaction's summary written again as a message right after
    it (Claude Code's "This session is being continued…" user message): replay shows the
    summary once, as the compaction's."""
    if entry is None or entry.type != MESSAGE or entry.parent_seq != compaction.seq:
        return False
    message = entry.message
    return message is not None and message.get("kind") == "compaction_summary"


def replay_kept(compaction: Entry | None, kept: Sequence[Entry]) -> ReplayState:
    state = ReplayState(compaction=compaction)
    if compaction is not None:
        state.messages.append(compaction_summary_message(compaction))
        state.entry_ids.append(compaction.id)
    for entry in kept:
        if entry.type == COMPACTION:
            continue
        if compaction is not None and repeats_summary(entry, compaction):
            continue
        message = as_message(entry)
        if message is not None:
            state.messages.append(message)
            state.entry_ids.append(entry.id)
    return state


def replay_fallback(path: Sequence[Entry], error: ReplayError) -> ReplayState:
    """Every message of the path, compactions left out, and why (see the module doc)."""
    state = replay_kept(None, path)
    state.warning = str(error)
    return state


def replay_entries(path: Sequence[Entry]) -> ReplayState:
    """Replay a whole root-to-head path held in memory."""
    for index in range(len(path) - 1, -1, -1):
        if path[index].type == COMPACTION:
            try:
                start = first_kept_position(path, index)
            except ReplayError as error:
                return replay_fallback(path, error)
            return replay_kept(path[index], path[start:])
    return replay_kept(None, path)
