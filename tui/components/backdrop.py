"""A modal screen's dimmed backdrop, drawn once.

A ModalScreen with a translucent background draws the screen below it, tinted, as its own
content: Textual 8.2.8 re-renders and re-tints the whole screen below (every segment of
120x40 cells, ~40 ms) each time any part of the modal is repainted, a keystroke in its
input or a line of its plan filling in. `FrozenBackdrop` renders it once per size and
hands out those lines after: what is below is dimmed, and a live reload behind a dialog
shows when the dialog closes.
"""

from __future__ import annotations

from typing import TypeVar

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from textual.geometry import Size
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen


class _Lines:
    """Lines of segments rendered before, as a renderable."""

    def __init__(self, lines: list[list[Segment]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        new_line = Segment.line()
        for line in self.lines:
            yield from line
            yield new_line


ResultT = TypeVar("ResultT")


class FrozenBackdrop(ModalScreen[ResultT]):
    """A ModalScreen whose tinted backdrop is rendered once per size."""

    _backdrop: tuple[Size, _Lines] | None = None

    def render(self) -> RenderableType:
        renderable = super().render()
        if not isinstance(renderable, BackgroundScreen):
            return renderable
        size = self.size
        if self._backdrop is None or self._backdrop[0] != size:
            console = self.app.console
            options = console.options.update_dimensions(size.width, size.height)
            lines = console.render_lines(renderable, options, pad=True, new_lines=False)
            self._backdrop = (size, _Lines(lines))
        return self._backdrop[1]
