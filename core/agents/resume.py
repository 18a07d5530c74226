"""Carry on from a branch in the agent that wrote it: the plan (`prepare_resume`) and the run.

`prepare_resume` writes the branch (up to its head, or up to a chosen entry on it) as a new
native session of the session's agent, or finds the session it wrote for the same unchanged
branch before, or that the agent's own file already ends there, and returns a `ResumePlan`:
the command, the directory to run it from, the file. Nothing runs until `run` is called, so
`arbor resume --print` and the app share it; `dry_run` writes nothing (`--dry-run`).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Callable, Iterator, Mapping

from core.model.clock import utc_now
from core.model.errors import NotFound
from . import arbor, registry, reuse
from .native import BranchToWrite, Ids, ResumeError, expand


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
    # commands run first, from `cwd`, each of which must succeed before the agent starts
    # (opencode's own import of the file written for it)
    before: list[list[str]] = field(default_factory=list)
    # where the agent writes what it adds, when not in `file` (opencode: its database)
    continued_in: Path | None = None

    @property
    def executable(self) -> str | None:
        return self.argv[0] if self.argv else None

    def shell_command(self) -> str:
        """`cd <cwd> && <command>`, quoted for a POSIX shell, without a control character
        (core/util/shell_words: it is printed, copied and pasted)."""
        from core.util import shell_words

        command = " && ".join(shell_words.join(argv) for argv in (*self.before, self.argv))
        return f"cd {shell_words.quote(self.cwd)} && {command}" if self.cwd else command

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
    agent = registry.get(source)
    if agent is None or (agent.writer is None and agent is not registry.ARBOR):
        raise ResumeError(_cannot_resume(source, agent))
    cwd = expand(session.cwd or "", env)
    guessed = False
    if not cwd:
        cwd = cwd_fallback or os.getcwd()
        guessed = True
    job = BranchToWrite(store=store, session=session, branch=branch, head_seq=head, cwd=cwd,
                        env=env, now=now or utc_now(), ids=ids or Ids())
    plan = ResumePlan(agent=agent.title, argv=[], cwd=cwd, cwd_guessed=guessed, dry_run=dry_run)
    writer = agent.writer_module()
    if writer is not None:
        # the agent's own way (its writer's `prepare`): a new native session through
        # `new_session`, or the agent's own file where the branch already ends there
        writer.prepare(plan, job, env, functools.partial(_new_session, agent.session_noun))
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


def _cannot_resume(source: str, agent) -> str:
    """Why a session of this source cannot be handed to an agent, and what can be done."""
    able = registry.titles_text_of([a for a in registry.agents() if a.writer is not None], "and")
    if agent is None:
        return (f"sessions from {source!r} have no agent command arbor can resume; the agents "
                f"it can hand a branch to are {able}")
    what = "LangGraph threads" if source == "langgraph" else f"{agent.title} sessions"
    note = f" ({agent.resume_note})" if agent.resume_note else ""
    return f"{what} have no agent command arbor can resume{note}; the agents it can hand a " \
           f"branch to are {able}"


def _new_session(kind: str, plan: ResumePlan, job: BranchToWrite, folder: Path,
                 writer: ModuleType, write: Callable[[Path, str], None],
                 forked_from: str = "") -> None:
    """The branch as a new native session: the one arbor wrote for it before when it still
    holds what was written (reuse.py), else a new one (none in a dry run), with the summary.
    `kind` names such a session ("pi session"); `writer` is the agent's module (its `place`
    and `adds_nothing`)."""
    source = job.session.source
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
        for argv in (*plan.before, plan.argv):
            completed = subprocess.run(argv, cwd=plan.cwd, env=child_env)
            if completed.returncode != 0:
                break
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
