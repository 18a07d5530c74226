"""Codex CLI: its rollouts read into the store (`importer`) and a branch written back as a new
rollout (`writer`)."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})


def _recognise(first: dict[str, Any]) -> bool:
    t = first.get("type")
    return "payload" in first and isinstance(t, str) and t in _LINE_TYPES


def _rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


def _by_name(path: str) -> bool:
    return _rollout(path.rpartition("/")[2])


AGENT = Agent(
    source="codex", title="Codex", colour="#87afd7", rank=20,
    places=(Place("CODEX_HOME", (".codex",), "sessions", _rollout),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.codex.importer", writer="core.agents.codex.writer",
    session_noun="Codex rollout",
    logs_note="`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, or under `$CODEX_HOME`",
    resume_note="writes the branch as a forked rollout and runs `codex resume <id>`",
    usage_rule="`token_count` events, one per turn (the running total with the turn's "
               "counts names it; a repeated total is not counted again)")
