"""JSON for the import hot path: `orjson` (3x faster to read, 10x to write; a dependency
for that reason), with the standard library for anything orjson refuses (lone surrogates,
integers beyond 64 bits, keys that are not text) and as a stand-in should orjson be missing.

Writing refuses data nested more than MAX_DEPTH levels with `NestedTooDeeply` (an
ArborError: one sentence): orjson stops there, and the standard library's encoder would
otherwise die of a RecursionError at a depth that depends on how deep the caller's own
stack already is."""

from __future__ import annotations

import json

from .errors import NestedTooDeeply

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

try:  # declared, but the import still works without it
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

ACCELERATED = _orjson is not None
# Built once: json.dumps() with non-default options builds a new encoder on every call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_decode = json.JSONDecoder().decode


# The decoder alone, for a hot loop that hands what it refuses to `loads` (or to a reader
# that explains the error): orjson refuses a few things the standard library reads.
loads_common = _orjson.loads if _orjson is not None else json.loads


def loads(data: bytes) -> Any:
    if _orjson is not None:
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # the standard library gives the error message (or reads what orjson refuses)
    return json.loads(data)


_encode_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode


MAX_DEPTH = 254   # orjson's own limit for writing


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests lists, tuples and dicts more than `limit` levels (a walk
    without recursion, so any depth can be asked about)."""
    containers = (dict, list, tuple)
    if type(value) not in containers and not isinstance(value, containers):
        return False
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        current, depth = pop()
        if depth > limit:
            return True
        for child in (current.values() if isinstance(current, dict) else current):
            if isinstance(child, containers):
                push((child, depth + 1))
    return False


def _too_deep() -> NestedTooDeeply:
    return NestedTooDeeply(f"cannot store data nested more than {MAX_DEPTH} levels deep "
                           "(lists and objects inside each other); nothing was written")


def _standard(encode: Any, value: Any) -> str:
    """The standard library's encoding, refusing what is nested too deeply in one sentence."""
    if nested_deeper_than(value, MAX_DEPTH):
        raise _too_deep()
    try:
        return encode(value)
    except RecursionError:   # the caller's stack was already deep
        raise _too_deep() from None


def dumps_utf8(value: Any) -> bytes:
    """`dumps` as UTF-8 bytes. Text UTF-8 cannot hold (lone surrogates, from undecodable
    input) is written as JSON escapes, so nothing is lost."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value)
        except (TypeError, ValueError):
            pass
    text = _standard(_encode, value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _standard(_encode_ascii, value).encode("ascii")


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is (as core's store writes it)."""
    if _orjson is not None:
        try:
            return _orjson.dumps(value).decode("utf-8")
        except (TypeError, ValueError):
            pass  # lone surrogates, non-str keys, big ints: the standard library handles them
    return _standard(_encode, value)
