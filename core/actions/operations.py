"""What the app's keys do to the store. Each is one transaction; none copies or deletes an entry."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from core.model.entries import BRANCH_SUMMARY, COMPACTION, MESSAGE, Entry, message_tokens
from core.model.errors import ArborError, NotFound
from core.seed.models import InternalSession
from core.history.path_range import PathRange
from core.history.replay import compaction_summary_message
from core.store import Store
from core.history.summariser import Summariser, builtin_summary

DEFAULT_KEEP_RECENT_TOKENS = 20_000

EntryRef = int | str | Entry


def _branch(store: Store, internal_session_id: int) -> InternalSession:
    branch = store.branches.get(internal_session_id)
    if branch is None:
        raise NotFound(f"branch {internal_session_id} does not exist")
    return branch


def resolve_entry(store: Store, ref: EntryRef, external_session_id: int | None = None) -> Entry:
    """An entry by seq (int), by Entry, or by its id (str) within a session."""
    if isinstance(ref, Entry):
        return ref
    if isinstance(ref, int):
        entry = store.entries.get(ref)
    elif external_session_id is not None:
        entry = store.entries.find(external_session_id, ref)
    else:
        seqs = store.entries.seqs_with_id(ref, limit=2)
        if len(seqs) > 1:
            raise ArborError(f"entry id {ref!r} is in more than one session; give the session")
        entry = store.entries.get(seqs[0]) if seqs else None
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
        return store.branches.create(
            source.external_session_id, head_seq=at_seq, fork_seq=at_seq,
            parent_session_id=source.id, session_state=copy.deepcopy(source.session_state),
            name=name, is_current=True,
            metadata={"branched_from": source.langgraph_session_id},
        )


def common_depth(store: Store, a_seq: int, b_seq: int) -> int:
    """The depth of the deepest entry on the paths to both `a_seq` and `b_seq` (-1: none).

    Compared piece by piece of the two paths (each piece a chain of entries with one entry
    per depth), never entry by entry."""
    common = -1
    for (chain_a, _, high_a), (chain_b, _, high_b) in zip(store.paths.segments(a_seq),
                                                          store.paths.segments(b_seq)):
        if chain_a != chain_b:
            break
        common = min(high_a, high_b)
        if high_a != high_b:
            break
    return common


def left_behind(store: Store, internal_session_id: int, at_seq: int | None) -> PathRange:
    """What a rollback to `at_seq` leaves behind: the branch's path past its common ancestor
    with `at_seq` (all of it when `at_seq` is None). Counted, not read (see PathRange)."""
    source = _branch(store, internal_session_id)
    head = source.head_seq
    if head is None:
        return PathRange(store, None, 0, 0)
    with store.reading():
        length = store.paths.length(head)
        start = 0 if at_seq is None else common_depth(store, head, at_seq) + 1
    return PathRange(store, head, start, length)


def _state_at(store: Store, head_seq: int, depth: int) -> dict[str, Any] | None:
    """The session_state of the newest checkpoint on the path at or before `depth`."""
    best = None
    for cp in store.annotations.checkpoints_of_session(store.entries.get(head_seq).external_session_id):
        if cp.entry_seq is None:
            continue
        entry = store.entries.get(cp.entry_seq)
        if entry.depth <= depth and store.paths.at_depth(head_seq, entry.depth) == entry.seq:
            if best is None or (entry.depth, cp.id) > best[0]:
                best = ((entry.depth, cp.id), cp.session_state)
    return copy.deepcopy(best[1]) if best else None


def rollback(store: Store, internal_session_id: int, *, checkpoint_id: int | None = None,
             entry_id: EntryRef | None = None, summary: str | None = None,
             name: str | None = None) -> InternalSession:
    """A new current branch at a checkpoint or entry; the old branch stays as it was.

    Unless `name` is given, the branch is named "rollback N": the session's Nth roll back
    (the first such name free in it).

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
            checkpoint = store.annotations.get_checkpoint(checkpoint_id)
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
        if name is None:
            name = _rollback_name(store.branches.of_session(source.external_session_id))
        new = store.branches.create(
            source.external_session_id, head_seq=at_seq, fork_seq=at_seq,
            parent_session_id=source.id, name=name,
            branch_point_checkpoint_id=checkpoint.id if checkpoint else None,
            session_state=state, is_current=True,
            metadata={"rolled_back_from": source.langgraph_session_id,
                      "left_head": source.head_id},
        )
        if summary:
            store.entries.append_to_branch(new.id, BRANCH_SUMMARY,
                                   {"summary": summary, "fromId": source.head_id})
        return store.branches.get(new.id)


def _rollback_name(branches: list[InternalSession]) -> str:
    """ "rollback N" for the session's Nth roll back (an id would number it among every
    branch of the store: "rollback #12" right after "rollback #2")."""
    taken = {branch.name for branch in branches}
    number = 1 + sum(1 for branch in branches if (branch.metadata or {}).get("rolled_back_from"))
    while f"rollback {number}" in taken:
        number += 1
    return f"rollback {number}"


def set_label(store: Store, entry_id: EntryRef, label: str | None, *,
              external_session_id: int | None = None) -> None:
    """Label an entry; None or "" clears its label. Every change is kept in the label log."""
    entry = resolve_entry(store, entry_id, external_session_id)
    store.annotations.add_label(entry.external_session_id, label, target_seq=entry.seq)


def set_branch_label(store: Store, internal_session_id: int, label: str | None) -> None:
    source = _branch(store, internal_session_id)
    store.annotations.add_label(source.external_session_id, label, target_branch=source.id)


def make_current(store: Store, internal_session_id: int) -> None:
    if not store.branches.set_current(internal_session_id):
        raise NotFound(f"branch {internal_session_id} does not exist")


def hide_branch(store: Store, internal_session_id: int, hidden: bool = True) -> None:
    """Hide a branch from the tree (or show it again). Nothing is deleted; the current
    branch cannot be hidden (make another current first)."""
    source = _branch(store, internal_session_id)
    if hidden and source.is_current:
        raise ArborError("the current branch cannot be hidden: make another branch current first")
    store.branches.set_hidden(internal_session_id, hidden)


def rename_branch(store: Store, internal_session_id: int, name: str) -> None:
    _branch(store, internal_session_id)
    store.branches.update_fields(internal_session_id, name=name.strip())


def checkpoint(store: Store, internal_session_id: int, name: str, *,
               at_entry_id: EntryRef | None = None):
    """A named checkpoint on a branch, at one of its entries (default: its head), with the
    branch's state: a place `rollback` offers to return to."""
    source = _branch(store, internal_session_id)
    at_seq = source.head_seq if at_entry_id is None else \
        resolve_entry(store, at_entry_id, source.external_session_id).seq
    if at_seq is None:
        raise ArborError("this branch has no entries to checkpoint yet")
    if not store.paths.is_ancestor(at_seq, source.head_seq):
        raise ArborError("a checkpoint goes on an entry of its branch")
    return store.annotations.create_checkpoint(internal_session_id, name.strip(), entry_seq=at_seq)


@dataclass
class CompactionPlan:
    """What a compaction would do: shown before it is confirmed.

    `summarised` is the range of the path that the summary replaces (compaction entries in
    it are not counted); what is kept starts at `first_kept`. Counts come from SQL, and only
    the kept part (at most the kept budget, and one window) is read."""

    internal_session_id: int
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    summarised: PathRange | None = None
    summarised_count: int = 0  # entries, compactions left out
    messages_summarised: int = 0
    first_summarised: Entry | None = None
    last_summarised: Entry | None = None
    first_message: Entry | None = None  # the first and last summarised messages (a preview)
    last_message: Entry | None = None
    first_kept: Entry | None = None
    kept_count: int = 0
    previous: Entry | None = None
    tokens_before: int = 0
    kept_tokens: int = 0
    tokens_after: int = 0  # the summary's and the kept messages'
    summary: str = ""

    def set_summary(self, summary: str) -> None:
        self.summary = summary
        self.tokens_after = message_tokens({"content": summary}) + self.kept_tokens


KEPT_WINDOW = 256  # entries read at a time, from the head back, to find what is kept


def _kept_part(store: Store, head_seq: int, start: int, length: int,
               keep_recent_tokens: int) -> tuple[int, list[Entry]]:
    """Where the kept part starts: the newest entries within the budget, from a user message
    when one is in range, else from an assistant message (never from a tool result, so that
    no result is kept without its call). Reads from the head back, a window at a time, only
    until the budget is spent.

    Returns the depth of the first kept entry (`length` when nothing is kept) and the
    entries within the budget, compactions left out, in path order."""
    within: list[Entry] = []  # newest first
    budget = 0
    high = length
    while high > start:
        low = max(start, high - KEPT_WINDOW)
        for entry in reversed(store.paths.entries(head_seq, low, high)):
            if entry.type == COMPACTION:
                continue
            cost = message_tokens(entry.message) if entry.type == MESSAGE else 0
            if budget + cost > keep_recent_tokens:
                high = start  # spent
                break
            budget += cost
            within.append(entry)
        else:
            high = low
    within.reverse()
    for wanted in ("user", "assistant"):
        for entry in within:
            message = entry.message
            if message is not None and message.get("role") == wanted:
                return entry.depth, within
    return length, within


def plan_compaction(store: Store, internal_session_id: int, *,
                    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
                    summariser: Summariser | None = builtin_summary,
                    head_seq: int | None = None) -> CompactionPlan:
    """What compacting the branch would do (`head_seq`: up to that entry of it instead of
    its head, as a hand-off of part of a branch is compacted)."""
    source = _branch(store, internal_session_id)
    plan = CompactionPlan(internal_session_id, keep_recent_tokens)
    head = source.head_seq if head_seq is None else head_seq
    if head is None:
        return plan
    with store.reading():
        previous, start = store.paths.replay_start(head)
        length = store.paths.length(head)
        cut, read = _kept_part(store, head, start, length, keep_recent_tokens)
        plan.previous = previous
        summarised = PathRange(store, head, start, cut)
        counts = summarised.counts()
        plan.summarised = summarised
        plan.summarised_count = counts.entries - counts.compactions
        plan.messages_summarised = counts.messages
        if plan.summarised_count:
            plan.first_summarised = summarised.first(not_type=COMPACTION)
            plan.last_summarised = summarised.last(not_type=COMPACTION)
            plan.first_message = summarised.first(type=MESSAGE)
            plan.last_message = summarised.last(type=MESSAGE)
        # tokens: exact for the entries within the budget (read), counted or estimated
        # for the rest (see PathRange.estimate_tokens)
        unread = PathRange(store, head, start, read[0].depth if read else length)
        unread_messages = unread.counts().messages if unread else 0
        unread_tokens = unread.estimate_tokens(unread_messages)
    kept = [e for e in read if e.depth >= cut]
    plan.first_kept = kept[0] if kept else None
    plan.kept_count = len(kept)
    previous_tokens = message_tokens(compaction_summary_message(previous)) if previous else 0
    read_tokens = sum(message_tokens(e.message) for e in read if e.type == MESSAGE)
    plan.kept_tokens = sum(message_tokens(e.message) for e in kept if e.type == MESSAGE)
    plan.tokens_before = previous_tokens + unread_tokens + read_tokens
    summary = ""
    if plan.summarised_count and summariser is not None:
        summary = summarise_compaction(plan, summariser)
    plan.set_summary(summary)
    return plan


def summarise_compaction(plan: CompactionPlan, summariser: Summariser = builtin_summary) -> str:
    """The summary of what a plan summarises (the built-in summariser reads its first and
    last messages only; a command gets them all)."""
    if plan.summarised is None or not plan.summarised_count:
        return ""
    previous = plan.previous
    previous_summary = str(previous.data.get("summary", "")) if previous else None
    return summariser(plan.summarised.messages(plan.messages_summarised), previous_summary)


def compact(store: Store, internal_session_id: int, *, summary: str | None = None,
            keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS,
            summariser: Summariser = builtin_summary) -> str:
    """Append a compaction entry to a branch and return its id. Nothing is deleted."""
    with store.transaction():
        plan = plan_compaction(store, internal_session_id, keep_recent_tokens=keep_recent_tokens,
                               summariser=None if summary else summariser)
        if not plan.summarised_count:
            raise ArborError("nothing to compact: the whole branch fits in the kept budget")
        data = {
            "summary": summary if summary else plan.summary,
            "firstKeptEntryId": plan.first_kept.id if plan.first_kept else "",
            "tokensBefore": plan.tokens_before,
            "lastSummarizedEntryId": plan.last_summarised.id,
        }
        if plan.previous is not None:
            data["previousCompactionId"] = plan.previous.id
        return store.entries.append_to_branch(internal_session_id, COMPACTION, data).id
