"""opencode: its SQLite database (`~/.local/share/opencode/opencode.db`, every project's
sessions) read into the store (`importer`). Facts: docs/agents/opencode.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

DATABASE = "opencode.db"


def _database(tables: frozenset) -> bool:
    return {"session", "message", "part"} <= tables and "checkpoints" not in tables


def _recognise(first: dict) -> bool:
    """A session as `opencode export` writes it, on one line (as arbor's writer does)."""
    info = first.get("info")
    return isinstance(info, dict) and str(info.get("id", "")).startswith("ses_") and \
        isinstance(first.get("messages"), list)


def _own(name: str) -> bool:
    return name == DATABASE


AGENT = Agent(
    source="opencode", title="opencode", colour="#d7af5f", rank=50,
    places=(Place("XDG_DATA_HOME", (".local", "share"), "opencode", _own),),
    database=_database, recognise=_recognise,
    importer="core.agents.opencode.importer", writer="core.agents.opencode.writer",
    session_noun="opencode session",
    logs_note="one SQLite database for every project: `~/.local/share/opencode/opencode.db` "
              "(under `$XDG_DATA_HOME`)",
    resume_note="`opencode import <file>` of the branch written as opencode's export, then "
                "`opencode --session <id>`, from the project folder (at the end of a "
                "session opencode wrote: `opencode --session <id>` alone)",
    usage_rule="each step's `step-finish` (tokens and the cost opencode logged), once per "
               "step; a fork's copies (new ids, the same times) count once in any total")
