"""What the importers of agents whose logs are read whole share (Gemini CLI, Qwen Code,
Copilot CLI, droid, Kimi CLI, opencode, Aider): the entries of one session gathered as
nodes, parents first, then written in one go.

An importer reads the file into `Nodes` (each node: the entry id, the id of its parent,
type, data and time) and hands them to `write_session`, which creates or finds the
session, adds the entries the store does not hold (entry ids are the log's own, or made
from them, so a second read adds only what is new), records the spawn points of
sub-agents, gives every leaf a branch and makes the newest one current.
"""

from __future__ import annotations

from core.model.entries import LABEL

from .base import Clockwork
from .session import SessionTarget, first_text_title
from .tree import processing_order, sync_branches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .base import FileResult, ProgressTicker


class Nodes:
    """The entries of one session in the order they were read. A node's parent is named
    by its id; one that is not (yet) a node makes the node a root."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.parents: list[str | None] = []
        self.types: list[str] = []
        self.data: list[dict[str, Any]] = []
        self.times: list[Any] = []
        self.lines: list[int] = []
        self.index: dict[str, int] = {}
        self.spawns: list[tuple[str, str]] = []    # (child key, entry id that spawned it)
        self.newest: str | None = None              # the entry the agent went on from last

    def __contains__(self, entry_id: str) -> bool:
        return entry_id in self.index

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, entry_id: str, parent: str | None, entry_type: str, data: dict[str, Any],
            timestamp: Any, line: int = 0) -> str:
        """A new node (an id seen before gets `~<n>` after it: nothing is dropped)."""
        if entry_id in self.index:
            n = 2
            while f"{entry_id}~{n}" in self.index:
                n += 1
            entry_id = f"{entry_id}~{n}"
        self.index[entry_id] = len(self.ids)
        self.ids.append(entry_id)
        self.parents.append(parent)
        self.types.append(entry_type)
        self.data.append(data)
        self.times.append(timestamp)
        self.lines.append(line)
        self.newest = entry_id
        return entry_id

    def parent_of(self, entry_id: str) -> str | None:
        i = self.index.get(entry_id)
        return self.parents[i] if i is not None else None

    def get(self, entry_id: str) -> dict[str, Any] | None:
        i = self.index.get(entry_id)
        return self.data[i] if i is not None else None

    def path_to(self, entry_id: str | None) -> list[str]:
        """The ids from the root to this node."""
        out: list[str] = []
        seen: set[str] = set()
        while entry_id is not None and entry_id in self.index and entry_id not in seen:
            seen.add(entry_id)
            out.append(entry_id)
            entry_id = self.parents[self.index[entry_id]]
        out.reverse()
        return out


def write_session(store, result: FileResult, ticker: ProgressTicker, nodes: Nodes, *,
                  uid: str, name: str, source: str, cwd: str = "",
                  metadata: dict[str, Any] | None = None, created_at: Any = None,
                  kind: str = "session", parent_session: str | None = None,
                  spawn_ref: str | None = None, fallback: Any = None) -> None:
    """Write the nodes as the session `uid` (see the module doc) and add it to `result`."""
    count = len(nodes)
    clock = Clockwork(fallback if fallback is not None else "1970-01-01T00:00:00.000+00:00")
    times = [clock.take(t) for t in nodes.times]
    target = SessionTarget(store, uid=uid, name=name, source=source, cwd=cwd,
                           metadata=metadata, created_at=created_at or (min(times) if times else None),
                           kind=kind, parent_session=parent_session, spawn_ref=spawn_ref)
    parents: list[int | None] = []
    for i, parent in enumerate(nodes.parents):
        j = nodes.index.get(parent) if parent is not None else None
        parents.append(None if j == i else j)
    order: list[int] = []
    for i in processing_order(parents, order.append):
        result.skip(nodes.lines[i] or None,
                    f"parent cycle: entry {nodes.ids[i]} was made a root (kept, not dropped)")
    seq_of: list[int] = [0] * count
    labels: list[int] = []
    ticker.phase = "writing"
    for n, i in enumerate(order):
        if n % 2048 == 0:
            ticker(n)
        p = parents[i]
        seq, written = target.add(nodes.ids[i], seq_of[p] if p is not None else None,
                                  nodes.types[i], nodes.data[i], times[i])
        seq_of[i] = seq
        if written and nodes.types[i] == LABEL:
            labels.append(i)
    spawned = {entry_id for _key, entry_id in nodes.spawns}
    if spawned:
        for key, entry_id in nodes.spawns:
            i = nodes.index.get(entry_id)
            if i is not None:
                target.spawn(key, seq_of[i])
    target.flush()
    for i in labels:    # (a label entry names its target by node id: `targetId`)
        j = nodes.index.get(nodes.data[i].get("targetId"))
        if j is None:
            result.skip(nodes.lines[i] or None, f"label entry {nodes.ids[i]} targets no entry "
                        "of this session (entry kept, label not applied)")
            continue
        label = nodes.data[i].get("label")
        store.annotations.add_label(target.id, label if isinstance(label, str) else None,
                                    target_seq=seq_of[j], entry_seq=seq_of[i],
                                    created_at=times[i])
    if not count:
        result.sessions.append(target.finish(name=name))
        return

    named = [bool(store.branches.heads(target.id))]     # (asked once: see pi's importer)

    def name_for(leaf: int, fork: int | None, path: list[int]) -> str:
        first = not named[0]
        named[0] = True
        if fork is None:
            return "main" if first else (first_text_title(store, path, 40) or "root")
        return first_text_title(store, path, 40) or "branch"

    newest = nodes.index.get(nodes.newest) if nodes.newest is not None else None
    sync = sync_branches(store, target.id, key_prefix=f"{source}:{uid}", name_for=name_for,
                         newest_leaf=_leaf_below(seq_of, parents, newest))
    target.result.branches_added = sync.added
    result.sessions.append(target.finish(name=name))


def _leaf_below(seq_of: list[int], parents: list[int | None], node: int | None) -> int | None:
    """The seq of the newest leaf at or below `node` (the branch the agent was on last)."""
    if node is None:
        return None
    children: dict[int, list[int]] = {}
    for i, p in enumerate(parents):
        if p is not None:
            children.setdefault(p, []).append(i)
    while node in children:
        node = max(children[node])
    return seq_of[node]


def message_data(message: dict[str, Any], extra_key: str, extra: dict[str, Any] | None
                 ) -> dict[str, Any]:
    """A message entry's data: the message, and what the agent wrote beside it (kept
    under the agent's own key)."""
    data: dict[str, Any] = {"message": message}
    if extra:
        data[extra_key] = extra
    return data

