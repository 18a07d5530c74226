"""Every agent arbor knows, from their packages: `core/agents/<agent>/__init__.py` holds an
`AGENT` (see base.py). Adding an agent is adding its package; nothing here names one.

Besides the agents whose logs are imported, sessions written through arbor's `core` have
the source `arbor` (ARBOR below): listed, coloured and resumed (by making a branch
current) like the others, never imported from a file.
"""

from __future__ import annotations

import importlib
import os

from .base import Agent

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Mapping

ARBOR = Agent(source="arbor", title="arbor", importer=None, colour="#87d7d7", rank=1000,
              session_noun="arbor session",
              resume_note="the branch is made current; an agent built on arbor's core "
                          "continues it")

_FOUND: tuple[Agent, ...] | None = None
_BY_SOURCE: dict[str, Agent] = {}
_PROBING: tuple[Agent, ...] | None = None


def agents() -> tuple[Agent, ...]:
    """The agents whose logs arbor imports, in their order (`Agent.rank`)."""
    global _FOUND
    if _FOUND is None:
        found = []
        here = os.path.dirname(__file__)
        with os.scandir(here) as listing:
            names = sorted(entry.name for entry in listing
                           if entry.is_dir() and not entry.name.startswith(("_", "."))
                           and os.path.exists(os.path.join(entry.path, "__init__.py")))
        for name in names:
            module = importlib.import_module(f"{__package__}.{name}")
            agent = getattr(module, "AGENT", None)
            if isinstance(agent, Agent):
                found.append(agent)
        found.sort(key=lambda agent: (agent.rank, agent.source))
        _FOUND = tuple(found)
        _BY_SOURCE.update((agent.source, agent) for agent in (*_FOUND, ARBOR))
    return _FOUND


def everyone() -> tuple[Agent, ...]:
    """The agents and arbor itself: every source a session may have."""
    return (*agents(), ARBOR)


def get(source: str | None) -> Agent | None:
    """The agent of a session's source (or an import format); None for one not known."""
    if _FOUND is None:
        agents()
    return _BY_SOURCE.get(source or "")


def formats() -> tuple[str, ...]:
    """The import formats (an agent's source), in detection order."""
    return tuple(agent.source for agent in agents() if agent.importer is not None)


def sources() -> tuple[str, ...]:
    """Every session source (`arbor list --source`, `arbor usage --source`)."""
    return tuple(agent.source for agent in everyone())


def title(source: str | None) -> str:
    agent = get(source)
    return agent.title if agent is not None else (source or "")


def colour(source: str | None, default: str = "#808890") -> str:
    agent = get(source)
    return agent.colour if agent is not None else default


def colours() -> dict[str, str]:
    return {agent.source: agent.colour for agent in everyone()}


def titles_text(final: str = "or") -> str:
    """"Claude Code, Codex, … or Aider": the agents whose logs arbor reads, for a sentence."""
    return titles_text_of(agents(), final)


def titles_text_of(chosen, final: str = "or") -> str:
    names = [agent.title for agent in chosen]
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {final} {names[-1]}"


def databases_text() -> str:
    """The agents whose logs are SQLite databases, for a sentence ("LangGraph, opencode")."""
    return ", ".join(agent.title for agent in agents() if agent.database is not None)


# ------------------------------------------------------------------ places and files
def places(home: Path | None = None, env: Mapping[str, str] | None = None
           ) -> list[tuple[Path, Callable[[str], bool]]]:
    """Where every agent writes its logs, with each one's rule for file names."""
    out = []
    for agent in agents():
        out.extend(agent.folders(home, env))
    return out


def place_table() -> tuple[tuple[str, tuple[str, ...], str, Callable[[str], bool]], ...]:
    """(variable, default, logs, rule) of every agent's folders, in order."""
    return tuple((place.variable, place.default, place.logs, place.rule)
                 for agent in agents() for place in agent.places)


def places_text() -> str:
    """"~/.claude/projects, ~/.codex/sessions, …": every agent's default folder, for help."""
    return ", ".join("~/" + "/".join(place.tail) for agent in agents() for place in agent.places)


def follows(name: str) -> bool:
    """Whether a file of this name, in a followed folder, is a log some agent writes
    beyond the `.jsonl` and database files every folder is looked at for."""
    for agent in agents():
        if agent.follows is not None and agent.follows(name):
            return True
    return False


# ------------------------------------------------------------------------ detection
def detect_json(first: dict[str, Any]) -> str | None:
    """The format of a log whose first readable JSON object is `first`."""
    for agent in _probing():
        if agent.recognise(first):
            return agent.source
    return None


def _probing() -> tuple[Agent, ...]:
    global _PROBING
    if _PROBING is None:
        _PROBING = tuple(sorted((agent for agent in agents() if agent.recognise is not None),
                                key=lambda agent: (agent.probe_rank, agent.rank)))
    return _PROBING


def detect_by_name(path_text: str) -> str | None:
    """A hint from the path alone (with "/" separators), for a log whose lines say nothing."""
    for agent in agents():
        if agent.by_name is not None and agent.by_name(path_text):
            return agent.source
    return None


def detect_database(tables: frozenset) -> str | None:
    """The agent whose SQLite database has these tables."""
    for agent in agents():
        if agent.database is not None and agent.database(tables):
            return agent.source
    return None
