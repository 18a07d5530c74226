"""Copy sessions from one store to another (`arbor push`): a person works offline on their
own SQLite store and shares with the team's PostgreSQL store later.

Only what is new is copied, by the re-import rules: a session is known by its uid, an
entry by its id within its session, a branch by its key (`langgraph_session_id`), a label
change by (what it labels, when, the label). Pushing twice adds nothing; pushing after
more work adds that work; entries keep their ids, times and tree, so usage, search and
lineage on the target come out as on the source. Works between any two stores (either
backend on either side).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.model.entries import Entry
from core.store import EntryWriter

PAGE = 2000   # entries read from the source at a time


@dataclass
class PushedSession:
    uid: str
    name: str
    new_session: bool = False
    entries_added: int = 0
    branches_added: int = 0
    heads_moved: int = 0
    labels_added: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.new_session or self.entries_added or self.branches_added
                    or self.heads_moved or self.labels_added)


@dataclass
class PushReport:
    sessions: list[PushedSession] = field(default_factory=list)

    @property
    def entries_added(self) -> int:
        return sum(s.entries_added for s in self.sessions)


def push_sessions(source, target, external_session_ids: list[int]) -> PushReport:
    """Copy these sessions of `source` into `target` (each in its own transaction), then
    link sub-agents and forks to their parents on the target."""
    from core.importing import link_lineage

    report = PushReport()
    for external_session_id in external_session_ids:
        report.sessions.append(push_session(source, target, external_session_id))
    link_lineage(target)
    return report


def _pages(source, external_session_id: int):
    after = 0
    while True:
        page: list[Entry] = source.entries.of_session(external_session_id, after_seq=after, limit=PAGE)
        if not page:
            return
        yield page
        after = page[-1].seq


def push_session(source, target, external_session_id: int) -> PushedSession:
    session = source.sessions.get(external_session_id)
    pushed = PushedSession(session.uid, session.session_name)
    with target.transaction():
        there = target.sessions.by_uid(session.uid)
        if there is None:
            there = target.sessions.create(
                session.session_name, uid=session.uid, user_id=session.user_id, cwd=session.cwd,
                source=session.source, kind=session.kind, parent_session=session.parent_session,
                metadata=session.metadata, created_at=session.created_at)
            pushed.new_session = True
            if not session.is_active:
                target.sessions.set_active(there.id, False)
        known = target.entries.seqs(there.id)   # entry id -> seq on the target
        seq_of: dict[int, int] = {}           # source seq -> target seq
        writer = EntryWriter(target, there.id, background=True)
        for page in _pages(source, external_session_id):
            for entry in page:
                found = known.get(entry.id)
                if found is not None:
                    seq_of[entry.seq] = found
                    continue
                parent = None if entry.parent_seq is None else seq_of[entry.parent_seq]
                seq_of[entry.seq] = writer.add_row(parent, entry.type, entry.data,
                                                   entry_id=entry.id, timestamp=entry.timestamp)
                pushed.entries_added += 1
        writer.flush()
        _push_branches(source, target, session.id, there.id, seq_of, pushed)
        _push_labels(source, target, session.id, there.id, seq_of, pushed)
    return pushed


def _push_branches(source, target, source_id: int, target_id: int, seq_of: dict[int, int],
                   pushed: PushedSession) -> None:
    theirs = {b.langgraph_session_id: b for b in target.branches.of_session(target_id, newest_first=False)}
    ours = source.branches.of_session(source_id, newest_first=False)
    key_of = {b.id: b.langgraph_session_id for b in ours}
    current = None
    for branch in ours:   # oldest first: a parent branch is made before its children
        head = None if branch.head_seq is None else seq_of.get(branch.head_seq)
        there = theirs.get(branch.langgraph_session_id)
        if there is None:
            parent_key = key_of.get(branch.parent_session_id)
            parent = theirs.get(parent_key) if parent_key else None
            there = theirs[branch.langgraph_session_id] = target.branches.create(
                target_id, head_seq=head,
                fork_seq=None if branch.fork_seq is None else seq_of.get(branch.fork_seq),
                parent_session_id=parent.id if parent else None,
                session_state=branch.session_state, name=branch.name, is_current=False,
                metadata=branch.metadata, langgraph_session_id=branch.langgraph_session_id,
                created_at=branch.created_at, tool_invocation_count=branch.tool_invocation_count)
            pushed.branches_added += 1
        elif there.head_seq != head:
            target.branches.move_head(there.id, head, reason="push")
            pushed.heads_moved += 1
        if branch.is_current:
            current = there
    if current is not None and not current.is_current:
        target.branches.set_current(current.id)


def _push_labels(source, target, source_id: int, target_id: int, seq_of: dict[int, int],
                 pushed: PushedSession) -> None:
    def key(row: dict) -> tuple:
        return (row["label"], row["at"], row["target_entry"], row.get("branch_key"))

    def keyed(store, session_id: int) -> list[dict]:
        names = {b.id: b.langgraph_session_id for b in store.branches.of_session(session_id)}
        rows = store.annotations.label_log(session_id)
        for row in rows:
            row["branch_key"] = names.get(row["target_branch"])
        return rows

    have = {key(row) for row in keyed(target, target_id)}
    branches = {b.langgraph_session_id: b.id for b in target.branches.of_session(target_id)}
    for row in keyed(source, source_id):
        if key(row) in have:
            continue
        if row["target_entry"] is not None:
            seq = target.entries.seq_of(target_id, row["target_entry"])
            if seq is None:
                continue
            target.annotations.add_label(target_id, row["label"], target_seq=seq, created_at=row["at"])
        elif row["branch_key"] in branches:
            target.annotations.add_label(target_id, row["label"], target_branch=branches[row["branch_key"]],
                             created_at=row["at"])
        else:
            continue
        have.add(key(row))
        pushed.labels_added += 1
