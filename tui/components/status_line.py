"""The status line: store path, counts, the view mode and the live indicator; first of
all, when there is one, an alert (the store's server unreachable, a write under way).

What matters most comes first when the terminal is narrow: the counts and the view mode
are always whole (in a short form if need be), and the store path gets what room is left,
cut in the middle so that its file name stays (`~/.local/…/arbor.db`), or is left out."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.render.cut_text import cut_middle
from tui.render.formatting import count
from tui.render.safe_text import safe_line

LABEL_STYLE = "bold #1c1c1c on #5fafff"
COUNT_STYLE = "#a0a8b0"
RULE_STYLE = "#5c6370"
VIEW_STYLE = "#d7af5f"
EXTRA_STYLE = "#87d787"
ALERT_STYLE = "bold #1c1c1c on #d7875f"
PROGRESS_STYLE = "#1c1c1c on #87af87"
PATH_STYLE = "#808890"
RULES = ("  │  ", " │ ")
MIN_PATH = 10  # cells: less than this of a path says nothing, so it is left out
COMFORTABLE_PATH = 16  # cells of path worth the long wording's room
SHORT_VIEWS = {"replayed context (v)": "context (v)", "raw entries (v)": "raw (v)"}
SHORT_EXTRAS = {"archived shown": "archived", "following (polling)": "polling"}
SHORT_ALERTS = {"server unreachable, retrying": "unreachable", "store busy, retrying": "busy",
                "saving… (waiting for the store)": "saving…"}


def status_text(store_path: str, sessions: int, messages: int, view: str, width: int,
                extra: str = "", partial: bool = False, alert: str = "",
                progress: list[str] | None = None) -> Text:
    """`progress`: an import under way, in words from the longest to the shortest (the
    longest that leaves the counts room is shown, before the path)."""
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    out.append(" arbor ", LABEL_STYLE)
    out.append(" ")
    if alert:   # (before the path, which gives it its room; short where the line is)
        if width < 12 + len(alert) + 45:
            alert = SHORT_ALERTS.get(alert, alert)
        out.append(f" {alert} ", ALERT_STYLE)
        out.append(" ")
    if progress:
        least = len(f"{sessions:,}+ sessions…" if partial else
                    f"{count(sessions, 'session')} · {count(messages, 'msg')}") + 3
        used = out.cell_len
        words = next((form for form in progress if used + len(form) + 3 + least <= width),
                     progress[-1])
        out.append(f" {words} ", PROGRESS_STYLE)
        out.append(" ")
    if partial:
        counts = (f"{sessions:,}+ sessions (loading…)", f"{sessions:,}+ sessions…")
    else:
        counts = (f"{count(sessions, 'session')} · {count(messages, 'message')}",
                  f"{count(sessions, 'session')} · {count(messages, 'msg')}")
    short_view = SHORT_VIEWS.get(view, view)
    short_extra = " · ".join(SHORT_EXTRAS.get(part, part) for part in extra.split(" · ") if part)
    # the whole wording if it leaves the path some room, else shorter, down to the shortest
    forms = [_right(counts[0], view, extra, RULES[0]),
             _right(counts[0], short_view, extra, RULES[0]),
             _right(counts[0], short_view, extra, RULES[1]),
             _right(counts[1], short_view, extra, RULES[1]),
             _right(counts[1], short_view, short_extra, RULES[1])]
    # with an alert, where even the shortest does not fit, the live indicator and then the
    # view give way
    tighter = [_right(counts[1], short_view, "", RULES[1]),
               _right(counts[1], "", "", RULES[1])] if alert or progress else []
    path = safe_line(store_path, 4 * width, style=PATH_STYLE)
    wanted = min(path.cell_len, COMFORTABLE_PATH)
    used = out.cell_len
    right = next((f for f in forms if used + f.cell_len + 2 + wanted <= width), forms[-1])
    if used + right.cell_len > width:
        right = next((f for f in tighter if used + f.cell_len <= width), right)
    room = width - used - right.cell_len - 2   # two spaces between path and counts
    if room >= min(path.cell_len, MIN_PATH):
        out.append_text(middle_cut(path, room))
    gap = width - out.cell_len - right.cell_len
    out.append(" " * max(gap, 0))
    out.append_text(right)
    return out


def _right(counts: str, view: str, extra: str, rule: str) -> Text:
    right = Text(end="")
    right.append(counts, COUNT_STYLE)
    if view:
        right.append(rule, RULE_STYLE)
        right.append(view, VIEW_STYLE)
    if extra:
        right.append(rule, RULE_STYLE)
        right.append(extra, EXTRA_STYLE)
    right.append(" ")
    return right


def middle_cut(text: Text, width: int) -> Text:
    """`text` (a path) in at most `width` cells, cut in the middle (tui/render/cut_text.py)."""
    return cut_middle(text, width, PATH_STYLE)


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
    }
    """
