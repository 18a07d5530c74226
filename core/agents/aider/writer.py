"""`o` / `arbor resume` for Aider: Aider keeps one history per project and reads all of it
back with `aider --restore-chat-history` (tests/test_agent_lab.py shows the first request
then holds the earlier chat, then the new prompt). So the end of a project's history is
carried on by that command from the project folder; a branch that ends elsewhere cannot
be handed to Aider (arbor would have to rewrite the project's history), and `o` says so."""

from __future__ import annotations

from core.agents.native import BranchToWrite, ResumeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

WRITES = False     # (no native file is written: see the module doc)


def command(history: str) -> list[str]:
    return ["aider", "--restore-chat-history", "--chat-history-file", history]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    _low, high, _count = job.store.entries.span(job.session.id)
    if job.head_seq != high:
        raise ResumeError(
            "Aider keeps one chat history per project and arbor cannot write it, so only the "
            "end of the history can be carried on (aider --restore-chat-history, from the "
            "project folder); to carry this branch on, export it (arbor export --format "
            "markdown) and give it to Aider as a prompt")
    history = job.metadata.get("path")
    if not isinstance(history, str) or not history:
        raise ResumeError("this Aider history was imported without its file's path; "
                          "import the project's .aider.chat.history.md again")
    plan.native_id = history
    plan.summary = ("The branch ends where the project's Aider history ends: Aider reads it "
                    "back (nothing to write)")
    plan.argv = command(history)
