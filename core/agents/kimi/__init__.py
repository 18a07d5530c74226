"""Kimi CLI: its sessions (`~/.kimi/sessions/<md5 of the work dir>/<uuid>/wire.jsonl`, the
complete event log of a session) read into the store (`importer`), and a branch written back
as a new session Kimi CLI resumes (`writer`). Facts:
docs/agents/kimi-cli.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOG_NAME = "wire.jsonl"


def _recognise(first: dict[str, Any]) -> bool:
    if first.get("type") == "metadata" and "protocol_version" in first:
        return True
    message = first.get("message")
    return isinstance(message, dict) and "timestamp" in first and len(first) == 2 and \
        isinstance(message.get("type"), str) and isinstance(message.get("payload"), dict)


def _wire(name: str) -> bool:
    return name == LOG_NAME


def _by_name(path: str) -> bool:
    return "/.kimi/sessions/" in path and path.endswith("/" + LOG_NAME)


AGENT = Agent(
    source="kimi", title="Kimi CLI", colour="#ff87af", rank=85,
    places=(Place("KIMI_SHARE_DIR", (".kimi",), "sessions", _wire),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.kimi.importer", writer="core.agents.kimi.writer",
    session_noun="Kimi CLI session",
    logs_note="`~/.kimi/sessions/<md5 of the work dir>/<uuid>/wire.jsonl` (`$KIMI_SHARE_DIR`; "
              "sub-agents in `subagents/<agent id>/`)",
    resume_note="writes the branch as a new session folder, as Kimi CLI's own fork makes "
                "one, and runs `kimi -r <id>` from the work folder (one Kimi lists in "
                "`kimi.json`: arbor does not change that file); at the end of a session Kimi "
                "CLI wrote, nothing is written",
    usage_rule="`token_usage` of each `StatusUpdate` in `wire.jsonl`, once per `message_id` "
               "(a step's response); `input_other` is input, `input_cache_read` cache read, "
               "`input_cache_creation` cache write; a sub-agent's steps are counted from its "
               "own file, not from the copies in its parent's")
