"""Hand a branch to another agent: `arbor resume SESSION --in AGENT` and the app's `O`.

`prepare_handoff` writes the branch (from its root up to its head, or up to a chosen entry)
as a new native session of the target agent, through that agent's writer (core/agents), with
the branch translated for it first (translate.py, tools.py): what the target can hold
crosses, the rest is said or left out, and the counts come back in the plan. Then, unless
it is a dry run:

* the new file is imported, and its session in arbor nests under the original as a fork
  across agents (lineage: `fork`, at the entry handed off), with where it came from in its
  metadata (`handoff`: source agent, session, branch, entry) and in the target's own
  metadata (provenance.py);
* the hand-off is one row of the operation log: `u` archives the imported copy (the file
  stays: it is the agent's, and the agent may already have carried it on);
* handing off the same unchanged branch to the same agent again runs the session written
  the first time, as long as its file still holds what was written.

A branch larger than the target's context is refused with `BranchTooLarge`, which carries
the compaction arbor would make (the preview `c` shows); `compact=True` hands off the
branch compacted: a compaction entry is written in the new session only, the store keeps
the branch as it is. `redact=True` masks secrets in what is written (redact.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.clock import utc_now
from core.model.entries import COMPACTION, MESSAGE, Entry, message_tokens
from core.model.errors import NotFound
from core.agents import reuse
from core.agents.native import BranchToWrite, Ids, ResumeError, expand
from core.agents.registry import title as agent_title
from core.agents.resume import ResumePlan
from . import provenance, targets
from .provenance import agent_id
from .redact import Redactor
from .translate import Crossing, translate

OPERATION = "handoff"
VERSION = 1          # of what a hand-off writes: a change makes earlier files unused


class BranchTooLarge(ResumeError):
    """The branch does not fit the target's context; `compaction` is what arbor offers."""

    def __init__(self, message: str, *, tokens: int, limit: int, compaction: Any):
        super().__init__(message)
        self.tokens = tokens
        self.limit = limit
        self.compaction = compaction


@dataclass
class HandoffPlan(ResumePlan):
    source: str = ""                       # the agent that wrote the branch (its key)
    target: str = ""                       # the agent it is handed to (its key)
    crossing: Crossing | None = None
    redacted: Redactor | None = None
    compacted: bool = False
    tokens: int = 0                        # the context the target loads, estimated
    imported_id: int | None = None         # arbor's copy of the new session
    operation: int | None = None           # its row in the operation log (`u` undoes it)
    notes: list[str] = field(default_factory=list)
    pending: tuple | None = None           # arbor's side, not done yet (finish_handoff)
    title: str = ""                        # what the new session is called
    by: str = ""                           # who asked, in the log's description ("by an agent")


def finish_handoff(store, plan: HandoffPlan) -> None:
    """Arbor's side of a hand-off whose file is written: import it, nest it under the
    original, log it (provenance.record)."""
    if plan.pending is None:
        return
    session, branch, head, origin, key, written = plan.pending
    plan.pending = None
    plan.imported_id, plan.operation = provenance.record(store, session, branch, head, plan,
                                                         origin, key, written)


class HandoffBranch(BranchToWrite):
    """A branch as the target's writer reads it: the translated entries, in memory."""

    def __init__(self, *args: Any, entries: list[Entry], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.entries = entries
        self._meta: dict[str, Any] = {}

    redactor: Redactor | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        return self._meta

    _title: str | None = None

    @property
    def title(self) -> str:
        """The branch's title, masked once when secrets are masked (it may be a prompt)."""
        if self._title is None:
            title = super().title
            self._title = self.redactor.text(title) if self.redactor is not None else title
        return self._title

    def path(self) -> Iterator[Entry]:
        return iter(self.entries)

    def kept_before(self, compaction: Entry) -> list[Entry]:
        kept = compaction.data.get("firstKeptEntryId")
        ids = [e.id for e in self.entries]
        if not isinstance(kept, str) or kept not in ids or compaction.id not in ids:
            return []
        return self.entries[ids.index(kept):ids.index(compaction.id)]


# ------------------------------------------------------------------- the size
def context_tokens(entries: list[Entry]) -> int:
    """What the target loads of the translated branch, estimated: from its newest
    compaction on (the summary and what it keeps), else all of it."""
    start, total = 0, 0
    for index in range(len(entries) - 1, -1, -1):
        if entries[index].type == COMPACTION:
            start = index + 1
            compaction = entries[index]
            total += message_tokens({"content": str(compaction.data.get("summary", ""))})
            kept = compaction.data.get("firstKeptEntryId")
            for kept_index, entry in enumerate(entries[:index]):
                if entry.id == kept:
                    total += sum(message_tokens(e.message) for e in entries[kept_index:index]
                                 if e.type == MESSAGE)
                    break
            break
    return total + sum(message_tokens(e.message) for e in entries[start:] if e.type == MESSAGE)


def _compaction(store, branch, head_seq: int, entries: list[Entry], ids: dict[str, str],
                keep_recent_tokens: int, summariser=None) -> tuple[Entry, Any] | None:
    """The compaction arbor offers for a branch too large to hand off: `c`'s plan for the
    branch up to `head_seq`, as an entry of the translated branch (never of the store)."""
    from core.actions import operations
    from core.history.summariser import builtin_summary

    plan = operations.plan_compaction(store, branch.id, keep_recent_tokens=keep_recent_tokens,
                                      summariser=summariser or builtin_summary, head_seq=head_seq)
    if not plan.summarised_count:
        return None
    kept_id = None
    if plan.first_kept is not None:
        kept_id = ids.get(plan.first_kept.id)
        if kept_id is None:      # left out or merged: the next entry that crossed
            kept_id = next((e.id for e in entries if e.depth >= plan.first_kept.depth), None)
    last = entries[-1]
    entry = Entry(last.seq, f"arbor-compaction-{last.id[:24]}", last.external_session_id, None,
                  COMPACTION, last.timestamp, last.depth + 1, 0, 0, None,
                  {"summary": plan.summary, "firstKeptEntryId": kept_id,
                   "tokensBefore": plan.tokens_before}, last.id)
    return entry, plan


# ------------------------------------------------------------------ redaction
def _redacted(entries: list[Entry], redactor: Redactor) -> list[Entry]:
    out = []
    for entry in entries:
        data = redactor.value(entry.data)
        out.append(Entry(entry.seq, entry.id, entry.external_session_id, entry.parent_seq,
                         entry.type, entry.timestamp, entry.depth, entry.chain, entry.msg_index,
                         entry.role, data, entry.parent_id))
    return out


# ------------------------------------------------------------------ the plan
def _branch_and_head(store, session, branch, at_seq):
    if branch is None:
        branch = store.branches.current(session.id)
        if branch is None:
            branches = store.branches.of_session(session.id)
            if not branches:
                raise ResumeError(f"session {session.uid} has no branches")
            branch = branches[0]
    title = branch.name or f"branch {branch.id}"
    head = branch.head_seq if at_seq is None else at_seq
    if head is None:
        raise ResumeError(f"{title} has no entries: there is nothing to hand off")
    if at_seq is not None and (branch.head_seq is None or
                               not store.paths.is_ancestor(at_seq, branch.head_seq)):
        raise NotFound(f"entry {at_seq} is not on {title}")
    return branch, head


def prepare_handoff(store, session, branch=None, *, target: str, at_seq: int | None = None,
                    env: Mapping[str, str] | None = None, now: datetime | None = None,
                    ids: Ids | None = None, cwd_fallback: str | None = None,
                    dry_run: bool = False, redact: bool = False, compact: bool = False,
                    context_limit: int | None = None, summariser=None,
                    link: bool = True, by: str = "") -> HandoffPlan:
    """Write the branch as a new session of `target` and say how to run it (module doc).
    `link=False` leaves arbor's side (the import, the links, the log row) to
    `finish_handoff`, for a caller that does it later; `by` says who asked, in the log
    ("an agent": "hand-off to Codex (by an agent)")."""
    if target not in targets.writable():
        raise ResumeError(f"arbor cannot write sessions of {target!r}; it can hand a branch to "
                          + ", ".join(agent_title(a) for a in targets.writable()))
    env = os.environ if env is None else env
    now = now or utc_now()
    branch, head = _branch_and_head(store, session, branch, at_seq)
    source = session.source
    cwd = expand(session.cwd or "", env)
    guessed = not cwd
    if guessed:
        cwd = cwd_fallback or os.getcwd()
    crossing = Crossing(source, target)
    job_args = dict(store=store, session=session, branch=branch, head_seq=head, cwd=cwd,
                    env=env, now=now, ids=ids or Ids())
    reading = BranchToWrite(**job_args)
    translation = translate(reading.path(), source, target, cwd=cwd,
                            session_id=agent_id(session), crossing=crossing)
    entries = list(translation)
    if not entries:
        raise ResumeError(f"{branch.name or f'branch {branch.id}'} has nothing another agent "
                          "can read (no messages)")
    plan = HandoffPlan(agent=agent_title(target), argv=[], cwd=cwd, cwd_guessed=guessed,
                       dry_run=dry_run, source=source, target=target, crossing=crossing,
                       by=f" (by {by})" if by else "")
    limit = context_limit or targets.context_limit(target, env)
    tokens = context_tokens(entries)
    if tokens > limit:
        offered = _compaction(store, branch, head, entries, crossing_ids(entries, reading),
                              targets.keep_recent(limit), summariser)
        if offered is None:
            raise BranchTooLarge(
                f"the branch is about {tokens:,} tokens, more than {plan.agent} can load "
                f"(about {limit:,}), and its newest messages alone are too large to compact "
                "it: hand off an earlier entry (--entry)", tokens=tokens, limit=limit,
                compaction=None)
        if not compact:
            raise BranchTooLarge(
                f"the branch is about {tokens:,} tokens, more than {plan.agent} can load "
                f"(about {limit:,}): hand it off compacted (arbor summarises the older part "
                "in the new session only; the branch in arbor stays as it is)",
                tokens=tokens, limit=limit, compaction=offered[1])
        entry, _plan = offered
        entries.append(entry)
        crossing.add("compactions")
        crossing.add("compacted_for_size")
        plan.compacted = True
        tokens = context_tokens(entries)
    plan.tokens = tokens
    if redact:
        plan.redacted = Redactor()
        entries = _redacted(entries, plan.redacted)
    origin = provenance.origin(store, session, branch, head)
    job = HandoffBranch(**job_args, entries=entries, provenance=origin)
    job._meta = targets.metadata_for(target, session, origin)
    job.redactor = plan.redacted
    written = targets.writer(target)
    written.ready(job)
    plan.cwd = written.run_cwd(job)
    plan.title = job.title
    key = _fingerprint(job, target, written.folder(job), redact, plan.compacted)
    found = provenance.find_written(store, session.id, key, written.adds_nothing)
    if found is not None:
        (plan.file, plan.native_id, plan.imported_id), plan.reused = found, True
        plan.summary = (f"The branch is as it was when arbor handed it to {plan.agent} as "
                        f"{found[1]} ({found[0]}); that session is resumed, not copied")
        if not dry_run and plan.imported_id is not None:
            plan.operation = provenance.show_again(store, plan.imported_id, plan.agent)
    else:
        plan.file, plan.native_id = written.place(job)
        if dry_run:
            plan.summary = (f"Would write the branch as a new {written.kind} titled "
                            f"\"{job.title}\" in {plan.file.parent} (nothing was written)")
        else:
            written.write(job, plan.file, plan.native_id, agent_id(session))
            plan.summary = (f"Wrote the branch as a new {written.kind} {plan.native_id} titled "
                            f"\"{job.title}\" ({plan.file})")
            plan.pending = (session, branch, head, origin, key,
                            reuse.record_of(reuse.Written(plan.file, plan.native_id), now))
            if link:
                finish_handoff(store, plan)
    plan.argv = written.command(plan)
    plan.continued_in = written.continued_in(job)
    plan.notes.append(f"from {agent_title(source)}: {crossing.sentence()}")
    if plan.compacted:
        plan.notes.append(f"compacted for {plan.agent}'s context: about {tokens:,} tokens now "
                          "(the branch in arbor is unchanged)")
    if plan.redacted is not None:
        plan.notes.append(plan.redacted.summary())
    return plan


def crossing_ids(entries: list[Entry], job: BranchToWrite) -> dict[str, str]:
    """Source entry id -> translated entry id, for the entries that crossed as themselves."""
    return {e.id.split("~", 1)[0]: e.id for e in entries}


def _fingerprint(job: HandoffBranch, target: str, folder: Path, redact: bool,
                 compacted: bool) -> str:
    head = job.head()
    facts = [VERSION, reuse.VERSION, target, job.session.uid, head.id, job.head_seq, job.title,
             sorted(job.labels().items()), job.cwd, str(folder), redact, compacted]
    return hashlib.sha256(json.dumps(facts, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]
