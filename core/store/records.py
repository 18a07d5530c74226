"""The store's records: rows read without loading a session (the session list, search
hits, spawned sessions, LangGraph checkpoints, logged operations) and JSON helpers."""

from __future__ import annotations

import json

from core.util.fastjson import dumps
from core.model.values import Frozen

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any, Callable   # nor typing, ~2.5 ms)


class SessionSummary(Frozen):
    """One row of the session list, read without loading the session."""

    __slots__ = _fields = ("id", "uid", "name", "source", "cwd", "kind", "created_at",
                           "updated_at", "is_active", "message_count", "entry_count",
                           "branch_count", "parent_id")
    id: int
    uid: str
    name: str
    source: str
    cwd: str
    kind: str
    created_at: str
    updated_at: str
    is_active: bool
    message_count: int
    entry_count: int
    branch_count: int
    parent_id: int | None   # the session it belongs under (sub-agent, fork), if any

    def __init__(self, id: int, uid: str, name: str, source: str, cwd: str, kind: str,
                 created_at: str, updated_at: str, is_active: bool, message_count: int,
                 entry_count: int, branch_count: int, parent_id: int | None = None):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "uid", uid)
        setattr_(self, "name", name)
        setattr_(self, "source", source)
        setattr_(self, "cwd", cwd)
        setattr_(self, "kind", kind)
        setattr_(self, "created_at", created_at)
        setattr_(self, "updated_at", updated_at)
        setattr_(self, "is_active", is_active)
        setattr_(self, "message_count", message_count)
        setattr_(self, "entry_count", entry_count)
        setattr_(self, "branch_count", branch_count)
        setattr_(self, "parent_id", parent_id)


class SpawnedSession(Frozen):
    """A session that started at an entry of another one: a sub-agent at the tool call
    that spawned it, a fork at the entry it was forked from."""

    __slots__ = _fields = ("id", "kind", "name", "spawn_seq", "spawn_depth", "message_count",
                           "updated_at", "is_active", "metadata")
    id: int
    kind: str
    name: str
    spawn_seq: int | None
    spawn_depth: int | None
    message_count: int
    updated_at: str
    is_active: bool
    metadata: dict

    def __init__(self, id: int, kind: str, name: str, spawn_seq: int | None,
                 spawn_depth: int | None, message_count: int, updated_at: str, is_active: bool,
                 metadata: dict):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "kind", kind)
        setattr_(self, "name", name)
        setattr_(self, "spawn_seq", spawn_seq)
        setattr_(self, "spawn_depth", spawn_depth)
        setattr_(self, "message_count", message_count)
        setattr_(self, "updated_at", updated_at)
        setattr_(self, "is_active", is_active)
        setattr_(self, "metadata", metadata)


class UnlinkedChild(Frozen):
    """A session that names a parent (or an entry in one) not yet found in the store."""

    __slots__ = _fields = ("id", "kind", "parent_ref", "spawn_ref", "parent_id")
    id: int
    kind: str
    parent_ref: str
    spawn_ref: str | None
    parent_id: int | None

    def __init__(self, id: int, kind: str, parent_ref: str, spawn_ref: str | None,
                 parent_id: int | None):
        setattr_ = object.__setattr__
        setattr_(self, "id", id)
        setattr_(self, "kind", kind)
        setattr_(self, "parent_ref", parent_ref)
        setattr_(self, "spawn_ref", spawn_ref)
        setattr_(self, "parent_id", parent_id)


class PathCounts(Frozen):
    """What a depth range of a path holds, counted without reading its entries."""

    __slots__ = _fields = ("entries", "messages", "compactions")
    entries: int
    messages: int
    compactions: int

    def __init__(self, entries: int, messages: int, compactions: int):
        setattr_ = object.__setattr__
        setattr_(self, "entries", entries)
        setattr_(self, "messages", messages)
        setattr_(self, "compactions", compactions)


class SearchHit(Frozen):
    """One entry found by a search, with its session and a snippet."""

    __slots__ = _fields = ("seq", "entry_id", "external_session_id", "session_name", "type",
                           "role", "timestamp", "snippet")
    seq: int
    entry_id: str
    external_session_id: int
    session_name: str
    type: str
    role: str | None
    timestamp: str
    snippet: str

    def __init__(self, seq: int, entry_id: str, external_session_id: int, session_name: str,
                 type: str, role: str | None, timestamp: str, snippet: str):
        setattr_ = object.__setattr__
        setattr_(self, "seq", seq)
        setattr_(self, "entry_id", entry_id)
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "session_name", session_name)
        setattr_(self, "type", type)
        setattr_(self, "role", role)
        setattr_(self, "timestamp", timestamp)
        setattr_(self, "snippet", snippet)


class LangGraphCheckpoint(Frozen):
    """A checkpoint of a LangGraph agent as its checkpointer stored it (see core.langgraph):
    the serializer's output (`type`, `blob`) and metadata (JSON text) given back as they
    were, and the session, entry and arbor checkpoint it is in the store."""

    __slots__ = _fields = ("external_session_id", "thread_id", "checkpoint_ns", "checkpoint_id",
                           "parent_checkpoint_id", "type", "blob", "metadata", "checkpoint_ref",
                           "entry_seq", "messages", "messages_digest")
    external_session_id: int
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    type: str
    blob: bytes
    metadata: str
    checkpoint_ref: int | None
    entry_seq: int | None
    messages: int
    messages_digest: str

    def __init__(self, external_session_id: int, thread_id: str, checkpoint_ns: str,
                 checkpoint_id: str, parent_checkpoint_id: str | None, type: str, blob: bytes,
                 metadata: str, checkpoint_ref: int | None, entry_seq: int | None, messages: int,
                 messages_digest: str):
        setattr_ = object.__setattr__
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "thread_id", thread_id)
        setattr_(self, "checkpoint_ns", checkpoint_ns)
        setattr_(self, "checkpoint_id", checkpoint_id)
        setattr_(self, "parent_checkpoint_id", parent_checkpoint_id)
        setattr_(self, "type", type)
        setattr_(self, "blob", blob)
        setattr_(self, "metadata", metadata)
        setattr_(self, "checkpoint_ref", checkpoint_ref)
        setattr_(self, "entry_seq", entry_seq)
        setattr_(self, "messages", messages)
        setattr_(self, "messages_digest", messages_digest)


_dumps = dumps


class LoggedOperation(Frozen):
    """One row of the undo log (core.actions.undo): an operation of the app and what it changed,
    each change [what, target id, value before, value after]."""

    __slots__ = _fields = ("seq", "kind", "external_session_id", "description", "changes",
                           "undoes", "created_at")
    seq: int
    kind: str
    external_session_id: int | None
    description: str
    changes: list[list[Any]]
    undoes: int | None
    created_at: str

    def __init__(self, seq: int, kind: str, external_session_id: int | None, description: str,
                 changes: list[list[Any]], undoes: int | None, created_at: str):
        setattr_ = object.__setattr__
        setattr_(self, "seq", seq)
        setattr_(self, "kind", kind)
        setattr_(self, "external_session_id", external_session_id)
        setattr_(self, "description", description)
        setattr_(self, "changes", changes)
        setattr_(self, "undoes", undoes)
        setattr_(self, "created_at", created_at)


def _operation_from_row(row) -> LoggedOperation:
    return LoggedOperation(row[0], row[1], row[2], row[3], _loads(row[4], []), row[5], row[6])


def data_decoder(rows, index: int) -> Callable[[str | None], dict[str, Any]]:
    """Reads column `index` (an entry's JSON data) of many rows at once: with orjson when
    there is enough of it to pay for loading it (core.util.fastjson: ~3x the standard
    library's speed), else as `_loads`; whatever orjson refuses is read by `_loads`."""
    from core.util import fastjson

    size = sum(len(row[index]) for row in rows if row[index])
    decode = fastjson.common_decoder(size)
    if getattr(decode, "__module__", None) != "orjson":
        return lambda text: _loads(text, {})

    def read(text: str | None) -> dict[str, Any]:
        if not text:
            return {}
        try:
            return decode(text)
        except ValueError:
            return _loads(text, {})

    return read


def _loads(text: str | None, default: Any) -> Any:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError:
        return default
