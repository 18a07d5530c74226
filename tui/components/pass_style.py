"""A widget whose lines all start from its own style (`rich_style`), worked out once a
render pass instead of once a line.

Textual's `DOMNode.rich_style` walks every ancestor's styles each time it is asked (about
a third of a millisecond): a pane asking once a line asked 30 to 40 times for the same
answer in every frame, the first one included. Within `render_lines` (one pass over the
lines a frame needs) it is asked once; elsewhere, as before."""

from __future__ import annotations

from rich.style import Style


class StyleOncePerPass:
    """Mixed in before the Textual widget class: `class Pane(StyleOncePerPass, Widget)`."""

    _pass_style: Style | None = None

    def render_lines(self, crop):
        self._pass_style = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    @property
    def rich_style(self) -> Style:
        style = self._pass_style
        return super().rich_style if style is None else style
