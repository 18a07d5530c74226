"""The rich-free half of the gate for untrusted text (tui/safe_text.py): `clean`, for output
that is plain text (a command's lines on a terminal or in a pipe), without loading Rich.
safe_text builds its `Text` objects on the same rules."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + r"\ufeff\ufff9-\ufffb\ud800-\udfff]")

_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)}
_PICTURES[0x1B] = "␛"
_PICTURES[0x7F] = "␡"
_PICTURES[0x0D] = "␍"


def _visible(char: str) -> str:
    code = ord(char)
    if code in _PICTURES:
        return _PICTURES[code]
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


# printable ASCII and the line break: what ASCII text may hold as it is
_ASCII_KEPT = bytes(range(0x20, 0x7F)) + b"\n"


def clean(value: Any) -> str:
    """Untrusted value -> a plain string with no control characters (for measuring, matching)."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    text = text.replace("\t", "    ")
    if text.isascii() and not text.encode("ascii").translate(None, _ASCII_KEPT):
        return text       # (a quick answer for megabytes of plain output)
    return _UNSAFE.sub(lambda m: _visible(m.group()), text)
