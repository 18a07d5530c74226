"""Summaries (of a compaction, of a branch left behind) as compact markdown.

A summariser writes markdown: headings, lists, emphasis, code. Shown as markdown, but
compact: headings left-aligned in the summary colour, and no blank line between blocks
(a summary is read as one card in the messages pane, not as a document)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from .safe_text import safe_markdown_source

HEADING = Style.parse("bold #d7afd7")
BODY = Style.parse("#c8b8d8")


def _heading_class():
    from rich.markdown import Heading

    class SummaryHeading(Heading):
        def on_enter(self, context) -> None:
            self.text = Text()
            context.enter_style(HEADING)

        def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
            text = self.text.copy()
            text.justify = "left"
            yield text

    return SummaryHeading


class SummaryMarkdown:
    """Renders untrusted summary text as compact markdown (blank lines dropped)."""

    def __init__(self, text: Any) -> None:
        self.source, self.more = safe_markdown_source(text)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.markdown import Markdown  # only when a summary is on screen

        class _Markdown(Markdown):
            elements = {**Markdown.elements, "heading_open": _heading_class()}

        markdown = _Markdown(self.source, style=BODY, hyperlinks=False, code_theme="monokai",
                             inline_code_lexer=None)
        lines = console.render_lines(markdown, options.update(height=None), pad=False,
                                     new_lines=False)
        for line in lines:
            if not "".join(segment.text for segment in line).strip():
                continue
            yield from line
            yield Segment.line()
        if self.more:
            yield Text(self.more, "dim")
