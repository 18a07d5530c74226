"""The messages pane: a virtual list of variable-height messages on the Line API.

The list is anchored on items, not lines: `top` is the first item on screen (and
`top_line` how many of its lines are scrolled off), so a branch of 100,000 messages needs
no total line count. Only the items on screen are read (a window of entries at a time,
see `MessageSource`) and rendered (strips cached per item, width and fold state).
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tui.render.formatting import DIM

from .pass_style import StyleOncePerPass

if TYPE_CHECKING:   # (a source is made by the app when a branch is shown)
    from tui.message_source import Item, MessageSource

GUTTER = 2
CURSOR_BAR = Style(color="#5fafff", bold=True)
CURSOR_BG_FOCUSED = Style(bgcolor="#1f2d3d")
CURSOR_BG_BLURRED = Style(bgcolor="#262a31")
SCROLL_TRACK = Style(color="#3a3f47")
SCROLL_THUMB = Style(color="#8a93a0")


class MessagesPane(StyleOncePerPass, Widget, can_focus=True):
    BORDER_TITLE = "Messages"

    BINDINGS = [
        Binding("tab", "app.focus_next_pane", "Pane", tooltip="Sessions → branches → messages"),
        Binding("z", "app.zoom", "Zoom", tooltip="This pane alone, full width (z again: every pane)"),
        Binding("space", "toggle_open", "Open", tooltip="Open or fold the highlighted message"),
        Binding("b", "app.branch", "Branch", tooltip="New branch at the highlighted message"),
        Binding("r", "app.rollback", "Roll back", tooltip="Roll back to a checkpoint or this message"),
        Binding("l", "app.label", "Label", tooltip="Label the highlighted message"),
        Binding("c", "app.compact", "Compact", tooltip="Compact this branch"),
        Binding("v", "app.toggle_view", "Raw", tooltip="Toggle raw entries and replayed context"),
        Binding("o", "app.open_in_agent", "Open in agent", key_display="o/O",
                tooltip="Carry on from this message in the agent that wrote the session "
                        "(O: in another agent, picked)"),
        Binding("O", "app.open_in_other_agent", "Other agent", show=False,
                tooltip="Carry on from this message in another agent: pick which"),
        Binding("u", "app.undo", "Undo", tooltip="Undo the last operation of this app"),
        Binding("m", "app.checkpoint", "Checkpoint", show=False,
                tooltip="A named checkpoint at the highlighted message"),
        Binding("H", "app.toggle_thinking", "Thinking", show=False,
                tooltip="Hide or show the thinking of every reply"),
        Binding("f", "whole", "Whole", show=False,
                tooltip="The whole message, nothing cut, full screen (p there: $PAGER)"),
        Binding("F", "app.cycle_message_filter", "Filter", show=False,
                tooltip="Cycle the filter: default, no tools, user only, labelled, everything"),
        Binding("enter", "enter", "Open/fold", show=False),
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
    ]

    class CursorMoved(Message):
        def __init__(self, pane: "MessagesPane", index: int) -> None:
            super().__init__()
            self.pane = pane
            self.index = index

    class OpenSession(Message):
        """Enter on a sub-agent's (or fork's) row: show that session itself."""

        def __init__(self, session_id: int) -> None:
            super().__init__()
            self.session_id = session_id

    def __init__(self, now: datetime, **kwargs) -> None:
        super().__init__(**kwargs)
        self.now = now
        self.source: MessageSource | None = None
        self.labels: dict[int, str] = {}
        self.top = 0
        self.top_line = 0
        self.cursor = 0
        self.expanded: set[tuple[str, int]] = set()
        self.show_thinking = True     # H: replies drawn with or without their thinking
        self.filter = "everything"    # F: the entry tree's filter, named in the title
        # child sessions (sub-agents, forks) shown open under the entry they started at;
        # every MessageSource made for this pane shares it (see tui.message_source)
        self.opened: set[int] = set()
        self.empty_text: Text = Text("")
        self._strips: OrderedDict[tuple, tuple[list[Strip], bool]] = OrderedDict()
        self._layout: list[tuple[int, int]] | None = None  # (item index, line in item) per row
        self._layout_size: tuple[int, int] | None = None  # the (width, height) it was made for
        self._bottom_pending = False

    # ------------------------------------------------------------------- data
    @property
    def count(self) -> int:
        return self.source.count if self.source is not None else 0

    def set_source(self, source: MessageSource | None, *, labels: dict[int, str] | None = None,
                   keep_seq: int | None = None, keep_depth: int | None = None,
                   at_end: bool = True, empty_text: Text | None = None,
                   keep_view: bool = False) -> None:
        """Show a branch; the cursor goes to `keep_seq` if it is there, else to the end.

        `keep_view` (the same branch read again because it grew): the rows on screen stay
        where they are; a cursor at the end moves on to the new end."""
        previous = self.highlighted if keep_seq is not None else None
        old_source, old_top, old_top_line = self.source, self.top, self.top_line
        top_item = old_source.item(old_top) if keep_view and old_source is not None else None
        self.source = source
        self.labels = labels or {}
        if empty_text is not None:
            self.empty_text = empty_text
        # rendered items stay cached: entries never change, and the key holds width,
        # fold state and label
        count = self.count
        target = None
        if source is not None and keep_seq is not None:
            if previous is not None and previous.kind == "spawn" and previous.entry.seq == keep_seq:
                target = source.index_of_key(previous.key)    # the same sub-agent row
            if target is None:
                target = source.index_of_seq(keep_seq, keep_depth)
        if target is None:
            target = count - 1 if at_end else 0
        self.cursor = self._snap(max(0, min(target, count - 1)))
        if top_item is not None and source is not None and \
                source.branch.id == old_source.branch.id and self._keep_top(top_item, old_top_line):
            self._layout = None
            self.scroll_cursor_visible()
            self._update_subtitle()
            self.refresh()
            return
        self.top, self.top_line = self.cursor, 0
        self._layout = None
        self._bottom_pending = self.size.height <= 0
        self.scroll_cursor_visible(bottom=True)
        self._update_subtitle()
        self.refresh()

    def _keep_top(self, item: Item, top_line: int) -> bool:
        """Put `item` (the row that was at the top) back at the top, as far scrolled."""
        source = self.source
        if item.kind == "summary":
            index = 0 if source.compaction is not None and \
                source.compaction.seq == item.entry.seq and not source.raw else None
        elif item.kind == "spawn":
            index = source.index_of_key(item.key)
        else:
            index = source.index_of_seq(item.entry.seq, None if item.nest else item.entry.depth)
        if index is None:
            return False
        index = self._snap(index)
        if index > self.cursor:
            return False
        self.top = index
        self.top_line = min(top_line, max(0, len(self.item_strips(index)) - 1))
        return True

    def set_show_thinking(self, show: bool) -> None:
        """H: draw replies with or without their thinking (heights change: lay out again)."""
        self.show_thinking = show
        self._changed()
        self.call_after_refresh(self.scroll_cursor_visible)

    def set_labels(self, labels: dict[int, str]) -> None:
        self.labels = labels
        self._layout = None
        self.refresh()

    @property
    def highlighted(self) -> Item | None:
        """What actions on "the highlighted message" apply to: the last entry of the message
        under the cursor (a response's last tool result: a branch made there keeps the
        whole response)."""
        if self.source is None:
            return None
        return self.source.item(self._span(self.cursor)[1])

    def reply_of(self, spawn: Item) -> Item | None:
        """For a sub-agent's (or fork's) row: the last entry of the message holding the
        entry it started at (a branch made "at" a sub-agent keeps the whole reply that
        spawned it, its tool result included)."""
        if self.source is None:
            return None
        index = self.source.index_of_seq(spawn.entry.seq, spawn.entry.depth)
        if index is None:
            return None
        return self.source.item(self.source.group_span(index)[1])

    @property
    def cursor_item(self) -> Item | None:
        """The first item of the message under the cursor (it is drawn, opened, folded)."""
        return self.source.item(self.cursor) if self.source is not None else None

    @property
    def at_end(self) -> bool:
        return self._span(self.cursor)[1] >= self.count - 1

    # ------------------------------------------------------------- messages
    def _span(self, index: int) -> tuple[int, int]:
        """The rows (first, last) of the message holding row `index`: a response written as
        several entries, with its tool results, is one message (see MessageSource)."""
        if self.source is None or not 0 <= index < self.count:
            return index, index
        return self.source.group_span(index)

    def _snap(self, index: int) -> int:
        return self._span(index)[0]

    # ---------------------------------------------------------------- drawing
    @property
    def _width(self) -> int:
        return max(8, self.size.width - GUTTER - 1)

    def item_strips(self, index: int) -> list[Strip]:
        """The lines of the message starting at row `index` (none for the other rows of a
        message: they are drawn with its first)."""
        item = self.source.item(index) if self.source is not None else None
        if item is None:
            return []
        first, last = self._span(index)
        if first != index:
            return []
        group = [item] + [self.source.item(i) for i in range(first + 1, last + 1)] \
            if last > first else None
        if group is not None and any(member is None for member in group):
            group = None
        width = self._width
        label = None
        if item.kind in ("entry", "summary") and not item.nest:
            found = [self.labels[member.entry.seq] for member in group or [item]
                     if member.entry.seq in self.labels]
            label = " · ".join(found) if found else None
        key = (item.key, group[-1].key if group else None, width, item.key in self.expanded,
               label, item.nest,
               (item.child.message_count, item.child.updated_at) if item.child else None,
               self.show_thinking,
               item.usage.cost_usd if item.usage is not None else None)   # (priced later)
        cached = self._strips.get(key)
        if cached is None:
            from tui.render.message_render import render_item  # not needed for the first frame

            if not self.show_thinking:
                from tui.render.thinking import without_thinking

                item = without_thinking(item)
                if group is not None:     # a reply's thinking is often an entry of its own
                    group = [without_thinking(member) for member in group]

            cached = render_item(self.app.console, item, width=width,
                                 expanded=item.key in self.expanded, label=label, now=self.now,
                                 group=group)
            self._strips[key] = cached
            if len(self._strips) > 600:
                self._strips.popitem(last=False)
        else:
            self._strips.move_to_end(key)
        return cached[0]

    def _rows(self) -> list[tuple[int, int]]:
        """The (item index, line in item) shown on each row, for the pane's current size.

        Textual may paint at a new size before the Resize event reaches `on_resize`: a
        layout made for another width points at lines the items no longer have there."""
        size = (self._width, self.size.height)
        if self._layout is None or self._layout_size != size:
            self._layout = self._compute_layout()
            self._layout_size = size
        return self._layout

    def _compute_layout(self) -> list[tuple[int, int]]:
        height = self.size.height
        rows: list[tuple[int, int]] = []
        index, skip = self.top, self.top_line
        while len(rows) < height and index < self.count:
            strips = self.item_strips(index)
            for line in range(skip, len(strips)):
                rows.append((index, line))
                if len(rows) >= height:
                    break
            skip = 0
            index += 1
        return rows

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.source is None or self.count == 0:
            if y == 1 and self.empty_text:
                line = Text("  ", end="")
                line.append_text(self.empty_text)
                from .row_list import text_to_strip
                return text_to_strip(self.app.console, line, width).apply_style(self.rich_style)
            return Strip.blank(width, self.rich_style)
        scrollbar = self._scrollbar_cell(y)
        rows = self._rows()
        index, line = rows[y] if 0 <= y < len(rows) else (-1, -1)
        strips = self.item_strips(index) if index >= 0 else []
        if not 0 <= line < len(strips):
            return Strip.join([Strip.blank(width - 1, self.rich_style), scrollbar])
        strip = strips[line]
        if index == self.cursor:
            background = CURSOR_BG_FOCUSED if self.has_focus else CURSOR_BG_BLURRED
            gutter = Strip([_segment("▌ ", self.rich_style + CURSOR_BAR + background)], GUTTER)
            strip = strip.apply_style(self.rich_style + background)
        else:
            gutter = Strip.blank(GUTTER, self.rich_style)
            strip = strip.apply_style(self.rich_style)
        return Strip.join([gutter, strip, scrollbar])

    def _scrollbar_cell(self, y: int) -> Strip:
        height = max(1, self.size.height)
        count = max(1, self.count)
        thumb = min(height - 1, int(self.top / count * height)) if count > 1 else 0
        size = max(1, min(height, round(height * min(1.0, height / 3 / count))))
        on = thumb <= y < thumb + size
        return Strip([_segment("┃" if on else "│", self.rich_style + (SCROLL_THUMB if on else SCROLL_TRACK))], 1)

    def on_resize(self, event: events.Resize) -> None:
        # (also the first layout, when a branch may have been set before the pane had a size)
        self._layout = None
        if self.count:
            # wider, the top item may have fewer lines than were scrolled off
            self.top_line = max(0, min(self.top_line, len(self.item_strips(self.top)) - 1))
        self.scroll_cursor_visible(bottom=self._bottom_pending or self.at_end)
        self._bottom_pending = False
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ------------------------------------------------------------- scrolling
    def _changed(self) -> None:
        self._layout = None
        self._update_subtitle()
        self.refresh()

    def _update_subtitle(self) -> None:
        if self.source is None or not self.count:
            self.border_subtitle = None
            return
        # j moves by message, and a message may be several entries (a reply and its tool
        # results): the counter names the entries it covers, and counts entries
        first, last = self._span(self.cursor)
        where = f"entry {first + 1:,}" if first == last else f"entries {first + 1:,}–{last + 1:,}"
        self.border_subtitle = Text(f"{where} of {self.count:,}", DIM)

    def scroll_cursor_visible(self, bottom: bool = False) -> None:
        """Move the view so that the cursor's item is on screen (at the bottom when below)."""
        height = self.size.height
        if not self.count or height <= 0:
            return
        if self.cursor < self.top or (self.cursor == self.top and self.top_line):
            self.top, self.top_line = self.cursor, 0
            return
        # lines from top to the end of the cursor item
        used = -self.top_line
        for index in range(self.top, self.cursor + 1):
            used += len(self.item_strips(index))
            if used > height:
                break
        if used <= height and not bottom:
            return
        if used <= height and bottom:
            # cursor already visible; fill the screen if there is room above
            pass
        # put the cursor's item at the bottom of the screen
        need = len(self.item_strips(self.cursor))
        if need >= height:
            self.top, self.top_line = self.cursor, 0
            return
        index, used = self.cursor, need
        while index > 0:
            above = len(self.item_strips(index - 1))
            if used + above > height:
                self.top, self.top_line = index - 1, used + above - height
                return
            used += above
            index -= 1
        self.top, self.top_line = 0, 0

    def move_cursor(self, index: int) -> None:
        if not self.count:
            return
        index = self._snap(max(0, min(index, self.count - 1)))
        if index == self.cursor:
            return
        self.cursor = index
        self.scroll_cursor_visible()
        self._changed()
        self.post_message(self.CursorMoved(self, index))

    def _cursor_item_cut_below(self) -> bool:
        """Whether the cursor's message goes on below the bottom of the screen."""
        return self._lines_below() > 0

    def _lines_below(self) -> int:
        """How many lines of the cursor's message are below the bottom of the screen."""
        rows = self._rows()
        if not rows or self.cursor < self.top:
            return 0
        last_index, last_line = rows[-1]
        if last_index != self.cursor:
            return 0
        return len(self.item_strips(self.cursor)) - 1 - last_line

    def _lines_above(self) -> int:
        """How many lines of the cursor's message are above the top of the screen."""
        return self.top_line if self.top == self.cursor else 0

    def action_cursor_up(self) -> None:
        # inside a message taller than the screen, k moves through it a line at a time
        if self._lines_above():
            self._scroll_lines(-1)
            return
        self._move_up(self.cursor - 1)

    def action_cursor_down(self) -> None:
        if self._lines_below():
            self._scroll_lines(1)
            return
        self.move_cursor(self._span(self.cursor)[1] + 1)

    def _move_up(self, index: int) -> None:
        """Move up to the message holding `index`; one taller than the screen shows its end
        (the part next to where the cursor came from), and k goes on through it."""
        before = self.cursor
        self.move_cursor(index)
        if self.cursor == before:
            return
        height = self.size.height
        lines = len(self.item_strips(self.cursor))
        if height > 0 and lines > height:
            self.top, self.top_line = self.cursor, lines - height
            self._changed()

    def _page(self) -> int:
        return max(1, self.size.height - 1)

    def action_page_up(self) -> None:
        above = self._lines_above()
        if above:          # page through the cursor's message first
            self._scroll_lines(-min(self._page(), above))
            return
        if not self.count or self.cursor == 0:
            return
        self._scroll_lines(-self._page())
        rows = self._rows()
        target = rows[0][0] if rows else 0
        if target >= self.cursor:
            target = self.cursor - 1
        self._move_up(target) if target < self.top else self._set_cursor_in_view(target)

    def action_page_down(self) -> None:
        below = self._lines_below()
        if below:          # page through the cursor's message first
            self._scroll_lines(min(self._page(), below))
            return
        if not self.count:
            return
        last = self._span(self.cursor)[1]
        if last >= self.count - 1:
            return
        self._scroll_lines(self._page())
        rows = self._rows()
        target = rows[0][0] if rows else last + 1
        if target <= self.cursor:
            target = last + 1
        self._set_cursor_in_view(target)

    def _set_cursor_in_view(self, index: int) -> None:
        """The cursor to `index` after the view was moved: the view stays where it is unless
        the message is not on screen at all."""
        index = self._snap(max(0, min(index, self.count - 1)))
        if index == self.cursor:
            return
        self.cursor = index
        on_screen = {row for row, _ in self._rows()}
        if index not in on_screen:
            self.scroll_cursor_visible()
        self._changed()
        self.post_message(self.CursorMoved(self, index))

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self.count - 1)

    def _say_empty(self) -> None:
        self.app.say(self.empty_text.plain or "There are no messages here.")

    def action_toggle_open(self) -> None:
        item = self.cursor_item
        if item is None:
            self._say_empty()
            return
        if item.key in self.expanded:
            self.expanded.discard(item.key)
        else:
            self.expanded.add(item.key)
        if item.child is not None and self.source is not None:
            # a sub-agent's row: its messages follow it (or fold away) in this list
            self.opened.symmetric_difference_update({item.child.id})
            self.source.relayout()
        self.scroll_cursor_visible()
        self._changed()

    def action_whole(self) -> None:
        """The message under the cursor, every line of it, full screen."""
        from tui.render.message_text import whole_message
        from .whole_message import WholeMessageScreen

        if self.source is None or not self.count:
            self._say_empty()
            return
        first, last = self._span(self.cursor)
        items = [self.source.item(index) for index in range(first, last + 1)]
        items = [item for item in items if item is not None]
        if not items or items[0].kind == "spawn":
            self.app.notify("This row is a session of its own: enter opens it.", markup=False)
            return
        from core.history.outcomes import role_of

        from tui.render.formatting import ROLE_NAMES

        entries = [item.entry for item in items]
        role = role_of(entries[0].message or {})
        title = f"{ROLE_NAMES.get(role, role) if role else entries[0].type} {entries[0].id}"
        if len(entries) > 1:
            title += f" and {len(entries) - 1} more entr{'ies' if len(entries) > 2 else 'y'}"
        self.app.push_screen(WholeMessageScreen(title, whole_message(entries)))

    def action_enter(self) -> None:
        item = self.cursor_item
        if item is not None and item.child is not None:
            self.post_message(self.OpenSession(item.child.id))
            return
        self.action_toggle_open()

    def _scroll_lines(self, lines: int) -> None:
        """Wheel scrolling moves the view, not the cursor."""
        if not self.count:
            return
        if lines > 0:
            for _ in range(lines):
                rows = self._rows()
                last_index = rows[-1][0] if rows else 0
                at_last = self._span(last_index)[1] >= self.count - 1
                if at_last and len(rows) < self.size.height:
                    break
                if at_last and rows[-1][1] >= len(self.item_strips(last_index)) - 1:
                    break
                self.top_line += 1
                if self.top_line >= len(self.item_strips(self.top)):
                    self.top, self.top_line = self._span(self.top)[1] + 1, 0
                self._layout = None
        else:
            for _ in range(-lines):
                if self.top_line:
                    self.top_line -= 1
                elif self.top > 0:
                    self.top = self._snap(self.top - 1)
                    self.top_line = max(0, len(self.item_strips(self.top)) - 1)
                else:
                    break
        self._changed()

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self._scroll_lines(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self._scroll_lines(-3)

    def on_click(self, event: events.Click) -> None:
        rows = self._rows()
        offset = event.get_content_offset(self)
        if offset is None or not (0 <= offset.y < len(rows)):
            return
        index = self._snap(rows[offset.y][0])
        if index == self.cursor:
            self.action_toggle_open()
        else:
            self.move_cursor(index)


def _segment(text: str, style: Style):
    from rich.segment import Segment

    return Segment(text, style)
