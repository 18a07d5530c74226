"""A LangGraph `messages` channel as arbor message entries.

Each checkpoint holds the whole list of messages; only the ones its parent checkpoint did
not hold become entries. Which ones those are is told by a digest chained over the keys
of the messages (a key: the message's class, id and a hash of its fields), stored with
each checkpoint with the count it covers: a child whose first `count` messages chain to
the parent's digest adds exactly what follows them. A list that was rewritten (a message
edited or removed by `update_state`) does not chain; the parent's messages are then read
back and compared one by one (rare: the common case never reads the parent's blob).

Keys are remembered by object identity for the messages of the running process (LangGraph
keeps the same message objects from step to step), so a step hashes only its new
messages, whatever the length of the conversation.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, Sequence

from core.util.fastjson import dumps
from core.agents.langgraph.importer import convert_message, message_fields, plain

KEY_CACHE_SIZE = 20_000


def fields_of(value: Any) -> dict[str, Any] | None:
    """The fields of a message: a LangChain message object (pydantic) or the dict, tuple
    and LangChain-serialised forms LangGraph accepts. None for anything else."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and hasattr(value, "content") and isinstance(getattr(value, "type", None), str):
        try:
            fields = dump()
        except Exception:  # noqa: BLE001 - a message that cannot describe itself stays opaque
            return None
        if isinstance(fields, dict):
            fields["_class"] = type(value).__name__
            return fields
        return None
    return message_fields(value)


def as_arbor_message(value: Any, timestamp: Any) -> dict[str, Any]:
    """The message as arbor stores it (pi's shape; what does not map is under `langchain`)."""
    fields = fields_of(value)
    if fields is None:
        fields = {"type": "unknown", "content": plain(value), "_class": type(value).__name__}
    return convert_message(fields, timestamp)


def _key(value: Any) -> str:
    fields = fields_of(value)
    body = dumps(plain(fields if fields is not None else value))
    digest = hashlib.sha1(body if isinstance(body, bytes) else body.encode("utf-8", "replace"))
    ident = fields.get("id") if fields else None
    return f"{type(value).__name__}|{ident or ''}|{digest.hexdigest()[:20]}"


class MessageKeys:
    """Keys of messages, remembered by identity for the objects seen lately."""

    def __init__(self, size: int = KEY_CACHE_SIZE):
        self._size = size
        self._known: OrderedDict[int, tuple[Any, str]] = OrderedDict()

    def key(self, value: Any) -> str:
        held = self._known.get(id(value))
        if held is not None and held[0] is value:
            self._known.move_to_end(id(value))
            return held[1]
        key = _key(value)
        # (the object is held with its key, so its id cannot be reused meanwhile)
        self._known[id(value)] = (value, key)
        if len(self._known) > self._size:
            self._known.popitem(last=False)
        return key

    def keys(self, values: Sequence[Any]) -> list[str]:
        return [self.key(value) for value in values]


def chain_digest(keys: Sequence[str], upto: int | None = None) -> tuple[str, str | None]:
    """(digest of all the keys, digest of the first `upto` keys or None)."""
    running = hashlib.sha1()
    at = None
    if upto == 0:
        at = running.hexdigest()
    for index, key in enumerate(keys, 1):
        running.update(key.encode("utf-8", "replace"))
        running.update(b"\n")
        if index == upto:
            at = running.hexdigest()
    return running.hexdigest(), at


def common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    count = 0
    for left, right in zip(a, b):
        if left != right:
            break
        count += 1
    return count
