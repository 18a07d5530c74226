"""The seed's repositories over the arbor store: same names, same answers, one connection.

`conversation_history` is never written as a copy: `create` and `update` turn it into
entries (appending only what is new, forking where it diverges) and read it back as the
replay of the branch's path.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from core.model.entries import MESSAGE
from core.model.errors import NotFound
from .models import Checkpoint, ExternalSession, InternalSession, LazyHistory
from core.store import Store, open_store

_shared: dict[str, Store] = {}
_shared_lock = threading.Lock()


def shared_store(db_path: str | os.PathLike | None = None) -> Store:
    """The process's one open store for a path or URL (repositories opened on it share it)."""
    from core.store.location import PostgresURL, store_location

    location = store_location(db_path)
    key = location.url if isinstance(location, PostgresURL) else str(location.resolve())
    with _shared_lock:
        store = _shared.get(key)
        if store is None or store.closed:
            store = _shared[key] = open_store(location)
        return store


def close_shared_stores() -> None:
    with _shared_lock:
        for store in _shared.values():
            store.close()
        _shared.clear()


class _Repository:
    def __init__(self, db_path: str | os.PathLike | None = None, *, store: Store | None = None):
        self.store = store or shared_store(db_path)
        self.db_path = str(self.store.path)


def sync_history(store: Store, internal_session_id: int, history: list[dict[str, Any]]) -> None:
    """Make a branch's replay equal `history` without rewriting anything.

    The common prefix stays; the rest is appended after it. When the history diverges from
    what is stored, the new messages fork from the last common entry and the head moves
    there; the old entries stay (and the move is in the reflog).

    Known limit: a history that keeps a compaction's summary but changes the messages
    kept after it forks after the compaction entry, so the replay still shows the old
    kept messages before the new ones.
    """
    branch = store.branches.get(internal_session_id)
    state = store.paths.replay(branch.head_seq)
    stored = state.messages
    common = 0
    for old, new in zip(stored, history):
        if old != new:
            break
        common += 1
    if common == len(stored) == len(history):
        return
    with store.transaction():
        if common == len(stored):
            parent = branch.head_seq
        elif common == 0:
            parent = None
        else:
            parent = store.entries.find(branch.external_session_id, state.entry_ids[common - 1]).seq
        writer = store.entries.writer(branch.external_session_id)
        head = parent
        for message in history[common:]:
            head = writer.add(head, MESSAGE, {"message": message}).seq
        writer.flush()
        reason = "" if common == len(stored) else "history diverged"
        store.branches.move_head(internal_session_id, head, reason=reason)


class InternalSessionRepository(_Repository):
    def create(self, session: InternalSession) -> InternalSession:
        history = list(session.conversation_history) if (
            not isinstance(session.conversation_history, LazyHistory)
            or session.conversation_history.loaded) else []
        with self.store.transaction():
            created = self.store.branches.create(
                session.external_session_id, head_seq=session.head_seq, fork_seq=session.fork_seq,
                parent_session_id=session.parent_session_id,
                branch_point_checkpoint_id=session.branch_point_checkpoint_id,
                session_state=session.session_state, name=session.name,
                is_current=session.is_current, metadata=session.metadata,
                langgraph_session_id=session.langgraph_session_id or None,
                created_at=session.created_at, checkpoint_count=session.checkpoint_count,
                tool_invocation_count=session.tool_invocation_count)
            if history:
                sync_history(self.store, created.id, history)
        fresh = self.store.branches.get(created.id)
        session.id = created.id
        session.langgraph_session_id = created.langgraph_session_id
        session.created_at = created.created_at
        session.head_seq, session.head_id = fresh.head_seq, fresh.head_id
        session.fork_seq, session.fork_id = fresh.fork_seq, fresh.fork_id
        session.message_count = fresh.message_count
        return session

    def update(self, session: InternalSession) -> bool:
        if not session.id:
            return False
        with self.store.transaction():
            if not self.store.branches.update_fields(
                    session.id, session_state=session.session_state, metadata=session.metadata,
                    checkpoint_count=session.checkpoint_count,
                    tool_invocation_count=session.tool_invocation_count, name=session.name):
                return False
            history = session.conversation_history
            if not isinstance(history, LazyHistory) or history.loaded:
                sync_history(self.store, session.id, list(history))
            if session.is_current:
                self.store.branches.set_current(session.id)
            else:
                self.store.branches.unset_current(session.id)
        fresh = self.store.branches.get(session.id)
        session.head_seq, session.head_id = fresh.head_seq, fresh.head_id
        session.message_count = fresh.message_count
        return True

    def get_by_id(self, session_id: int) -> InternalSession | None:
        return self.store.branches.get(session_id)

    def get_by_langgraph_session_id(self, langgraph_session_id: str) -> InternalSession | None:
        return self.store.branches.by_key(langgraph_session_id)

    def get_by_external_session(self, external_session_id: int) -> list[InternalSession]:
        return self.store.branches.of_session(external_session_id)

    def get_current_session(self, external_session_id: int) -> InternalSession | None:
        return self.store.branches.current(external_session_id)

    def set_current_session(self, session_id: int) -> bool:
        return self.store.branches.set_current(session_id)

    def delete(self, session_id: int) -> bool:
        return self.store.branches.delete(session_id)

    def count_sessions(self, external_session_id: int) -> int:
        return self.store.branches.count(external_session_id)

    def get_branch_sessions(self, parent_session_id: int) -> list[InternalSession]:
        return self.store.branches.children(parent_session_id)

    def get_session_lineage(self, session_id: int) -> list[InternalSession]:
        lineage: list[InternalSession] = []
        seen: set[int] = set()
        current = session_id
        while current and current not in seen:
            seen.add(current)
            session = self.get_by_id(current)
            if session is None:
                break
            lineage.append(session)
            current = session.parent_session_id
        return list(reversed(lineage))


class ExternalSessionRepository(_Repository):
    def create(self, session: ExternalSession) -> ExternalSession:
        created = self.store.sessions.create(
            session.session_name, uid=session.uid or None, user_id=session.user_id,
            cwd=session.cwd, source=session.source, kind=session.kind,
            parent_session=session.parent_session, metadata=session.metadata,
            created_at=session.created_at)
        if not session.is_active:
            self.store.sessions.set_active(created.id, False)
        session.id, session.uid = created.id, created.uid
        session.created_at, session.updated_at = created.created_at, created.updated_at
        return session

    def update(self, session: ExternalSession) -> bool:
        return self.store.sessions.update(session)

    def get_by_id(self, session_id: int) -> ExternalSession | None:
        return self.store.sessions.get(session_id)

    def get_by_uid(self, uid: str) -> ExternalSession | None:
        return self.store.sessions.by_uid(uid)

    def get_user_sessions(self, user_id: int, active_only: bool = False) -> list[ExternalSession]:
        return self.store.sessions.find(user_id=user_id, active=True if active_only else None)

    def list_all(self, include_archived: bool = False) -> list[ExternalSession]:
        return self.store.sessions.find(active=None if include_archived else True)

    def deactivate(self, session_id: int) -> bool:
        if self.get_by_id(session_id) is None:
            return False
        self.store.sessions.set_active(session_id, False)
        return True

    archive = deactivate

    def activate(self, session_id: int) -> bool:
        if self.get_by_id(session_id) is None:
            return False
        self.store.sessions.set_active(session_id, True)
        return True

    def delete(self, session_id: int) -> bool:
        return self.store.sessions.delete(session_id)

    def count_sessions(self, user_id: int | None = None) -> int:
        return self.store.sessions.count(user_id=user_id)


class CheckpointRepository(_Repository):
    def create(self, checkpoint: Checkpoint) -> Checkpoint:
        entry_seq = checkpoint.entry_seq
        if entry_seq is None and checkpoint.entry_id:
            branch = self.store.branches.get(checkpoint.internal_session_id)
            if branch is None:
                raise NotFound(f"branch {checkpoint.internal_session_id} does not exist")
            found = self.store.entries.find(branch.external_session_id, checkpoint.entry_id)
            if found is None:
                raise NotFound(f"entry {checkpoint.entry_id!r} is not in the checkpoint's session")
            entry_seq = found.seq
        created = self.store.annotations.create_checkpoint(
            checkpoint.internal_session_id, checkpoint.checkpoint_name, entry_seq=entry_seq,
            session_state=checkpoint.session_state, is_auto=checkpoint.is_auto,
            metadata=checkpoint.metadata, tool_invocations=checkpoint.tool_invocations,
            created_at=checkpoint.created_at)
        checkpoint.id, checkpoint.created_at = created.id, created.created_at
        checkpoint.entry_seq, checkpoint.entry_id = created.entry_seq, created.entry_id
        checkpoint.external_session_id = created.external_session_id
        return checkpoint

    def get_by_id(self, checkpoint_id: int) -> Checkpoint | None:
        return self.store.annotations.get_checkpoint(checkpoint_id)

    def get_by_internal_session(self, internal_session_id: int, auto_only: bool = False) -> list[Checkpoint]:
        found = self.store.annotations.checkpoints_of_branch(internal_session_id)
        return [c for c in found if c.is_auto] if auto_only else found

    def get_latest_checkpoint(self, internal_session_id: int) -> Checkpoint | None:
        found = self.store.annotations.checkpoints_of_branch(internal_session_id)
        return found[0] if found else None

    def delete(self, checkpoint_id: int) -> bool:
        return self.store.annotations.delete_checkpoint(checkpoint_id)

    def count_checkpoints(self, internal_session_id: int) -> int:
        return len(self.store.annotations.checkpoints_of_branch(internal_session_id))
