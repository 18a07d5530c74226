"""Factory droid: its session files (`~/.factory/sessions/<dashed cwd>/<uuid>.jsonl`, with
`<uuid>.settings.json` beside each) read into the store (`importer`), and a branch written
back as a new session droid forks (`writer`). Facts:
docs/agents/droid.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _recognise(first: dict[str, Any]) -> bool:
    if first.get("type") == "session_start" and "id" in first:
        return True
    # a file whose header was lost: droid's context message opens every prompt
    return first.get("type") == "message" and str(first.get("id", "")).startswith("context-") \
        and isinstance(first.get("message"), dict)


def _by_name(path: str) -> bool:
    return "/.factory/sessions/" in path and path.endswith(".jsonl")


AGENT = Agent(
    source="droid", title="Factory droid", colour="#ffd75f", rank=80,
    # (asked before pi: a droid `message` line has pi's shape)
    probe_rank=25,
    places=(Place("", (".factory",), "sessions"),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.droid.importer", writer="core.agents.droid.writer",
    session_noun="droid session",
    logs_note="`~/.factory/sessions/<cwd with - for />/<uuid>.jsonl` (tokens in "
              "`<uuid>.settings.json`; forks and sub-agents are session files of their own)",
    resume_note="writes the branch as a new session file, as `droid --fork` writes one, and "
                "runs `droid --fork <id>` from the project folder (droid's `--resume` asks "
                "Factory's servers; `--fork` reads the local file); at the end of a session "
                "droid wrote, nothing is written: droid forks its own",
    usage_rule="droid records tokens per session, not per response: `tokenUsage` of "
               "`<uuid>.settings.json` (the session's own requests; a fork's copies and a "
               "sub-agent's requests are not in it) is one record per session id, on its "
               "last answer; read again it replaces itself, never adds; `cacheReadTokens` "
               "is cache read, `thinkingTokens` reasoning")
