"""The one interface an agent implements: what arbor knows of it, in one place.

Each agent's package (`core/agents/<agent>/__init__.py`) holds an `AGENT = Agent(...)`:
its name, where it keeps its logs, how its files are recognised, which module reads them
(`importer`), which one writes a branch back as its native session (`writer`, optional),
how its usage is counted, and what `o` / `arbor resume` does with it. `registry.py` finds
them; detection, `--discover`, live follow, resume, `arbor list --source`, `arbor usage
--source` and the app's colours read them from there and from nowhere else.

An agent's importer module provides `import_file(store, path, result, ticker)` (and,
with `RESUMABLE = True`, the resumable form `import_file(..., start=, resume=, pacer=)`,
see `core.importing.driver`). A writer module provides `prepare(plan, job, env,
new_session)`: it fills a `ResumePlan` (see `core.agents.resume`).

Kept free of `typing` and `dataclasses`: every `arbor import` loads it (see
tests/test_import_startup.py).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Callable, Mapping


def any_jsonl(name: str) -> bool:
    return name.endswith(".jsonl")


class Place:
    """A folder an agent writes its logs to: the environment variable that moves the
    agent's folder (or ""), the folder's default place in the home folder, the logs'
    folder inside it, and which file names there are the agent's own."""

    __slots__ = ("variable", "default", "logs", "rule")

    def __init__(self, variable: str, default: tuple[str, ...], logs: str = "",
                 rule: Callable[[str], bool] = any_jsonl):
        self.variable, self.default, self.logs, self.rule = variable, default, logs, rule

    def folder(self, home: Path, env: Mapping[str, str]) -> Path:
        value = (env.get(self.variable) or "").strip() if self.variable else ""
        from pathlib import Path

        base = Path(value).expanduser() if value else home.joinpath(*self.default)
        return base / self.logs if self.logs else base

    @property
    def tail(self) -> tuple[str, ...]:
        """The folder's default name below the home folder (`.claude/projects`)."""
        return (*self.default, self.logs) if self.logs else self.default


class Agent:
    """What arbor knows of one agent (see the module doc). Every field but `source`,
    `title` and `importer` is optional."""

    __slots__ = ("source", "title", "colour", "rank", "places", "recognise", "by_name",
                 "database", "importer", "writer", "session_noun", "resume_note",
                 "usage_rule", "logs_note", "follows", "probe_rank")

    def __init__(self, *, source: str, title: str, importer: str | None, colour: str = "#a8a8a8",
                 rank: int = 100, places: tuple[Place, ...] = (),
                 recognise: Callable[[dict[str, Any]], bool] | None = None,
                 by_name: Callable[[str], bool] | None = None,
                 database: Callable[[frozenset], bool] | None = None,
                 writer: str | None = None, session_noun: str = "",
                 resume_note: str = "", usage_rule: str = "", logs_note: str = "",
                 follows: Callable[[str], bool] | None = None,
                 probe_rank: int | None = None):
        self.source = source              # the session's `source` and the import format
        self.title = title                # its name for people ("Claude Code")
        self.colour = colour              # the colour of its name in the app
        self.rank = rank                  # order in lists and in detection (lowest first)
        self.places = places              # default log folders (`--discover`, follow)
        self.recognise = recognise        # first JSON object of a log -> is it this agent's
        self.by_name = by_name            # the path (with "/") -> is it this agent's, by name
        self.database = database          # a SQLite file's table names -> is it this agent's
        self.importer = importer          # the module that reads its logs (loaded on use)
        self.writer = writer              # the module that writes a branch back, or None
        self.session_noun = session_noun or f"{title} session"
        self.resume_note = resume_note    # what `o` does, or why it cannot
        self.usage_rule = usage_rule      # how its usage is counted (dedupe), for people
        self.logs_note = logs_note        # where its logs live, for people
        # file names (in any followed folder) that are this agent's logs, beyond `.jsonl`
        self.follows = follows
        # order in detection by content (default: `rank`): a format that looks like another
        # one's (Qwen Code's records are Claude Code's with more fields) is asked first
        self.probe_rank = rank if probe_rank is None else probe_rank

    def __repr__(self) -> str:
        return f"Agent({self.source!r})"

    def importer_module(self):
        if self.importer is None:
            from core.model.errors import ArborError

            raise ArborError(f"{self.title} sessions are not imported from files")
        import importlib

        return importlib.import_module(self.importer)

    def writer_module(self):
        if self.writer is None:
            return None
        import importlib

        return importlib.import_module(self.writer)

    def folders(self, home: Path | None = None, env: Mapping[str, str] | None = None
                ) -> list[tuple[Path, Callable[[str], bool]]]:
        """Where it writes its logs (the folder its environment variable names, else the
        default in the home folder), each with its rule for file names."""
        from pathlib import Path

        env = os.environ if env is None else env
        home = Path(home) if home is not None else Path.home()
        return [(place.folder(home, env), place.rule) for place in self.places]
