"""Where a handed-off session came from, in arbor: its imported copy nests under the
original as a fork across agents, with `handoff` in its metadata, and the hand-off is a row
of the operation log, so that `u` undoes arbor's side of it (archives the copy).

`handoff` (in the new session's metadata): `{"agent", "session", "sessionId", "branch",
"branchName", "entry", "written": <the file's record, reuse.record_of>, "key": <the
fingerprint of what was written>}`. The same is written in the target's own metadata where
it has a place for it (Claude Code's `forkedFrom` on each line, Codex's `session_meta`,
pi's session header): `origin` gives that part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core.agents import reuse
from core.actions.undo import SESSION_ACTIVE
from core.agents.registry import title as agent_title

KEY = "handoff"


def agent_id(session) -> str:
    """The source agent's own id of the session (what its files and commands name)."""
    meta = session.metadata or {}
    return str(meta.get("sessionId") or session.uid)


def origin(store, session, branch, head_seq: int) -> dict[str, Any]:
    """Where the branch handed off is: for the target's own metadata."""
    entry = store.entries.get(head_seq)
    return {"agent": session.source, "session": agent_id(session), "branch": branch.name or
            f"branch {branch.id}", "entry": entry.id if entry is not None else None,
            "via": "arbor"}


def record(store, session, branch, head_seq: int, plan, origin_: dict[str, Any], key: str,
           written: dict[str, Any] | None) -> tuple[int | None, int | None]:
    """Import the new file, nest its session under the original, and log the hand-off.
    Returns (arbor's id of the new session, the operation's row); (None, None) when the
    file could not be imported (the file is written all the same)."""
    from core.importing import import_paths

    import_paths(store, [plan.file], describe_unchanged=False)
    new = store.sessions.by_uid(plan.native_id)
    if new is None:
        return None, None
    with store.transaction():
        metadata = store.sessions.metadata(new.id)
        metadata[KEY] = {**origin_, "target": plan.target, "arborSession": session.uid,
                         "branchId": branch.id,
                         "entrySeq": head_seq, "key": key, "written": written}
        store.sessions.set_metadata(new.id, metadata)
        if plan.title:      # named as the agent lists it (its first prompt otherwise)
            store.sessions.rename(new.id, plan.title)
        store.sessions.set_lineage(new.id, kind="fork", parent_ref=session.uid,
                                   spawn_ref=f"entry:{origin_.get('entry')}")
        store.sessions.link_child(new.id, session.id, head_seq)
        operation = store.oplog.record(
            "handoff", new.id, f"hand-off to {agent_title(plan.target)}{plan.by}",
            [[SESSION_ACTIVE, new.id, False, True]])
    return new.id, operation


def find_written(store, session_id: int, key: str, adds_nothing: Callable[[Any], bool]
                 ) -> tuple[Any, str, int] | None:
    """(file, native id, arbor's id) of the session an earlier hand-off of the same
    unchanged branch wrote, when its file still holds what was written."""
    for child in store.sessions.children(session_id):
        found = (child.metadata or {}).get(KEY)
        if not isinstance(found, dict) or found.get("key") != key:
            continue
        written = reuse.still_holds(found.get("written"), adds_nothing)
        if written is not None:
            return written.path, written.native_id, child.id
    return None


def show_again(store, session_id: int, agent: str) -> int | None:
    """A hand-off whose session is reused: shown again if `u` had archived it (one more
    row of the log, so `u` archives it again)."""
    session = store.sessions.get(session_id)
    if session is None or session.is_active:
        return None
    with store.transaction():
        store.sessions.set_active(session_id, True)
        return store.oplog.record("handoff", session_id, f"hand-off to {agent}",
                                  [[SESSION_ACTIVE, session_id, False, True]])


@dataclass(frozen=True)
class Continued:
    """A hand-off of a branch, as the branches pane says it: "continued in Codex"."""

    branch_id: int
    agent: str          # the target's name for people
    session_id: int     # arbor's copy


def continued_in(store, session_id: int) -> dict[int, list[Continued]]:
    """The branches of a session that were handed to another agent (and not undone)."""
    out: dict[int, list[Continued]] = {}
    for child in store.sessions.children(session_id):
        if not child.is_active:
            continue
        meta = child.metadata or {}
        found = meta.get(KEY)
        if not isinstance(found, dict) or not isinstance(found.get("branchId"), int):
            continue
        out.setdefault(found["branchId"], []).append(
            Continued(found["branchId"], agent_title(str(found.get("target"))),
                      child.id))
    return out
