"""Compaction preview: what is summarised, the token estimate, an editable summary, confirm."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Static, TextArea

from core.actions import operations
from core.history.compaction_cost import CompactionCost, estimate
from core.model.entries import content_text
from core.seed.models import InternalSession
from core.store import Store
from core.history.summariser import builtin_summary, get_summariser
from core.usage.tokens import fmt_usd

from .action_dialog import ActionDialog
from .branches_pane import branch_title
from tui.render.formatting import DIM, FAINT, ROLE_STYLES, short_id, usage_amount, usage_style
from tui.render.safe_text import clean, safe_line
from .safe_fields import SafeTextArea


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
        self.summarising = False
        self.cost: tuple[operations.CompactionPlan, CompactionCost] | None = None

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
            yield SafeTextArea("", id="compact-summary", soft_wrap=True, show_line_numbers=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Compact", variant="primary", id="confirm", disabled=True)
                yield Button("Cancel", id="cancel")
            yield Static(Text("ctrl+s compact · escape cancel", FAINT), classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#compact-summary", TextArea).cursor_blink = False  # steady cursor (and stable pictures)
        self.query_one("#compact-keep", Input).cursor_blink = False
        # at once, in a thread: a short branch's plan is often ready for the first frame
        # (waiting for that frame cost one more), a long one's shows "planning…" meanwhile
        self._plan(None)

    @work(thread=True, exclusive=True, group="compact-plan")
    def _plan(self, keep: int | None) -> None:
        """The plan first (counted in SQL, only the kept part read: at once even on a long
        branch), then the summary, which a command summariser may take a while to write."""
        worker = get_current_worker()
        try:
            plan = None
            if keep is None:
                # the first budget that summarises something and keeps the latest turn
                keep = operations.DEFAULT_KEEP_RECENT_TOKENS
                plan = operations.plan_compaction(self.store, self.branch.id, keep_recent_tokens=keep,
                                                  summariser=None)
                if plan.tokens_before <= 3 * keep:  # (a long branch: the default budget)
                    plan = self._first_fitting(plan)
                    keep = plan.keep_recent_tokens
            if plan is None:
                plan = operations.plan_compaction(self.store, self.branch.id, keep_recent_tokens=keep,
                                                  summariser=None)
        except self.store.errors as error:
            self.app.call_from_thread(self._failed, str(error))
            return
        summariser = get_summariser()
        if summariser is builtin_summary and plan.summarised_count:
            # it reads a few thousand messages at most: plan and summary in one update
            plan.set_summary(operations.summarise_compaction(plan, summariser))
            if not worker.is_cancelled:
                self.app.call_from_thread(self._show, plan, keep, True)
                self._cost(plan, worker)
            return
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._show, plan, keep)
        if not plan.summarised_count:
            return
        self._cost(plan, worker)
        try:
            summary = operations.summarise_compaction(plan, summariser)
        except self.store.errors as error:
            summary, failure = "", str(error)
        else:
            failure = None
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_summary, plan, summary, failure)

    def _cost(self, plan: operations.CompactionPlan, worker) -> None:
        """What the summarised part cost and what the next request saves (after the plan is
        shown: the price table takes a moment to load the first time)."""
        from core.usage.pricing import PricesError

        if not plan.summarised_count:
            return
        try:
            cost = estimate(self.store, plan)
        except (PricesError, *self.store.errors):
            return   # the plan stands without its price
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_cost, plan, cost)

    def _show_cost(self, plan: operations.CompactionPlan, cost: CompactionCost) -> None:
        if plan is not self.plan:
            return  # re-planned meanwhile
        self.cost = (plan, cost)
        self._show_plan(plan)

    def _first_fitting(self, default: operations.CompactionPlan) -> operations.CompactionPlan:
        """Of the budgets keep_candidates offers, the plan of the first one that summarises
        something and keeps something; else of the first that summarises something."""
        fallback = None
        for candidate in keep_candidates(default.tokens_before):
            trial = default if candidate == default.keep_recent_tokens else operations.plan_compaction(
                self.store, self.branch.id, keep_recent_tokens=candidate, summariser=None)
            if trial.messages_summarised and trial.kept_count:
                return trial
            if trial.messages_summarised and fallback is None:
                fallback = trial
        return fallback or default

    def _failed(self, message: str) -> None:
        self.query_one("#compact-plan", Static).update(safe_line(message, 300, style="bold #ff5f5f"))

    def _show(self, plan: operations.CompactionPlan, keep: int, summarised: bool = False) -> None:
        """The plan, and its summary when it has one already (one repaint for both)."""
        with self.app.batch_update():
            self.plan, self.keep = plan, keep
            field = self.query_one("#compact-keep", Input)
            if field.value != str(keep):
                field.value = str(keep)
            self.summarising = bool(plan.summarised_count) and not summarised
            self._show_plan(plan)
            summary = self.query_one("#compact-summary", TextArea)
            summary.text = clean(plan.summary) if summarised else ""
            summary.placeholder = (f"summarising {plan.messages_summarised:,} messages…"
                                   if self.summarising else "")
            self.query_one("#confirm", Button).disabled = not plan.summarised_count
            if self.focused is None or not isinstance(self.focused, (Input, TextArea)):
                summary.focus()

    def _show_plan(self, plan: operations.CompactionPlan) -> None:
        cost = self.cost[1] if self.cost is not None and self.cost[0] is plan else None
        self.query_one("#compact-plan", Static).update(
            plan_text(plan, summarising=self.summarising, cost=cost))

    def _show_summary(self, plan: operations.CompactionPlan, summary: str, failure: str | None) -> None:
        if plan is not self.plan:
            return  # re-planned meanwhile
        with self.app.batch_update():
            self.summarising = False
            plan.set_summary(summary)
            self._show_plan(plan)
            area = self.query_one("#compact-summary", TextArea)
            area.placeholder = ("The summariser failed: " + clean(failure)[:200] + " Write one here."
                                if failure else "")
            if not area.text:  # never over what the user has begun to write
                area.text = clean(summary)

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
        if self.plan is None or not self.plan.summarised_count or self.keep is None:
            return
        summary = self.query_one("#compact-summary", TextArea).text.strip()
        if not summary:
            message = ("The summary is still being written; wait for it or write one."
                       if self.summarising else "The summary is empty; write one or cancel.")
            self.app.say(message, severity="warning")
            return
        self.dismiss(CompactChoice(summary, self.keep))



def cost_lines(cost: CompactionCost, plan: operations.CompactionPlan, summarising: bool) -> Text:
    """Two lines: what the summarised part cost, and what the next request saves."""
    out = Text("\nCost: ", DIM)
    figure = cost.summarised
    if figure.responses:
        out.append(usage_amount(figure), "bold " + usage_style(figure))
        out.append(f" for the summarised part ({figure.responses:,} "
                   f"response{'s' if figure.responses != 1 else ''})", DIM)
    else:
        out.append("no recorded usage in the summarised part", DIM)
    saved = plan.tokens_before - plan.tokens_after
    if summarising or saved <= 0:
        return out   # the saving needs the summary's size
    saving = cost.saving(plan.tokens_before, plan.tokens_after)
    out.append("\nSaves: ", DIM)
    if saving is None:
        out.append(f"~{saved:,} input tokens", "bold")
        out.append(" on the next request", DIM)
        if cost.model:
            out.append(" (no price for ", DIM)
            out.append_text(safe_line(cost.model, 40, style="#d7af5f"))
            out.append(")", DIM)
        return out
    out.append(fmt_usd(saving.uncached_usd), "bold #87d787")
    out.append(" on the next request, ", DIM)
    out.append(f"~{saved:,} input tokens fewer", "bold")
    out.append("\n       (", DIM)
    out.append_text(safe_line(cost.model, 40, style=DIM))
    out.append("'s input price; ", DIM)
    out.append(fmt_usd(saving.cached_usd), "#87d787")
    out.append(" at its cache-read price)", DIM)
    return out


def plan_text(plan: operations.CompactionPlan, *, summarising: bool = False,
              cost: CompactionCost | None = None) -> Text:
    """What a compaction summarises and keeps, its tokens before and after, its cost and its
    first and last messages: the preview `c` shows (and the hand-off's offer, `O`)."""
    info = Text()
    if not plan.summarised_count:
        info.append("Nothing to compact: the whole branch fits in the kept budget.", "bold #d7af5f")
    else:
        info.append("Summarises ", DIM)
        info.append(f"{plan.messages_summarised:,} messages", "bold")
        info.append(f" ({plan.summarised_count:,} entries, ", DIM)
        info.append(short_id(plan.first_summarised.id), DIM)
        info.append(" … ", DIM)
        info.append(short_id(plan.last_summarised.id), DIM)
        if plan.kept_count:
            info.append("); keeps ", DIM)
            info.append(f"{plan.kept_count:,} {'entry' if plan.kept_count == 1 else 'entries'}",
                        "bold")
            if plan.first_kept is not None:
                info.append(f" from {short_id(plan.first_kept.id)}", DIM)
        else:
            info.append("); ", DIM)
            info.append("keeps nothing verbatim", "bold #d7af5f")
            info.append(f": no user or assistant message fits in the newest {plan.keep_recent_tokens:,} tokens", DIM)
        info.append("\nTokens (estimate): ", DIM)
        info.append(f"{plan.tokens_before:,}", "bold")
        info.append(" → ", DIM)
        if summarising:
            info.append(f"{plan.kept_tokens:,} kept + the summary", "bold #87d787")
        else:
            info.append(f"{plan.tokens_after:,}", "bold #87d787")
        if plan.previous is not None:
            info.append(f"   (replaces compaction {short_id(plan.previous.id)})", FAINT)
        if cost is not None:
            info.append_text(cost_lines(cost, plan, summarising))
        first = plan.first_message or plan.first_summarised
        last = plan.last_message or plan.last_summarised
        for label, entry in (("first", first), ("last", last)):
            message = entry.message or {}
            role = str(message.get("role", entry.type))
            info.append(f"\n  {label:<6}", FAINT)
            info.append_text(safe_line(role, 12, style=ROLE_STYLES.get(role, "bold")))
            info.append("  ")
            info.append_text(safe_line(content_text(message.get("content")) or entry.type, 72, style=DIM))
    return info
