"""The standard library's JSON, to the character, without loading the `json` package: its
import (json.decoder, json.scanner, json.encoder and the six regular expressions they
compile) was ~5 M instructions, ~2.5 ms, of an `arbor import` of a few appended lines,
which encodes and decodes its import record, entries and usage rows with it.

Built on `_json`, the C half that `json` itself runs on (`json.loads` and `json.dumps`
call the same functions with the same arguments); whatever is not the common case (an
error to report, input that is not text, a byte order mark) is handed to `json`, loaded
then, so every result and every error is json's own. tests/test_stdjson.py compares them.

    loads(s)                          json.loads(s)
    dumps(value)                      json.dumps(value)
    decoder(parse_int=None)           json.JSONDecoder(parse_int=...).decode
    encoder(ensure_ascii=True, separators=None, default=None)
                                      json.JSONEncoder(...).encode
    detect_encoding(b)                json.detect_encoding(b)
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - an interpreter without it: json does it all
    _json = None

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

_SPACE = " \t\n\r"   # json.decoder.WHITESPACE
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """What `_json.make_scanner` reads of a `json.JSONDecoder` made with `parse_int`."""

    def __init__(self, parse_int: Callable[[str], Any] | None):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = parse_int or int
        self.parse_constant = _CONSTANTS.__getitem__
        self.memo = {}


def decoder(parse_int: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """`json.JSONDecoder(parse_int=parse_int).decode`."""
    if _json is None:  # pragma: no cover
        import json

        return json.JSONDecoder(parse_int=parse_int).decode
    scan = _json.make_scanner(_Context(parse_int))

    def standard(text: Any) -> Any:
        """json's own decoding: its result, or its error."""
        import json

        return json.JSONDecoder(parse_int=parse_int).decode(text)

    def decode(text: str) -> Any:
        if type(text) is not str:
            return standard(text)
        size = len(text)
        start = 0
        while start < size and text[start] in _SPACE:
            start += 1
        try:
            value, end = scan(text, start)
        except StopIteration:
            return standard(text)   # ("Expecting value")
        while end < size and text[end] in _SPACE:
            end += 1
        return value if end == size else standard(text)   # ("Extra data")

    return decode


_decode = decoder()


def detect_encoding(data: bytes) -> str:
    """`json.detect_encoding`: UTF-8 unless the bytes begin with a byte order mark or a
    zero byte (those, json tells)."""
    if data[:1] in (b"\x00", b"\xef", b"\xfe", b"\xff") or data[1:2] == b"\x00":
        import json

        return json.detect_encoding(data)
    return "utf-8"


def loads(s: str | bytes) -> Any:
    """`json.loads(s)`."""
    if type(s) is not str:
        if type(s) is not bytes:
            import json

            return json.loads(s)
        s = s.decode(detect_encoding(s), "surrogatepass")
    if s.startswith("\ufeff"):
        import json

        return json.loads(s)   # (its error: a byte order mark in text)
    return _decode(s)


def _not_serializable(value: Any) -> Any:
    import json

    return json.JSONEncoder().default(value)   # (raises json's TypeError)


def encoder(*, ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
            default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """`json.JSONEncoder(ensure_ascii=..., separators=..., default=...).encode`."""
    if _json is None:  # pragma: no cover
        import json

        return json.JSONEncoder(ensure_ascii=ensure_ascii, separators=separators,
                                default=default).encode
    item, key = separators if separators is not None else (", ", ": ")
    text = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    fallback = default or _not_serializable
    make = _json.make_encoder

    def encode(value: Any) -> str:
        if isinstance(value, str):
            return text(value)
        # (as JSONEncoder.iterencode: a new encoder, and its own circular-reference
        # markers, for every value)
        return "".join(make({}, fallback, text, None, key, item, False, False, True)(value, 0))

    return encode


dumps = encoder()
