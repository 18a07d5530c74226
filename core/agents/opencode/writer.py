"""`o` / `arbor resume` for opencode: the session opencode wrote, resumed where it ends
(`opencode --session <id>` from the project folder). arbor does not write opencode
sessions yet (docs/agents/opencode.md: `opencode import` of an export file would be the
way, never a write into its live database): a branch that ends elsewhere gets a sentence
saying so and what can be done instead."""

from __future__ import annotations

from core.agents.native import BranchToWrite, ResumeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

WRITES = False     # (no native session is written: see the module doc)


def command(session_id: str) -> list[str]:
    return ["opencode", "--session", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    session_id = job.metadata.get("sessionId") if isinstance(job.metadata.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("an opencode sub-agent's session is carried on from its parent "
                          "session: open it and press o there")
    _low, high, _count = job.store.entries.span(session.id)
    if not session_id or job.head_seq != high:
        raise ResumeError(
            "arbor cannot write opencode sessions yet, so only the end of a session opencode "
            "wrote can be resumed (its last message); to carry this branch on, export it "
            "(arbor export --format markdown) and give it to opencode as a prompt")
    plan.native_id = session_id
    plan.summary = f"The branch ends where opencode's session {session_id} ends: nothing to write"
    plan.argv = command(session_id)
