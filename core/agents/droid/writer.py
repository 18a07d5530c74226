"""`o` / `arbor resume` for Factory droid: the session droid wrote, carried on where its file
ends with `droid --fork <session id>` from the project folder (droid's `--resume` fetches
the session from Factory's servers; `--fork` reads the local file, as
tests/test_agent_lab.py shows). arbor does not write droid sessions yet: a branch that ends
elsewhere gets a sentence saying so and what can be done instead."""

from __future__ import annotations

from core.agents.native import BranchToWrite, ResumeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

WRITES = False     # (no native file is written: see the module doc)


def command(session_id: str) -> list[str]:
    return ["droid", "--fork", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    _low, high, _count = job.store.entries.span(session.id)
    if session.kind == "subagent":
        raise ResumeError("a droid sub-agent's session cannot be carried on on its own; "
                          "open its parent session and press o there")
    if not session_id or job.head_seq != high:
        raise ResumeError(
            "arbor cannot write droid sessions yet, so only the end of a session droid wrote "
            "can be carried on (its last message, with droid --fork); to carry this branch "
            "on, export it (arbor export --format markdown) and give it to droid as a prompt")
    plan.native_id = session_id
    plan.summary = (f"The branch ends where droid's session {session_id} ends: droid forks it "
                    "and goes on (nothing to write)")
    plan.argv = command(session_id)
