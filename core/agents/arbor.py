"""Sessions arbor owns (written through `core`): no file to write, the store is the session.

Resuming one makes the branch current (a new current branch when the point is a message
inside it), so the next `SessionManager.continue_recent(cwd, session_dir)` of an agent
built on `core` carries on from there; the session is also marked as the newest of its
working directory, which is how `continue_recent` chooses.
"""

from __future__ import annotations

from pathlib import Path

from core.actions import operations
from core.store.location import PostgresURL
from .native import BranchToWrite

NAME = "arbor"


def make_current(job: BranchToWrite):
    """The branch to continue, made current; returns it (a new branch when the head is
    a message inside the chosen branch)."""
    store = job.store
    with store.transaction():
        if job.head_seq != job.branch.head_seq:
            branch = operations.branch(store, job.branch.id, job.head_seq)
        else:
            operations.make_current(store, job.branch.id)
            branch = store.branches.get(job.branch.id)
        store.sessions.mark_most_recent(job.session.id)   # continue_recent's choice
    return branch


def snippet(job: BranchToWrite) -> str:
    """How an agent built on `core` continues the session (Python)."""
    cwd = job.session.cwd or job.cwd
    if isinstance(job.store.path, PostgresURL):   # never the password: PGPASSWORD, ~/.pgpass
        opening = (f"manager = SessionManager.continue_recent({cwd!r}, '.',\n"
                   f"    store=open_store({job.store.path.without_password()!r}))")
        return _snippet(job, opening)
    store_path = Path(job.store.path)
    if store_path.name == "sessions.db":
        opening = (f"manager = SessionManager.continue_recent({cwd!r}, {str(store_path.parent)!r})")
    else:
        opening = (f"manager = SessionManager.continue_recent({cwd!r}, {str(store_path.parent)!r},\n"
                   f"                                         store=open_store({str(store_path)!r}))")
    return _snippet(job, opening)


def _snippet(job: BranchToWrite, opening: str) -> str:
    return ("from core import SessionManager, open_store\n\n"
            f"{opening}\n"
            f"# manager.session_id == {job.session.uid!r}; its current branch is the one chosen\n"
            "messages = manager.get_messages()   # the branch's context, compaction applied\n"
            "manager.append_message({'role': 'user', 'content': '…'})")
