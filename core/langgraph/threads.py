"""Where a LangGraph checkpoint goes in the store, and which checkpoint a thread resumes from.

A thread's namespace is an external session (the root namespace a session of its own, a
sub-graph's namespace a `subgraph` session under it). The session starts with one entry
(`thread`, a session_info) and a branch `main` at it. A checkpoint is appended to:

* the current branch, when its head is the parent checkpoint's entry, or comes after it
  with no message in between (a roll back with a summary leaves a `branch_summary` there);
* else a branch whose head is the parent's entry (which then becomes current);
* else a new current branch forked at the parent's entry: LangGraph went back to an
  earlier checkpoint (`update_state` on it, or a replay from it).

A thread resumes from the checkpoint of the current branch: the one at its head, or the
nearest one before its head on its path. So a roll back or "make current" in the app is
what `graph.invoke(None, {"configurable": {"thread_id": ...}})` continues from.

Only the public Store API is used here (no SQL), so this works on every backend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..entries import CUSTOM, SESSION_INFO
from ..store import LangGraphCheckpoint, Store

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
    session_id = store.langgraph_session(thread_id, checkpoint_ns)
    if session_id is None:
        return None
    root = store.find_entry(session_id, ROOT_ENTRY)
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
        parent_session = store.get_external_session(parent.session_id)
        node = checkpoint_ns.split("|")[-1].split(":")[0]
        name = f"{parent_session.session_name} · sub-graph {node}"
        kind, parent_uid = "subgraph", parent_session.uid
    session = store.create_external_session(
        name, source=SOURCE, kind=kind, parent_session=parent_uid, cwd=os.getcwd(),
        metadata={"format": SOURCE, "thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                  "writer": "arbor checkpointer"})
    root = store.append_entry(session.id, None, SESSION_INFO, {
        "name": placeholder_name(thread_id) + (f" ({checkpoint_ns})" if checkpoint_ns else ""),
        "langgraph": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns}},
        entry_id=ROOT_ENTRY)
    store.create_internal_session(session.id, head_seq=root.seq, name="main", is_current=True)
    store.add_langgraph_thread(thread_id, checkpoint_ns, session.id)
    if parent is not None:
        spawn_seq = None
        if spawned_at:
            row = store.langgraph_checkpoint(parent.session_id, spawned_at)
            spawn_seq = row.entry_seq if row is not None else None
        if spawn_seq is None:
            branch = store.current_internal_session(parent.session_id)
            spawn_seq = branch.head_seq if branch is not None else None
        store.link_child(session.id, parent.session_id, spawn_seq)
    return Thread(session.id, root.seq)


def checkpoint_on_path(store: Store, head_seq: int | None) -> LangGraphCheckpoint | None:
    """The checkpoint at `head_seq`, or the nearest one before it on its path."""
    if head_seq is None:
        return None
    found = store.langgraph_checkpoint_at(head_seq)
    if found is not None:
        return found
    stop = None
    for _hop in range(MAX_CUSTOM_HOPS):
        entry = store.path_end_entry(head_seq, 0, stop, type=CUSTOM, last=True)
        if entry is None:
            return None
        found = store.langgraph_checkpoint_at(entry.seq)
        if found is not None:
            return found
        stop = entry.depth
    return None


def resume_point(store: Store, thread: Thread) -> LangGraphCheckpoint | None:
    """The checkpoint the thread goes on from: its current branch's (see the module doc).
    A session left with no current branch goes on from its newest checkpoint."""
    branch = store.current_internal_session(thread.session_id)
    if branch is None:
        return store.newest_langgraph_checkpoint(thread.session_id)
    return checkpoint_on_path(store, branch.head_seq)


def branch_for(store: Store, thread: Thread, parent: LangGraphCheckpoint | None, *,
               name: str) -> int:
    """The branch a checkpoint whose parent is `parent` is appended to (made current; a new
    one named `name` when LangGraph went back to an earlier checkpoint). Call inside a
    write transaction."""
    at = parent.entry_seq if parent is not None and parent.entry_seq is not None \
        else thread.root_seq
    current = store.current_internal_session(thread.session_id)
    if current is not None and current.head_seq is not None:
        if current.head_seq == at:
            return current.id
        if parent is not None and _goes_on_from(store, current.head_seq, parent, at):
            return current.id
    for branch_id, head in store.branch_heads(thread.session_id):
        if head == at:
            store.set_current(branch_id)
            return branch_id
    source = store.branch_containing(at)
    new = store.create_internal_session(
        thread.session_id, head_seq=at, fork_seq=at,
        parent_session_id=source.id if source is not None else None,
        branch_point_checkpoint_id=parent.checkpoint_ref if parent is not None else None,
        name=name, is_current=True,
        metadata={"langgraph_fork_of": parent.checkpoint_id if parent is not None else None})
    return new.id


def _goes_on_from(store: Store, head_seq: int, parent: LangGraphCheckpoint, at: int) -> bool:
    """Whether a head that is not the parent's entry still continues it: the parent is the
    head's checkpoint and no message lies between them (the agent's state has them all)."""
    found = checkpoint_on_path(store, head_seq)
    if found is None or found.external_session_id != parent.external_session_id or \
            found.checkpoint_id != parent.checkpoint_id:
        return False
    entry = store.get_entry(at)
    if entry is None:
        return False
    return store.path_counts(head_seq, entry.depth + 1).messages == 0
