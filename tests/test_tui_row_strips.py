"""A row's line as a Strip (tui.components.row_list.text_to_strip): the quick way, for a
line that fits, gives the very segments Rich's wrapping and cropping give."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text

from tui.components.row_list import _rich_text_to_strip, text_to_strip


def _texts() -> list[Text]:
    plain = Text("a session name", end="")
    styled = Text("bold all through", style="bold #d7af5f", end="")
    spans = Text(" ", end="")
    spans.append("▸ ", "#87afd7")
    spans.append("名前のセッション", Style(italic=True, color="grey50"))
    spans.append(" · ", "dim")
    spans.append("proj")
    spans.pad_right(3)
    spans.append("2h", "dim")
    nested = Text("outer inner outer", style="on #264f78", end="")
    nested.stylize("bold", 6, 11)
    nested.stylize("italic", 0, 11)
    return [plain, styled, spans, nested, Text("", end=""), Text("", style="bold", end=""),
            Text("two\nlines", end=""), Text("a\ttab", end=""), Text("x" * 50, end=""),
            Text("right", justify="right", end=""), Text("   padded   ", style="red", end=""),
            Text("\x1b[31mnot a colour", end=""), Text("emoji 🌳 tree", "green", end="")]


@pytest.mark.parametrize("width", [1, 5, 12, 13, 14, 17, 30, 80])
def test_the_quick_way_gives_richs_segments(width):
    console = Console(width=120, color_system="truecolor", force_terminal=True)
    for text in _texts():
        before = (text.plain, list(text.spans), text.style)
        quick = text_to_strip(console, text, width)
        rich = _rich_text_to_strip(console, text, width)
        assert list(quick) == list(rich), (text.plain, width)
        assert quick.cell_length == rich.cell_length == width
        assert (text.plain, list(text.spans), text.style) == before   # (left as it was)
