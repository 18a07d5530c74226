"""A table of the command line that fits the terminal: no cell wraps, names and paths are
cut with "…" (never broken inside a word), and when even that is not enough the columns
that matter least are left out (the caller says which were).

Each column is as wide as its widest cell when that fits. When it does not, the columns
that may be cut (names at their end, paths in their middle) give up cells, the widest
first, down to their least width; then columns are left out, the most expendable first,
and the rest are laid out again. Numbers, dates and short words are never cut.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.table import Table
from rich.text import Text

from tui.render.cut_text import cut_end, cut_middle

GAP = 2   # cells between two columns
FLOOR = 6  # cells: the least a cut column gets when nothing else can give way


@dataclass
class Column:
    title: str                      # may hold a line break: a header on two lines
    justify: str = "left"
    cut: str | None = None          # None (never cut), "end" (names) or "middle" (paths:
                                    #   a cell's first line; the lines under it at their end)
    least: int = 0                  # a cut column's narrowest (its widest cell if less)
    expendable: int = 0             # 0: always shown; else left out for want of room,
                                    #    the highest first
    style: str | None = None
    footer: Any = ""
    cells: list[Text] = field(default_factory=list)

    def widest(self) -> int:
        lines = [*self.title.split("\n"), *_lines(self.footer)]
        for cell in self.cells:
            lines += _lines(cell)
        return max((Text(line).cell_len if isinstance(line, str) else line.cell_len
                    for line in lines), default=0)


def _lines(value) -> list:
    if isinstance(value, Text):
        return value.split("\n", allow_blank=True) if value.plain else []
    return str(value).split("\n") if value else []


def _as_text(value) -> Text:
    return value if isinstance(value, Text) else Text(str(value))


def widths(columns: list[Column], room: int) -> tuple[list[Column], list[int]]:
    """The columns kept and their widths, to fit `room` cells (with GAP between)."""
    kept = list(columns)
    while True:
        natural = [column.widest() for column in kept]
        least = [min(natural[i], max(1, column.least)) if column.cut else natural[i]
                 for i, column in enumerate(kept)]
        gaps = GAP * (len(kept) - 1)
        if sum(least) + gaps <= room or not any(column.expendable for column in kept):
            break
        drop = max((column for column in kept if column.expendable), key=lambda c: c.expendable)
        kept.remove(drop)
    sizes = list(natural)
    excess = sum(sizes) + gaps - room
    # a cell at a time from the cut column with the most above its least width; when
    # nothing is left to leave out, below that, down to FLOOR cells
    for floor in (least, [FLOOR if column.cut else natural[i] for i, column in enumerate(kept)]):
        while excess > 0:
            slack, index = max((sizes[i] - floor[i], i) for i in range(len(kept)))
            if slack <= 0:
                break
            sizes[index] -= 1
            excess -= 1
    return kept, sizes


def fit_table(columns: list[Column], room: int, **options) -> tuple[Table, list[str]]:
    """A Rich table of `columns` (their cells filled, one list a column) in `room` cells,
    and the titles of the columns left out."""
    kept, sizes = widths(columns, room)
    rows = max((len(column.cells) for column in columns), default=0)
    options.setdefault("box", None)
    options.setdefault("pad_edge", False)
    options.setdefault("header_style", "bold")
    options.setdefault("show_footer", any(column.footer for column in kept))
    options.setdefault("footer_style", "bold")
    table = Table(expand=False, **options)
    for column, size in zip(kept, sizes):
        table.add_column(column.title, justify=column.justify, style=column.style, width=size,
                         no_wrap=True, overflow="ellipsis", footer=_fitted(column.footer, column, size))
    for row in range(rows):
        table.add_row(*(_fitted(column.cells[row] if row < len(column.cells) else "", column, size)
                        for column, size in zip(kept, sizes)))
    left_out = [column.title.replace("-\n", "").replace("\n", " ")
                for column in columns if column not in kept]
    return table, left_out


def _fitted(value, column: Column, size: int):
    """A cell cut to its column's width, line by line (a cell may hold several)."""
    if not column.cut or not value:
        return value
    text = _as_text(value)
    if text.cell_len <= size and "\n" not in text.plain:
        return text
    out = Text(end="")
    for index, line in enumerate(text.split("\n", allow_blank=True)):
        if index:
            out.append("\n")
        out.append_text((cut_middle if column.cut == "middle" and not index else cut_end)(line, size))
    return out


def add_row(columns: list[Column], *cells) -> None:
    for column, cell in zip(columns, cells, strict=True):
        column.cells.append(cell)


def left_out_note(titles: list[str], hint: str = "--json has every column") -> Text | None:
    """A line under the table naming the columns left out, or None."""
    if not titles:
        return None
    return Text(f"(too narrow for {', '.join(titles)}; {hint})", "dim")
