"""The seed's session models, backed by the entry tree.

`ExternalSession` is what the user sees in the list (a repository), `InternalSession` a
branch (a named head entry), `Checkpoint` a tag with a snapshot of `session_state`.
An internal session's `conversation_history` is not stored: it is the replay of its
root-to-head path, loaded when first read.
"""

from __future__ import annotations

import os
from collections.abc import MutableSequence
from datetime import datetime

from core.model.clock import parse, to_text, utc_now
from core.model.values import Record

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable


class LazyHistory(MutableSequence):
    """A list of messages that asks its loader only when first read."""

    __slots__ = ("_loader", "_items")

    def __init__(self, loader: Callable[[], list[dict[str, Any]]] | None = None,
                 items: Iterable[dict[str, Any]] | None = None):
        self._loader = loader
        self._items: list[dict[str, Any]] | None = None if loader else list(items or [])

    def _list(self) -> list[dict[str, Any]]:
        if self._items is None:
            self._items = list(self._loader()) if self._loader else []
            self._loader = None
        return self._items

    @property
    def loaded(self) -> bool:
        return self._items is not None

    def __getitem__(self, index):
        return self._list()[index]

    def __setitem__(self, index, value):
        self._list()[index] = value

    def __delitem__(self, index):
        del self._list()[index]

    def __len__(self) -> int:
        return len(self._list())

    def insert(self, index: int, value: dict[str, Any]) -> None:
        self._list().insert(index, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyHistory):
            other = other._list()
        return isinstance(other, list) and self._list() == other

    def __repr__(self) -> str:
        return repr(self._list()) if self.loaded else "LazyHistory(<not loaded>)"

    def __deepcopy__(self, memo):
        return _deepcopy(self._list(), memo)


def _deepcopy(value: Any, memo: dict | None = None) -> Any:
    """`copy.deepcopy`, the module loaded on first use (reading a session copies nothing)."""
    from copy import deepcopy

    return deepcopy(value, memo)


def _date(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return parse(value)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class ExternalSession(Record):
    """A session as the user sees it in the list (one log, or one agent's session)."""

    _fields = ("id", "user_id", "session_name", "created_at", "updated_at", "is_active",
               "internal_session_ids", "current_internal_session_id", "metadata",
               "branch_count", "total_checkpoints", "uid", "cwd", "source", "kind",
               "parent_session", "message_count")
    id: int | None
    user_id: int
    session_name: str
    created_at: datetime | None
    updated_at: datetime | None
    is_active: bool
    internal_session_ids: list[str]
    current_internal_session_id: str | None
    metadata: dict[str, Any]
    branch_count: int
    total_checkpoints: int
    # arbor's own fields
    uid: str
    cwd: str
    source: str
    kind: str
    parent_session: str | None
    message_count: int

    def __init__(self, id: int | None = None, user_id: int = 0, session_name: str = "",
                 created_at: datetime | None = None, updated_at: datetime | None = None,
                 is_active: bool = True, internal_session_ids: list[str] | None = None,
                 current_internal_session_id: str | None = None,
                 metadata: dict[str, Any] | None = None, branch_count: int = 0,
                 total_checkpoints: int = 0, uid: str = "", cwd: str = "", source: str = "arbor",
                 kind: str = "session", parent_session: str | None = None,
                 message_count: int = 0):
        self.id = id
        self.user_id = user_id
        self.session_name = session_name
        self.created_at = created_at
        self.updated_at = updated_at
        self.is_active = is_active
        self.internal_session_ids = [] if internal_session_ids is None else internal_session_ids
        self.current_internal_session_id = current_internal_session_id
        self.metadata = {} if metadata is None else metadata
        self.branch_count = branch_count
        self.total_checkpoints = total_checkpoints
        self.uid = uid
        self.cwd = cwd
        self.source = source
        self.kind = kind
        self.parent_session = parent_session
        self.message_count = message_count

    def add_internal_session(self, session_id: str, is_branch: bool = False) -> None:
        if session_id in self.internal_session_ids:
            return
        self.internal_session_ids.append(session_id)
        self.current_internal_session_id = session_id
        if is_branch:
            self.branch_count += 1
        self.updated_at = utc_now()

    def set_current_internal_session(self, session_id: str) -> bool:
        if session_id not in self.internal_session_ids:
            return False
        self.current_internal_session_id = session_id
        self.updated_at = utc_now()
        return True

    def get_branch_info(self) -> dict[str, Any]:
        return {
            "total_internal_sessions": len(self.internal_session_ids),
            "branch_count": self.branch_count,
            "current_session": self.current_internal_session_id,
            "has_branches": self.branch_count > 0,
            "total_checkpoints": self.total_checkpoints,
        }

    def get_session_age(self, now: datetime | None = None) -> float | None:
        if self.created_at is None:
            return None
        now = now or utc_now()
        created = self.created_at if self.created_at.tzinfo else self.created_at.replace(tzinfo=now.tzinfo)
        return (now - created).total_seconds() / 3600

    def increment_checkpoint_count(self) -> None:
        self.total_checkpoints += 1
        self.updated_at = utc_now()

    def update_metadata(self, metadata: dict[str, Any]) -> None:
        self.metadata.update(metadata)
        self.updated_at = utc_now()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "session_name": self.session_name,
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "is_active": self.is_active,
            "internal_session_ids": list(self.internal_session_ids),
            "current_internal_session_id": self.current_internal_session_id,
            "metadata": dict(self.metadata),
            "branch_count": self.branch_count,
            "total_checkpoints": self.total_checkpoints,
            "uid": self.uid,
            "cwd": self.cwd,
            "source": self.source,
            "kind": self.kind,
            "parent_session": self.parent_session,
            "message_count": self.message_count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ExternalSession":
        return cls(
            id=data.get("id"),
            user_id=data.get("user_id", 0),
            session_name=data.get("session_name", ""),
            created_at=_date(data.get("created_at")),
            updated_at=_date(data.get("updated_at")),
            is_active=bool(data.get("is_active", True)),
            internal_session_ids=list(data.get("internal_session_ids") or []),
            current_internal_session_id=data.get("current_internal_session_id"),
            metadata=dict(data.get("metadata") or {}),
            branch_count=data.get("branch_count", 0),
            total_checkpoints=data.get("total_checkpoints", 0),
            uid=data.get("uid", ""),
            cwd=data.get("cwd", ""),
            source=data.get("source", "arbor"),
            kind=data.get("kind", "session"),
            parent_session=data.get("parent_session"),
            message_count=data.get("message_count", 0),
        )


class Checkpoint(Record):
    """A named tag on an entry, with a snapshot of the session state."""

    _fields = ("id", "internal_session_id", "checkpoint_name", "session_state",
               "conversation_history", "is_auto", "created_at", "metadata", "tool_invocations",
               "external_session_id", "entry_seq", "entry_id", "is_hidden")
    id: int | None
    internal_session_id: int | None
    checkpoint_name: str
    session_state: dict[str, Any]
    conversation_history: MutableSequence
    is_auto: bool
    created_at: datetime | None
    metadata: dict[str, Any]
    tool_invocations: list[dict[str, Any]]
    # arbor's own fields: the entry this checkpoint tags
    external_session_id: int | None
    entry_seq: int | None
    entry_id: str | None
    is_hidden: bool   # hidden by the user (an undone checkpoint), never deleted

    def __init__(self, id: int | None = None, internal_session_id: int | None = None,
                 checkpoint_name: str = "", session_state: dict[str, Any] | None = None,
                 conversation_history: MutableSequence | None = None, is_auto: bool = False,
                 created_at: datetime | None = None, metadata: dict[str, Any] | None = None,
                 tool_invocations: list[dict[str, Any]] | None = None,
                 external_session_id: int | None = None, entry_seq: int | None = None,
                 entry_id: str | None = None, is_hidden: bool = False):
        self.id = id
        self.internal_session_id = internal_session_id
        self.checkpoint_name = checkpoint_name
        self.session_state = {} if session_state is None else session_state
        self.conversation_history = (LazyHistory() if conversation_history is None
                                     else conversation_history)
        self.is_auto = is_auto
        self.created_at = created_at
        self.metadata = {} if metadata is None else metadata
        self.tool_invocations = [] if tool_invocations is None else tool_invocations
        self.external_session_id = external_session_id
        self.entry_seq = entry_seq
        self.entry_id = entry_id
        self.is_hidden = is_hidden

    @property
    def name(self) -> str:
        return self.checkpoint_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "internal_session_id": self.internal_session_id,
            "checkpoint_name": self.checkpoint_name,
            "session_state": _deepcopy(self.session_state),
            "conversation_history": list(self.conversation_history),
            "is_auto": self.is_auto,
            "created_at": _iso(self.created_at),
            "metadata": dict(self.metadata),
            "tool_invocations": list(self.tool_invocations),
            "external_session_id": self.external_session_id,
            "entry_seq": self.entry_seq,
            "entry_id": self.entry_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Checkpoint":
        return cls(
            id=data.get("id"),
            internal_session_id=data.get("internal_session_id"),
            checkpoint_name=data.get("checkpoint_name", data.get("name", "")),
            session_state=dict(data.get("session_state") or {}),
            conversation_history=LazyHistory(items=data.get("conversation_history") or []),
            is_auto=bool(data.get("is_auto", False)),
            created_at=_date(data.get("created_at")),
            metadata=dict(data.get("metadata") or {}),
            tool_invocations=list(data.get("tool_invocations") or []),
            external_session_id=data.get("external_session_id"),
            entry_seq=data.get("entry_seq"),
            entry_id=data.get("entry_id"),
        )


class InternalSession(Record):
    """A branch of a session: a named head entry."""

    _fields = ("id", "external_session_id", "langgraph_session_id", "session_state",
               "conversation_history", "created_at", "is_current", "checkpoint_count",
               "parent_session_id", "branch_point_checkpoint_id", "tool_invocation_count",
               "metadata", "name", "head_seq", "head_id", "fork_seq", "fork_id",
               "message_count", "updated_at", "is_hidden")
    id: int | None
    external_session_id: int
    langgraph_session_id: str
    session_state: dict[str, Any]
    conversation_history: MutableSequence
    created_at: datetime | None
    is_current: bool
    checkpoint_count: int
    parent_session_id: int | None
    branch_point_checkpoint_id: int | None
    tool_invocation_count: int
    metadata: dict[str, Any]
    # arbor's own fields: where the branch forked and where its head is
    name: str
    head_seq: int | None
    head_id: str | None
    fork_seq: int | None
    fork_id: str | None
    message_count: int
    updated_at: datetime | None
    is_hidden: bool   # hidden by the user (shown with the archived), never deleted

    def __init__(self, id: int | None = None, external_session_id: int = 0,
                 langgraph_session_id: str = "", session_state: dict[str, Any] | None = None,
                 conversation_history: MutableSequence | None = None,
                 created_at: datetime | None = None, is_current: bool = True,
                 checkpoint_count: int = 0, parent_session_id: int | None = None,
                 branch_point_checkpoint_id: int | None = None, tool_invocation_count: int = 0,
                 metadata: dict[str, Any] | None = None, name: str = "",
                 head_seq: int | None = None, head_id: str | None = None,
                 fork_seq: int | None = None, fork_id: str | None = None, message_count: int = 0,
                 updated_at: datetime | None = None, is_hidden: bool = False):
        self.id = id
        self.external_session_id = external_session_id
        self.langgraph_session_id = langgraph_session_id
        self.session_state = {} if session_state is None else session_state
        self.conversation_history = (conversation_history
                                     if isinstance(conversation_history, LazyHistory)
                                     else LazyHistory(items=conversation_history))
        self.created_at = created_at
        self.is_current = is_current
        self.checkpoint_count = checkpoint_count
        self.parent_session_id = parent_session_id
        self.branch_point_checkpoint_id = branch_point_checkpoint_id
        self.tool_invocation_count = tool_invocation_count
        self.metadata = {} if metadata is None else metadata
        self.name = name
        self.head_seq = head_seq
        self.head_id = head_id
        self.fork_seq = fork_seq
        self.fork_id = fork_id
        self.message_count = message_count
        self.updated_at = updated_at
        self.is_hidden = is_hidden

    def add_message(self, role: str, content: Any, **kwargs: Any) -> None:
        message = {"role": role, "content": content, "timestamp": to_text(None)}
        message.update(kwargs)
        self.conversation_history.append(message)

    @classmethod
    def create_branch_from_checkpoint(cls, checkpoint: Checkpoint, external_session_id: int,
                                      parent_session_id: int) -> "InternalSession":
        return cls(
            external_session_id=external_session_id,
            langgraph_session_id=f"branch_{os.urandom(6).hex()}",
            session_state=_deepcopy(checkpoint.session_state),
            conversation_history=LazyHistory(items=_deepcopy(list(checkpoint.conversation_history))),
            created_at=utc_now(),
            is_current=True,
            parent_session_id=parent_session_id,
            branch_point_checkpoint_id=checkpoint.id,
            metadata={
                "branched_from_checkpoint": checkpoint.id,
                "checkpoint_name": checkpoint.checkpoint_name,
            },
            head_seq=checkpoint.entry_seq,
            head_id=checkpoint.entry_id,
            fork_seq=checkpoint.entry_seq,
            fork_id=checkpoint.entry_id,
        )

    def is_branch(self) -> bool:
        return self.parent_session_id is not None

    def get_branch_info(self) -> dict[str, Any]:
        return {
            "is_branch": self.is_branch(),
            "parent_session_id": self.parent_session_id,
            "branch_point_checkpoint_id": self.branch_point_checkpoint_id,
            "fork_entry_id": self.fork_id,
            "head_entry_id": self.head_id,
            "created_at": _iso(self.created_at),
        }

    def get_statistics(self) -> dict[str, Any]:
        history = list(self.conversation_history)
        return {
            "message_count": len(history),
            "user_messages": sum(1 for m in history if m.get("role") == "user"),
            "assistant_messages": sum(1 for m in history if m.get("role") == "assistant"),
            "tool_invocations": self.tool_invocation_count,
            "checkpoints": self.checkpoint_count,
            "is_branch": self.is_branch(),
            "state_keys": len(self.session_state),
            "created_at": _iso(self.created_at),
        }

    def update_state(self, new_state: dict[str, Any]) -> None:
        self.session_state.update(new_state)

    def increment_tool_count(self, count: int = 1) -> None:
        self.tool_invocation_count += count

    def update_metadata(self, metadata: dict[str, Any]) -> None:
        self.metadata.update(metadata)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "external_session_id": self.external_session_id,
            "langgraph_session_id": self.langgraph_session_id,
            "session_state": _deepcopy(self.session_state),
            "conversation_history": list(self.conversation_history),
            "created_at": _iso(self.created_at),
            "is_current": self.is_current,
            "checkpoint_count": self.checkpoint_count,
            "parent_session_id": self.parent_session_id,
            "branch_point_checkpoint_id": self.branch_point_checkpoint_id,
            "tool_invocation_count": self.tool_invocation_count,
            "metadata": dict(self.metadata),
            "name": self.name,
            "head_id": self.head_id,
            "fork_id": self.fork_id,
            "message_count": self.message_count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "InternalSession":
        return cls(
            id=data.get("id"),
            external_session_id=data.get("external_session_id", 0),
            langgraph_session_id=data.get("langgraph_session_id", ""),
            session_state=dict(data.get("session_state") or {}),
            conversation_history=LazyHistory(items=data.get("conversation_history") or []),
            created_at=_date(data.get("created_at")),
            is_current=bool(data.get("is_current", True)),
            checkpoint_count=data.get("checkpoint_count", 0),
            parent_session_id=data.get("parent_session_id"),
            branch_point_checkpoint_id=data.get("branch_point_checkpoint_id"),
            tool_invocation_count=data.get("tool_invocation_count", 0),
            metadata=dict(data.get("metadata") or {}),
            name=data.get("name", ""),
            head_id=data.get("head_id"),
            fork_id=data.get("fork_id"),
            message_count=data.get("message_count", 0),
        )
