"""Carry on from a branch in the agent that wrote it: the plan (`prepare_resume`) and the run.

`prepare_resume` writes the branch (up to its head, or up to a chosen entry on it) as a new
native session of the session's agent, or finds the session it wrote for the same unchanged
branch before, or that the agent's own file already ends there, and returns a `ResumePlan`:
the command, the directory to run it from, the file. Nothing runs until `run` is called, so
`arbor resume --print` and the app share it; `dry_run` writes nothing (`--dry-run`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, Mapping

from core.model.clock import utc_now
from core.model.errors import NotFound
from . import arbor, reuse
from .claude_code import writer as claude_code
from .codex import writer as codex
from .pi import writer as pi
from .native import BranchToWrite, Ids, ResumeError, expand

AGENT_TITLES = {"pi": "pi", "claude_code": "Claude Code", "codex": "Codex", "arbor": "arbor"}


@dataclass
class ResumePlan:
    agent: str                     # the agent's name, for people
    argv: list[str]                # the command ([] for a session arbor owns)
    cwd: str                       # where to run it
    file: Path | None = None       # the native file written or reused (None: the agent's own file)
    native_id: str | None = None   # the agent's id of the session that resumes
    summary: str = ""              # one sentence: what was prepared
    snippet: str = ""              # a session arbor owns: how an agent continues it
    branch_id: int | None = None   # a session arbor owns: the branch made current
    cwd_guessed: bool = False      # no working directory was recorded; this is the current one
    reused: bool = False           # `file` is the one arbor wrote for the branch before
    dry_run: bool = False          # nothing was written or changed: `file` is where it would go

    @property
    def executable(self) -> str | None:
        return self.argv[0] if self.argv else None

    def shell_command(self) -> str:
        """`cd <cwd> && <command>`, quoted for a POSIX shell."""
        command = shlex.join(self.argv)
        return f"cd {shlex.quote(self.cwd)} && {command}" if self.cwd else command

    def executable_path(self, env: Mapping[str, str] | None = None) -> str | None:
        if not self.argv:
            return None
        path = (env if env is not None else os.environ).get("PATH")
        return shutil.which(self.argv[0], path=path)

    def cwd_exists(self) -> bool:
        return bool(self.cwd) and os.path.isdir(self.cwd)


def _branch_of(store, session, branch):
    if branch is not None:
        return branch
    current = store.branches.current(session.id)
    if current is None:
        branches = store.branches.of_session(session.id)
        if not branches:
            raise ResumeError(f"session {session.uid} has no branches")
        current = branches[0]
    return current


def prepare_resume(store, session, branch=None, *, at_seq: int | None = None,
                   env: Mapping[str, str] | None = None, now: datetime | None = None,
                   ids: Ids | None = None, cwd_fallback: str | None = None,
                   dry_run: bool = False) -> ResumePlan:
    """Write what the agent needs to carry on from `branch` (default: the current one),
    up to `at_seq` when given (an entry on the branch), and say how to run it. The file
    arbor wrote for the same unchanged branch before is used again (reuse.py). `dry_run`
    writes and changes nothing, and says what would be done."""
    env = os.environ if env is None else env
    branch = _branch_of(store, session, branch)
    head = branch.head_seq if at_seq is None else at_seq
    title = branch.name or f"branch {branch.id}"
    if head is None:
        raise ResumeError(f"{title} has no entries: there is nothing to carry on from")
    if at_seq is not None and (branch.head_seq is None or not store.paths.is_ancestor(at_seq, branch.head_seq)):
        raise NotFound(f"entry {at_seq} is not on {title}")
    source = session.source
    if source not in AGENT_TITLES:
        what = "LangGraph threads" if source == "langgraph" else f"sessions from {source!r}"
        raise ResumeError(f"{what} have no agent command arbor can resume; "
                          "the agents it can hand a branch to are pi, Claude Code and Codex")
    cwd = expand(session.cwd or "", env)
    guessed = False
    if not cwd:
        cwd = cwd_fallback or os.getcwd()
        guessed = True
    job = BranchToWrite(store=store, session=session, branch=branch, head_seq=head, cwd=cwd,
                        env=env, now=now or utc_now(), ids=ids or Ids())
    agent = AGENT_TITLES[source]
    plan = ResumePlan(agent=agent, argv=[], cwd=cwd, cwd_guessed=guessed, dry_run=dry_run)
    if source == "pi":
        own = pi.own_session(job) if reuse.written_by_arbor(job) else None
        if own is not None:
            plan.native_id = str(job.metadata.get("sessionId") or session.uid)
            plan.summary = f"The branch ends where pi's session file {own} ends: nothing to write"
        else:
            _new_session(plan, job, source, pi.session_dir(cwd, env), pi,
                         lambda target, new_id: pi.write(job, target, new_id))
        plan.argv = pi.command(own or plan.file)
    elif source == "claude_code":
        plan.cwd = claude_code.folder_cwd(cwd)
        own_id = claude_code.own_transcript(job) if reuse.written_by_arbor(job) else None
        if own_id is not None:
            plan.native_id = own_id
            plan.summary = (f"The branch ends where Claude Code's session {own_id} ends: "
                            "nothing to write")
        else:
            _new_session(plan, job, source, claude_code.transcript_dir(plan.cwd, env), claude_code,
                         lambda target, new_id: claude_code.write(job, target, new_id))
        plan.argv = claude_code.command(plan.native_id)
    elif source == "codex":
        tip, rollout_id = codex.is_rollout_tip(job)
        if tip:
            plan.native_id = rollout_id
            plan.summary = f"The branch ends where Codex's rollout {rollout_id} ends: nothing to write"
        else:
            _new_session(plan, job, source, codex.codex_home(env), codex,
                         lambda target, new_id: codex.write(job, target, new_id, rollout_id),
                         forked_from=rollout_id)
        plan.argv = codex.command(plan.native_id)
    elif dry_run:
        where = "" if head == branch.head_seq else f" up to entry {job.head().id}"
        plan.summary = (f"Would make {title}{where} the current branch of "
                        f"{session.session_name or session.uid} (nothing was changed)")
    else:
        current = arbor.make_current(job)
        plan.branch_id = current.id
        plan.snippet = arbor.snippet(job)
        plan.summary = (f"{current.name or f'branch {current.id}'} is now the current branch of "
                        f"{session.session_name or session.uid}: an agent built on arbor's core "
                        "continues it with SessionManager.continue_recent(...)")
    return plan


_KINDS = {"pi": "pi session", "claude_code": "Claude Code session", "codex": "Codex rollout"}


def _new_session(plan: ResumePlan, job: BranchToWrite, source: str, folder: Path,
                 writer: ModuleType, write: Callable[[Path, str], None],
                 forked_from: str = "") -> None:
    """The branch as a new native session: the one arbor wrote for it before when it still
    holds what was written (reuse.py), else a new one (none in a dry run), with the summary.
    `writer` is the agent's module (its `place` and `adds_nothing`)."""
    kind = _KINDS[source]
    key = reuse.fingerprint(job, source, folder, forked_from)
    found = reuse.find(job, key, writer.adds_nothing)
    if found is not None:
        plan.file, plan.native_id, plan.reused = found.path, found.native_id, True
        plan.summary = (f"The branch is as it was when arbor wrote it as the {kind} "
                        f"{found.native_id} ({found.path}); that session is resumed, not copied")
        return
    plan.file, plan.native_id = writer.place(job)
    fork = f", forked from {forked_from}" if forked_from else ""
    if plan.dry_run:
        plan.summary = (f"Would write the branch as a new {kind} titled \"{job.title}\"{fork} in "
                        f"{plan.file.parent} (nothing was written)")
        return
    write(plan.file, plan.native_id)
    reuse.remember(job, key, reuse.Written(plan.file, plan.native_id))
    plan.summary = (f"Wrote the branch as a new {kind} {plan.native_id} titled \"{job.title}\""
                    f"{fork} ({plan.file})")


def run(plan: ResumePlan, env: Mapping[str, str] | None = None) -> int:
    """Run the plan's command in this terminal from its directory; its exit status (128 + N
    for an agent ended by signal N, as a shell reports it)."""
    if not plan.argv:
        return 0
    child_env = dict(os.environ if env is None else env)
    child_env["PWD"] = plan.cwd
    with _keyboard_signals_left_to_the_agent():
        completed = subprocess.run(plan.argv, cwd=plan.cwd, env=child_env)
    code = completed.returncode
    return 128 - code if code < 0 else code


@contextmanager
def _keyboard_signals_left_to_the_agent() -> Iterator[None]:
    """While the agent runs in the foreground, Ctrl-C and Ctrl-\\ are the agent's: the
    terminal sends SIGINT/SIGQUIT to the whole process group, and this process waits instead
    of dying or killing the agent (Python's subprocess kills the child 0.25 s after a
    KeyboardInterrupt, before an agent that stops a turn on Ctrl-C has written it down).
    As system(3) does; a caught signal is reset to its default in the child by exec, unlike
    an ignored one, so the agent gets the signals as usual."""
    if threading.current_thread() is not threading.main_thread():
        yield               # only the main thread may set handlers (and only it gets them)
        return
    kept = {}
    for number in (signal.SIGINT, getattr(signal, "SIGQUIT", None)):
        if number is not None:
            kept[number] = signal.signal(number, _wait_for_the_agent)
    try:
        yield
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)


def _wait_for_the_agent(_signum, _frame) -> None:
    """The agent has the signal too, and decides what it means."""
