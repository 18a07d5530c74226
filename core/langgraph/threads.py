"""Where a LangGraph checkpoint goes in the store, and which checkpoint a thread resumes from.

A thread's namespace is an external session (the root namespace a session of its own, a
sub-graph's namespace a `subgraph` session under it). The session starts with one entry
(`thread`, a session_info) and a branch `main` at it. A checkpoint is appended to:

* the current branch, when it resumes from the parent checkpoint (below);
* else a branch whose head is the parent's entry (which then becomes current);
* else a new current branch forked at the parent's entry: LangGraph went back to an
  earlier checkpoint (`update_state` on it, or a replay from it).

A thread resumes from the checkpoint of the current branch: the one at its head; for a
message head, the checkpoint right after it when the message is the last one that
checkpoint added (its state ends with the message), also when a roll back's summary
follows that message (the agent then writes on after the summary); else the nearest
checkpoint before the head on its path.
So a roll back or "make current" in the app is what
`graph.invoke(None, {"configurable": {"thread_id": ...}})` continues from, and the agent
writes on on that branch.

Only the public Store API is used here (no SQL), so this works on every backend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from core.model.entries import BRANCH_SUMMARY, CUSTOM, MESSAGE, SESSION_INFO
from core.store import LangGraphCheckpoint, Store

ROOT_ENTRY = "thread"
CHECKPOINT_TYPE = "langgraph:checkpoint"
SOURCE = "langgraph"
# how far back along a path a head's checkpoint is looked for (custom entries that are not
# checkpoints between it and the head: a user's own; there are never many)
MAX_CUSTOM_HOPS = 64


def placeholder_name(thread_id: str) -> str:
    return f"LangGraph thread {thread_id}"


def parent_namespace(checkpoint_ns: str) -> str:
    """The namespace a sub-graph's namespace runs under ("a:1|b:2" -> "a:1", "a:1" -> "")."""
    return checkpoint_ns.rsplit("|", 1)[0] if "|" in checkpoint_ns else ""


@dataclass(frozen=True, slots=True)
class Thread:
    """A thread's namespace in the store."""

    session_id: int
    root_seq: int


def find_thread(store: Store, thread_id: str, checkpoint_ns: str) -> Thread | None:
    session_id = store.langgraph.session(thread_id, checkpoint_ns)
    if session_id is None:
        return None
    root = store.entries.find(session_id, ROOT_ENTRY)
    return Thread(session_id, root.seq if root is not None else 0)


def open_thread(store: Store, thread_id: str, checkpoint_ns: str, *,
                spawned_at: str | None = None) -> Thread:
    """The thread's namespace, made when new (and the namespaces it runs under with it).
    Call inside a write transaction. `spawned_at`: the checkpoint id of the parent
    namespace this sub-graph ran from (metadata `parents`), for the link to it."""
    found = find_thread(store, thread_id, checkpoint_ns)
    if found is not None:
        return found
    parent: Thread | None = None
    name = placeholder_name(thread_id)
    kind, parent_uid = "session", None
    if checkpoint_ns:
        parent = open_thread(store, thread_id, parent_namespace(checkpoint_ns))
        parent_session = store.sessions.get(parent.session_id)
        node = checkpoint_ns.split("|")[-1].split(":")[0]
        name = f"{parent_session.session_name} · sub-graph {node}"
        kind, parent_uid = "subgraph", parent_session.uid
    session = store.sessions.create(
        name, source=SOURCE, kind=kind, parent_session=parent_uid, cwd=os.getcwd(),
        metadata={"format": SOURCE, "thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                  "writer": "arbor checkpointer"})
    root = store.entries.append(session.id, None, SESSION_INFO, {
        "name": placeholder_name(thread_id) + (f" ({checkpoint_ns})" if checkpoint_ns else ""),
        "langgraph": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}},
        entry_id=ROOT_ENTRY)
    store.branches.create(session.id, head_seq=root.seq, name="main", is_current=True)
    store.langgraph.add_thread(thread_id, checkpoint_ns, session.id)
    if parent is not None:
        spawn_seq = None
        if spawned_at:
            row = store.langgraph.checkpoint(parent.session_id, spawned_at)
            spawn_seq = row.entry_seq if row is not None else None
        if spawn_seq is None:
            branch = store.branches.current(parent.session_id)
            spawn_seq = branch.head_seq if branch is not None else None
        store.sessions.link_child(session.id, parent.session_id, spawn_seq)
    return Thread(session.id, root.seq)


def checkpoint_on_path(store: Store, head_seq: int | None) -> LangGraphCheckpoint | None:
    """The checkpoint at `head_seq`, or the nearest one before it on its path."""
    if head_seq is None:
        return None
    found = store.langgraph.checkpoint_at(head_seq)
    if found is not None:
        return found
    stop = None
    for _hop in range(MAX_CUSTOM_HOPS):
        entry = store.paths.end_entry(head_seq, 0, stop, type=CUSTOM, last=True)
        if entry is None:
            return None
        found = store.langgraph.checkpoint_at(entry.seq)
        if found is not None:
            return found
        stop = entry.depth
    return None


def checkpoint_for_head(store: Store, head_seq: int | None) -> LangGraphCheckpoint | None:
    """The checkpoint a branch whose head is `head_seq` resumes from: the one at the head;
    for a message that is the last one a checkpoint added, that checkpoint (its state
    holds the message: a roll back to the message resumes just after it); else the nearest
    checkpoint before the head."""
    if head_seq is None:
        return None
    found = store.langgraph.checkpoint_at(head_seq)
    if found is not None:
        return found
    entry = store.entries.get(head_seq)
    if entry is not None and entry.type == BRANCH_SUMMARY and entry.parent_seq is not None:
        # a roll back with a summary: what counts is the entry it was made at
        entry = store.entries.get(entry.parent_seq)
    if entry is not None and entry.type == MESSAGE:
        found = _checkpoint_ending_with(store, entry.seq)
        if found is not None:
            return found
    return checkpoint_on_path(store, head_seq)


def _checkpoint_ending_with(store: Store, message_seq: int) -> LangGraphCheckpoint | None:
    """The checkpoint whose entry follows this message (its state ends with it)."""
    for child in store.entries.children(message_seq):
        found = store.langgraph.checkpoint_at(child.seq)
        if found is not None:
            return found
    return None


def resume_point(store: Store, thread: Thread) -> LangGraphCheckpoint | None:
    """The checkpoint the thread goes on from: its current branch's (see the module doc).
    A session left with no current branch goes on from its newest checkpoint."""
    branch = store.branches.current(thread.session_id)
    if branch is None:
        return store.langgraph.newest_checkpoint(thread.session_id)
    return checkpoint_for_head(store, branch.head_seq)


def _same(a: LangGraphCheckpoint | None, b: LangGraphCheckpoint | None) -> bool:
    return a is not None and b is not None and a.external_session_id == b.external_session_id \
        and a.checkpoint_id == b.checkpoint_id


def _same_message(stored: dict[str, Any], new: dict[str, Any]) -> bool:
    if stored.get("role") != new.get("role") or stored.get("content") != new.get("content"):
        return False
    left = (stored.get("langchain") or {}).get("id")
    right = (new.get("langchain") or {}).get("id")
    return left == right or not left or not right


def _beside_a_summary(store: Store, head_seq: int, checkpoint_seq: int) -> bool:
    """Whether the head is a branch summary made at the message the checkpoint's entry
    follows (a roll back to that message with a summary)."""
    head = store.entries.get(head_seq)
    if head is None or head.type != BRANCH_SUMMARY or head.parent_seq is None:
        return False
    checkpoint = store.entries.get(checkpoint_seq)
    return checkpoint is not None and checkpoint.parent_seq == head.parent_seq


def branch_for(store: Store, thread: Thread, parent: LangGraphCheckpoint | None,
               messages: list[dict[str, Any]], *, name: str) -> tuple[int, int]:
    """(branch, how many of `messages` it already holds) for a checkpoint whose parent is
    `parent` and whose new messages are `messages`. The branch is made current. Call
    inside a write transaction.

    The current branch when it resumes from `parent` (its head moved up to the parent's
    entry when the head is a message just before it; back to it, logged, when the head
    holds messages the agent's state does not); else a branch whose head is the parent's
    entry; else a new branch forked there, named `name` (LangGraph went back to an
    earlier checkpoint)."""
    at = parent.entry_seq if parent is not None and parent.entry_seq is not None \
        else thread.root_seq
    current = store.branches.current(thread.session_id)
    if current is not None and current.head_seq is not None:
        head = current.head_seq
        if head == at:
            return current.id, 0
        if parent is not None and _same(checkpoint_for_head(store, head), parent):
            if store.paths.is_ancestor(head, at):   # a message just before the parent's entry
                store.branches.move_head(current.id, at)
                return current.id, 0
            if _beside_a_summary(store, head, at):
                # rolled back to a message with a summary: the agent writes on after it
                return current.id, 0
            if store.paths.is_ancestor(at, head):
                start = store.entries.get(at).depth + 1
                between = store.paths.messages(head, start)
                if len(between) <= len(messages) and all(
                        _same_message(old, new) for old, new in zip(between, messages)):
                    return current.id, len(between)
                store.branches.move_head(current.id, at,
                                reason="langgraph: resumed from the checkpoint before the head")
                return current.id, 0
    for branch_id, head in store.branches.heads(thread.session_id):
        if head == at:
            store.branches.set_current(branch_id)
            return branch_id, 0
    source = store.branches.containing(at)
    new = store.branches.create(
        thread.session_id, head_seq=at, fork_seq=at,
        parent_session_id=source.id if source is not None else None,
        branch_point_checkpoint_id=parent.checkpoint_ref if parent is not None else None,
        name=name, is_current=True,
        metadata={"langgraph_fork_of": parent.checkpoint_id if parent is not None else None})
    return new.id, 0
