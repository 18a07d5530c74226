"""The whole of one message, full screen (`f` in the messages pane), or in $PAGER (`p` there).

The pane shows a bounded preview of a long body; this shows every line of it. It is a
Line-API view over the lines of `tui.render.message_text` (already made safe): only the rows on
screen are drawn, and wrapping a 10 MB tool output is arithmetic, not layout (a line is cut
every `width` characters, or every `width // 2` when it holds double-width characters, so
that a row never overflows).
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
import subprocess
import tempfile
from itertools import accumulate
from operator import itemgetter

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from tui.render.formatting import FAINT
from tui.render.message_text import Line, as_text
from tui.render.safe_text import safe_line
from .focus import focus_now

_WIDE = re.compile("[\u1100-\u115f\u231a-\u231b\u2329-\u232a\u23e9-\u23ec\u2600-\u27bf"
                   "\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
                   "\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6"
                   "\U0001f000-\U0001faff\U00020000-\U0003fffd]")


class WholeText(ScrollView, can_focus=True):
    """Lines of text, wrapped to the width, drawn a row at a time."""

    BINDINGS = [
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("pageup,b", "page_up", "Page up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("home,g", "top", "Top", show=False),
        Binding("end,G", "bottom", "End", show=False),
    ]

    DEFAULT_CSS = """
    WholeText {
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
        overflow-x: hidden;
        padding: 0 1;
    }
    """

    def __init__(self, lines: list[Line], **kwargs) -> None:
        super().__init__(**kwargs)
        self.lines = lines or [("", "")]
        self._styles: dict[str, Style] = {}
        self._wide: set[int] | None = None
        self._lengths: list[int] | None = None
        self._width = self._half = 1
        self._starts: list[int] = [0]
        self._wrapped_for = 0

    @property
    def rows(self) -> int:
        return self._starts[-1]

    def _wrap(self, width: int) -> None:
        """Rows per line at this width: the start row of each line, and its cut length."""
        if width == self._wrapped_for:
            return
        width = max(1, width)
        half = max(1, width // 2)
        if self._wide is None:       # the lines holding double-width characters
            self._wide = {index for index, (text, _) in enumerate(self.lines)
                          if not text.isascii() and _WIDE.search(text)}
        if self._lengths is None:
            self._lengths = list(map(len, map(itemgetter(0), self.lines)))
        lengths = self._lengths
        counts = [(length + width - 1) // width or 1 for length in lengths]
        for index in self._wide:
            counts[index] = (lengths[index] + half - 1) // half or 1
        self._width = width
        self._half = half
        self._starts = [0, *accumulate(counts)]
        self._wrapped_for = width
        self.virtual_size = Size(width, self.rows)

    # scrolling jumps: an animation through 100,000 rows is no help
    def action_scroll_up(self) -> None:
        self.scroll_relative(y=-1, animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_relative(y=1, animate=False)

    def action_page_up(self) -> None:
        self.scroll_relative(y=-max(1, self.size.height - 1), animate=False)

    def action_page_down(self) -> None:
        self.scroll_relative(y=max(1, self.size.height - 1), animate=False)

    def action_top(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_bottom(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def on_resize(self, event: events.Resize) -> None:
        self._wrap(self.scrollable_content_region.width)

    def on_mount(self) -> None:
        self._wrap(self.scrollable_content_region.width)

    def row_text(self, row: int) -> tuple[str, str]:
        """The text and style of one wrapped row."""
        index = bisect.bisect_right(self._starts, row) - 1
        if not 0 <= index < len(self.lines):
            return "", ""
        text, style = self.lines[index]
        step = self._half if self._wide and index in self._wide else self._width
        offset = (row - self._starts[index]) * step
        return text[offset:offset + step], style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        self._wrap(width)
        row = round(self.scroll_offset.y) + y
        if row >= self.rows:
            return Strip.blank(width, self.rich_style)
        text, style_name = self.row_text(row)
        style = self._styles.get(style_name)
        if style is None:
            style = self._styles[style_name] = Style.parse(style_name) if style_name else Style()
        strip = Strip([Segment(text, self.rich_style + style)])
        return strip.crop_extend(0, width, self.rich_style)


class WholeMessageScreen(Screen[None]):
    """Every line of a message; escape goes back, p hands it to $PAGER."""

    BINDINGS = [
        Binding("escape,q,f", "close", "Back"),
        Binding("p", "pager", "Pager"),
    ]

    DEFAULT_CSS = """
    WholeMessageScreen #whole-title {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    WholeMessageScreen #whole-hint {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    """

    def __init__(self, title: str, lines: list[Line]) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines

    def compose(self) -> ComposeResult:
        title = Text("Whole message · ", "bold", end="")
        title.append_text(safe_line(self.title_text, 200))
        size = sum(map(len, map(itemgetter(0), self.lines))) + len(self.lines)
        title.append(f" · {len(self.lines):,} lines, {size:,} characters", FAINT)
        yield Static(title, id="whole-title")
        yield WholeText(self.lines, id="whole-text")
        yield Static(Text("↑↓ j k line · pgup pgdn space page · g G top, end · p $PAGER · "
                          "escape back", FAINT), id="whole-hint")

    def on_mount(self) -> None:
        focus_now(self.query_one(WholeText))

    def on_key(self, event: events.Key) -> None:
        """A key of the panes (r, t, v…) would act on them unseen, under this view: it says
        where it works instead. (The bindings run after this, at the app: the view's own
        keys are let through.)"""
        if event.is_printable and event.key not in _OWN_KEYS and event.character != "?":
            event.stop()
            event.prevent_default()
            self.app.say(f"{event.character} acts in the panes: escape goes back to them.")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_pager(self) -> None:
        from textual.app import SuspendNotSupported

        command = pager_command()
        try:
            with self.app.suspend():
                error = run_pager(command, as_text(self.lines))
        except SuspendNotSupported:
            error = "this terminal cannot be handed to a pager"
        if error:
            self.app.say(error, severity="warning")


_OWN_KEYS = frozenset(key.strip() for binding in (*WholeText.BINDINGS, *WholeMessageScreen.BINDINGS)
                      for key in binding.key.split(","))


def pager_command() -> list[str]:
    """$PAGER split as the shell would, or `less` (which shows any control character left
    as ^X; the text is made safe before it gets there anyway)."""
    value = os.environ.get("PAGER", "").strip()
    try:
        command = shlex.split(value) if value else []
    except ValueError:
        command = []
    return command or ["less"]


def run_pager(command: list[str], text: str) -> str | None:
    """Show `text` in the pager; an error message when it cannot be run."""
    with tempfile.TemporaryFile() as handle:
        handle.write(text.encode("utf-8", "replace"))
        handle.seek(0)
        try:
            subprocess.run(command, stdin=handle, check=False)
        except OSError as error:
            return f"cannot run {shlex.join(command)}: {error.strerror or error}"
        except KeyboardInterrupt:
            return None
    return None
