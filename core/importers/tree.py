"""Tree building shared by the importers.

Two pieces:

* `processing_order`: visits the nodes of a log in file order, except that a node whose
  parent comes later in the file waits for it; parents that never come (dangling) make
  roots, and a parent cycle is broken at one of its members, which becomes a root. Every
  node is visited exactly once, always after its parent, so entries can be written in
  that order (the store wants a parent before its children).

* `sync_branches`: after entries are written, every leaf of the session's entry tree gets
  an internal session (a branch). A leaf that extends an existing branch moves that
  branch's head; any other leaf becomes a new branch under the branch it forked from (the
  branch that owns the entry it forked at), a separate root tree becomes a branch of its
  own. The branch holding the newest leaf is made current when anything changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..errors import ArborError


def processing_order(parents: list[int | None], visit: Callable[[int], None]) -> list[int]:
    """Call `visit(i)` for every node, parents first, otherwise in index order.

    `parents[i]` is the index of node i's parent, or None (a root, or a dangling parent).
    Returns the nodes whose parent link was cut to break a cycle (their `parents` item is
    set to None before they are visited).
    """
    count = len(parents)
    done = bytearray(count)
    waiting: dict[int, list[int]] = {}
    broken: list[int] = []

    def emit(first: int) -> None:
        stack = [first]
        while stack:
            node = stack.pop()
            if done[node]:
                continue
            done[node] = 1
            visit(node)
            kids = waiting.pop(node, None)
            if kids:
                stack.extend(reversed(kids))

    for index in range(count):
        parent = parents[index]
        if parent is None or done[parent]:
            emit(index)
        else:
            waiting.setdefault(parent, []).append(index)
    if waiting:
        # What still waits hangs below a cycle: find each cycle and cut it at the member
        # that comes first in the file.
        for index in range(count):
            if done[index]:
                continue
            seen: dict[int, int] = {}
            node = index
            while node is not None and not done[node] and node not in seen:
                seen[node] = len(seen)
                node = parents[node]
            if node is not None and node in seen:
                members = list(seen)[seen[node]:]
                cut = min(members)
                broken.append(cut)
                parents[cut] = None  # type: ignore[index] - the visit sees a root
                emit(cut)
            # else: the chain reaches a done node or a root and will be emitted by it
        for index in range(count):  # pragma: no cover - defensive: nothing may be left
            if not done[index]:
                broken.append(index)
                parents[index] = None  # type: ignore[index]
                emit(index)
    return broken


@dataclass
class BranchSync:
    added: int = 0
    moved: int = 0
    owner: dict[int, int] = field(default_factory=dict)   # entry seq -> branch id
    current: int | None = None
    leaf_branch: dict[int, int] = field(default_factory=dict)  # leaf seq -> branch id


def sync_branches(store, external_session_id: int, *, key_prefix: str,
                  newest_leaf: int | None = None,
                  name_for: Callable[[int, int | None, list[int]], str] | None = None,
                  state_for: Callable[[int], dict[str, Any] | None] | None = None,
                  meta_for: Callable[[int], dict[str, Any] | None] | None = None,
                  force_current: bool = False) -> BranchSync:
    """Give every leaf of the session a branch (see the module doc). Call inside a transaction.

    `name_for(leaf_seq, fork_seq, path)` names a new branch (`path` is the entries from the
    fork (exclusive) to the leaf, root side first); `state_for(leaf_seq)` gives its
    session_state; `newest_leaf` overrides which leaf is the newest (default: highest seq).
    """
    conn = store.connection
    parent: dict[int, int | None] = {}
    has_child: set[int] = set()
    for seq, parent_seq in conn.execute(
            "SELECT seq, parent_seq FROM entries WHERE external_session_id = ?",
            (external_session_id,)):
        parent[seq] = parent_seq
        if parent_seq is not None:
            has_child.add(parent_seq)
    result = BranchSync()
    if not parent:
        return result
    leaves = sorted(seq for seq in parent if seq not in has_child)
    del has_child
    branches = conn.execute(
        "SELECT id, head_seq FROM internal_sessions WHERE external_session_id = ? ORDER BY id",
        (external_session_id,)).fetchall()
    owner = result.owner
    head_of: dict[int, int] = {}   # head seq -> branch id (branches that may still advance)
    for branch_id, head in branches:
        seq = head
        while seq is not None and seq not in owner:
            owner[seq] = branch_id
            seq = parent.get(seq)
        if head is not None:
            head_of.setdefault(head, branch_id)
    branch_heads = {head for _bid, head in branches if head is not None}
    changed = False
    for leaf in leaves:
        if leaf in branch_heads:
            result.leaf_branch[leaf] = head_of.get(leaf) or owner.get(leaf)
            continue
        path = []
        seq: int | None = leaf
        while seq is not None and seq not in owner:
            path.append(seq)
            seq = parent.get(seq)
        fork = seq
        path.reverse()
        if fork is not None and fork in head_of:
            # The leaf continues an existing branch: move its head.
            branch_id = head_of.pop(fork)
            for node in path:
                owner[node] = branch_id
            store.move_head(branch_id, leaf, reason="import: the log grew")
            result.moved += 1
            result.leaf_branch[leaf] = branch_id
            changed = True
            continue
        parent_branch = owner.get(fork) if fork is not None else None
        name = name_for(leaf, fork, path) if name_for else ""
        leaf_row = conn.execute("SELECT id FROM entries WHERE seq = ?", (leaf,)).fetchone()
        first_row = conn.execute("SELECT timestamp FROM entries WHERE seq = ?",
                                 (path[0] if path else leaf,)).fetchone()
        key = f"{key_prefix}:{leaf_row[0]}"
        branch = None
        for attempt in range(8):
            candidate = key if attempt == 0 else f"{key}#{attempt}"
            if conn.execute("SELECT 1 FROM internal_sessions WHERE langgraph_session_id = ?",
                            (candidate,)).fetchone():
                continue
            try:
                branch = store.create_internal_session(
                    external_session_id, head_seq=leaf, fork_seq=fork,
                    parent_session_id=parent_branch, name=name, is_current=False,
                    langgraph_session_id=candidate, created_at=first_row[0],
                    session_state=state_for(leaf) if state_for else None,
                    metadata=meta_for(leaf) if meta_for else None)
                break
            except ArborError:
                continue
        if branch is None:  # pragma: no cover - 8 taken keys
            branch = store.create_internal_session(
                external_session_id, head_seq=leaf, fork_seq=fork, parent_session_id=parent_branch,
                name=name, is_current=False, created_at=first_row[0])
        for node in path:
            owner[node] = branch.id
        head_of[leaf] = branch.id
        result.leaf_branch[leaf] = branch.id
        result.added += 1
        changed = True
    if changed or force_current:
        newest = newest_leaf if newest_leaf is not None else max(leaves)
        target = result.leaf_branch.get(newest) or owner.get(newest)
        if target is not None:
            store.set_current(target)
            result.current = target
    return result


def ancestors_within(parent_of: Callable[[int], int | None], start: int, limit: int = 1_000_000):
    """The ancestors of `start` (exclusive), nearest first, at most `limit` of them."""
    node = parent_of(start)
    count = 0
    while node is not None and count < limit:
        yield node
        node = parent_of(node)
        count += 1
