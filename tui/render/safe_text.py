"""The one gate for untrusted text (message content, names, labels, paths, snippets).

Everything read from the store is untrusted: it may hold markup-like text (`[bold]`,
`[@click=app.quit]`, `[/foo]`), ANSI and OSC escape sequences (OSC 52 clipboard writes,
OSC 8 links, `\\x1b[2J`), megabytes of tool output or binary-looking bytes. Widgets only
ever receive what these functions return: `rich.text.Text` objects (never strings, so no
markup is parsed), with every control character made visible and the length capped.

- Control characters are made visible by core/util/visible_text.py (shared with `arbor mcp`):
  ESC becomes `␛`, other C0 controls their Unicode control pictures (`␇`, `␈`, ...),
  DEL `␡`, C1 controls (U+0080..U+009F) `\\x9b`-style escapes, and the bidi overrides and
  isolates (which reorder what the terminal shows) `\\u202e`-style escapes.
- `\\n` is kept (as a line break) by `safe_text` and shown as `⏎` by `safe_line`;
  `\\t` becomes spaces; `\\r` becomes `␍`.
- Text longer than the cap shows a preview and "… N more bytes".
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text

from core.util.visible_text import UNSAFE as _UNSAFE, clean, visible as _visible  # noqa: F401

# A screenful or two of any one message; more is reachable by export, not by scrolling.
DISPLAY_LIMIT = 20_000
LINE_LIMIT = 400

CONTROL_STYLE = Style(color="bright_magenta", bold=True)
MORE_STYLE = Style(color="bright_black", italic=True)


def _cap(text: str, limit: int, max_lines: int | None) -> tuple[str, int]:
    """The shown part of `text` and how many characters are left out."""
    cut = len(text)
    if len(text) > limit:
        cut = limit
    if max_lines is not None:
        position = -1
        for _ in range(max_lines):
            position = text.find("\n", position + 1, cut)
            if position < 0:
                break
        else:
            cut = min(cut, position)
    return text[:cut], len(text) - cut


def _more(hidden_chars: int, original: str, shown: str, hint: str = "") -> str:
    hidden_bytes = len(original.encode("utf-8", "replace")) - len(shown.encode("utf-8", "replace"))
    more = f"… {hidden_bytes:,} more bytes" if hidden_bytes > 0 else f"… {hidden_chars:,} more characters"
    return f"{more} · {hint}" if hint else more


def safe_text(value: Any, *, limit: int = DISPLAY_LIMIT, max_lines: int | None = LINE_LIMIT,
              style: str | Style = "", hint: str = "") -> Text:
    """Untrusted text -> a Text with line breaks kept, controls visible, length capped
    (the "… N more bytes" note then says `hint`: how to see the rest)."""
    raw = value if isinstance(value, str) else ("" if value is None else str(value))
    shown, hidden = _cap(raw, limit, max_lines)
    out = Text(style=style, no_wrap=False, end="")
    _append_visible(out, shown)
    if hidden:
        out.append(("\n" if not out.plain.endswith("\n") else "") + _more(hidden, raw, shown, hint),
                   MORE_STYLE)
    return out


def safe_markdown_source(value: Any, *, limit: int = DISPLAY_LIMIT,
                         max_lines: int | None = LINE_LIMIT, hint: str = "") -> tuple[str, str]:
    """Untrusted text -> (markdown source with controls made visible, "… N more" note or "")."""
    raw = value if isinstance(value, str) else ("" if value is None else str(value))
    shown, hidden = _cap(raw, limit, max_lines)
    return clean(shown), (_more(hidden, raw, shown, hint) if hidden else "")


def safe_line(value: Any, width: int = 400, *, style: str | Style = "") -> Text:
    """Untrusted text -> one line (newlines shown as ⏎, runs of spaces kept), at most `width` cells."""
    raw = value if isinstance(value, str) else ("" if value is None else str(value))
    head = raw[: width * 4 + 16]
    head = head.replace("\r\n", "\n")
    out = Text(style=style, no_wrap=True, overflow="ellipsis", end="")
    _append_visible(out, head, newline="⏎ ")
    if len(raw) > len(head):
        out.append("…", MORE_STYLE)
    out.truncate(width, overflow="ellipsis")
    return out


def _append_visible(out: Text, text: str, newline: str | None = None) -> None:
    text = text.replace("\t", "    ")
    if newline is not None:
        for number, part in enumerate(text.split("\n")):
            if number:
                out.append(newline, MORE_STYLE)
            _append_visible(out, part)
        return
    position = 0
    for match in _UNSAFE.finditer(text):
        if match.start() > position:
            out.append(text[position:match.start()])
        out.append(_visible(match.group()), CONTROL_STYLE)
        position = match.end()
    if position < len(text):
        out.append(text[position:])


def strip_links(segments):
    """Rendered segments with any hyperlink (OSC 8) or click action removed from their styles."""
    for segment in segments:
        style = segment.style
        if style is not None and (style.link or style.meta):
            style = Style(color=style.color, bgcolor=style.bgcolor, bold=style.bold, dim=style.dim,
                          italic=style.italic, underline=style.underline, reverse=style.reverse,
                          strike=style.strike)
            segment = type(segment)(segment.text, style, segment.control)
        if segment.control:
            continue
        yield segment
