"""The row of panes, laid out for the terminal's width and for the pane with focus.

Three places, left to right: sessions, the middle (the branches, or the entry tree after
`t`) and messages. How many show depends on the width:

- `WIDE` columns or more: all three, side by side.
- Narrower: the pane with focus and the one it drives, the focused one the wider:
  sessions beside the middle, the middle beside messages, and messages alone (reading
  gets the whole width).
- Below `SINGLE` columns: only the pane with focus; tab moves to the next one.

`z` (zoom) shows the pane with focus alone at any width, until `z` again. A pane that is
not shown keeps its state (cursor, scroll): it is only folded away (display: none). This
widget is the one place that decides which panes show; the app says which middle pane is
in use (`set_tree`), and the widths are in app.tcss (`-pair`, `-single`, `-at-…` classes).
"""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget

WIDE = 100     # columns: from here on, the three panes side by side
SINGLE = 70    # columns: below this, one pane at a time

ROLES = ("sessions", "middle", "messages")
_PANES = {"sessions": "#sessions", "branches": "#branches", "entries": "#entries",
          "messages": "#messages"}


class PaneRow(Horizontal):
    # (here, under every pane: the screen's own shift+tab would move to the previous widget
    # shown, and skip a pane folded away)
    BINDINGS = [Binding("shift+tab", "app.focus_previous_pane", "Previous pane", show=False)]

    def __init__(self, *children: Widget, **kwargs) -> None:
        super().__init__(*children, **kwargs)
        self.shows_tree = False  # the middle place shows the entry tree, not the branches
        self.zoomed = False
        self.at = "sessions"     # the place with focus (the last one that had it)
        self.shown: tuple[str, ...] = ROLES
        self._state: tuple = ()

    # ------------------------------------------------------------------ what the app sets
    def set_tree(self, tree: bool) -> None:
        self.shows_tree = tree
        self.lay_out()

    def toggle_zoom(self) -> None:
        self.zoomed = not self.zoomed
        self.lay_out()

    def can_zoom(self) -> bool:
        """Whether z changes what shows: it does unless the focused pane is alone anyway
        (and zoom is off); below SINGLE columns it never does."""
        if self._width() < SINGLE:
            return False
        return self.zoomed or len(self._places(zoomed=False)) > 1

    def zoom_in_footer(self) -> bool:
        """z is in the footer where the panes fold for want of room (narrower than WIDE);
        wider, the footer keeps its room for the pane's own keys (z is in help and palette)."""
        return self._width() < WIDE and self.can_zoom()

    # ------------------------------------------------------------------ layout
    def _width(self) -> int:
        return self.size.width or self.app.size.width

    def _places(self, zoomed: bool) -> tuple[str, ...]:
        width = self._width()
        if zoomed or width < SINGLE:
            return (self.at,)
        if width >= WIDE:
            return ROLES
        if self.at == "messages":
            return ("messages",)
        return (self.at, ROLES[ROLES.index(self.at) + 1])

    def _place_of(self, widget: Widget | None) -> str | None:
        for name, selector in _PANES.items():
            pane = self.query_one(selector)
            if widget is pane:
                return "middle" if name in ("branches", "entries") else name
        return None

    def lay_out(self) -> None:
        shown = self._places(self.zoomed)
        middle = "entries" if self.shows_tree else "branches"
        for name, selector in _PANES.items():
            place = "middle" if name in ("branches", "entries") else name
            visible = place in shown and (place != "middle" or name == middle)
            pane = self.query_one(selector)
            if pane.display != visible:
                pane.display = visible
        self.set_class(len(shown) == 2, "-pair")
        self.set_class(len(shown) == 1, "-single")
        for place in ROLES:
            self.set_class(place == self.at, f"-at-{place}")
        state = (shown, self._width() < WIDE)
        if state != self._state:
            self._state = state
            self.app.refresh_bindings()   # z shows in the footer only where it does something
        self.shown = shown

    def on_mount(self) -> None:
        self.lay_out()

    def on_resize(self, _event: events.Resize) -> None:
        self.lay_out()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        place = self._place_of(event.widget)
        if place is not None and place != self.at:
            self.at = place
            self.lay_out()
