"""A virtual list of fixed-height rows on Textual's Line API.

Only the rows on screen are rendered (and cached as strips), so 10,000 sessions cost
the same as ten. Subclasses say how many rows there are and render one row as a list of
`rich.text.Text` lines (already made safe by `tui.render.safe_text`); the cursor is drawn here.
"""

from __future__ import annotations

from collections import OrderedDict

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .pass_style import StyleOncePerPass

CURSOR_FOCUSED = Style(bgcolor="#264f78")
CURSOR_BLURRED = Style(bgcolor="#30343c")


def text_to_strip(console: Console, text: Text, width: int) -> Strip:
    """One line of Text as a Strip of exactly `width` cells (no wrapping, ellipsis).

    A line that fits (no line break, no tab, left as it is written, at most `width`
    cells: every row the panes render) is made from its own segments, the ones Rich's
    wrapping and cropping would give it, at a fraction of their cost (the first frame
    renders 30 to 80 of these); any other goes through Rich."""
    plain = text.plain
    if plain and "\n" not in plain and "\t" not in plain and text.justify in (None, "default") \
            and text.cell_len <= width:
        # (Rich joins the wrapped lines into one Text, the line's own style a span of it)
        line = _LINE_BREAK.join((text,))
        return Strip(list(line.render(console)), text.cell_len).crop_extend(0, width, None)
    return _rich_text_to_strip(console, text, width)


_LINE_BREAK = Text("\n")


def _rich_text_to_strip(console: Console, text: Text, width: int) -> Strip:
    text = text.copy()
    text.no_wrap = True
    text.overflow = "ellipsis"
    text.end = ""
    options = console.options.update(width=width, no_wrap=True, overflow="ellipsis", height=1)
    lines = console.render_lines(text, options, pad=True, new_lines=False)
    segments = lines[0] if lines else [Segment(" " * width)]
    return Strip(segments, width).crop_extend(0, width, None)


class RowList(StyleOncePerPass, ScrollView, can_focus=True):
    """Rows of ROW_HEIGHT lines each, a cursor, and Highlighted/Selected messages."""

    ROW_HEIGHT = 1
    CACHE_ROWS = 400
    # (not Textual's maximise, offered in the palette: it would hide the status line and
    # keep tab from leaving the pane; the app's panes zoom with z, tui/components/pane_row.py)
    ALLOW_MAXIMIZE = False

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
    ]

    DEFAULT_CSS = """
    RowList {
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    """

    class Highlighted(Message):
        def __init__(self, row_list: "RowList", index: int) -> None:
            super().__init__()
            self.row_list = row_list
            self.index = index

        @property
        def control(self) -> "RowList":
            return self.row_list

    class Selected(Highlighted):
        pass

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._count = 0
        self._cursor = 0
        self._strips: OrderedDict[tuple[int, int], list[Strip]] = OrderedDict()

    # ---------------------------------------------------------------- for subclasses
    def render_row(self, index: int, width: int) -> list[Text]:  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------------- the model
    @property
    def row_count(self) -> int:
        return self._count

    @property
    def cursor(self) -> int:
        return self._cursor

    def set_row_count(self, count: int, cursor: int | None = None, *, notify: bool = True) -> None:
        """New data: forget rendered rows, keep (or set) the cursor."""
        self._count = count
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width or 1, count * self.ROW_HEIGHT)
        target = self._cursor if cursor is None else cursor
        self._cursor = max(0, min(target, count - 1)) if count else 0
        self.refresh()
        self.call_after_refresh(self.scroll_cursor_visible)
        if notify and count:
            self.post_message(self.Highlighted(self, self._cursor))

    def invalidate(self) -> None:
        """Rows changed in place (same count): repaint."""
        self._strips.clear()
        self.refresh()

    def move_cursor(self, index: int, *, notify: bool = True) -> None:
        if not self._count:
            return
        index = max(0, min(index, self._count - 1))
        if index == self._cursor:
            return
        old = self._cursor
        self._cursor = index
        self.refresh_lines(old * self.ROW_HEIGHT, self.ROW_HEIGHT)
        self.refresh_lines(index * self.ROW_HEIGHT, self.ROW_HEIGHT)
        self.scroll_cursor_visible()
        if notify:
            self.post_message(self.Highlighted(self, index))

    def scroll_cursor_visible(self) -> None:
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = round(self.scroll_offset.y)
        first = self._cursor * self.ROW_HEIGHT
        last = first + self.ROW_HEIGHT
        if first < top:
            self.scroll_to(y=first, animate=False)
        elif last > top + height:
            self.scroll_to(y=last - height, animate=False)

    # --------------------------------------------------------------------- drawing
    def _row_strips(self, index: int, width: int) -> list[Strip]:
        key = (index, width)
        strips = self._strips.get(key)
        if strips is not None:
            self._strips.move_to_end(key)
            return strips
        console = self.app.console
        lines = self.render_row(index, width)[: self.ROW_HEIGHT]
        while len(lines) < self.ROW_HEIGHT:
            lines.append(Text(""))
        strips = [text_to_strip(console, line, width) for line in lines]
        self._strips[key] = strips
        if len(self._strips) > self.CACHE_ROWS:
            self._strips.popitem(last=False)
        return strips

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = round(self.scroll_offset.y) + y
        index, sub = divmod(line, self.ROW_HEIGHT)
        if width <= 0:
            return Strip.blank(0)
        if index >= self._count or index < 0:
            return Strip.blank(width, self.rich_style)
        strip = self._row_strips(index, width)[sub]
        base = self.rich_style
        if index == self._cursor:
            strip = strip.apply_style(base + (CURSOR_FOCUSED if self.has_focus else CURSOR_BLURRED))
        else:
            strip = strip.apply_style(base)
        return strip

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width or 1,
                                 self._count * self.ROW_HEIGHT)
        self.call_after_refresh(self.scroll_cursor_visible)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # --------------------------------------------------------------------- actions
    def action_cursor_up(self) -> None:
        self.move_cursor(self._cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self._cursor + 1)

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height // self.ROW_HEIGHT - 1)

    def action_page_up(self) -> None:
        self.move_cursor(self._cursor - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(self._cursor + self._page())

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self._count - 1)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        index = (offset.y + round(self.scroll_offset.y)) // self.ROW_HEIGHT
        if 0 <= index < self._count:
            if index == self._cursor and event.chain >= 2:
                self.post_message(self.Selected(self, index))
            self.move_cursor(index)
