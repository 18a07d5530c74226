"""pi: its session files, versions 1 to 3, read into the store (`importer`) and a branch
written back as a new session file (`writer`)."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _recognise(first: dict[str, Any]) -> bool:
    t = first.get("type")
    if t == "session" and ("version" in first or "id" in first) and "payload" not in first:
        return True
    # a pi file whose header line was lost
    return t == "message" and isinstance(first.get("message"), dict) and "role" in first["message"]


def _by_name(path: str) -> bool:
    return "/.pi/agent/sessions/" in path and path.endswith(".jsonl")


AGENT = Agent(
    source="pi", title="pi", colour="#afd787", rank=30,
    places=(Place("PI_CODING_AGENT_DIR", (".pi", "agent"), "sessions"),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.pi.importer", writer="core.agents.pi.writer",
    session_noun="pi session",
    logs_note="`~/.pi/agent/sessions/<project>/*.jsonl` (versions 1 to 3), or under "
              "`$PI_CODING_AGENT_DIR`",
    resume_note="writes the branch as a new session file and runs `pi --session <file>`",
    usage_rule="the usage pi logged with each assistant message (its cost where it logged one)")
