"""The usage screen (`$`): cost over a span (the last week, month or year, all of it, or
dates typed) as a bar chart split by model, cost by project, and the most expensive
sessions (enter opens one; copies of a session, made by `o` or an agent's fork, are counted
in their original's row).

The chart is drawn with Textual's own rendering (block characters in a Rich `Text`), a
column a day, or a week, month or year when the days do not fit, each bar stacked by model
in the model's colour, so it reads at 80x24.
Figures come from the totals the store keeps (`store.usage.report`), in a thread worker.
Where nothing is priced, the chart shows tokens instead of dollars.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from core.usage.tokens import Figure, fmt_cost, fmt_tokens, fmt_usd
from core.usage.span import UsageSpan, bucket_starts, by_bucket, grain_for

from tui.render.formatting import DIM, FAINT
from tui.render.safe_text import safe_line
from .backdrop import FrozenBackdrop
from .row_list import RowList

SPAN_KEYS = (("w", "week"), ("m", "month"), ("y", "year"), ("a", "all"))
HINT = ("w week · m month · y year · a all · c dates · enter opens a session · tab switches "
        "list · escape closes")
PALETTE = ("#5fafff", "#d7875f", "#87d787", "#d787d7", "#d7d75f", "#5fd7d7", "#af87ff", "#ff8787")
OTHER = "#6c6c6c"
BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass
class UsageChoice:
    """What the screen closes with: a session to open (the search's jump takes it)."""

    session_id: int
    seq: int | None = None


def _value(figure: Figure, in_dollars: bool) -> float:
    return figure.cost_usd if in_dollars else float(figure.total_tokens)


def _amount(value: float, in_dollars: bool) -> str:
    return fmt_usd(value) if in_dollars else fmt_tokens(int(value)) + " tok"


class CostChart(Static):
    """Cost over the span, a bar a day, or a week, month or year when the days do not fit
    (core/usage/span.py), each bar stacked by model."""

    AXIS = 11   # columns of the amounts on the left

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.since: date | None = None
        self.until: date | None = None
        self.by_day: dict[str, dict[str, Figure]] = {}
        self.colours: dict[str, str] = {}
        self.in_dollars = True

    def set_data(self, since: date, until: date, by_day: dict[str, dict[str, Figure]],
                 colours: dict[str, str], in_dollars: bool) -> None:
        self.since, self.until = since, until
        self.by_day, self.colours, self.in_dollars = by_day, colours, in_dollars
        self.refresh(layout=True)

    @property
    def grain(self) -> str:
        """How many days a bar is at the chart's width: day, week, month or year."""
        if self.since is None or self.until is None:
            return "day"
        return grain_for(self.since, self.until, max(20, self.size.width) - self.AXIS)

    def render(self) -> Text:
        width = max(20, self.size.width)
        height = max(3, self.size.height - 1)
        if self.since is None or self.until is None:
            return Text("")
        axis_width = self.AXIS
        grain = self.grain
        starts = bucket_starts(self.since, self.until, grain)
        by_bar = by_bucket(self.by_day, grain)
        column = max(1, min(12, (width - axis_width) // len(starts)))
        bar = max(1, column - 1) if column > 1 else 1
        totals = [sum(_value(f, self.in_dollars) for f in by_bar.get(d, {}).values())
                  for d in starts]
        top = max(totals) if totals and max(totals) > 0 else 1.0
        units = height * 8   # eighths of a row
        stacks = []
        for start in starts:
            figures = by_bar.get(start, {})
            parts = sorted(figures.items(), key=lambda kv: -_value(kv[1], self.in_dollars))
            levels, running = [], 0.0
            for model, figure in parts:
                running += _value(figure, self.in_dollars)
                levels.append((round(running / top * units), self.colours.get(model, OTHER)))
            stacks.append(levels)
        out = Text(no_wrap=True, end="")
        for row in range(height, 0, -1):
            if row == height:
                label = _amount(top, self.in_dollars)
            elif row == (height + 1) // 2:
                label = _amount(top / 2, self.in_dollars)
            else:
                label = ""
            out.append(f"{label:>{axis_width - 1}} ", FAINT)
            floor = (row - 1) * 8
            for levels in stacks:
                char, style = " ", ""
                for level, colour in levels:   # the segment that reaches into this row
                    if level > floor:
                        eighths = min(8, level - floor)
                        char, style = BLOCKS[eighths], colour
                        break
                out.append(char * bar, style)
                out.append(" " * (column - bar))
            out.append("\n")
        out.append(f" {'per ' + grain:<{axis_width - 1}}", FAINT)
        out.append(_axis(starts, grain, column), DIM)
        return out


def _axis(starts: list[date], grain: str, column: int) -> str:
    """The labels under the bars: where a week, month or year begins (and, a bar a day,
    the last day), each only where it does not run into another."""
    axis = [" "] * (column * len(starts))
    last = len(starts) - 1 if grain == "day" else -1
    wanted = [i for i, start in enumerate(starts)
              if _marks(start, grain, i) or (grain == "day" and column >= 6)]
    if last >= 0:
        wanted.append(last)
    for index in sorted(set(wanted), key=lambda i: (i != last, _rank(starts[i], grain), i)):
        label = _label(starts[index], grain)
        start = index * column
        if index == last:
            start = max(0, len(axis) - len(label))
        if start + len(label) > len(axis):
            continue
        if all(c == " " for c in axis[max(0, start - 1):start + len(label) + 1]):
            axis[start:start + len(label)] = list(label)
    return "".join(axis)


def _marks(start: date, grain: str, index: int) -> bool:
    """Whether a bar begins a period worth a label: every seventh day, the first week of a
    month, every month (quarters and years win where they do not all fit), every year."""
    if grain == "day":
        return index % 7 == 0
    if grain == "week":
        return start.day <= 7
    return True


def _rank(start: date, grain: str) -> int:
    """Which labels are placed first where not all fit: years, then quarters, then the rest."""
    if grain in ("day", "year"):
        return 0
    if start.month == 1 and start.day <= 7:
        return 0
    return 1 if start.month in (4, 7, 10) and start.day <= 7 else 2


def _label(start: date, grain: str) -> str:
    """`03-14` under a day; under a week or a month, the month's name, or the year's
    number where it begins."""
    if grain == "day":
        return start.strftime("%m-%d")
    if grain == "year" or start.month == 1:
        return str(start.year)
    return start.strftime("%b")


class Legend(Static):
    """The models' colours and costs, wrapped between items (never inside one)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.items: list[Text] = []
        self.note: Text | None = None

    def set_items(self, items: list[Text], note: Text | None = None) -> None:
        self.items, self.note = items, note
        self.refresh(layout=True)

    def render(self) -> Text:
        width = max(10, self.size.width or 80)
        out, line = Text(end=""), 0
        for item in self.items:
            if line and line + 2 + item.cell_len > width:
                out.append("\n")
                line = 0
            if line:
                out.append("  ")
                line += 2
            out.append_text(item)
            line += item.cell_len
        if self.note is not None:
            out.append("\n")
            out.append_text(self.note)
        return out


class RankList(RowList):
    """One line a row: a name, a bar and an amount (projects, sessions)."""

    ROW_HEIGHT = 1
    BINDINGS = [Binding("enter", "select", "Open", show=True)]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[tuple[str, Figure, int | None]] = []
        self.notes: list[str] = []   # said after a row's name, dim ("+2 copies")
        self.in_dollars = True
        self.openable = False   # rows are sessions that enter opens

    def set_rows(self, rows: list[tuple[str, Figure, int | None]], in_dollars: bool,
                 notes: list[str] | None = None) -> None:
        self.rows, self.in_dollars = rows, in_dollars
        self.notes = notes or [""] * len(rows)
        self.set_row_count(len(rows), 0, notify=False)

    def render_row(self, index: int, width: int) -> list[Text]:
        name, figure, _sid = self.rows[index]
        note = self.notes[index] if index < len(self.notes) else ""
        top = max((_value(f, self.in_dollars) for _n, f, _s in self.rows), default=1.0) or 1.0
        amount = fmt_cost(figure) if self.in_dollars else fmt_tokens(figure.total_tokens) + " tok"
        bar_room = max(4, min(12, width // 5))
        name_room = max(6, width - bar_room - len(amount) - 5)
        line = Text(" ", end="")
        if note and name_room <= len(note) + 12:
            note = note.split()[0]   # "+2 copies" -> "+2" where the room is short
        if note and name_room > len(note) + 6:
            line.append_text(safe_line(name, name_room - len(note) - 1,
                                       style=self._name_style(_sid)))
            line.append(" " + note, FAINT)
        else:
            line.append_text(safe_line(name, name_room, style=self._name_style(_sid)))
        line.pad_right(max(0, 1 + name_room - line.cell_len + 1))
        filled = _value(figure, self.in_dollars) / top * bar_room
        whole = int(filled)
        line.append("█" * whole + (BLOCKS[round((filled - whole) * 8)] if whole < bar_room else ""),
                    "#5fafff")
        line.pad_right(max(1, width - 1 - len(amount) - line.cell_len))
        line.append(amount, "#d7af5f" if figure.incomplete else "")
        return [line]

    def _name_style(self, session_id: int | None) -> str:
        """Sessions: bold when enter opens it, dim italic when not listed (archived)."""
        if not self.openable:
            return ""
        return "bold" if session_id is not None else f"italic {DIM}"

    def action_select(self) -> None:
        if self.row_count:
            self.post_message(self.Selected(self, self.cursor))


class UsageScreen(FrozenBackdrop[UsageChoice | None]):
    """Cost over a span by model, by project, the most expensive sessions."""

    # CSS (not DEFAULT_CSS): the app's own `.dialog` rules outrank any widget's defaults
    CSS = """
    .dialog.usage { width: 100%; max-width: 120; height: 100%; max-height: 40; padding: 0 1; }
    #usage-title { margin-bottom: 0; }
    #usage-chart { height: 1fr; min-height: 6; max-height: 14; }
    #usage-legend { height: auto; max-height: 3; padding: 0 1; }
    #usage-lists { height: 1fr; min-height: 5; }
    #usage-projects-box, #usage-sessions-box { width: 1fr; height: 1fr; }
    .usage-heading { height: 1; color: $text-muted; }
    #usage-projects, #usage-sessions { height: 1fr; border: round $panel-lighten-2; }
    #usage-projects:focus, #usage-sessions:focus { border: round $accent; }
    #usage-hint { height: auto; }
    """

    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding("tab", "next_list", "Projects/sessions", show=False),
        *(Binding(key, f"span('{kind}')", f"Last {kind}" if kind != "all" else "All time",
                  show=False) for key, kind in SPAN_KEYS),
        Binding("c", "custom_span", "Dates…", show=False),
    ]

    def __init__(self, store, today: date, sessions: list, *, timezone: str | None = None,
                 span: UsageSpan | None = None) -> None:
        super().__init__()
        self.store = store
        self.today = today
        self.session_ids = {s.uid: s.id for s in sessions}
        self.timezone = timezone
        self.span = span or UsageSpan.last("month", today)
        self._fetching = True

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog usage", id="usage-dialog"):
            yield Static(Text("Usage · loading…", "bold"), id="usage-title", classes="dialog-title")
            yield CostChart(id="usage-chart")
            yield Legend(id="usage-legend")
            with Horizontal(id="usage-lists"):
                with Vertical(id="usage-projects-box"):
                    yield Static(Text("By project", "bold"), classes="usage-heading")
                    yield RankList(id="usage-projects")
                with Vertical(id="usage-sessions-box"):
                    yield Static(Text("Most expensive sessions", "bold"), classes="usage-heading")
                    yield RankList(id="usage-sessions")
            yield Static(Text(HINT, FAINT), id="usage-hint")

    def on_mount(self) -> None:
        self.query_one("#usage-sessions", RankList).focus()
        self._load(self.span)

    @property
    def busy(self) -> bool:
        return self._fetching

    @work(thread=True, exclusive=True, group="usage")
    def _load(self, span: UsageSpan) -> None:
        store, zone = self.store, self.timezone
        try:
            if store.usage.prices_stale():
                store.usage.reprice()
            by_day = store.usage.by_day_and_model(span.since, span.until, timezone=zone)
            window = store.usage.report("model", since=span.since, until=span.until, timezone=zone)
            projects = store.usage.report("project", since=span.since, until=span.until,
                                          timezone=zone)
            sessions = store.usage.report("session", since=span.since, until=span.until,
                                          timezone=zone, copies_under_original=True)
            everything = window if span.kind == "all" else store.usage.report("model", timezone=zone)
        except Exception as error:   # a damaged store or prices file: said, not raised
            self.app.call_from_thread(self._failed, str(error))
            return
        self.app.call_from_thread(self._show, span, by_day, window, projects, sessions, everything)

    def _failed(self, message: str) -> None:
        self._fetching = False
        self.query_one("#usage-title", Static).update(
            safe_line(f"Usage · cannot be read: {message}", 200, style="bold #ff5f5f"))

    def _show(self, span: UsageSpan, by_day, window, projects, sessions, everything) -> None:
        if span != self.span:
            return   # a span chosen since: its figures are on their way
        self._fetching = False
        in_dollars = everything.totals.cost_usd > 0 or not everything.totals.responses
        models = [key for key, _l, _f in window.rows]
        colours = {model: PALETTE[i] for i, model in enumerate(models[:len(PALETTE)])}
        first = min((date.fromisoformat(day) for day in by_day), default=None)
        since = span.since or first or span.until
        self.query_one(CostChart).set_data(since, span.until, by_day, colours, in_dollars)
        total = window.totals
        title = Text(f"Usage · {span.title(first)}  ", "bold")
        title.append(fmt_cost(total) if in_dollars else fmt_tokens(total.total_tokens) + " tokens",
                     "#d7af5f" if total.incomplete else "bold")
        if span.kind != "all":
            title.append(f"   all time {fmt_cost(everything.totals)}", DIM)
        self.query_one("#usage-title", Static).update(title)
        items = []
        for key, _label, figure in window.rows[:len(PALETTE)]:
            item = Text("■ ", colours.get(key, OTHER), end="")
            item.append_text(safe_line(_short(key), 24, style=DIM))
            item.append(f" {fmt_cost(figure) if in_dollars else fmt_tokens(figure.total_tokens)}", FAINT)
            items.append(item)
        note = None
        if total.unpriced:
            note = safe_line("no price for " + ", ".join(sorted(total.unpriced)) +
                             " (tokens counted)", 200, style="#d7af5f")
        elif not window.rows:
            note = Text("nothing was used in this span", FAINT)
        self.query_one(Legend).set_items(items, note)
        project_rows = [(key or "(no folder)", figure, None) for key, _l, figure in projects.rows]
        self.query_one("#usage-projects", RankList).set_rows(project_rows, in_dollars)
        session_rows = [(label or "(unnamed)", figure, self.session_ids.get(key))
                        for key, label, figure in sessions.rows]
        notes = [_copies(sessions.copies.get(key, 0)) for key, _l, _f in sessions.rows]
        listing = self.query_one("#usage-sessions", RankList)
        listing.openable = True
        listing.set_rows(session_rows, in_dollars, notes)

    def action_span(self, kind: str) -> None:
        self._choose(UsageSpan.last(kind, self.today))

    def action_custom_span(self) -> None:
        from .text_prompt import TextPrompt

        current = self.span
        value = (f"{current.since.isoformat()} {current.until.isoformat()}"
                 if current.since is not None else "")

        def done(text: str | None) -> None:
            if text is None or not text.strip():
                return
            try:
                span = UsageSpan.parse(text, self.today)
            except ValueError as error:
                self.app.say(str(error), title="Usage", severity="warning")
                return
            self._choose(span)

        self.app.push_screen(TextPrompt(Text("Usage between two dates", "bold"), value=value,
                                        placeholder="YYYY-MM-DD YYYY-MM-DD (one date: to today)",
                                        hint=Text("enter shows · escape cancels", FAINT),
                                        id="usage-dates"), done)

    def _choose(self, span: UsageSpan) -> None:
        self.span = span
        self._fetching = True
        title = Text(f"Usage · {span.title()} · loading…", "bold")
        self.query_one("#usage-title", Static).update(title)
        self._load(span)

    @on(RankList.Selected)
    def _selected(self, event: RankList.Selected) -> None:
        event.stop()
        lists = self.query_one("#usage-sessions", RankList)
        if event.control is not lists:
            return
        _name, _figure, session_id = lists.rows[event.index]
        if session_id is not None:
            self.dismiss(UsageChoice(session_id))

    def action_next_list(self) -> None:
        projects = self.query_one("#usage-projects", RankList)
        sessions = self.query_one("#usage-sessions", RankList)
        (projects if sessions.has_focus else sessions).focus()

    def action_close(self) -> None:
        self.dismiss(None)


def _copies(count: int) -> str:
    return "" if not count else "+1 copy" if count == 1 else f"+{count} copies"


def _short(model: str) -> str:
    head, _, tail = model.rpartition("-")
    return head if len(tail) == 8 and tail.isdigit() and head else model
