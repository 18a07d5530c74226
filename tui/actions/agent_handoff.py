"""`o`, open in agent: hand the highlighted branch (or the branch up to the highlighted
message) to the agent that wrote it, in this terminal, and show what it added on return.

The session file is written in a worker thread (a long branch takes a moment) and imported
at once, so arbor lists the new session as the agent does; then the app is suspended
(`App.suspend`), the agent's resume command runs from the session's working directory, and
when the agent exits the app comes back. The file the agent continued is imported again
(live follow has usually done so already, while the agent ran), and what the agent added
is counted in the store and shown. Where the agent cannot be started (not on PATH, no such
directory, a terminal the app cannot hand over), the exact command is shown and copied to
the clipboard. A session arbor owns has its branch made current, and the Python that
continues it goes to the clipboard.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from core.agents import ResumePlan, prepare_resume, run
from core.model.errors import ArborError

from tui.render.safe_text import clean


@dataclass
class Handoff:
    session_id: int          # arbor's session
    plan: ResumePlan
    watched: Path | None     # the file the agent continues: imported again on return
    show_id: int             # the session the agent continues (the new one, once imported)
    messages: int            # its messages before the agent ran


def _failure(store, error: BaseException) -> str:
    if isinstance(error, store.database_errors):
        return f"The store could not be read or written: {error}"
    if isinstance(error, OSError):
        return f"Cannot write the session file: {error.strerror or error}"
    return str(error)


# ------------------------------------------------------------------- the steps
def prepare(store, session_id: int, branch_id: int, at_seq: int | None) -> Handoff:
    """Write what the agent needs (in a worker thread)."""
    session = store.sessions.get(session_id)
    branch = store.branches.get(branch_id)
    if session is None or branch is None:
        raise ArborError("That session or branch is no longer in the store.")
    plan = prepare_resume(store, session, branch, at_seq=at_seq)
    watched = plan.file
    if watched is not None:
        _import(store.path, watched)
        watched = plan.continued_in or watched     # (opencode adds to its database)
    elif plan.continued_in is not None:
        watched = plan.continued_in
    elif plan.argv:
        # the agent resumes a file of its own (Codex's rollout, the session arbor wrote
        # before): that is the file that grows
        meta = session.metadata or {}
        fork = (meta.get("forks") or {}).get(plan.native_id) or {}
        path = fork.get("path") or meta.get("path")
        watched = Path(path) if isinstance(path, str) else None
    show_id = _continued(store, plan, session_id)
    return Handoff(session_id, plan, watched, show_id, _messages(store, show_id))


def _continued(store, plan: ResumePlan, session_id: int) -> int:
    """The session the agent carries on: the one with the agent's id for it (the session
    written for it, or the one of the rollout Codex resumes), else the session chosen (a
    Codex fork merged into its parent's session)."""
    found = store.sessions.by_uid(plan.native_id) if plan.native_id else None
    return found.id if found is not None else session_id


def _messages(store, session_id: int) -> int:
    found = store.sessions.get(session_id)
    return found.message_count if found is not None else 0


def blocked(plan: ResumePlan) -> str | None:
    """Why the agent cannot be started here, or None."""
    if plan.executable_path() is None:
        return f"{plan.executable} is not on PATH"
    if not plan.cwd_exists():
        return f"the session's directory {plan.cwd} does not exist here"
    return None


def run_in_terminal(plan: ResumePlan) -> int:
    """Run the agent in the terminal the app handed over (inside App.suspend)."""
    # (names and the folder are the data's: shown with their controls made visible)
    notes = "".join(f"arbor: {clean(note)}\n" for note in getattr(plan, "notes", ()))
    print(f"\narbor: {clean(plan.summary)}.\n{notes}arbor: running {clean(plan.shell_command())}\n",
          file=sys.stderr, flush=True)
    try:
        return run(plan)
    except OSError as error:
        print(f"arbor: cannot start {clean(plan.executable)}: {clean(error.strerror or error)}",
              file=sys.stderr)
        return 127
    except KeyboardInterrupt:
        return 130


def _import(store_path: Path, path: Path) -> None:
    """Import one file on a connection of its own (a worker must not hold the one the
    screen reads with)."""
    from core import open_store
    from core.importing import import_paths

    with open_store(store_path, create=False) as importing:
        import_paths(importing, [path])


def import_again(store_path: Path, handoff: Handoff) -> tuple[int, str]:
    """Import the file the agent continued (in a worker thread) and count what the agent
    wrote: the session's messages now less those it had before the agent ran. Counted in
    the store, not from this import: the app's live follow has usually imported the agent's
    lines while it ran, and this import then finds nothing new. Returns the session to
    show and a sentence for the user."""
    from core import open_store
    from core.importing import import_paths

    plan = handoff.plan
    with open_store(store_path, create=False) as store:
        if handoff.watched is not None and handoff.watched.is_file():
            import_paths(store, [handoff.watched])
        added = max(0, _messages(store, handoff.show_id) - handoff.messages)
    if not added:
        return handoff.show_id, f"Back from {plan.agent}; it added nothing to the session."
    return handoff.show_id, (f"Back from {plan.agent}: {added} new "
                             f"message{'' if added == 1 else 's'}.")


# ------------------------------------------------------------- with the app
GROUP = "agent-handoff"


def open_in_agent(app, session_id: int, branch_id: int, at_seq: int | None) -> None:
    """Start the hand-over; the app stays responsive while the file is written. One at a
    time: a second `o` while the first is being prepared or read back is refused."""
    if any(worker.group == GROUP and not worker.is_finished for worker in app.workers):
        app.say("Still opening the last one in its agent…", title="Open in agent")
        return

    def work() -> None:
        try:
            handoff = prepare(app.store, session_id, branch_id, at_seq)
        except (OSError, *app.store.errors) as error:
            app.call_from_thread(app.say, _failure(app.store, error), title="Open in agent",
                                 severity="error", timeout=10)
            return
        app.call_from_thread(hand_over, app, handoff)

    app.run_worker(work, thread=True, group=GROUP)


def hand_over(app, handoff: Handoff) -> None:
    from textual.app import SuspendNotSupported

    plan = handoff.plan
    if not plan.argv:
        app.copy_to_clipboard(plan.snippet)
        app.say(f"{plan.summary}. The Python that does it is on the clipboard.",
                title="Open in agent", timeout=12)
        app.reload(session_id=handoff.session_id, branch_id=plan.branch_id)
        return
    reason = blocked(plan)
    code = None
    if reason is None:
        try:
            with app.suspend():
                code = run_in_terminal(plan)
        except SuspendNotSupported:
            reason = "this terminal cannot be handed over"
    if reason is not None:
        command = plan.shell_command()
        app.copy_to_clipboard(command)
        app.reload(session_id=handoff.show_id)
        app.say(f"{plan.summary}. {reason[0].upper()}{reason[1:]}, so {plan.agent} was not started. "
                f"The command is on the clipboard:\n{command}{_notes(plan)}",
                title="Open in agent", severity="warning", timeout=30)
        return

    def back() -> None:
        try:
            session_id, text = import_again(app.store.path, handoff)
        except (OSError, *app.store.errors) as error:
            session_id, text = handoff.show_id, _failure(app.store, error)
        if code:
            text += f" ({plan.executable} exited with status {code}.)"
        text += _notes(plan)
        app.call_from_thread(_show, app, session_id, text)

    app.run_worker(back, thread=True, group=GROUP)


def _notes(plan) -> str:
    """A hand-off's notes (what crossed, what was masked), a line each."""
    return "".join(f"\n{note[0].upper()}{note[1:]}." for note in getattr(plan, "notes", ()) if note)


def _show(app, session_id: int, text: str) -> None:
    app.reload(session_id=session_id)
    app.say(text, title="Open in agent", timeout=10)


# ------------------------------------------------ O: open in another agent
def installed(target: str) -> bool:
    """Whether the agent's command is on PATH here (the picker says so when it is not)."""
    import shutil

    from core.handoff import targets

    return shutil.which(targets.executable(target)) is not None


def prepare_handoff_in(store_path, session_id: int, branch_id: int, at_seq: int | None,
                       target: str, *, redact: bool, compact: bool) -> Handoff:
    """Write the branch as a session of `target` (core.handoff, in a worker thread, on a
    connection of its own: it imports the new file and links it in the store)."""
    from core import open_store
    from core.handoff import prepare_handoff

    with open_store(store_path, create=False) as store:
        session = store.sessions.get(session_id)
        branch = store.branches.get(branch_id)
        if session is None or branch is None:
            raise ArborError("That session or branch is no longer in the store.")
        plan = prepare_handoff(store, session, branch, target=target, at_seq=at_seq,
                               redact=redact, compact=compact)
        show_id = plan.imported_id if plan.imported_id is not None else \
            _continued(store, plan, session_id)
        return Handoff(session_id, plan, plan.continued_in or plan.file, show_id,
                       _messages(store, show_id))


def open_in_other_agent(app, session_id: int, branch_id: int, at_seq: int | None, target: str,
                        *, redact: bool = False, compact: bool = False) -> None:
    """O: the branch written as a session of the agent picked (the same path as `arbor
    resume --in`), then run as `o` runs one. The agent that wrote it, picked without
    masking, is `o` itself. A branch too large for the agent is offered compacted first."""
    from core.agents.registry import title as agent_title
    from core.handoff import BranchTooLarge

    if any(worker.group == GROUP and not worker.is_finished for worker in app.workers):
        app.say("Still opening the last one in its agent…", title="Open in agent")
        return
    session = app._session(session_id)
    if session is not None and session.source == target and not redact:
        open_in_agent(app, session_id, branch_id, at_seq)
        return

    def work() -> None:
        try:
            handoff = prepare_handoff_in(app.store.path, session_id, branch_id, at_seq, target,
                                         redact=redact, compact=compact)
        except BranchTooLarge as error:
            if error.compaction is not None and not compact:
                app.call_from_thread(offer_compaction, app, error, agent_title(target),
                                     lambda: open_in_other_agent(app, session_id, branch_id,
                                                                 at_seq, target, redact=redact,
                                                                 compact=True))
            else:
                app.call_from_thread(app.say, str(error), title="Open in agent",
                                     severity="error", timeout=15)
            return
        except (OSError, *app.store.errors) as error:
            app.call_from_thread(app.say, _failure(app.store, error), title="Open in agent",
                                 severity="error", timeout=10)
            return
        app.call_from_thread(hand_over, app, handoff)

    app.run_worker(work, thread=True, group=GROUP)


def offer_compaction(app, error, agent: str, accepted) -> None:
    """The branch is larger than the agent can load: show the compaction arbor would make
    (the preview `c` shows) and hand it off so when the user says yes."""
    from rich.text import Text

    from ..components.compact_dialog import plan_text
    from ..components.confirm_dialog import ConfirmDialog
    from ..render.formatting import DIM

    plan = error.compaction
    question = Text(end="")
    question.append(f"The branch is about {error.tokens:,} tokens, more than {clean(agent)} "
                    f"can load (about {error.limit:,}).", "bold")
    question.append("\narbor can hand it off compacted: the older part summarised in the new "
                    "session only; the branch in arbor stays as it is.\n\n", DIM)
    question.append_text(plan_text(plan))
    summary = (plan.summary or "").strip()
    if summary:
        question.append("\n\nSummary: ", DIM)
        question.append(clean(" ".join(summary.split()))[:300], DIM)
    dialog = ConfirmDialog(Text("Too large to hand off as it is", "bold"), question,
                           yes="Hand off compacted", no="Cancel")
    app.push_screen(dialog, lambda yes: accepted() if yes else None)
