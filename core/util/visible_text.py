"""Control characters of untrusted text made visible: the one rule the app's screen
(tui/safe_text.py) and the MCP server (core/mcp) share, so an agent reading a message through
`arbor mcp` gets the same characters a person sees in the app.

- ESC becomes `␛`, other C0 controls their Unicode control pictures (`␇`, `␈`, ...), DEL `␡`,
  `\\r` `␍`, C1 controls (U+0080..U+009F) `\\x9b`-style escapes, the bidi overrides and
  isolates (which reorder what a terminal shows) `\\u202e`-style escapes, lone surrogates
  `\\ufffd`.
- `\\n` is kept; `\\t` becomes four spaces.
"""

from __future__ import annotations

import re

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI + r"\ufeff\ufff9-\ufffb\ud800-\udfff]")

_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)}
_PICTURES[0x1B] = "␛"
_PICTURES[0x7F] = "␡"
_PICTURES[0x0D] = "␍"

# printable ASCII and the line break: what ASCII text may hold as it is
_ASCII_KEPT = bytes(range(0x20, 0x7F)) + b"\n"


def visible(char: str) -> str:
    """What one unsafe character (a match of `UNSAFE`) is shown as."""
    code = ord(char)
    if code in _PICTURES:
        return _PICTURES[code]
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def clean(value: object) -> str:
    """Untrusted value -> a plain string with no control characters but the line break."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    text = text.replace("\t", "    ")
    if text.isascii() and not text.encode("ascii").translate(None, _ASCII_KEPT):
        return text       # (a quick answer for megabytes of plain output)
    return UNSAFE.sub(lambda m: visible(m.group()), text)
