"""What the app's keys do to the store. Each is one transaction; none copies or deletes an entry."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from .entries import BRANCH_SUMMARY, COMPACTION, MESSAGE, Entry, message_tokens
from .errors import ArborError, NotFound
from .models import InternalSession
from .replay import compaction_summary_message
from .store import Store
from .summariser import Summariser, builtin_summary

DEFAULT_KEEP_RECENT_TOKENS = 20_000

EntryRef = int | str | Entry


def _branch(store: Store, internal_session_id: int) -> InternalSession:
    branch = store.get_internal_session(internal_session_id)
    if branch is None:
        raise NotFound(f"branch {internal_session_id} does not exist")
    return branch


def resolve_entry(store: Store, ref: EntryRef, external_session_id: int | None = None) -> Entry:
    """An entry by seq (int), by Entry, or by its id (str) within a session."""
    if isinstance(ref, Entry):
        return ref
    if isinstance(ref, int):
        entry = store.get_entry(ref)
    elif external_session_id is not None:
        entry = store.find_entry(external_session_id, ref)
    else:
        seqs = store.seqs_with_entry_id(ref, limit=2)
        if len(seqs) > 1:
            raise ArborError(f"entry id {ref!r} is in more than one session; give the session")
        entry = store.get_entry(seqs[0]) if seqs else None
    if entry is None or (external_session_id is not None and entry.external_session_id != external_session_id):
        raise NotFound(f"entry {ref!r} does not exist")
    return entry


def branch(store: Store, internal_session_id: int, at_entry_id: EntryRef | None = None, *,
           name: str = "") -> InternalSession:
    """A new current branch whose head is `at_entry_id` (default: the source's head)."""
    with store.transaction():
        source = _branch(store, internal_session_id)
        if at_entry_id is None:
            at_seq = source.head_seq
        else:
            at_seq = resolve_entry(store, at_entry_id, source.external_session_id).seq
        return store.create_internal_session(
            source.external_session_id, head_seq=at_seq, fork_seq=at_seq,
            parent_session_id=source.id, session_state=copy.deepcopy(source.session_state),
            name=name, is_current=True,
            metadata={"branched_from": source.langgraph_session_id},
        )


def left_behind(store: Store, internal_session_id: int, at_seq: int | None) -> list[Entry]:
    """The entries of a branch past its common ancestor with `at_seq`: what a rollback leaves."""
    source = _branch(store, internal_session_id)
    if source.head_seq is None:
        return []
    if at_seq is None:
        return store.path_entries(source.head_seq)
    depth = min(store.get_entry(at_seq).depth, store.path_length(source.head_seq) - 1)
    while depth >= 0 and store.entry_at_depth(source.head_seq, depth) != store.entry_at_depth(at_seq, depth):
        depth -= 1
    return store.path_entries(source.head_seq, depth + 1)


def _state_at(store: Store, head_seq: int, depth: int) -> dict[str, Any] | None:
    """The session_state of the newest checkpoint on the path at or before `depth`."""
    best = None
    for cp in store.checkpoints_for_session(store.get_entry(head_seq).external_session_id):
        if cp.entry_seq is None:
            continue
        entry = store.get_entry(cp.entry_seq)
        if entry.depth <= depth and store.entry_at_depth(head_seq, entry.depth) == entry.seq:
            if best is None or (entry.depth, cp.id) > best[0]:
                best = ((entry.depth, cp.id), cp.session_state)
    return copy.deepcopy(best[1]) if best else None


def rollback(store: Store, internal_session_id: int, *, checkpoint_id: int | None = None,
             entry_id: EntryRef | None = None, summary: str | None = None) -> InternalSession:
    """A new current branch at a checkpoint or entry; the old branch stays as it was.

    At a checkpoint, its `session_state` is restored and `branch_point_checkpoint_id` set.
    At an entry, the state of the newest checkpoint at or before it on the path is restored
    (or the source's state when there is none). With a summary, a `branch_summary` entry
    of what was left behind starts the new branch.
    """
    if (checkpoint_id is None) == (entry_id is None):
        raise ValueError("roll back to exactly one of a checkpoint or an entry")
    with store.transaction():
        source = _branch(store, internal_session_id)
        checkpoint = None
        if checkpoint_id is not None:
            checkpoint = store.get_checkpoint(checkpoint_id)
            if checkpoint is None or checkpoint.external_session_id != source.external_session_id:
                raise NotFound(f"checkpoint {checkpoint_id} does not exist in this session")
            at_seq = checkpoint.entry_seq
            state = copy.deepcopy(checkpoint.session_state)
        else:
            at = resolve_entry(store, entry_id, source.external_session_id)
            at_seq = at.seq
            state = _state_at(store, at_seq, at.depth)
            if state is None:
                state = copy.deepcopy(source.session_state)
        new = store.create_internal_session(
            source.external_session_id, head_seq=at_seq, fork_seq=at_seq,
            parent_session_id=source.id,
            branch_point_checkpoint_id=checkpoint.id if checkpoint else None,
            session_state=state, is_current=True,
            metadata={"rolled_back_from": source.langgraph_session_id,
                      "left_head": source.head_id},
        )
        if summary:
            store.append_to_branch(new.id, BRANCH_SUMMARY,
                                   {"summary": summary, "fromId": source.head_id})
        return store.get_internal_session(new.id)


def set_label(store: Store, entry_id: EntryRef, label: str | None, *,
              external_session_id: int | None = None) -> None:
    """Label an entry; None or "" clears its label. Every change is kept in the label log."""
    entry = resolve_entry(store, entry_id, external_session_id)
    store.add_label(entry.external_session_id, label, target_seq=entry.seq)


def set_branch_label(store: Store, internal_session_id: int, label: str | None) -> None:
    source = _branch(store, internal_session_id)
    store.add_label(source.external_session_id, label, target_branch=source.id)


def make_current(store: Store, internal_session_id: int) -> None:
    if not store.set_current(internal_session_id):
        raise NotFound(f"branch {internal_session_id} does not exist")


@dataclass
class CompactionPlan:
    """What a compaction would do: shown before it is confirmed."""

    internal_session_id: int
    summarised: list[Entry] = field(default_factory=list)
    first_kept: Entry | None = None
    kept_count: int = 0
    previous: Entry | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    summary: str = ""

    @property
    def messages_summarised(self) -> int:
        return sum(1 for e in self.summarised if e.type == MESSAGE)


def _cut_point(path: list[Entry], keep_recent_tokens: int) -> int:
    """The index of the first kept entry: the newest turns within the budget, starting at a
    user message when one is in range, else at an assistant message (never at a tool result,
    so that no result is kept without its call); len(path) when not even the newest
    message fits."""
    budget = 0
    index = len(path)
    for position in range(len(path) - 1, -1, -1):
        cost = message_tokens(path[position].message) if path[position].type == MESSAGE else 0
        if budget + cost > keep_recent_tokens:
            break
        budget += cost
        index = position
    for wanted in ("user", "assistant"):
        for position in range(index, len(path)):
            message = path[position].message
            if message is not None and message.get("role") == wanted:
                return position
    return len(path)


def plan_compaction(store: Store, internal_session_id: int, *,
                    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
                    summariser: Summariser | None = builtin_summary) -> CompactionPlan:
    source = _branch(store, internal_session_id)
    plan = CompactionPlan(internal_session_id)
    if source.head_seq is None:
        return plan
    with store.reading():
        previous, start = store.replay_start(source.head_seq)
        path = store.path_entries(source.head_seq, start)
    plan.previous = previous
    context = [e for e in path if e.type != COMPACTION]
    cut = _cut_point(context, keep_recent_tokens)
    plan.summarised = context[:cut]
    plan.first_kept = context[cut] if cut < len(context) else None
    plan.kept_count = len(context) - cut
    previous_tokens = message_tokens(compaction_summary_message(previous)) if previous else 0
    all_tokens = sum(message_tokens(e.message) for e in context if e.type == MESSAGE)
    kept_tokens = sum(message_tokens(e.message) for e in context[cut:] if e.type == MESSAGE)
    plan.tokens_before = previous_tokens + all_tokens
    if plan.summarised and summariser is not None:
        messages = [e.message for e in plan.summarised if e.message is not None]
        previous_summary = str(previous.data.get("summary", "")) if previous else None
        plan.summary = summariser(messages, previous_summary)
    plan.tokens_after = message_tokens({"content": plan.summary}) + kept_tokens
    return plan


def compact(store: Store, internal_session_id: int, *, summary: str | None = None,
            keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
            summariser: Summariser = builtin_summary) -> str:
    """Append a compaction entry to a branch and return its id. Nothing is deleted."""
    with store.transaction():
        plan = plan_compaction(store, internal_session_id, keep_recent_tokens=keep_recent_tokens,
                               summariser=None if summary else summariser)
        if not plan.summarised:
            raise ArborError("nothing to compact: the whole branch fits in the kept budget")
        data = {
            "summary": summary if summary else plan.summary,
            "firstKeptEntryId": plan.first_kept.id if plan.first_kept else "",
            "tokensBefore": plan.tokens_before,
            "lastSummarizedEntryId": plan.summarised[-1].id,
        }
        if plan.previous is not None:
            data["previousCompactionId"] = plan.previous.id
        return store.append_to_branch(internal_session_id, COMPACTION, data).id
