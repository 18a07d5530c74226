"""The agents a branch can be handed to, and how the hand-off calls each one's writer in
core/agents (where its new session goes, how it is written, the command that resumes it),
with what it needs to know of each: its context and its metadata for a session that came
from another agent.

The targets come from the registry (core/agents/registry.py): every agent whose writer
writes sessions (a module with `place(job)`, `write(job, file, new_id)` and
`command(new_id)`, and not `WRITES = False`) and whose tools have a row in tools.py. A
writer may also give `sessions_folder(job)` (where its sessions go: part of what makes a
written session the same one again; default: the agent's log folder) and `run_cwd(job)`
(where its command runs; default: the session's folder) and `before(file)` (commands run
first, as opencode's import of the file) and `continued_in(job)` (where the agent goes on
with the session, when not in the file: opencode's database); `adds_nothing(line)` says which of its appended
lines leave a conversation where it was; `ready(job)` refuses (ResumeError) a hand-off the
agent could not resume (Kimi CLI in a folder it never ran in). Claude Code, Codex and pi, whose
writers were there first, are called through their own small functions below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from core.agents import registry
from . import tools

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

# The context each agent's default model loads (tokens), less what the agent's own system
# prompt, tool definitions and the reply take. Claude Code: 200k (Sonnet/Opus without the
# 1M beta); Codex: gpt-5-codex's 272k, of which Codex uses 95%; pi: the model is the
# user's, 128k is the common floor of the models it lists; Qwen Code: 200k, its limit for a
# model it does not know (qwen3-coder-plus loads 1M); Gemini CLI: Gemini 2.5/3 Pro's
# 1,048,576 (it compresses its history itself from half of that); droid: 200k, its default
# Claude models'; Kimi CLI: kimi-k2's 262,144; opencode: the model is the user's, 128k as
# for pi; Copilot CLI: 128k, the prompt its default models take in Copilot. Another
# agent: 128k.
CONTEXT = {"claude_code": 200_000, "codex": 258_400, "pi": 128_000, "qwen": 200_000,
           "gemini": 1_048_576, "droid": 200_000, "kimi": 262_144, "opencode": 128_000,
           "copilot": 128_000}
DEFAULT_CONTEXT = 128_000
RESERVE = 30_000
ENV_LIMIT = "ARBOR_HANDOFF_CONTEXT"     # override (tokens), e.g. for a 1M-context model


def context_limit(target: str, env: Mapping[str, str]) -> int:
    value = (env.get(ENV_LIMIT) or "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return CONTEXT.get(target, DEFAULT_CONTEXT) - RESERVE


def keep_recent(limit: int) -> int:
    """How much of the newest part a compaction for size keeps verbatim."""
    return max(1, min(20_000, limit // 4))


def metadata_for(target: str, session, origin: dict[str, Any]) -> dict[str, Any]:
    """What the target's writer reads from the session's metadata, for a session another
    agent wrote (none of that agent's own fields)."""
    if target == "codex":
        # session_meta fields Codex reads a rollout by (the rest is Codex's writer's)
        return {"sessionMeta": {"cli_version": "0.0.0", "source": "cli", "originator": "arbor"}}
    if target == "pi":
        meta = session.metadata or {}
        path = meta.get("path")
        return {"path": path} if isinstance(path, str) else {}
    return {}


@dataclass(frozen=True)
class Target:
    """One agent's writer, as the hand-off calls it."""

    kind: str                                               # "Codex rollout", …
    place: Callable[[Any], tuple[Path, str]]
    write: Callable[[Any, Path, str, str], None]            # job, file, new id, source's id
    command: Callable[[Any], list[str]]                     # plan -> argv
    folder: Callable[[Any], Path]                           # where its sessions go
    run_cwd: Callable[[Any], str]                           # where the command runs
    adds_nothing: Callable[[Any], bool]
    executable: str                                         # its command ("codex")
    ready: Callable[[Any], None] = lambda job: None         # refuses what it cannot resume
    # where the agent carries the session on when not in the file written (opencode's
    # database): what the app imports again on return
    continued_in: Callable[[Any], Path | None] = lambda job: None


def _first_three() -> dict[str, Target]:
    from core.agents.claude_code import writer as claude_code
    from core.agents.codex import writer as codex
    from core.agents.pi import writer as pi

    return {
        "claude_code": Target(
            "Claude Code session", claude_code.place,
            lambda job, file, new_id, _parent: claude_code.write(job, file, new_id),
            lambda plan: claude_code.command(plan.native_id),
            lambda job: claude_code.transcript_dir(claude_code.folder_cwd(job.cwd), job.env),
            lambda job: claude_code.folder_cwd(job.cwd), claude_code.adds_nothing,
            claude_code.EXECUTABLE),
        "codex": Target(
            "Codex rollout", codex.place,
            # (its forked_from_id is a thread id, a uuid: another agent's id that is not
            # one, opencode's `ses_…`, would make Codex refuse the rollout; the `handoff`
            # object names it all the same)
            lambda job, file, new_id, parent: codex.write(
                job, file, new_id, parent if _UUID.fullmatch(parent or "") else None),
            lambda plan: codex.command(plan.native_id),
            lambda job: codex.codex_home(job.env), lambda job: job.cwd, codex.adds_nothing,
            codex.EXECUTABLE),
        "pi": Target(
            "pi session", pi.place,
            lambda job, file, new_id, _parent: pi.write(job, file, new_id),
            lambda plan: pi.command(plan.file),
            lambda job: pi.session_dir(job.cwd, job.env), lambda job: job.cwd, pi.adds_nothing,
            pi.EXECUTABLE),
    }


def _writes(module) -> bool:
    return module is not None and getattr(module, "WRITES", True) is not False and \
        all(callable(getattr(module, name, None)) for name in ("place", "write", "command"))


def _log_folder(agent, env: Mapping[str, str]) -> Path:
    from core.agents.native import home

    folders = agent.folders(home(env), env)
    return folders[0][0] if folders else Path()


def _from_writer(agent, module) -> Target:
    """A target of an agent whose writer follows the module doc's names."""
    folder = getattr(module, "sessions_folder", None)
    executable = getattr(module, "EXECUTABLE", None) or module.command("")[0]
    first = getattr(module, "before", None)

    def command(plan) -> list[str]:
        if callable(first) and plan.file is not None:
            plan.before = first(plan.file)      # (opencode's import of the file, first)
        return module.command(plan.native_id)

    return Target(
        agent.session_noun, module.place,
        lambda job, file, new_id, _parent: module.write(job, file, new_id),
        command,
        folder if callable(folder) else (lambda job: _log_folder(agent, job.env)),
        getattr(module, "run_cwd", None) or (lambda job: job.cwd),
        getattr(module, "adds_nothing", None) or (lambda line: False),
        executable, getattr(module, "ready", None) or (lambda job: None),
        getattr(module, "continued_in", None) or (lambda job: None))


@lru_cache(maxsize=1)
def _targets() -> dict[str, Target]:
    first = _first_three()
    found: dict[str, Target] = {}
    for agent in registry.agents():
        if not tools.has_row(agent.source) or agent.writer is None:
            continue
        if agent.source in first:
            found[agent.source] = first[agent.source]
            continue
        module = agent.writer_module()
        if _writes(module):
            found[agent.source] = _from_writer(agent, module)
    return found


def writable() -> tuple[str, ...]:
    """Every agent a branch can be handed to, in the registry's order."""
    return tuple(_targets())


def writer(target: str) -> Target:
    return _targets()[target]


def names() -> dict[str, str]:
    """What a person or an agent may call each target (`arbor resume --in`, the MCP
    `hand_off` tool): its command's name (`claude`, `qwen`), its key, and its name spelled
    with dashes or run together."""
    found: dict[str, str] = {}
    for target in writable():
        title = registry.title(target).lower()
        for name in (executable(target), target, target.replace("_", "-"),
                     title.replace(" ", "-"), title.replace(" ", ""), title.replace(" ", "_")):
            found.setdefault(name, target)
    return found


def named(name: str, asked: str = "it") -> str:
    """The target `name` stands for; otherwise an ArborError saying what `asked` (the
    option or argument) takes."""
    from core.model.errors import ArborError

    target = names().get(name.strip().lower())
    if target is None:
        raise ArborError(f"arbor cannot write sessions of {name!r}: {asked} takes "
                         + ", ".join(executable(t) for t in writable()))
    return target


def offered(source: str) -> tuple[str, ...]:
    """The agents a branch `source` wrote can be opened in (`O`): that agent first when
    arbor can write it, then the others in their order."""
    return tuple(sorted(writable(), key=lambda target: target != source))


def executable(target: str) -> str:
    """The command that runs the agent (`codex`), to say whether it is installed here."""
    return writer(target).executable


def __getattr__(name: str):
    if name == "WRITABLE":          # (the name core.handoff exports)
        return writable()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
