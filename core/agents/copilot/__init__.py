"""GitHub Copilot CLI: its sessions (`~/.copilot/session-state/<uuid>/events.jsonl`, an
append-only event log, with `workspace.yaml` beside it) read into the store (`importer`).
Facts: docs/agents/copilot-cli.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOG_NAME = "events.jsonl"


def _recognise(first: dict[str, Any]) -> bool:
    """An event: `type` (`session.start`, `user.message`, …), `data`, `id`, `timestamp`,
    `parentId` (the previous event's id)."""
    kind = first.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(first.get("data"), dict) and \
        "id" in first and "parentId" in first and "timestamp" in first


def _events(name: str) -> bool:
    return name == LOG_NAME


def _by_name(path: str) -> bool:
    return "/.copilot/session-state/" in path and path.endswith("/" + LOG_NAME)


AGENT = Agent(
    source="copilot", title="Copilot CLI", colour="#8787d7", rank=50,
    places=(Place("COPILOT_HOME", (".copilot",), "session-state", _events),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.copilot.importer", writer="core.agents.copilot.writer",
    session_noun="Copilot CLI session",
    logs_note="`~/.copilot/session-state/<uuid>/events.jsonl` (`$COPILOT_HOME`; sub-agents "
              "inline, in their parent's events)",
    resume_note="`copilot --resume=<id>` from the project folder, of the branch written as a "
                "new session (`session-state/<uuid>/events.jsonl`), or of Copilot's own "
                "session where the branch ends where it ends",
    usage_rule="`session.usage_record` events, one per model request, on the "
               "`assistant.message` with the same `apiCallId` and keyed by it; `inputTokens` "
               "includes `cacheReadTokens` (cache read) and `cacheWriteTokens` (cache write), "
               "`reasoningTokens` is output; a compaction's request "
               "(`compactionTokensUsed`) counts too, although Copilot's own totals leave it "
               "out; Copilot's `cost` (premium requests) is kept, not taken as money")
