"""The write tools of `arbor mcp` (only with --allow-write): label, checkpoint, fork_here,
hand_off.

Each runs the operation arbor's app runs for the same key (core/actions/operations.py) inside
`core.actions.undo.recorded`, the log the app's `u` walks back: an agent's label, checkpoint
or branch is undone in the app like one made there; a hand-off is `arbor resume --in` (and
the app's `O`), logged by core/handoff the same way. Nothing is deleted by any of them."""

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


def hand_off_branch(store, session: str, agent: str, *, branch: int | str | None = None,
                    entry: int | None = None, redact: bool = False, compact: bool = False,
                    env: Mapping[str, str] | None = None, cwd: str | None = None
                    ) -> dict[str, Any]:
    """The branch (up to its head, or up to an entry of it) written as a new session of
    another agent, as `arbor resume --in` writes it; the command that runs it there."""
    from core.handoff import BranchTooLarge, prepare_handoff, targets
    from core.model.errors import ArborError

    s = queries.resolve_session(store, session)
    b = queries.resolve_branch(store, s, branch)
    at = _entry_on(store, s, b, entry).seq if entry is not None else None
    target = targets.named(agent, "agent")
    try:
        plan = prepare_handoff(store, store.sessions.get(s.id), b, target=target, at_seq=at,
                               env=env, cwd_fallback=cwd, redact=redact, compact=compact,
                               by="an agent")
    except BranchTooLarge as error:
        offer = error.compaction
        if offer is None:
            raise
        raise ArborError(
            f"the branch is about {error.tokens:,} tokens, more than "
            f"{registry_title(target)} can load (about {error.limit:,}); with compact=true "
            f"arbor summarises its oldest {offer.messages_summarised:,} messages in the new "
            f"session only (about {offer.tokens_before:,} tokens to {offer.tokens_after:,}), "
            "the branch in arbor stays as it is") from error
    return {
        "session": s.uid, "branch": b.id, "entry": at, "agent": plan.agent, "target": target,
        "command": shapes.text(plan.shell_command(), 2000), "cwd": shapes.text(plan.cwd, 500),
        "native_id": plan.native_id, "file": shapes.text(str(plan.file), 500) if plan.file else None,
        "new_session": _uid_of(store, plan.imported_id), "reused": plan.reused,
        "compacted": plan.compacted, "tokens": plan.tokens,
        "masked": plan.redacted.count if plan.redacted is not None else None,
        "summary": shapes.text(plan.summary, 500),
        "notes": [shapes.text(note, 500) for note in plan.notes],
        "undo": "u in arbor's app (the copy in arbor is archived; the agent's file stays)"}


def registry_title(source: str) -> str:
    from core.agents.registry import title

    return title(source)


def _uid_of(store, session_id: int | None) -> str | None:
    found = store.sessions.get(session_id) if session_id is not None else None
    return found.uid if found is not None else None


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

    @server.tool(annotations=WRITE)
    def hand_off(
        session: SessionRef,
        agent: Annotated[str, Field(min_length=1, max_length=40, description=(
            "the agent to hand the branch to, by its command: claude, codex, pi, qwen, …"))],
        branch: BranchRef = None,
        entry: Annotated[int | None, Field(ge=1, description=(
            "hand off the branch up to this entry of it; default: its head"))] = None,
        redact: Annotated[bool, Field(description=(
            "mask API keys, tokens, private keys and passwords in what is written"))] = False,
        compact: Annotated[bool, Field(description=(
            "for a branch larger than the agent's context: its older part summarised in "
            "the new session only"))] = False,
    ) -> CallToolResult:
        """Hand a branch to another agent (as arbor resume --in): written as a new native
        session of that agent, tool calls under its own tools, nested under the original
        in arbor; returns the shell command that runs it there (nothing is run). Undone
        with u in arbor's app."""
        return served.answer(lambda: hand_off_branch(
            store, session, agent, branch=branch, entry=entry, redact=redact,
            compact=compact, env=served.env, cwd=served.cwd))
