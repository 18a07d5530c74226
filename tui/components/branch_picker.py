"""Pick the branch to compare the highlighted one with (d): the session's other branches."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.seed.models import InternalSession

from tui.render.formatting import CURRENT_STYLE, DIM, FAINT, LABEL_STYLE, short_id
from tui.render.safe_text import safe_line
from .backdrop import FrozenBackdrop
from .branches_pane import BranchRow, branch_title
from .focus import focus_now


def first_choice(branch: InternalSession, others: list[InternalSession]) -> int:
    """The branch most likely wanted: the one it forked from, else one forked from it, else
    the current branch, else the first."""
    for wanted in (lambda b: b.id == branch.parent_session_id,
                   lambda b: b.parent_session_id == branch.id,
                   lambda b: b.is_current):
        found = next((i for i, other in enumerate(others) if wanted(other)), None)
        if found is not None:
            return found
    return 0


def option_text(row: BranchRow) -> Text:
    branch = row.branch
    line = Text(end="")
    line.append("● " if branch.is_current else "○ ", CURRENT_STYLE if branch.is_current else DIM)
    line.append_text(safe_line(branch_title(branch), 40, style="bold" if branch.is_current else ""))
    if row.label:
        line.append("  ")
        line.append_text(safe_line(f" {row.label} ", 24, style=LABEL_STYLE))
    line.append(f"  {branch.message_count:,} msg", DIM)
    line.append(f"  → {short_id(branch.head_id)}", FAINT)
    return line


class BranchPicker(FrozenBackdrop[int | None]):
    """Dismissed with the chosen branch's id, or None."""

    DEFAULT_CSS = "#compare-branches { height: auto; max-height: 12; }"

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, branch: InternalSession, rows: list[BranchRow]) -> None:
        super().__init__()
        self.branch = branch
        self.rows = [row for row in rows if row.branch.id != branch.id]

    def compose(self) -> ComposeResult:
        title = Text("Compare ", "bold")
        title.append_text(safe_line(branch_title(self.branch), 40, style="bold #5fafff"))
        title.append(" with…", "bold")
        with VerticalScroll(classes="dialog", id="compare-picker"):
            yield Static(title, classes="dialog-title")
            yield OptionList(*[Option(option_text(row), id=str(row.branch.id)) for row in self.rows],
                             id="compare-branches")
            yield Static(Text("Both are shown from the entry they last shared.\n"
                              "↑↓ choose · enter compare · escape cancel", FAINT),
                         classes="dialog-hint")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = first_choice(self.branch, [row.branch for row in self.rows])
        focus_now(options)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(int(event.option.id))

    def action_cancel(self) -> None:
        self.dismiss(None)
