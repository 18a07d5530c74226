"""Compare two branches (d): both sides from the entry they last shared, side by side.

Which of two attempts was better, and what did each change? Each side shows what it cost
and how long it went (figures the store keeps: shown at once, however long the sides),
what was asked first and the last reply, the files its tool calls changed and the tools it
used (read in a worker, a window of replies at a time, filled in as they come), then its
messages, read only where they are on screen. Below 100 columns the sides are stacked.
"""

from __future__ import annotations

import re
import time
from datetime import datetime

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.containers import Container, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import get_current_worker

from core.history.branch_compare import Comparison, Side, compare, scan_side
from core.seed.models import InternalSession
from core.store import Store
from core.usage.tokens import fmt_cost, fmt_tokens

from tui.render.formatting import CURRENT_STYLE, DIM, FAINT, LABEL_STYLE, short_id
from tui.message_source import MessageSource
from tui.render.safe_text import safe_line
from .branches_pane import branch_title
from .key_footer import KeyFooter
from .messages_pane import MessagesPane

STACK_BELOW = 100          # columns: narrower, the sides are stacked
WIDE_FILES = 4             # files listed per side when side by side
UPDATE_EVERY = 0.15        # seconds between redraws while the sides are read
LABEL_WIDTH = 7
SIDE_STYLES = {"A": "bold #5fafff", "B": "bold #d7af5f"}
ONLY_HERE = "#d7af5f"
_MARKDOWN_MARKS = re.compile(r"(```[\w+-]*|\*\*|__|`+|^#+\s*)", re.M)


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def one_line(text: str) -> str:
    """A reply as one line to glance at: markdown marks and runs of blanks dropped."""
    return " ".join(_MARKDOWN_MARKS.sub("", text).split())


def side_title(letter: str, branch: InternalSession, label: str | None, width: int) -> Text:
    title = Text(end="")
    title.append(f" {letter} ", SIDE_STYLES[letter])
    title.append_text(safe_line(branch_title(branch), max(8, width // 2), style="bold"))
    if branch.is_current:
        title.append(" ● current", CURRENT_STYLE)
    if label:
        title.append(" ")
        title.append_text(safe_line(f" {label} ", 24, style=LABEL_STYLE))
    title.append(" ")
    return title


def figures_line(side: Side, *, stacked: bool = True) -> Text:
    """Messages, tool calls (once read), cost and tokens of one side."""
    usage = side.usage
    line = Text(end="")
    line.append(plural(side.counts.messages, "message"), "bold")
    work = side.work
    if work.done or work.read:
        line.append(" · ", FAINT)
        line.append(plural(work.call_count, "tool call"))
        if not work.done:
            line.append(f" ({work.progress:.0%} read)", FAINT)
    line.append(" · ", FAINT)
    if usage.responses:
        line.append(fmt_cost(usage), "bold #87d787")
        line.append(f" · {fmt_tokens(usage.total_tokens)} tokens", "")
        if side.subagents and stacked:
            line.append(f" (with {plural(side.subagents, 'sub-agent')})", DIM)
    else:
        line.append("no usage logged", DIM)
    return line


def _labelled(label: str, value: Text, width: int) -> Text:
    line = Text(end="")
    line.append(f"{label:<{LABEL_WIDTH}}", FAINT)
    value.truncate(max(4, width - LABEL_WIDTH), overflow="ellipsis")
    line.append_text(value)
    return line


def _wrapped(label: str, text: str, width: int, lines: int, style: str = "") -> list[Text]:
    """`text` on at most `lines` lines after a label, cut with an ellipsis."""
    room = max(8, width - LABEL_WIDTH)
    whole = safe_line(text, room * lines, style=style)
    out: list[Text] = []
    rest = whole
    while rest.cell_len and len(out) < lines:
        if rest.cell_len <= room or len(out) == lines - 1:
            piece = rest
            rest = Text("")
        else:
            cut = rest.plain.rfind(" ", 0, room + 1)
            cut = cut if cut > room // 2 else room
            piece, rest = rest[:cut], rest[cut:]
            rest = rest[1:] if rest.plain.startswith(" ") else rest
        out.append(_labelled("" if out else label, piece, width))
    return out


def file_line(path: str, touch, only_here: bool, width: int) -> Text:
    value = Text(end="")
    counts = Text(end="")
    if touch.added is not None:
        counts.append(f"+{touch.added:,}", "#87d787")
    if touch.removed is not None:
        counts.append(f" −{touch.removed:,}" if counts else f"−{touch.removed:,}", "#ff8787")
    action = touch.last_action if len(touch.actions) == 1 else "changed"
    if touch.changes > 1:
        action += f" ×{touch.changes}"
    tail = Text(end="")
    if counts:
        tail.append_text(counts)
        tail.append(" ")
    tail.append(action, DIM)
    if only_here:
        tail.append(" · only here", ONLY_HERE)
    room = max(6, width - LABEL_WIDTH - tail.cell_len - 2)
    value.append_text(tail_path(path, room))
    value.append("  ")
    value.append_text(tail)
    return value


def tail_path(path: str, width: int) -> Text:
    """A path on one line: one too long keeps its end (the file's name)."""
    line = safe_line(path, 400, style="bold")
    if line.cell_len <= width:
        return line
    out = Text(end="")
    out.append("…", FAINT)
    out.append_text(safe_line(path[-max(1, width - 1):], max(1, width - 1), style="bold"))
    return out


def summary_lines(side: Side, other: Side, width: int, stacked: bool) -> list[Text]:
    """What the head of a side shows: figures, first ask, last reply, files, tools."""
    lines = [figures_line(side, stacked=stacked)]
    if side.first_ask and not stacked:
        lines.extend(_wrapped("asked", one_line(side.first_ask), width, 1))
    if side.last_reply:
        lines.extend(_wrapped("ended", one_line(side.last_reply), width, 1 if stacked else 2,
                              style="italic"))
    work = side.work
    files = list(work.files.items())
    if not work.done and not files:
        lines.append(_labelled("files", Text("reading the tool calls…", FAINT), width))
    elif not files:
        lines.append(_labelled("files", Text("none changed by a tool call", DIM), width))
    elif stacked:
        shown = Text(end="")
        for number, (path, touch) in enumerate(files):
            if number:
                shown.append(", ", FAINT)
            shown.append_text(safe_line(path.rsplit("/", 1)[-1], 40, style="bold"))
        lines.append(_labelled(f"files {len(files)}" if len(files) > 1 else "file", shown, width))
    else:
        theirs = other.work.files
        for number, (path, touch) in enumerate(files[:WIDE_FILES]):
            only = other.work.done and path not in theirs
            lines.append(_labelled("files" if not number else "",
                                   file_line(path, touch, only, width), width))
        if len(files) > WIDE_FILES:
            lines.append(_labelled("", Text(f"… {len(files) - WIDE_FILES:,} more (f lists them all)",
                                            FAINT), width))
    if not stacked and work.tool_calls:
        tools = Text(end="")
        for number, (name, count) in enumerate(work.tool_calls.most_common()):
            if number:
                tools.append(" · ", FAINT)
            tools.append_text(safe_line(name, 24))
            tools.append(f" {count:,}", DIM)
        if side.subagents:
            tools.append(f"  +{plural(side.subagents, 'sub-agent')}", DIM)   # (in the figures)
        lines.append(_labelled("tools", tools, width))
    for line in lines:
        line.truncate(width, overflow="ellipsis")
    return lines


def contrast(comparison: Comparison, width: int = 400) -> Text:
    """B against A: messages, cost, tokens, tool calls and files, on as many lines of
    `width` as it takes, broken between those parts, never inside one ("1 / fewer tool
    calls" would read as two figures)."""
    line = Text(end="")
    line.append(" B", SIDE_STYLES["B"])
    line.append(" against ", DIM)
    line.append("A", SIDE_STYLES["A"])
    line.append(": ", DIM)
    used = line.cell_len
    for number, part in enumerate(contrast_parts(comparison)):
        if number and used + 3 + part.cell_len > width:
            line.append("\n   ")
            used = 3
        elif number:
            line.append(" · ", FAINT)
            used += 3
        line.append_text(part)
        used += part.cell_len
    return line


def contrast_parts(comparison: Comparison) -> list[Text]:
    a, b = comparison.a, comparison.b
    parts: list[Text] = []

    def more_or_less(difference: float, word: str, shown: str) -> Text:
        """'4 fewer messages', '1 more tool call', 'as many tokens'."""
        if not difference:
            return Text(f"as many {word}s", DIM)
        noun = word if shown == "1" else f"{word}s"
        return Text(f"{shown} {'more' if difference > 0 else 'fewer'} {noun}")

    messages = b.counts.messages - a.counts.messages
    parts.append(more_or_less(messages, "message", f"{abs(messages):,}"))
    if a.usage.responses and b.usage.responses:
        cost = b.usage.cost_usd - a.usage.cost_usd
        if round(cost, 6):
            text = Text(f"${abs(cost):,.3f} {'more' if cost > 0 else 'less'}")
        else:
            text = Text("the same cost", DIM)
        if a.usage.cost_usd and round(cost, 6):
            text.append(f" ({b.usage.cost_usd / a.usage.cost_usd:.1f}×)", DIM)
        parts.append(text)
        tokens = b.usage.total_tokens - a.usage.total_tokens
        parts.append(more_or_less(tokens, "token", fmt_tokens(abs(tokens))))
    if a.work.done and b.work.done:
        calls = b.work.call_count - a.work.call_count
        parts.append(more_or_less(calls, "tool call", f"{abs(calls):,}"))
        mine, theirs = set(a.work.files), set(b.work.files)
        both, only_b, only_a = len(mine & theirs), len(theirs - mine), len(mine - theirs)
        files = [f"{both:,} in both"] if both else []
        files += [f"{only_b:,} only in B"] if only_b else []
        files += [f"{only_a:,} only in A"] if only_a else []
        parts.append(Text("files changed: " + ", ".join(files) if files else "no files changed"))
    return parts


def fork_line(session_name: str, comparison: Comparison | None, fork_text: str,
              fork_id: str | None) -> Text:
    """The title: the session, and where the branches part (the entry they last share)."""
    line = Text(end="")
    line.append(" Compare ", "bold")
    line.append_text(safe_line(session_name, 40, style="bold #5fafff"))
    if comparison is None:
        line.append(" · finding where the branches part…", FAINT)
        return line
    if comparison.fork_depth < 0:
        line.append(" · the branches share no entry: both from their roots", DIM)
        return line
    line.append(" · parted after ", DIM)
    line.append(short_id(fork_id), "bold #5fafff")
    line.append(f" ({plural(comparison.shared_messages, 'message')} shared)", DIM)
    if fork_text:
        line.append("  ")
        line.append_text(safe_line(one_line(fork_text), 200, style=f"italic {DIM}"))
    return line


class Contrast(Widget):
    """The "B against A" line(s), laid out for the width it has."""

    DEFAULT_CSS = "Contrast { height: auto; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.comparison: Comparison | None = None

    def show(self, comparison: Comparison) -> None:
        self.comparison = comparison
        self.refresh(layout=True)

    def _text(self, width: int) -> Text:
        return contrast(self.comparison, width) if self.comparison is not None else Text("")

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._text(width).plain.split("\n"))

    def render(self):
        return self._text(self.size.width)


class SideSummary(Widget):
    """The head of one side: figures, first ask, last reply, files, tools."""


    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.side: Side | None = None
        self.other: Side | None = None
        self.stacked = False

    def show(self, side: Side, other: Side) -> None:
        self.side, self.other = side, other
        self.refresh(layout=True)

    def _lines(self, width: int) -> list[Text]:
        if self.side is None:
            return [Text("reading…", FAINT)]
        return summary_lines(self.side, self.other, max(20, width), self.stacked)

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self._lines(width))

    def render(self):
        return Text("\n").join(self._lines(self.size.width))


class SidePane(MessagesPane, inherit_bindings=False):
    """One side's messages: the messages pane's list over the side's own entries, with only
    the keys that read (no branch, roll back or label from here)."""

    BINDINGS = [
        Binding("space", "toggle_open", "Open", tooltip="Open or fold the highlighted message"),
        Binding("enter", "show_in_browser", "Show in browser",
                tooltip="Close the comparison and show this message on its branch"),
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last", show=False),
    ]


    class ShowEntry(Message):
        """enter: the highlighted message in the browser (`branch_id` None: it belongs to
        another session, a sub-agent's, shown inside this side)."""

        def __init__(self, branch_id: int | None, seq: int, session_id: int) -> None:
            super().__init__()
            self.branch_id = branch_id
            self.seq = seq
            self.session_id = session_id

    def action_show_in_browser(self) -> None:
        item = self.highlighted
        if item is None or self.source is None:
            return
        own = not item.nest and item.kind != "spawn"
        self.post_message(self.ShowEntry(self.source.branch.id if own else None, item.entry.seq,
                                         item.entry.external_session_id))


class CompareScreen(ModalScreen["tuple[int | None, int, int] | None"]):
    """Two branches of one session from their common ancestor. Modal (with an opaque
    background, app.tcss), so that the browser's keys (b, r, c, …) do not reach the panes
    hidden behind it."""

    DEFAULT_CSS = """
    CompareScreen { layout: vertical; }
    #compare-title { height: 1; }
    #compare-sides { height: 1fr; layout: horizontal; }
    #compare-sides.stacked { layout: vertical; }
    .compare-side {
        width: 1fr;
        height: 1fr;
        border: round $panel-lighten-2;
        border-title-color: $text-muted;
    }
    #compare-sides.stacked .compare-side { width: 100%; }
    .compare-side:focus-within { border: round $accent; border-title-color: $text; }
    .compare-side SidePane { height: 1fr; }
    SideSummary { width: 100%; height: auto; padding: 0 1; border-bottom: solid $panel-lighten-2; }
    #compare-sides.stacked SideSummary { border-bottom: none; }
    """

    BINDINGS = [
        Binding("escape,q", "close", "Back", id="compare-close"),
        Binding("tab,shift+tab", "other_side", "Other side", id="compare-other-side"),
        Binding("f", "files", "Files", id="compare-files",
                tooltip="Every file either side changed, and what each did to it"),
    ]
    AUTO_FOCUS = "#side-a SidePane"

    def __init__(self, store: Store, a: InternalSession, b: InternalSession, *,
                 session_name: str = "", labels: dict[int, str] | None = None,
                 now: datetime) -> None:
        super().__init__()
        self.store = store
        self.branches = (a, b)
        self.session_name = session_name
        self.labels = labels or {}
        self.now = now
        self.comparison: Comparison | None = None   # filled by the worker
        self.shown: Comparison | None = None        # its copy on screen
        self.busy = True

    def compose(self) -> ComposeResult:
        yield Static(fork_line(self.session_name, None, "", None), id="compare-title")
        yield Contrast(id="compare-contrast")
        with Container(id="compare-sides"):
            for letter, branch in zip("AB", self.branches):
                with Vertical(id=f"side-{letter.lower()}", classes="compare-side"):
                    yield SideSummary()
                    yield SidePane(self.now)
        yield KeyFooter()

    def on_mount(self) -> None:
        for letter, branch, box in zip("AB", self.branches, self.query(".compare-side")):
            box.border_title = side_title(letter, branch, self.labels.get(branch.id), 60)
        self._lay_out(self.app.size.width)
        self._load()

    def on_resize(self, event) -> None:
        self._lay_out(event.size.width)

    def _lay_out(self, width: int) -> None:
        stacked = width < STACK_BELOW
        self.query_one("#compare-sides").set_class(stacked, "stacked")
        for summary in self.query(SideSummary):
            summary.stacked = stacked
            summary.refresh(layout=True)

    @property
    def panes(self) -> list[SidePane]:
        return list(self.query(SidePane))

    # ----------------------------------------------------------------- loading
    @work(thread=True, exclusive=True, group="compare")
    def _load(self) -> None:
        worker = get_current_worker()
        # (the reader: a thread never holds the connection the screen reads through, which
        # the sides' messages are drawn from: `_loaded`)
        try:
            store = self.store.reader()
            comparison = compare(store, *self.branches)
            fork = store.entries.get(comparison.fork_seq) if comparison.fork_seq is not None else None
        except (*self.store.errors, ValueError) as error:
            self.app.call_from_thread(self._failed, error)
            return
        fork_text = ""
        if fork is not None and fork.message is not None:
            from core.history.branch_compare import said
            fork_text = said(fork.message)
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._loaded, comparison, fork_text,
                                  fork.id if fork is not None else None)
        last = 0.0
        try:
            for one in comparison.sides:
                for _work in scan_side(store, one, stop=lambda: worker.is_cancelled):
                    if time.monotonic() - last > UPDATE_EVERY:
                        last = time.monotonic()
                        self.app.call_from_thread(self._show_figures)
        except store.errors as error:
            self.app.call_from_thread(self._failed, error)
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_figures, True)

    def _failed(self, error: BaseException) -> None:
        self.busy = False
        self.query_one("#compare-title", Static).update(
            safe_line(f" The branches could not be compared: {error}", 300, style="bold #ff5f5f"))

    def _loaded(self, comparison: Comparison, fork_text: str, fork_id: str | None) -> None:
        try:
            sources = [MessageSource(self.store, s.branch, from_depth=s.start)
                       for s in comparison.sides]
        except self.store.errors as error:
            self._failed(error)
            return
        self.comparison = comparison
        self.query_one("#compare-title", Static).update(
            fork_line(self.session_name, comparison, fork_text, fork_id))
        for pane, source, one in zip(self.panes, sources, comparison.sides):
            pane.set_source(source, at_end=False,
                            empty_text=Text("Nothing after the shared part: this side is where "
                                            "the other one forked.", FAINT))
        self._show_figures()

    def _show_figures(self, done: bool = False) -> None:
        """Draw the figures as read so far: a copy, made here while the worker waits (it
        goes on filling `self.comparison` while the screen draws)."""
        if self.comparison is None:
            return
        comparison = self.shown = self.comparison.snapshot()
        a, b = comparison.sides
        for summary, (one, other) in zip(self.query(SideSummary), ((a, b), (b, a))):
            summary.show(one, other)
        self.query_one(Contrast).show(comparison)
        if done:
            self.busy = False

    # ----------------------------------------------------------------- actions
    def action_other_side(self) -> None:
        panes = self.panes
        target = panes[1] if self.focused is panes[0] else panes[0]
        self.set_focus(target)

    def action_files(self) -> None:
        from .compare_files import CompareFiles

        if self.shown is not None:
            self.app.push_screen(CompareFiles(self.shown))

    def on_side_pane_show_entry(self, event: SidePane.ShowEntry) -> None:
        """Back to the browser, with that message highlighted on its branch."""
        self.workers.cancel_group(self, "compare")
        self.dismiss((event.branch_id, event.seq, event.session_id))

    def action_close(self) -> None:
        self.workers.cancel_group(self, "compare")
        self.dismiss(None)
