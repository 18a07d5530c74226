"""Compaction preview: what is summarised, the token estimate, an editable summary, confirm."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Static, TextArea

from core import operations
from core.entries import content_text
from core.errors import ArborError
from core.models import InternalSession
from core.store import Store
from core.summariser import get_summariser

from .action_dialog import ActionDialog
from .branches_pane import branch_title
from ..formatting import DIM, FAINT, ROLE_STYLES, short_id
from ..safe_text import clean, safe_line


@dataclass
class CompactChoice:
    summary: str
    keep_recent_tokens: int


def keep_candidates(tokens: int) -> list[int]:
    """Budgets of recent tokens to keep, tried in turn: 20,000, then parts of a smaller branch."""
    out = [operations.DEFAULT_KEEP_RECENT_TOKENS]
    out += [tokens * 2 // 3, tokens // 2, tokens // 3, tokens // 5]
    return [keep for keep in out if keep > 0]


class CompactDialog(ActionDialog[CompactChoice | None]):
    BINDINGS = [Binding("ctrl+s", "confirm", "Compact")]

    def __init__(self, store: Store, branch: InternalSession) -> None:
        super().__init__()
        self.store = store
        self.branch = branch
        self.plan: operations.CompactionPlan | None = None
        self.keep: int | None = None

    def compose(self) -> ComposeResult:
        title = Text("Compact · ", "bold")
        title.append_text(safe_line(branch_title(self.branch), 40, style="bold #5fafff"))
        with VerticalScroll(classes="dialog wide", id="compact-dialog"):
            yield Static(title, classes="dialog-title")
            yield Static(Text("Nothing is deleted: a compaction entry is appended, and replay "
                              "starts from its summary.", DIM), classes="dialog-hint")
            yield Static(Text("planning…", FAINT), id="compact-plan")
            with Horizontal(id="compact-keep-row"):
                yield Static(Text("Keep the newest", DIM), id="compact-keep-label")
                yield Input("", id="compact-keep", type="integer", max_length=9)
                yield Static(Text("tokens verbatim (enter re-plans)", DIM), id="compact-keep-unit")
            yield Static(Text("Summary (editable)", "bold"), classes="dialog-section")
            yield TextArea("", id="compact-summary", soft_wrap=True, show_line_numbers=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Compact", variant="primary", id="confirm", disabled=True)
                yield Button("Cancel", id="cancel")
            yield Static(Text("ctrl+s compact · escape cancel", FAINT), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#compact-summary", TextArea).cursor_blink = False  # steady cursor (and stable pictures)
        self.query_one("#compact-keep", Input).cursor_blink = False
        self._plan(None)

    @work(thread=True, exclusive=True, group="compact-plan")
    def _plan(self, keep: int | None) -> None:
        try:
            summariser = get_summariser()
            if keep is None:
                # the first budget that summarises something and keeps the latest turn
                plan = operations.plan_compaction(self.store, self.branch.id, summariser=None)
                fallback = None
                candidates = keep_candidates(plan.tokens_before)
                if plan.tokens_before > 3 * operations.DEFAULT_KEEP_RECENT_TOKENS:
                    candidates = []  # a long branch: the default budget (each trial reads it all)
                    keep = operations.DEFAULT_KEEP_RECENT_TOKENS
                for candidate in candidates:
                    trial = operations.plan_compaction(self.store, self.branch.id,
                                                       keep_recent_tokens=candidate, summariser=None)
                    if trial.messages_summarised and fallback is None:
                        fallback = candidate
                    if trial.messages_summarised and trial.kept_count:
                        keep = candidate
                        break
                keep = keep if keep is not None else (fallback or operations.DEFAULT_KEEP_RECENT_TOKENS)
            plan = operations.plan_compaction(self.store, self.branch.id, keep_recent_tokens=keep,
                                              summariser=summariser)
        except ArborError as error:
            self.app.call_from_thread(self._failed, str(error))
            return
        self.app.call_from_thread(self._show, plan, keep)

    def _failed(self, message: str) -> None:
        self.query_one("#compact-plan", Static).update(safe_line(message, 300, style="bold #ff5f5f"))

    def _show(self, plan: operations.CompactionPlan, keep: int) -> None:
        self.plan, self.keep = plan, keep
        field = self.query_one("#compact-keep", Input)
        if field.value != str(keep):
            field.value = str(keep)
        info = Text()
        if not plan.summarised:
            info.append("Nothing to compact: the whole branch fits in the kept budget.", "bold #d7af5f")
        else:
            info.append("Summarises ", DIM)
            info.append(f"{plan.messages_summarised:,} messages", "bold")
            info.append(f" ({len(plan.summarised):,} entries, ", DIM)
            info.append(short_id(plan.summarised[0].id), DIM)
            info.append(" … ", DIM)
            info.append(short_id(plan.summarised[-1].id), DIM)
            if plan.kept_count:
                info.append("); keeps ", DIM)
                info.append(f"{plan.kept_count:,} {'entry' if plan.kept_count == 1 else 'entries'}",
                            "bold")
                if plan.first_kept is not None:
                    info.append(f" from {short_id(plan.first_kept.id)}", DIM)
            else:
                info.append("); ", DIM)
                info.append("keeps nothing verbatim", "bold #d7af5f")
                info.append(f": no user or assistant message fits in the newest {keep:,} tokens", DIM)
            info.append("\nTokens (estimate): ", DIM)
            info.append(f"{plan.tokens_before:,}", "bold")
            info.append(" → ", DIM)
            info.append(f"{plan.tokens_after:,}", "bold #87d787")
            if plan.previous is not None:
                info.append(f"   (replaces compaction {short_id(plan.previous.id)})", FAINT)
            said = [e for e in plan.summarised if e.message is not None] or plan.summarised
            for label, entry in (("first", said[0]), ("last", said[-1])):
                message = entry.message or {}
                role = str(message.get("role", entry.type))
                info.append(f"\n  {label:<6}", FAINT)
                info.append_text(safe_line(role, 12, style=ROLE_STYLES.get(role, "bold")))
                info.append("  ")
                info.append_text(safe_line(content_text(message.get("content")) or entry.type, 72, style=DIM))
        self.query_one("#compact-plan", Static).update(info)
        summary = self.query_one("#compact-summary", TextArea)
        summary.text = clean(plan.summary)
        self.query_one("#confirm", Button).disabled = not plan.summarised
        if self.focused is None or not isinstance(self.focused, (Input, TextArea)):
            summary.focus()

    @on(Input.Submitted, "#compact-keep")
    def _replan(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            keep = max(0, int(event.value))
        except ValueError:
            return
        self.query_one("#compact-plan", Static).update(Text("planning…", FAINT))
        self._plan(keep)

    def action_confirm(self) -> None:
        if self.plan is None or not self.plan.summarised or self.keep is None:
            return
        summary = self.query_one("#compact-summary", TextArea).text.strip()
        if not summary:
            self.notify("The summary is empty; write one or cancel.", severity="warning", markup=False)
            return
        self.dismiss(CompactChoice(summary, self.keep))

