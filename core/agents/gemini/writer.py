"""`o` / `arbor resume` for Gemini CLI: the session Gemini CLI wrote, resumed where its file
ends (`gemini --resume <session id>` from the project folder). arbor does not write Gemini
CLI sessions yet: a branch that ends elsewhere (an earlier message, a branch of a rewind)
gets a sentence saying so and what can be done instead."""

from __future__ import annotations

from core.agents.native import BranchToWrite, ResumeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

WRITES = False     # (no native file is written: see the module doc)


def command(session_id: str) -> list[str]:
    return ["gemini", "--resume", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    _low, high, _count = job.store.entries.span(session.id)
    if session.kind == "subagent":
        raise ResumeError("a Gemini CLI sub-agent's session cannot be resumed on its own; "
                          "open its parent session and press o there")
    if not session_id or job.head_seq != high:
        raise ResumeError(
            "arbor cannot write Gemini CLI sessions yet, so only the end of a session Gemini "
            "CLI wrote can be resumed (its last message); to carry this branch on, export it "
            "(arbor export --format markdown) and give it to Gemini CLI as a prompt")
    plan.native_id = session_id
    plan.summary = f"The branch ends where Gemini CLI's session {session_id} ends: nothing to write"
    plan.argv = command(session_id)
