"""Claude Code: its transcripts read into the store (`importer`) and a branch written back as
a new transcript (`writer`)."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def looks_like(first: dict[str, Any]) -> bool:
    t = first.get("type")
    if t in ("user", "assistant", "system", "progress", "attachment") and (
            "parentUuid" in first or "sessionId" in first or "uuid" in first):
        return True
    if t in ("summary", "custom-title", "file-history-snapshot", "queue-operation", "ai-title",
             "agent-name", "last-prompt", "permission-mode") and "payload" not in first:
        return True
    return False


def _by_name(path: str) -> bool:
    return "/.claude/projects/" in path and path.endswith(".jsonl")


AGENT = Agent(
    source="claude_code", title="Claude Code", colour="#d7875f", rank=10,
    places=(Place("CLAUDE_CONFIG_DIR", (".claude",), "projects"),),
    recognise=looks_like, by_name=_by_name,
    importer="core.agents.claude_code.importer", writer="core.agents.claude_code.writer",
    session_noun="Claude Code session",
    logs_note="`~/.claude/projects/<project>/<session>.jsonl` (and `subagents/`), "
              "or under `$CLAUDE_CONFIG_DIR`",
    resume_note="writes the branch as a new transcript and runs `claude --resume <id>`",
    usage_rule="one record per API response, keyed by `message.id` + `requestId` "
               "(the largest copy kept)")
