"""Roll back: choose a checkpoint or the highlighted message, and optionally carry a branch
summary of what is left behind into the new branch."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Checkbox, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from core.actions import operations
from core.seed.models import InternalSession
from core.store import Store
from core.history.summariser import builtin_summary, get_summariser

from .action_dialog import ActionDialog
from .branches_pane import branch_title
from tui.render.formatting import CHECKPOINT_STYLE, DIM, FAINT, short_id
from tui.render.safe_text import clean, safe_line
from .safe_fields import SafeTextArea
from .focus import focus_now


@dataclass
class RollbackTarget:
    label: Text
    entry_seq: int | None
    checkpoint_id: int | None = None


@dataclass
class RollbackChoice:
    checkpoint_id: int | None
    entry_seq: int | None
    summary: str | None


class RollbackDialog(ActionDialog[RollbackChoice | None]):
    BINDINGS = [Binding("ctrl+s", "confirm", "Roll back")]

    def __init__(self, store: Store, branch: InternalSession, targets: list[RollbackTarget],
                 initial: int = 0) -> None:
        super().__init__()
        self.store = store
        self.branch = branch
        self.targets = targets
        self.initial = initial
        self._summaries: dict[int, tuple[str, str]] = {}  # option → (summary, note)

    def compose(self) -> ComposeResult:
        title = Text("Roll back · ", "bold")
        title.append_text(safe_line(branch_title(self.branch), 40, style="bold #5fafff"))
        with VerticalScroll(classes="dialog wide", id="rollback-dialog"):
            yield Static(title, classes="dialog-title")
            yield Static(Text("A new current branch starts at the chosen point; the old branch "
                              "stays as it is.", DIM), classes="dialog-hint")
            yield OptionList(*[Option(t.label, id=str(i)) for i, t in enumerate(self.targets)],
                             id="rollback-targets")
            yield Checkbox("Add a branch summary of what is left behind", True, id="rollback-summarise")
            yield SafeTextArea("", id="rollback-summary", soft_wrap=True, show_line_numbers=False)
            yield Static(Text("", FAINT), id="rollback-left")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Roll back", variant="primary", id="confirm")
                yield Button("Cancel", id="cancel")
            yield Static(Text("↑↓ choose · ctrl+s roll back · escape cancel", FAINT), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#rollback-summary", TextArea).cursor_blink = False  # steady cursor (and stable pictures)
        options = self.query_one(OptionList)
        options.highlighted = min(self.initial, len(self.targets) - 1)
        focus_now(options)

    @on(OptionList.OptionHighlighted)
    def _chosen(self, event: OptionList.OptionHighlighted) -> None:
        index = int(event.option.id)
        if index in self._summaries:
            summary, note = self._summaries[index]
            self._show_summary(index, summary, note)
        else:
            self.query_one("#rollback-left", Static).update(Text("counting what is left behind…", FAINT))
            area = self.query_one("#rollback-summary", TextArea)
            area.text = ""
            area.placeholder = "summarising what is left behind…"
            self._summarise(index)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.query_one("#rollback-summary", TextArea).focus()

    @work(thread=True, exclusive=True, group="rollback-summary")
    def _summarise(self, index: int) -> None:
        """What is left behind is counted first (in SQL: shown at once), then summarised
        (the built-in summariser reads its first and last messages; a command all)."""
        worker = get_current_worker()
        target = self.targets[index]
        try:
            left = operations.left_behind(self.store, self.branch.id, target.entry_seq)
            messages = left.counts().messages if left else 0
        except self.store.errors as error:
            self.app.call_from_thread(self._store_summary, index, "", str(error))
            return
        where = self.branch.name or "the old branch"
        note = f"{messages:,} messages are left behind on {where}"
        summariser = get_summariser()
        if summariser is not builtin_summary:  # a command may take a while: the count first
            if worker.is_cancelled:
                return
            self.app.call_from_thread(self._show_note, index, note)
        try:
            summary = summariser(left.messages(messages)) if messages else ""
        except self.store.errors as error:
            summary, note = "", f"{note}; the summariser failed: {error}"
        if not worker.is_cancelled:
            self.app.call_from_thread(self._store_summary, index, summary, note)

    def _show_note(self, index: int, note: str) -> None:
        if self.query_one(OptionList).highlighted == index:
            self.query_one("#rollback-left", Static).update(safe_line(note, 200, style=FAINT))

    def _store_summary(self, index: int, summary: str, note: str) -> None:
        self._summaries[index] = (summary, note)
        if self.query_one(OptionList).highlighted == index:
            self._show_summary(index, summary, note)

    def _show_summary(self, index: int, summary: str, note: str | None) -> None:
        with self.app.batch_update():
            area = self.query_one("#rollback-summary", TextArea)
            area.placeholder = "" if summary else "nothing to summarise"
            area.text = clean(summary)
            if note is not None:
                self.query_one("#rollback-left", Static).update(safe_line(note, 200, style=FAINT))

    def action_confirm(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is None:
            return
        target = self.targets[highlighted]
        summary = None
        if self.query_one(Checkbox).value:
            summary = self.query_one("#rollback-summary", TextArea).text.strip() or None
        self.dismiss(RollbackChoice(target.checkpoint_id,
                                    None if target.checkpoint_id is not None else target.entry_seq,
                                    summary))



def checkpoint_label(name: str, entry_id: str | None, on_path: bool, is_auto: bool) -> Text:
    out = Text("✓ ", CHECKPOINT_STYLE)
    out.append_text(safe_line(name or "checkpoint", 40, style=f"bold {CHECKPOINT_STYLE}"))
    out.append(f"  at {short_id(entry_id)}", DIM)
    if is_auto:
        out.append("  auto", FAINT)
    if not on_path:
        out.append("  (another branch)", FAINT)
    return out
