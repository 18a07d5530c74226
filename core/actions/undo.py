"""Undo for the app's operations, through a log kept in the store.

An operation (branch, roll back, label, compact, archive, make current, rename, hide,
checkpoint) runs inside `recorded(...)`: the values it may change in its session are read
before and after it, in the same write transaction, and the differences are appended to the
store's operation log as [what, target, before, after]. Nothing else has to know what an
operation changes, so a new operation is undoable by running it inside `recorded`.

`undo_last` takes the newest operation not undone yet and puts each value back, after
checking that each still holds what the operation left (a branch an agent has appended to
since is not moved back under it): a conflict changes nothing and says why. The undo is
itself a row of the log (it `undoes` the operation), so `u` again walks further back, and a
restart keeps the history. Nothing is deleted: a branch or checkpoint an operation made is
hidden, a head moves back (the entries stay), a label is set back (the label log keeps
every value).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from core.model.errors import ArborError
from core.store import LoggedOperation, Store

HEAD = "head"
CURRENT = "branch_current"
BRANCH_HIDDEN = "branch_hidden"
BRANCH_NAME = "branch_name"
ENTRY_LABEL = "entry_label"
BRANCH_LABEL = "branch_label"
SESSION_NAME = "session_name"
SESSION_ACTIVE = "session_active"
CHECKPOINT_HIDDEN = "checkpoint_hidden"

# The value a thing had before it existed, for what an operation creates: a new branch or
# checkpoint was "hidden" (undoing it hides it), a new label was "no label". A head or name
# of a new branch has no before: hiding the branch is its undo.
_BEFORE_IT_EXISTED: dict[str, Any] = {BRANCH_HIDDEN: True, CHECKPOINT_HIDDEN: True,
                                      CURRENT: False, ENTRY_LABEL: None, BRANCH_LABEL: None}
# Things that may disappear from a snapshot (a label cleared): after = None.
_MAY_VANISH = {ENTRY_LABEL, BRANCH_LABEL}

Key = tuple[str, int]


def snapshot(store: Store, external_session_id: int) -> dict[Key, Any]:
    """Every value of a session that an operation of the app may change."""
    values: dict[Key, Any] = {}
    with store.reading():
        session = store.sessions.get(external_session_id)
        if session is None:
            return values
        values[(SESSION_NAME, external_session_id)] = session.session_name
        values[(SESSION_ACTIVE, external_session_id)] = bool(session.is_active)
        for branch in store.branches.of_session(external_session_id):
            values[(HEAD, branch.id)] = branch.head_seq
            values[(CURRENT, branch.id)] = bool(branch.is_current)
            values[(BRANCH_HIDDEN, branch.id)] = bool(branch.is_hidden)
            values[(BRANCH_NAME, branch.id)] = branch.name
        for seq, label in store.annotations.entry_labels(external_session_id).items():
            values[(ENTRY_LABEL, seq)] = label
        for branch_id, label in store.annotations.branch_labels(external_session_id).items():
            values[(BRANCH_LABEL, branch_id)] = label
        for checkpoint in store.annotations.checkpoints_of_session(external_session_id):
            values[(CHECKPOINT_HIDDEN, checkpoint.id)] = bool(checkpoint.is_hidden)
    return values


def changes_between(before: dict[Key, Any], after: dict[Key, Any]) -> list[list[Any]]:
    """[what, target, before, after] for every value that differs, in a stable order."""
    out: list[list[Any]] = []
    for key in sorted(set(before) | set(after)):
        what, target = key
        if key not in after:
            if what not in _MAY_VANISH:
                continue
            new = None
        else:
            new = after[key]
        if key in before:
            old = before[key]
        elif what in _BEFORE_IT_EXISTED:
            old = _BEFORE_IT_EXISTED[what]
        else:
            continue
        if old != new:
            out.append([what, target, old, new])
    return out


@dataclass
class Recording:
    """What `recorded` wrote: the operation's row (None: it changed nothing)."""

    seq: int | None = None
    changes: list[list[Any]] | None = None


@contextmanager
def recorded(store: Store, external_session_id: int, kind: str, description: str
             ) -> Iterator[Recording]:
    """Run an operation of the app as one transaction and log what it changed."""
    recording = Recording()
    with store.transaction():
        before = snapshot(store, external_session_id)
        yield recording
        changes = changes_between(before, snapshot(store, external_session_id))
        if changes:
            recording.changes = changes
            recording.seq = store.oplog.record(kind, external_session_id, description,
                                                   changes)


@dataclass
class UndoResult:
    operation: LoggedOperation
    done: bool
    conflict: str = ""      # why it was not undone


def _describe(store: Store, what: str, target: int) -> str:
    if what in (HEAD, CURRENT, BRANCH_HIDDEN, BRANCH_NAME, BRANCH_LABEL):
        branch = store.branches.get(target)
        name = (branch.name if branch is not None and branch.name else f"branch {target}")
        return {HEAD: f"the head of {name}", CURRENT: f"which branch is current ({name})",
                BRANCH_HIDDEN: f"{name} (shown or hidden)", BRANCH_NAME: f"the name of {name}",
                BRANCH_LABEL: f"the label of {name}"}[what]
    if what == ENTRY_LABEL:
        return f"the label of entry {store.entries.id_of(target) or target}"
    if what == CHECKPOINT_HIDDEN:
        return f"checkpoint {target}"
    return {SESSION_NAME: "the session's name", SESSION_ACTIVE: "the session's archive state"
            }.get(what, what)


def _put_back(store: Store, session_id: int, changes: list[list[Any]], reason: str) -> None:
    current_back = [target for what, target, old, _new in changes if what == CURRENT and old]
    for what, target, old, _new in reversed(changes):
        if what == HEAD:
            store.branches.move_head(target, old, reason=reason)
        elif what == BRANCH_HIDDEN:
            store.branches.set_hidden(target, bool(old))
        elif what == BRANCH_NAME:
            store.branches.update_fields(target, name=old or "")
        elif what == ENTRY_LABEL:
            store.annotations.add_label(session_id, old, target_seq=target)
        elif what == BRANCH_LABEL:
            store.annotations.add_label(session_id, old, target_branch=target)
        elif what == SESSION_NAME:
            store.sessions.rename(session_id, old or "")
        elif what == SESSION_ACTIVE:
            store.sessions.set_active(session_id, bool(old))
        elif what == CHECKPOINT_HIDDEN:
            store.annotations.set_checkpoint_hidden(target, bool(old))
        elif what == CURRENT and not old and not current_back:
            store.branches.unset_current(target)    # there was no current branch before
    for target in current_back:
        store.branches.set_current(target)


def undo_last(store: Store) -> UndoResult | None:
    """Undo the newest operation not undone yet (None: there is none). One transaction."""
    with store.transaction():
        operation = store.oplog.last_undoable()
        if operation is None:
            return None
        session_id = operation.external_session_id
        now = snapshot(store, session_id) if session_id is not None else {}
        for what, target, _old, new in operation.changes:
            if now.get((what, target), None if what in _MAY_VANISH else ...) != new:
                return UndoResult(operation, False,
                                  f"{_describe(store, what, target)} changed since")
        try:
            _put_back(store, session_id, operation.changes, f"undo: {operation.description}")
        except ArborError as error:
            return UndoResult(operation, False, str(error))
        back = [[what, target, new, old] for what, target, old, new in operation.changes]
        store.oplog.record("undo", session_id, f"undo: {operation.description}", back,
                               undoes=operation.seq)
        return UndoResult(operation, True)


def leave_as_is(store: Store, operation: LoggedOperation) -> None:
    """Stop offering an operation to undo (it could not be: something changed since), so
    that the next undo reaches the one before it. Nothing else changes."""
    store.oplog.record("skip", operation.external_session_id,
                           f"left as is: {operation.description}", [], undoes=operation.seq)
