"""The status line: store path, counts, the view mode and the live indicator."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..formatting import count
from ..safe_text import safe_line


def status_text(store_path: str, sessions: int, messages: int, view: str, width: int,
                extra: str = "", partial: bool = False) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    out.append(" arbor ", "bold #1c1c1c on #5fafff")
    out.append(" ")
    right = Text(end="")
    if partial:
        right.append(f"{sessions:,}+ sessions (loading…)", "#a0a8b0")
    else:
        right.append(f"{count(sessions, 'session')} · {count(messages, 'message')}", "#a0a8b0")
    right.append("  │  ", "#5c6370")
    right.append(view, "#d7af5f")
    if extra:
        right.append("  │  ", "#5c6370")
        right.append(extra, "#87d787")
    right.append(" ")
    room = max(10, width - out.cell_len - right.cell_len - 2)
    out.append_text(safe_line(store_path, room, style="#808890"))
    gap = width - out.cell_len - right.cell_len
    if gap > 0:
        out.append(" " * gap)
    out.append_text(right)
    return out


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
    }
    """
