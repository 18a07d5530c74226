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

from array import array
from bisect import bisect_left

from core.model.errors import ArborError

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable


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


class BranchSync:
    """What `sync_branches` did, and which branch owns each entry (first claimant wins)."""

    def __init__(self, seqs, owners) -> None:
        self.added = 0
        self.moved = 0
        self.current: int | None = None
        self.leaf_branch: dict[int, int] = {}
        self._seqs = seqs
        self._owners = owners

    def owner_of(self, seq: int) -> int | None:
        i = bisect_left(self._seqs, seq)
        if i < len(self._seqs) and self._seqs[i] == seq and self._owners[i] >= 0:
            return self._owners[i]
        return None


def _session_tree(store, external_session_id: int,
                  tree: tuple[array, array] | None = None) -> tuple[array, array]:
    """(seqs, parent seqs) of a session's entries in seq order; -1 for no parent.

    `tree`: what the caller knows the session holds, (seqs, parent seqs) in seq order (what
    an importer's EntryWriter wrote); when it is the whole session, it is used as it is,
    without reading the rows back."""
    span = low, high, count = store.entries.span(external_session_id)
    if not count:
        return array("q"), array("q")
    if tree is not None and len(tree[0]) == count and tree[0][0] == low and \
            tree[0][-1] == high:
        return tree
    seqs = array("q")
    parents = array("q")
    add_seq, add_parent = seqs.append, parents.append
    for seq, parent_seq in store.entries.parents(external_session_id, span):
        add_seq(seq)
        add_parent(parent_seq if parent_seq is not None else -1)
    return seqs, parents


def sync_branches(store, external_session_id: int, *, key_prefix: str,
                  newest_leaf: int | None = None,
                  name_for: Callable[[int, int | None, list[int]], str] | None = None,
                  state_for: Callable[[int], dict[str, Any] | None] | None = None,
                  meta_for: Callable[[int], dict[str, Any] | None] | None = None,
                  force_current: bool = False,
                  tree: tuple[array, array] | None = None) -> BranchSync:
    """Give every leaf of the session a branch (see the module doc). Call inside a transaction.

    `name_for(leaf_seq, fork_seq, path)` names a new branch (`path` is the entries from the
    fork (exclusive) to the leaf, root side first); `state_for(leaf_seq)` gives its
    session_state; `newest_leaf` overrides which leaf is the newest (default: highest seq).
    Memory: three arrays over the session's entries (about 17 bytes an entry).
    """
    seqs, parents = _session_tree(store, external_session_id, tree)
    count = len(seqs)
    owners = array("q", [-1]) * count
    result = BranchSync(seqs, owners)
    if not count:
        return result
    first = seqs[0]
    dense = seqs[-1] - first + 1 == count   # one import into a new session: seq i is at i - first

    def pos(seq: int, hint: int = -1) -> int:
        if dense:
            i = seq - first
            return i if 0 <= i < count else -1
        if 0 <= hint < count and seqs[hint] == seq:
            return hint
        i = bisect_left(seqs, seq)
        return i if i < count and seqs[i] == seq else -1

    # the position of each entry's parent (-1: a root), computed once for the walks below
    if dense:
        ppos = array("q", [p - first if p >= 0 else -1 for p in parents])
    else:
        ppos = array("q", [pos(p, i - 1) if p >= 0 else -1 for i, p in enumerate(parents)])
    has_child = bytearray(count)
    for j in ppos:
        if j >= 0:
            has_child[j] = 1

    leaves = [i for i in range(count) if not has_child[i]]
    del has_child
    branches = store.branches.heads(external_session_id)
    head_of: dict[int, int] = {}   # head position -> branch id (branches that may still advance)
    branch_heads: set[int] = set()
    for branch_id, head in branches:
        i = pos(head) if head is not None else -1
        if i < 0:
            continue
        branch_heads.add(i)
        head_of.setdefault(i, branch_id)
        while i >= 0 and owners[i] < 0:
            owners[i] = branch_id
            i = ppos[i]
    changed = False
    for leaf in leaves:
        if leaf in branch_heads:
            result.leaf_branch[seqs[leaf]] = head_of.get(leaf) or owners[leaf]
            continue
        path = []
        i = leaf
        while i >= 0 and owners[i] < 0:
            path.append(i)
            i = ppos[i]
        fork = i
        path.reverse()
        path_seqs = [seqs[j] for j in path]
        if fork >= 0 and fork in head_of:
            # The leaf continues an existing branch: move its head.
            branch_id = head_of.pop(fork)
            for j in path:
                owners[j] = branch_id
            store.branches.move_head(branch_id, seqs[leaf], reason="import: the log grew")
            result.moved += 1
            result.leaf_branch[seqs[leaf]] = branch_id
            changed = True
            continue
        fork_seq = seqs[fork] if fork >= 0 else None
        parent_branch = owners[fork] if fork >= 0 else None
        leaf_seq = seqs[leaf]
        branch = _new_branch(store, external_session_id, key_prefix, leaf_seq, fork_seq,
                             parent_branch, path_seqs, name_for, state_for, meta_for)
        for j in path:
            owners[j] = branch.id
        head_of[leaf] = branch.id
        result.leaf_branch[leaf_seq] = branch.id
        result.added += 1
        changed = True
    if changed or force_current:
        newest = newest_leaf if newest_leaf is not None else seqs[max(leaves)]
        target = result.leaf_branch.get(newest) or result.owner_of(newest)
        if target is not None:
            store.branches.set_current(target)
            result.current = target
    return result


def _new_branch(store, external_session_id: int, key_prefix: str, leaf_seq: int,
                fork_seq: int | None, parent_branch: int | None, path_seqs: list[int],
                name_for, state_for, meta_for):
    """A branch for a new leaf, keyed by the leaf's entry id (stable across imports)."""
    name = name_for(leaf_seq, fork_seq, path_seqs) if name_for else ""
    first_stamp = store.entries.timestamp_of(path_seqs[0] if path_seqs else leaf_seq)
    key = f"{key_prefix}:{store.entries.id_of(leaf_seq)}"
    for attempt in range(8):
        candidate = key if attempt == 0 else f"{key}#{attempt}"
        if store.branches.key_taken(candidate):
            continue
        try:
            return store.branches.create(
                external_session_id, head_seq=leaf_seq, fork_seq=fork_seq,
                parent_session_id=parent_branch, name=name, is_current=False,
                langgraph_session_id=candidate, created_at=first_stamp,
                session_state=state_for(leaf_seq) if state_for else None,
                metadata=meta_for(leaf_seq) if meta_for else None)
        except ArborError:
            continue
    return store.branches.create(  # pragma: no cover - 8 taken keys
        external_session_id, head_seq=leaf_seq, fork_seq=fork_seq,
        parent_session_id=parent_branch, name=name, is_current=False,
        created_at=first_stamp)


def sync_new_branches(store, external_session_id: int, new: tuple[array, array], *,
                      key_prefix: str,
                      name_for: Callable[[int, int | None, list[int]], str] | None = None,
                      newest_leaf: int | None = None) -> BranchSync:
    """`sync_branches` for a session that already had its branches, after entries were
    added (a file that grew): only the new entries are looked at, never the whole tree.

    `new` is (seqs, parent seqs) of the added entries in seq order. Each new leaf either
    continues a branch whose head it grew from (that head moves), or becomes a new branch
    forked where it meets the older entries, under the oldest branch holding that entry
    (a new root tree: a branch of its own). The newest leaf's branch is made current
    (`newest_leaf`: an entry of this read that says which, see `sync_branches`)."""
    seqs, parents = new
    result = BranchSync(array("q"), array("q"))
    if not len(seqs):
        return result
    added = set(seqs)
    has_child = {p for p in parents if p in added}
    leaves = [s for s in seqs if s not in has_child]
    parent_of = dict(zip(seqs, parents))
    branches = store.branches.heads(external_session_id)
    head_of: dict[int, int] = {}
    for branch_id, head in branches:
        if head is not None:
            head_of.setdefault(head, branch_id)
    owner: dict[int, int] = {}          # new entries claimed by a branch in this sync

    def owner_of(seq: int) -> int | None:
        if seq in owner:
            return owner[seq]
        for branch_id, head in branches:     # the oldest branch whose path holds it
            if head is not None and head >= seq and store.paths.is_ancestor(seq, head):
                return branch_id
        return None

    for leaf in leaves:
        path = []
        node = leaf
        while node in added and node not in owner:
            path.append(node)
            node = parent_of[node]
        fork = node if node >= 0 else None
        path.reverse()
        if fork is not None and fork in head_of:
            branch_id = head_of.pop(fork)
            for j in path:
                owner[j] = branch_id
            store.branches.move_head(branch_id, leaf, reason="import: the log grew")
            result.moved += 1
            result.leaf_branch[leaf] = branch_id
            continue
        parent_branch = owner_of(fork) if fork is not None else None
        branch = _new_branch(store, external_session_id, key_prefix, leaf, fork,
                             parent_branch, path, name_for, None, None)
        for j in path:
            owner[j] = branch.id
        head_of[leaf] = branch.id
        result.leaf_branch[leaf] = branch.id
        result.added += 1
    newest = max(leaves) if newest_leaf is None else newest_leaf
    target = result.leaf_branch.get(newest) or owner.get(newest)
    if target is None and newest_leaf is not None:
        target = result.leaf_branch.get(max(leaves))
    if target is not None:
        store.branches.set_current(target)
        result.current = target
    return result
