"""Every file either side of a comparison changed (f in the compare screen): one row per
file, what A and what B did to it, the files both changed first."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from core.history.branch_compare import Comparison, FileTouch

from tui.render.cut_text import cut_middle
from tui.render.formatting import DIM, FAINT
from tui.render.safe_text import safe_line
from .backdrop import FrozenBackdrop

ADDED = "#87d787"
REMOVED = "#ff8787"


def touch_cell(touch: FileTouch | None) -> Text:
    """What one side did to a file: lines added and removed (where known) and how."""
    if touch is None:
        return Text("—", FAINT)
    cell = Text(end="")
    if touch.added is not None:
        cell.append(f"+{touch.added:,}", ADDED)
    if touch.removed is not None:
        cell.append(f" −{touch.removed:,}" if cell else f"−{touch.removed:,}", REMOVED)
    if cell:
        cell.append(" ")
    action = touch.last_action if len(touch.actions) == 1 else "changed"
    cell.append(action + (f" ×{touch.changes}" if touch.changes > 1 else ""), DIM)
    return cell


def file_rows(comparison: Comparison) -> list[tuple[str, FileTouch | None, FileTouch | None]]:
    """(path, A's changes, B's changes): the files both changed first, then A's, then B's,
    each group by path."""
    a, b = comparison.a.work.files, comparison.b.work.files
    paths = set(a) | set(b)
    order = sorted(paths, key=lambda p: (0 if p in a and p in b else 1 if p in a else 2, p))
    return [(path, a.get(path), b.get(path)) for path in order]


class CompareFiles(FrozenBackdrop[None]):
    DEFAULT_CSS = "#compare-files-table { height: auto; max-height: 24; }"

    BINDINGS = [Binding("escape,f,q", "close", "Close")]

    def __init__(self, comparison: Comparison) -> None:
        super().__init__()
        self.comparison = comparison

    def compose(self) -> ComposeResult:
        rows = file_rows(self.comparison)
        both = sum(1 for _, x, y in rows if x is not None and y is not None)
        title = Text("Files changed · ", "bold")
        title.append(f"{len(rows):,} in all, {both:,} by both", DIM)
        with Vertical(classes="dialog wide", id="compare-files"):
            yield Static(title, classes="dialog-title")
            table = DataTable(id="compare-files-table", cursor_type="row", zebra_stripes=True)
            table.add_column("file", key="file")
            table.add_column(Text("A", "bold #5fafff"), key="a")
            table.add_column(Text("B", "bold #d7af5f"), key="b")
            cells = [(touch_cell(a), touch_cell(b)) for _, a, b in rows]
            room = self._path_room(cells)
            for (path, _, _), (a, b) in zip(rows, cells):
                # a long path keeps its start and its end (the file name), so that what A and
                # B did stays in sight and paths that differ at the end stay apart
                table.add_row(cut_middle(safe_line(path, 4 * room), room), a, b)
            yield table
            done = self.comparison.a.work.done and self.comparison.b.work.done
            hint = "read from the tool calls' inputs · escape closes"
            yield Static(Text(hint if done else "still reading the sides… " + hint, FAINT),
                         classes="dialog-hint")

    def _path_room(self, cells: list[tuple[Text, Text]]) -> int:
        """Cells left for the path column: the dialog's inside (100 wide, at most 95% of
        the screen; border and padding 6) less A's and B's columns and each column's
        padding and the scroll bar."""
        inside = min(100, self.app.size.width * 95 // 100) - 6
        a = max([1, *(cell.cell_len for cell, _ in cells)])
        b = max([1, *(cell.cell_len for _, cell in cells)])
        return max(16, inside - a - b - 3 * 2 - 2)

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()

    def action_close(self) -> None:
        self.dismiss(None)
