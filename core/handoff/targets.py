"""The agents a branch can be handed to, each through small functions around its writer in
core/agents (where its new session goes, how it is written, the command that resumes it),
and what the hand-off needs to know of each: its context and its metadata for a session
that came from another agent."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from core.agents.claude_code import writer as claude_code
from core.agents.codex import writer as codex
from core.agents.pi import writer as pi

WRITABLE = ("claude_code", "codex", "pi")

# The context each agent's default model loads (tokens), less what the agent's own system
# prompt, tool definitions and the reply take. Claude Code: 200k (Sonnet/Opus without the
# 1M beta); Codex: gpt-5-codex's 272k, of which Codex uses 95%; pi: the model is the
# user's, 128k is the common floor of the models it lists.
CONTEXT = {"claude_code": 200_000, "codex": 258_400, "pi": 128_000}
RESERVE = 30_000
ENV_LIMIT = "ARBOR_HANDOFF_CONTEXT"     # override (tokens), e.g. for a 1M-context model


def context_limit(target: str, env: Mapping[str, str]) -> int:
    value = (env.get(ENV_LIMIT) or "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return CONTEXT[target] - RESERVE


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


TARGETS = {
    "claude_code": Target(
        "Claude Code session", claude_code.place,
        lambda job, file, new_id, _parent: claude_code.write(job, file, new_id),
        lambda plan: claude_code.command(plan.native_id),
        lambda job: claude_code.transcript_dir(claude_code.folder_cwd(job.cwd), job.env),
        lambda job: claude_code.folder_cwd(job.cwd), claude_code.adds_nothing),
    "codex": Target(
        "Codex rollout", codex.place,
        lambda job, file, new_id, parent: codex.write(job, file, new_id, parent),
        lambda plan: codex.command(plan.native_id),
        lambda job: codex.codex_home(job.env), lambda job: job.cwd, codex.adds_nothing),
    "pi": Target(
        "pi session", pi.place,
        lambda job, file, new_id, _parent: pi.write(job, file, new_id),
        lambda plan: pi.command(plan.file),
        lambda job: pi.session_dir(job.cwd, job.env), lambda job: job.cwd, pi.adds_nothing),
}


def writer(target: str) -> Target:
    return TARGETS[target]


def offered(source: str) -> tuple[str, ...]:
    """The agents a branch `source` wrote can be opened in (`O`): that agent first when
    arbor can write it, then the others in their order."""
    return tuple(sorted(WRITABLE, key=lambda target: target != source))


def executable(target: str) -> str:
    """The command that runs the agent (`codex`), to say whether it is installed here."""
    import importlib

    from core.agents.registry import get

    return importlib.import_module(get(target).writer).EXECUTABLE
