"""JSON for the import hot path: `orjson` (3x faster to read, 10x to write; a dependency
for that reason), with the standard library for anything orjson refuses (lone surrogates,
integers beyond 64 bits, keys that are not text) and as a stand-in should orjson be missing.

orjson is loaded once there is enough JSON for it to pay: loading it loads `dataclasses`
(with inspect, ast, dis, tokenize) and `uuid` (with platform), about 30 ms of start-up and
10 ms more at exit on a slow machine, more than the rest of an import of a few appended
lines. Until the process has read or written `SMALL_BYTES` of JSON (or a caller says it is
about to read more, `common_decoder`), the standard library does the work where its result
is orjson's, exactly:
- reading: whatever both read, they read as the same value, but for integers beyond 64
  bits (orjson makes them floats). Those, and whatever the standard library refuses, go
  the way they always went: orjson first, then the standard library.
- writing: values made only of dicts with text keys, lists, tuples, text, integers, True,
  False and None, at most MAX_DEPTH deep, are written by both to the same bytes. Anything
  else (a float: `1e-07` against orjson's `1e-7`; a datetime, an enum, a subclass) is
  written by orjson, loaded then.
tests/test_fastjson.py checks both claims against the orjson installed.

Writing refuses data nested more than MAX_DEPTH levels with `NestedTooDeeply` (an
ArborError: one sentence): orjson stops there, and the standard library's encoder would
otherwise die of a RecursionError at a depth that depends on how deep the caller's own
stack already is."""

from __future__ import annotations

import json

from core.model.errors import NestedTooDeeply

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

# Bytes of JSON read and written with the standard library before orjson is loaded: about
# what the standard library reads, checks and writes in the time loading orjson takes.
SMALL_BYTES = 512 * 1024

_orjson = None          # the module, once loaded (`_accelerate`)
_missing = False        # orjson is not installed: the standard library does everything
_small_left = SMALL_BYTES

# Built once: json.dumps() with non-default options builds a new encoder on every call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_encode_ascii = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode
_detect_encoding = json.detect_encoding

INT64_MIN, UINT64_MAX = -(1 << 63), (1 << 64) - 1   # the integers orjson reads as integers


def _accelerate() -> bool:
    """Load orjson for the rest of the process (False: it is not installed)."""
    global _orjson, _missing
    if _orjson is None and not _missing:
        try:  # declared, but the import still works without it
            import orjson
        except ImportError:  # pragma: no cover - depends on the environment
            _missing = True
        else:
            _orjson = orjson
    return _orjson is not None


def __getattr__(name: str) -> Any:
    if name == "ACCELERATED":   # whether orjson is there (asking loads it)
        return _accelerate()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _small(size: int) -> bool:
    """Whether `size` more bytes of JSON are for the standard library; once there is more
    than SMALL_BYTES in all, orjson is loaded (and this is False from then on)."""
    global _small_left
    if _orjson is not None:
        return False
    if size <= _small_left:
        _small_left -= size
        return True
    _small_left = 0
    _accelerate()
    return False


def _int64(text: str) -> int:
    value = int(text)
    if INT64_MIN <= value <= UINT64_MAX:
        return value
    raise ValueError("an integer beyond 64 bits")   # orjson reads it as a float: it decides


_small_decoder = json.JSONDecoder(parse_int=_int64).decode


def _small_loads(data: Any) -> Any:
    """The standard library's reading of `data` (bytes), as `json.loads` decodes them;
    raises for anything orjson might read otherwise (see the module doc)."""
    if type(data) is not bytes:
        raise ValueError("not bytes")    # (the full path reads it)
    return _small_decoder(data.decode(_detect_encoding(data), "surrogatepass"))


def _full_loads(data: Any) -> Any:
    if _orjson is not None or _accelerate():
        try:
            return _orjson.loads(data)
        except _orjson.JSONDecodeError:
            pass  # the standard library gives the error message (or reads what orjson refuses)
    return json.loads(data)


def loads(data: bytes) -> Any:
    if _orjson is None and _small(len(data)):
        try:
            return _small_loads(data)
        except (ValueError, RecursionError):
            pass   # read as it always was (and the error said as it always was)
    return _full_loads(data)


def _small_common(data: bytes) -> Any:
    """`common_decoder`'s decoder before orjson is loaded: the standard library's reading,
    or an error for what it refuses and for what orjson might read otherwise."""
    if _orjson is None and _small(len(data)):
        return _small_loads(data)
    return _orjson.loads(data) if _orjson is not None else json.loads(data)


def common_decoder(expected: int) -> Callable[[bytes], Any]:
    """The decoder alone, for a hot loop about to read about `expected` bytes of JSON that
    hands whatever the decoder refuses to `loads` (or to a reader that explains the
    error): orjson's own (loaded now) when that is more than is left for the standard
    library, else `_small_common` (a refusal there is not orjson's: only `loads` says
    what a line holds)."""
    if _orjson is None and not _missing and expected > _small_left:
        _accelerate()
    if _orjson is not None:
        return _orjson.loads
    return _small_common if not _missing else json.loads


def strict_loads(data: bytes) -> Any:
    """orjson's reading exactly, its refusals (a ValueError) included, for a caller to whom
    what orjson refuses is unreadable; the standard library's should orjson be missing.
    (Loads orjson: no import of appended Claude Code lines asks it.)"""
    if _orjson is not None or _accelerate():
        return _orjson.loads(data)
    return json.loads(data)


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


def plain_size(value: Any, limit: int) -> int:
    """About how long `value` is as JSON, if it is made only of what the standard library
    and orjson write to the same bytes (see the module doc) and is at most about `limit`
    long; else -1. A walk without recursion, stopped at the first thing that does not fit."""
    size = 0
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        current, depth = pop()
        kind = type(current)
        if kind is dict:
            if depth > MAX_DEPTH:
                return -1
            size += 2
            for key, child in current.items():
                if type(key) is not str:
                    return -1
                size += len(key) + 4
                kind = type(child)
                if kind is str:
                    size += len(child)
                elif kind is dict or kind is list or kind is tuple:
                    push((child, depth + 1))
                elif kind is not int and kind is not bool and child is not None:
                    return -1
        elif kind is list or kind is tuple:
            if depth > MAX_DEPTH:
                return -1
            size += 2
            for child in current:
                size += 3
                kind = type(child)
                if kind is str:
                    size += len(child)
                elif kind is dict or kind is list or kind is tuple:
                    push((child, depth + 1))
                elif kind is not int and kind is not bool and child is not None:
                    return -1
        elif kind is str:
            size += len(current) + 2
        elif kind is not int and kind is not bool and current is not None:
            return -1
        if size > limit:
            return -1
    return size


def _plain(value: Any) -> bool:
    """Whether the standard library is to write `value` (`plain_size`, within what is left
    of SMALL_BYTES, which it takes); False once orjson is loaded, and the caller loads it."""
    global _small_left
    if _orjson is not None:
        return False
    size = plain_size(value, _small_left)
    if size < 0:
        return False
    _small_left -= size
    return True


def _standard_utf8(value: Any) -> bytes:
    text = _standard(_encode, value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _standard(_encode_ascii, value).encode("ascii")


def _plain_utf8(value: Any) -> bytes:
    """`_standard_utf8` of a value `_plain` let through (no depth to check: it did)."""
    text = _encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _encode_ascii(value).encode("ascii")


def dumps_utf8(value: Any) -> bytes:
    """`dumps` as UTF-8 bytes. Text UTF-8 cannot hold (lone surrogates, from undecodable
    input) is written as JSON escapes, so nothing is lost."""
    if _orjson is None and _plain(value):
        try:
            return _plain_utf8(value)   # orjson's bytes (it refuses lone surrogates: the same)
        except RecursionError:
            pass   # (the caller's stack was already deep: orjson's is not the caller's)
    if _orjson is not None or _accelerate():
        try:
            return _orjson.dumps(value)
        except (TypeError, ValueError):
            pass
    return _standard_utf8(value)


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is (as core's store writes it)."""
    if _orjson is None and _plain(value):
        try:
            return _encode(value)
        except RecursionError:
            pass
    if _orjson is not None or _accelerate():
        try:
            return _orjson.dumps(value).decode("utf-8")
        except (TypeError, ValueError):
            pass  # lone surrogates, non-str keys, big ints: the standard library handles them
    return _standard(_encode, value)
