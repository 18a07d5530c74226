"""The write tools of `arbor mcp` (only with --allow-write): label, checkpoint, fork_here.

Each runs the operation arbor's app runs for the same key (core/actions/operations.py) inside
`core.actions.undo.recorded`, the log the app's `u` walks back: an agent's label, checkpoint
or branch is undone in the app like one made there. Nothing is deleted by any of them."""

from __future__ import annotations

from typing import Annotated, Any, Mapping

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from . import queries, shapes
from .read_tools import BranchRef, SessionRef

Entry = Annotated[int, Field(ge=1, description="an entry number (from search or get_messages)")]
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                        open_world_hint=False)


def _entry_on(store, session, branch, entry: int):
    from core.model.errors import NotFound

    found = store.entries.get(entry)
    if found is None or found.external_session_id != session.id:
        raise NotFound(f"entry {entry} is not in session {session.uid}")
    if branch is not None and (branch.head_seq is None or
                               not store.paths.is_ancestor(found.seq, branch.head_seq)):
        raise NotFound(f"entry {entry} is not on branch {branch.id}")
    return found


def apply_label(store, session: str, text: str, *, entry: int | None = None,
          branch: int | str | None = None) -> dict[str, Any]:
    from core.actions import operations, undo

    s = queries.resolve_session(store, session)
    words = text.strip() or None
    if entry is not None:
        target = _entry_on(store, s, None, entry)
        what = f"entry {target.id[:8]}"
        with undo.recorded(store, s.id, "label", _describe(words, what) + " (by an agent)"):
            operations.set_label(store, target.seq, words)
        return {"labelled": "entry", "entry": target.seq, "session": s.uid,
                "label": shapes.text(words, 200) if words else None, "undo": "u in arbor's app"}
    b = queries.resolve_branch(store, s, branch)
    with undo.recorded(store, s.id, "label", _describe(words, b.name or f"branch {b.id}")
                       + " (by an agent)"):
        operations.set_branch_label(store, b.id, words)
    return {"labelled": "branch", "branch": b.id, "session": s.uid,
            "label": shapes.text(words, 200) if words else None, "undo": "u in arbor's app"}


def _describe(words: str | None, what: str) -> str:
    return f"label {what}: {words}" if words else f"clear the label of {what}"


def make_checkpoint(store, session: str, name: str, *, branch: int | str | None = None,
               entry: int | None = None) -> dict[str, Any]:
    from core.actions import operations, undo

    s = queries.resolve_session(store, session)
    b = queries.resolve_branch(store, s, branch)
    at = _entry_on(store, s, b, entry).seq if entry is not None else None
    where = f"entry {at}" if at is not None else f"the head of branch {b.id}"
    with undo.recorded(store, s.id, "checkpoint",
                       f"checkpoint {name.strip()} at {where} (by an agent)"):
        made = operations.checkpoint(store, b.id, name, at_entry_id=at)
    return {"checkpoint": made.id, "name": shapes.text(made.checkpoint_name, 200),
            "branch": b.id, "entry": made.entry_seq, "session": s.uid,
            "undo": "u in arbor's app"}


def fork_at(store, session: str, entry: int, *, branch: int | str | None = None,
            name: str = "", env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A new branch at `entry` (made current, as the app's `b` does), written as a new
    native session of the agent that wrote the session, with the command that resumes it."""
    from core.actions import operations, undo
    from core.agents import prepare_resume
    from core.model.errors import ArborError

    s = queries.resolve_session(store, session)
    b = queries.resolve_branch(store, s, branch)
    at = _entry_on(store, s, b, entry)
    description = f"branch {name.strip() or 'unnamed'} at entry {at.id[:8]} (by an agent)"
    with undo.recorded(store, s.id, "branch", description):
        new = operations.branch(store, b.id, at.seq, name=name.strip())
    out: dict[str, Any] = {"session": s.uid, "branch": shapes.branch(new), "undo": "u in arbor's app"}
    try:
        plan = prepare_resume(store, store.sessions.get(s.id), new, env=env)
    except ArborError as error:
        out["resume"] = None
        out["why_no_resume"] = shapes.text(str(error), 300)
        return out
    out["resume"] = {"agent": plan.agent, "command": shapes.text(plan.shell_command(), 2000),
                     "cwd": shapes.text(plan.cwd, 500), "summary": shapes.text(plan.summary, 500),
                     "native_id": plan.native_id,
                     "file": shapes.text(str(plan.file), 500) if plan.file else None}
    return out


def register(server, served) -> None:
    store = served.store

    @server.tool(annotations=WRITE)
    def label(
        session: SessionRef,
        text: Annotated[str, Field(max_length=200, description="the label; empty clears it")],
        entry: Annotated[int | None, Field(ge=1, description=(
            "label this entry; without it the branch is labelled"))] = None,
        branch: BranchRef = None,
    ) -> CallToolResult:
        """Label an entry (or a branch) so that people and agents find it again; an empty
        text clears the label. Undone with u in arbor's app."""
        return served.answer(lambda: apply_label(store, session, text, entry=entry, branch=branch))

    @server.tool(annotations=WRITE)
    def checkpoint(
        session: SessionRef,
        name: Annotated[str, Field(min_length=1, max_length=200)],
        branch: BranchRef = None,
        entry: Annotated[int | None, Field(ge=1, description=(
            "an entry of the branch; default: its head"))] = None,
    ) -> CallToolResult:
        """A named checkpoint on a branch, at its head or one of its entries: a place to roll
        back to later. Undone with u in arbor's app."""
        return served.answer(lambda: make_checkpoint(store, session, name, branch=branch,
                                                 entry=entry))

    @server.tool(annotations=WRITE)
    def fork_here(
        session: SessionRef,
        entry: Entry,
        branch: BranchRef = None,
        name: Annotated[str, Field(max_length=200)] = "",
    ) -> CallToolResult:
        """A new branch of the session at an entry (the entries after it stay on the old
        branch), made current and written as a new session of the agent that wrote it;
        returns the shell command that resumes it there. Undone with u in arbor's app."""
        return served.answer(lambda: fork_at(store, session, entry, branch=branch, name=name,
                                                     env=served.env))

