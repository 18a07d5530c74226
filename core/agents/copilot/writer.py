"""`o` / `arbor resume` for GitHub Copilot CLI: the session Copilot wrote, carried on where
its `events.jsonl` ends with `copilot --resume=<session id>` from the project folder.
arbor does not write Copilot CLI sessions yet: a branch that ends elsewhere gets a sentence
saying so and what can be done instead."""

from __future__ import annotations

from core.agents.native import BranchToWrite, ResumeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

WRITES = False     # (no native file is written: see the module doc)


def command(session_id: str) -> list[str]:
    return ["copilot", f"--resume={session_id}"]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("a Copilot CLI sub-agent runs inside its parent's session and cannot "
                          "be carried on on its own; open its parent session and press o there")
    _low, high, _count = job.store.entries.span(session.id)
    if not session_id or job.head_seq != high:
        raise ResumeError(
            "arbor cannot write Copilot CLI sessions yet, so only the end of a session Copilot "
            "CLI wrote can be carried on (with copilot --resume); to carry this branch on, "
            "export it (arbor export --format markdown) and give it to Copilot as a prompt")
    plan.native_id = session_id
    plan.summary = (f"The branch ends where Copilot CLI's session {session_id} ends: Copilot "
                    "resumes it (nothing to write)")
    plan.argv = command(session_id)
