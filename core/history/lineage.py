"""Sessions that came from other sessions: sub-agents under the tool call that spawned
them, forks under the entry they left their source at.

A child names its parent in `parent_session` (the parent's uid; for pi, the parent's file
path) and, when it knows it, the entry that started it in `spawn_ref`:

* ``key:<k>``: a spawn point that the parent's importer records (a Claude Code tool call
  id, a Codex child thread id). The session holding the spawn point is the parent, so a
  sub-agent spawned by a sub-agent nests under that sub-agent.
* ``entry:<id>``: an entry id of the parent (Claude Code forks: `forkedFrom.messageUuid`).
* ``shared``: the deepest entry that the child copied from the parent with the same id
  (pi's fork copies the path it forks with its ids).

`link_sessions` attaches every child whose parent (or spawn point) is now in the store.
Imports call it after each batch, so it does not matter which file is imported first.

`family_rows` turns the flat session list into the rows of the sessions pane: children
under their parent (when it is open), a sub-agent's messages counted in its parent's
figures, a family ordered by its newest activity.
"""

from __future__ import annotations

from pathlib import Path

from core.model.values import Frozen

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Iterable

# Kinds whose work is part of the parent's (counted in its figures); a fork is a session
# of its own that only shows where it came from.
SPAWNED_KINDS = frozenset({"subagent", "subgraph"})


def link_sessions(store) -> int:
    """Attach children to their parents where both are now known. Returns how many
    sessions were attached (or got the entry that started them)."""
    linked = 0
    for child, parent_id, spawn_seq in _links(store):
        store.sessions.link_child(child.id, parent_id, spawn_seq)
        linked += 1
    return linked


def links_due(store) -> bool:
    """Whether `link_sessions` would attach anything now (it only reads: an import asks
    this first, and writes only when there is something to link)."""
    return next(_links(store), None) is not None


def _links(store):
    """(child, parent id, spawn seq) of each child `link_sessions` is to attach."""
    for child in store.sessions.unlinked_children():
        parent_id, spawn_seq = _resolve(store, child)
        if parent_id is None or (parent_id == child.parent_id and spawn_seq is None):
            continue
        yield child, parent_id, spawn_seq


def _resolve(store, child) -> tuple[int | None, int | None]:
    ref = child.spawn_ref or ""
    if ref.startswith("key:"):
        point = store.sessions.spawn_point(ref[4:], child.parent_ref)
        if point is not None and point[0] != child.id:
            return point
    parent_id = child.parent_id or parent_by_ref(store, child.parent_ref)
    if parent_id is None or parent_id == child.id:
        return None, None
    if ref.startswith("entry:"):
        entry = store.entries.find(parent_id, ref[6:])
        return parent_id, entry.seq if entry is not None else None
    if ref == "shared":
        return parent_id, store.sessions.last_shared_entry(child.id, parent_id)
    return parent_id, None


def parent_by_ref(store, ref: str | None) -> int | None:
    """The session a child's `parent_session` names: a uid, or the path of the file the
    parent was imported from."""
    if not ref:
        return None
    found = store.sessions.id_by_uid(ref)
    if found is not None:
        return found
    if "/" in ref or "\\" in ref:
        from core.importing.files import path_key

        key = path_key(Path(ref).expanduser())
        from core.agents.registry import formats

        for fmt in formats():
            found = store.sessions.id_by_source_key(f"{fmt}:{key}")
            if found is not None:
                return found
    return None


# ------------------------------------------------------------------ the family list
class FamilyRow(Frozen):
    """One row of the sessions pane."""

    __slots__ = _fields = ("session", "depth", "children", "messages", "updated_at", "is_open")
    session: object           # a core.store.SessionSummary
    depth: int                # 0 for a session of its own, 1 under its parent, ...
    children: int             # how many sessions are attached under it
    messages: int             # its messages and those of the sub-agents under it
    updated_at: str           # the newest activity in it and under it
    is_open: bool             # its children are listed under it

    def __init__(self, session: object, depth: int, children: int, messages: int,
                 updated_at: str, is_open: bool):
        setattr_ = object.__setattr__
        setattr_(self, "session", session)
        setattr_(self, "depth", depth)
        setattr_(self, "children", children)
        setattr_(self, "messages", messages)
        setattr_(self, "updated_at", updated_at)
        setattr_(self, "is_open", is_open)


def family_rows(sessions: Iterable, open_ids: set[int] | frozenset = frozenset()) -> list[FamilyRow]:
    """The sessions as a tree: each family ordered by its newest activity, children (oldest
    first) listed under their parent when the parent's id is in `open_ids`. A child whose
    parent is not in the list (archived, not imported) is listed as a session of its own."""
    rows = list(sessions)
    by_id = {s.id: s for s in rows}
    kids: dict[int, list] = {}
    tops = []
    for s in rows:
        parent = s.parent_id
        if parent is not None and parent in by_id and parent != s.id:
            kids.setdefault(parent, []).append(s)
        else:
            tops.append(s)
    messages: dict[int, int] = {}
    newest: dict[int, str] = {}

    def total(session, trail: frozenset) -> None:
        own_messages, own_newest = session.message_count, session.updated_at
        for child in kids.get(session.id, ()):
            if child.id in trail:
                continue          # a cycle (never written by arbor): ignore the back edge
            if child.id not in messages:
                total(child, trail | {child.id})
            if child.kind in SPAWNED_KINDS:
                own_messages += messages[child.id]
            own_newest = max(own_newest, newest[child.id])
        messages[session.id], newest[session.id] = own_messages, own_newest

    for s in rows:
        if s.id not in messages:
            total(s, frozenset({s.id}))
    # sessions in a cycle have no top: list them at the top level
    reachable: set[int] = set()
    stack = [s.id for s in tops]
    while stack:
        current = stack.pop()
        if current in reachable:
            continue
        reachable.add(current)
        stack.extend(c.id for c in kids.get(current, ()))
    tops.extend(s for s in rows if s.id not in reachable)
    tops.sort(key=lambda s: (newest[s.id], s.id), reverse=True)
    out: list[FamilyRow] = []
    seen: set[int] = set()

    def emit(session, depth: int) -> None:
        if session.id in seen:
            return
        seen.add(session.id)
        children = [c for c in kids.get(session.id, ()) if c.id not in seen]
        is_open = session.id in open_ids and bool(children)
        out.append(FamilyRow(session, depth, len(children), messages[session.id],
                             newest[session.id], is_open))
        if is_open:
            for child in sorted(children, key=lambda c: (c.created_at, c.id)):
                emit(child, depth + 1)

    for top in tops:
        emit(top, 0)
    return out


def ancestors(sessions: Iterable, session_id: int) -> list[int]:
    """The ids of the sessions above this one, nearest first."""
    parent_of = {s.id: s.parent_id for s in sessions}
    out: list[int] = []
    current = parent_of.get(session_id)
    while current is not None and current in parent_of and current not in out \
            and current != session_id:
        out.append(current)
        current = parent_of.get(current)
    return out
