"""Carry on from a branch in the agent that wrote it: the plan (`prepare_resume`) and the run.

`prepare_resume` writes the branch (up to its head, or up to a chosen entry on it) as a new
native session of the session's agent, or finds that the agent's own file already ends
there, and returns a `ResumePlan`: the command, the directory to run it from, the file
written. Nothing runs until `run` is called, so `arbor resume --print` and the app share it.
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
from typing import Iterator, Mapping

from ..clock import utc_now
from ..errors import NotFound
from . import arbor, claude_code, codex, pi
from .native import BranchToWrite, Ids, ResumeError, expand

AGENT_TITLES = {"pi": "pi", "claude_code": "Claude Code", "codex": "Codex", "arbor": "arbor"}


@dataclass
class ResumePlan:
    agent: str                     # the agent's name, for people
    argv: list[str]                # the command ([] for a session arbor owns)
    cwd: str                       # where to run it
    file: Path | None = None       # the native file written (None: the agent's own file)
    native_id: str | None = None   # the agent's id of the session that resumes
    summary: str = ""              # one sentence: what was prepared
    snippet: str = ""              # a session arbor owns: how an agent continues it
    branch_id: int | None = None   # a session arbor owns: the branch made current
    cwd_guessed: bool = False      # no working directory was recorded; this is the current one

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
    current = store.current_internal_session(session.id)
    if current is None:
        branches = store.internal_sessions(session.id)
        if not branches:
            raise ResumeError(f"session {session.uid} has no branches")
        current = branches[0]
    return current


def prepare_resume(store, session, branch=None, *, at_seq: int | None = None,
                   env: Mapping[str, str] | None = None, now: datetime | None = None,
                   ids: Ids | None = None, cwd_fallback: str | None = None) -> ResumePlan:
    """Write what the agent needs to carry on from `branch` (default: the current one),
    up to `at_seq` when given (an entry on the branch), and say how to run it."""
    env = os.environ if env is None else env
    branch = _branch_of(store, session, branch)
    head = branch.head_seq if at_seq is None else at_seq
    title = branch.name or f"branch {branch.id}"
    if head is None:
        raise ResumeError(f"{title} has no entries: there is nothing to carry on from")
    if at_seq is not None and (branch.head_seq is None or not store.is_ancestor(at_seq, branch.head_seq)):
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
    plan = ResumePlan(agent=agent, argv=[], cwd=cwd, cwd_guessed=guessed)
    if source == "pi":
        plan.file, plan.native_id = pi.write(job)
        plan.argv = pi.command(plan.file)
        plan.summary = f"Wrote the branch as a new pi session {plan.file}"
    elif source == "claude_code":
        plan.cwd = claude_code.folder_cwd(cwd)
        plan.file, plan.native_id = claude_code.write(job)
        plan.argv = claude_code.command(plan.native_id)
        plan.summary = f"Wrote the branch as a new Claude Code session {plan.native_id} ({plan.file})"
    elif source == "codex":
        tip, rollout_id = codex.is_rollout_tip(job)
        if tip:
            plan.native_id = rollout_id
            plan.summary = f"The branch ends where Codex's rollout {rollout_id} ends: nothing to write"
        else:
            plan.file, plan.native_id = codex.write(job, rollout_id)
            plan.summary = (f"Wrote the branch as a new Codex rollout {plan.native_id}, forked from "
                            f"{rollout_id} ({plan.file})")
        plan.argv = codex.command(plan.native_id)
    else:
        current = arbor.make_current(job)
        plan.branch_id = current.id
        plan.snippet = arbor.snippet(job)
        plan.summary = (f"{current.name or f'branch {current.id}'} is now the current branch of "
                        f"{session.session_name or session.uid}: an agent built on arbor's core "
                        "continues it with SessionManager.continue_recent(...)")
    return plan


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
