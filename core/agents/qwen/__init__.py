"""Qwen Code: its session files (`~/.qwen/projects/<project>/chats/<session>.jsonl`) read into
the store (`importer`), and a branch written back as a new session Qwen Code resumes
(`writer`). Facts: docs/agents/qwen-code.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TYPES = ("user", "assistant", "tool_result", "system")


def _recognise(first: dict[str, Any]) -> bool:
    """A record of a uuid/parentUuid tree (like Claude Code's) whose message holds Gemini
    `parts`, or that says it is Qwen Code's (`provenance`, `tool_result`)."""
    if first.get("type") not in _TYPES or "uuid" not in first or "parentUuid" not in first:
        return False
    if first.get("type") == "tool_result" or "provenance" in first:
        return True
    message = first.get("message")
    return isinstance(message, dict) and "parts" in message and "content" not in message


def _by_name(path: str) -> bool:
    return "/.qwen/projects/" in path and path.endswith(".jsonl")


AGENT = Agent(
    source="qwen", title="Qwen Code", colour="#af87ff", rank=45, probe_rank=5,
    places=(Place("QWEN_HOME", (".qwen",), "projects"),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.qwen.importer", writer="core.agents.qwen.writer",
    session_noun="Qwen Code session",
    logs_note="`~/.qwen/projects/<project>/chats/<session>.jsonl` (sub-agents in "
              "`subagents/<session>/agent-*.jsonl`), or under `$QWEN_HOME`",
    resume_note="writes the branch as a new session file, as `qwen --resume <id> "
                "--fork-session` does, and runs `qwen --resume <id>` from the project folder",
    usage_rule="`usageMetadata` of each `assistant` record, once per record uuid (a fork's "
               "copies keep their uuids); the compression requests, recorded only as "
               "`ui_telemetry` events, count too; `cachedContentTokenCount` is cache read, "
               "`thoughtsTokenCount` output")
