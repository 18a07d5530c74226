"""The sessions pane: every external session, newest activity first, two lines a row.

Sub-agents and forks are listed under the session they came from (core.history.lineage), folded
until opened (space, or right/left); a sub-agent's messages count in its parent's row.

The line under the pane names the highlighted session's project (its cwd) and uid, the
uid `y` copies and `arbor export`/`arbor resume` take. `p` lists only the sessions of the
highlighted session's project (again: all). Sessions of the same name ("Start", "/mode")
show their project after the name, so the project and the age tell them apart."""

from __future__ import annotations

import os
from collections import Counter
from datetime import datetime

from rich.text import Text
from textual.binding import Binding

from core.history.lineage import FamilyRow, ancestors, family_rows
from core.store import SessionSummary

from tui.render.formatting import (
    DIM, FAINT, SOURCE_STYLES, age, short_count, usage_amount, usage_style)
from tui.render.cut_text import cut_end, cut_middle
from tui.render.safe_text import safe_line
from .row_list import RowList

CHILD_STYLE = "#af87d7"
_CHILD_GLYPHS = {"subagent": "↳", "subgraph": "↳", "fork": "↱"}
_CHILD_NAMES = {"subagent": "sub-agent", "subgraph": "sub-graph", "fork": "fork"}


def in_previous_order(rows: list[FamilyRow], previous: list[FamilyRow]) -> list[FamilyRow]:
    """`rows` with each family (a top row and the rows under it) where it was in `previous`;
    a family not listed before comes right after the one it follows in `rows`."""
    where = {row.session.id: index for index, row in enumerate(previous) if not row.depth}
    families: list[list[FamilyRow]] = []
    for row in rows:
        if not row.depth or not families:
            families.append([])
        families[-1].append(row)
    keys: list[tuple[float, int]] = []
    after = -1.0
    for position, family in enumerate(families):
        index = where.get(family[0].session.id)
        if index is not None:
            after = float(index)
        keys.append((after if index is not None else after + 0.5, position))
    order = sorted(range(len(families)), key=lambda i: keys[i])
    return [row for i in order for row in families[i]]


def project_name(cwd: str) -> str:
    """A project's short name: the last part of its folder."""
    return os.path.basename(cwd.rstrip("/")) or cwd


def tilde(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home):]
    return path


def in_project(sessions: list[SessionSummary], cwd: str) -> list[SessionSummary]:
    """The sessions run in `cwd`, and the sub-agents and forks under them wherever they ran."""
    parent_of = {s.id: s.parent_id for s in sessions}
    cwd_of = {s.id: s.cwd for s in sessions}

    def keeps(session_id: int | None) -> bool:
        seen: set[int] = set()
        while session_id is not None and session_id in cwd_of and session_id not in seen:
            if cwd_of[session_id] == cwd:
                return True
            seen.add(session_id)
            session_id = parent_of.get(session_id)
        return False

    return [s for s in sessions if keeps(s.id)]


LOG_GONE_STYLE = "#d7af5f"


class SessionsPane(RowList):
    """Rows: name and age; source, branch count and message count, aligned in columns."""

    ROW_HEIGHT = 2
    BORDER_TITLE = "Sessions"

    BINDINGS = [
        Binding("tab", "app.focus_next_pane", "Pane", tooltip="Sessions → branches → messages"),
        Binding("z", "app.zoom", "Zoom", tooltip="This pane alone, full width (z again: every pane)"),
        Binding("enter", "app.open_session", "Open", tooltip="Show this session's branches"),
        Binding("space", "toggle_children", "Sub-agents", show=False,
                tooltip="List (or fold) the sub-agents and forks under this session"),
        Binding("right", "open_children", "Unfold", show=False),
        Binding("left", "close_children", "Fold", show=False),
        Binding("y", "copy_uid", "Copy uid", show=False,
                tooltip="Copy the highlighted session's uid (arbor export/resume take it)"),
        Binding("p", "project_filter", "Project", show=False,
                tooltip="List only the sessions of the highlighted session's project, or all"),
        Binding("a", "app.archive", "Archive", tooltip="Archive the highlighted session"),
        Binding("R", "app.rename", "Rename", tooltip="Rename the highlighted session"),
        Binding("b", "app.branch", "Branch", show=False),
        Binding("r", "app.rollback", "Roll back", show=False),
        Binding("l", "app.label", "Label", show=False),
        Binding("c", "app.compact", "Compact", show=False),
    ]

    DRAW_WAIT = 1.0   # s (when_drawn)

    def __init__(self, now: datetime, **kwargs) -> None:
        super().__init__(**kwargs)
        self.all_sessions: list[SessionSummary] = []
        self.rows: list[FamilyRow] = []
        self.opened: set[int] = set()     # sessions whose sub-agents and forks are listed
        self.now = now
        self.figures: dict = {}   # session id -> core.usage.tokens.Figure (set by the app)
        self.log_gone: set[str] = set()   # uids of sessions whose log file is gone (the app)
        self.project: str | None = None    # only this cwd's sessions are listed (p)
        self._name_counts: Counter = Counter()
        self._after_draw = None   # when_drawn's callback, until a frame draws a row
        # called once, in the first frame that draws a row, as it draws it (not after it,
        # as `when_drawn`): for what only needs to know, at once (the app tells the first
        # import's process, which yields to it until then)
        self.on_rows_drawn = None

    def when_drawn(self, callback) -> None:
        """`callback` once a frame has drawn rows of this pane (after that frame), or after
        DRAW_WAIT s if none has (the pane folded away on a narrow screen): what the first
        rows of a new store show is read once they are on screen, not before."""
        self._after_draw = callback
        self.set_timer(self.DRAW_WAIT, lambda: self._drawn(callback))

    @property
    def awaits_drawing(self) -> bool:
        """Whether a `when_drawn` callback waits for the rows to be drawn."""
        return self._after_draw is not None

    def _drawn(self, callback) -> None:
        if self._after_draw is callback:
            self._after_draw = None
            callback()

    def render_line(self, y: int):
        strip = super().render_line(y)
        told = self.on_rows_drawn
        if told is not None and self.row_count:
            self.on_rows_drawn = None
            told()
        callback = self._after_draw
        if callback is not None and self.row_count:
            self._after_draw = None
            self.call_later(callback)
        return strip

    @property
    def sessions(self) -> list[SessionSummary]:
        """The sessions in the order they are listed (children only under open parents)."""
        return [row.session for row in self.rows]

    def set_sessions(self, sessions: list[SessionSummary], keep_id: int | None = None,
                     *, notify: bool = True, keep_order: bool = False) -> None:
        """Show these sessions, the cursor on `keep_id`. With `keep_order`, the families
        listed before stay where they were (after the user's own change to one of them,
        which makes it the newest: the list must not move under the cursor)."""
        self.all_sessions = sessions
        if keep_id is not None:
            self.opened.update(ancestors(sessions, keep_id))   # a child stays in sight
        listed = in_project(sessions, self.project) if self.project is not None else sessions
        rows = family_rows(listed, self.opened)
        if keep_order and self.rows:
            rows = in_previous_order(rows, self.rows)
        cursor = None
        if keep_id is not None:
            cursor = next((i for i, r in enumerate(rows) if r.session.id == keep_id), None)
            if cursor is None:  # gone (archived): stay at the same place in the list
                cursor = min(self.cursor, max(0, len(rows) - 1))
        # Rows that land above the highlighted one (an import, an agent's new session) push
        # it down the list: the view moves with it, so that it stays on its line on screen.
        shift = (cursor - self.cursor) * self.ROW_HEIGHT \
            if cursor is not None and self.rows and keep_id is not None and \
            self.highlighted is not None and self.highlighted.id == keep_id else 0
        self.rows = rows
        self._name_counts = Counter(row.session.name for row in rows if not row.depth)
        top = self.scroll_offset.y
        self.set_row_count(len(rows), cursor if cursor is not None else 0, notify=notify)
        if shift > 0 and self._cursor * self.ROW_HEIGHT - shift >= top:   # (it was in view)
            self.scroll_to(y=top + shift, animate=False, immediate=True)
        title = Text("Sessions", end="")
        if self.project is not None:
            title.append(" · ")
            title.append_text(safe_line(project_name(self.project), 20, style="bold #d7af5f"))
        if rows:
            # sessions as the status line counts them: a sub-agent or fork listed under its
            # session is part of it (15 rows with 3 sub-agents open are 12 sessions)
            title.append(f" [{sum(1 for row in rows if not row.depth):,}]")
        self.border_title = title
        self._show_detail()

    def reveal(self, session_id: int) -> int | None:
        """Open the sessions above this one so that it is listed; its row index."""
        wanted = set(ancestors(self.all_sessions, session_id))
        if not wanted <= self.opened:
            self.opened |= wanted
            keep = self.highlighted.id if self.highlighted else None
            self.set_sessions(self.all_sessions, keep, notify=False)
        return next((i for i, r in enumerate(self.rows) if r.session.id == session_id), None)

    def move_cursor(self, index: int, *, notify: bool = True) -> None:
        super().move_cursor(index, notify=notify)
        self._show_detail()

    def _show_detail(self) -> None:
        """The line under the pane: the highlighted session's project and uid."""
        session = self.highlighted
        if session is None:
            self.border_subtitle = None
            return
        width = max(12, self.size.width - 6) if self.size.width else 40
        line = Text(end="")
        uid = safe_line(session.uid, style="#87afd7")
        if session.cwd:
            path = safe_line(tilde(session.cwd), style=DIM)
            if path.cell_len + 3 + uid.cell_len > width:   # the uid's start, the path's end
                uid = cut_end(uid, 9)
                path = cut_middle(path, max(6, width - 3 - uid.cell_len), DIM)
            line.append_text(path)
            line.append(" · ", FAINT)
        line.append_text(cut_end(uid, max(8, width - line.cell_len)))
        self.border_subtitle = line

    def on_resize(self, event) -> None:
        super().on_resize(event)
        self._show_detail()

    def action_copy_uid(self) -> None:
        session = self.highlighted
        if session is None:
            return
        self.app.copy_to_clipboard(session.uid)
        self.app.say(f"{session.uid} — arbor export and arbor resume take it.",
                     title="Copied the session's uid")

    def action_project_filter(self) -> None:
        """List only the highlighted session's project (its cwd), or everything again."""
        session = self.highlighted
        if self.project is not None:
            self.project = None
        elif session is None or not session.cwd:
            self.app.say("This session has no project folder recorded.", severity="warning")
            return
        else:
            self.project = session.cwd
        keep = session.id if session is not None else None
        self.set_sessions(self.all_sessions, keep)

    @property
    def highlighted(self) -> SessionSummary | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].session
        return None

    def _set_open(self, open_: bool | None) -> None:
        row = self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None
        if row is None:
            return
        if not row.children:
            if open_ is False and row.depth:      # left on a child: back to its parent
                parent = row.session.parent_id
                index = next((i for i, r in enumerate(self.rows) if r.session.id == parent), None)
                if index is not None:
                    self.move_cursor(index)
            elif open_ is not False:
                self.app.notify("No sub-agents or forks are listed under this session.",
                                markup=False)
            return
        want = (not row.is_open) if open_ is None else open_
        if want == row.is_open:
            return
        if want:
            self.opened.add(row.session.id)
        else:
            self.opened.discard(row.session.id)
        self.set_sessions(self.all_sessions, row.session.id, notify=False)

    def action_toggle_children(self) -> None:
        self._set_open(None)

    def action_open_children(self) -> None:
        self._set_open(True)

    def action_close_children(self) -> None:
        self._set_open(False)

    def render_row(self, index: int, width: int) -> list[Text]:
        row = self.rows[index]
        session = row.session
        when = age(row.updated_at, self.now)
        indent = "  " * min(row.depth, 6)
        top = Text(" " + indent, end="")
        if row.depth:
            top.append(_CHILD_GLYPHS.get(session.kind, "↳") + " ", CHILD_STYLE)
        if row.children:
            top.append("▾ " if row.is_open else "▸ ", CHILD_STYLE)
        # what it cost (tokens where none of it has a price), beside its age
        figure = self.figures.get(session.id) if self.figures else None
        amount = usage_amount(figure) if figure is not None and figure.responses else ""
        if amount and width - len(when) - len(amount) - top.cell_len < 12:
            amount = ""
        name_width = max(4, width - len(when) - 2 - top.cell_len - (len(amount) + 1 if amount else 0))
        name = session.name or "(unnamed)"
        where = project_name(session.cwd) if session.cwd and not row.depth and \
            self._name_counts[session.name] > 1 and self.project is None else ""
        style = "bold" if session.is_active else f"italic {DIM}"
        if where and name_width >= 16:   # the same name as another: say where it ran
            room = max(6, min(len(where) + 3, name_width // 2))
            top.append_text(safe_line(name, name_width - room, style=style))
            top.append(" · ", FAINT)
            top.append_text(safe_line(where, room - 3, style=DIM))
        else:
            top.append_text(safe_line(name, name_width, style=style))
        top.pad_right(max(0, width - 1 - len(when) - top.cell_len - (len(amount) + 1 if amount else 0)))
        if amount:
            top.append(amount, usage_style(figure))
            top.append(" ")
        top.append(when, DIM)
        top.append(" ")
        numbers = Text(end="")
        branch_style = "bold" if session.branch_count > 1 else DIM
        if width >= 32:
            numbers.append(f"{session.branch_count:>3}", branch_style)
            numbers.append(" br ", FAINT)
            numbers.append(f"{row.messages:>7,}", DIM)
            numbers.append(" msg ", FAINT)
        else:  # a narrow terminal: short counts, so the source still fits; the units stay
            # whole words ("3.0km" read as kilometres, "18m" as minutes)
            numbers.append(f"{session.branch_count:>2}", branch_style)
            numbers.append(" br ", FAINT)
            numbers.append(f"{short_count(row.messages):>4}", DIM)
            numbers.append(" msg ", FAINT)
        bottom = Text(" " + indent, end="")
        source = session.source or "?"
        room = width - numbers.cell_len - 2 - len(indent)
        if row.depth and room >= 9:
            # what it is, in place of the source its parent shows already
            bottom.append_text(safe_line(_CHILD_NAMES.get(session.kind, session.kind), room,
                                         style=CHILD_STYLE))
        elif not session.is_active and room >= 20:
            bottom.append_text(safe_line(source, room - 9, style=SOURCE_STYLES.get(source, DIM)))
            bottom.append(" archived", f"italic {FAINT}")
        elif session.uid in self.log_gone and room >= 11:
            # the agent deleted its log (Claude Code does after 30 days): arbor's copy stays
            note = "log deleted, kept in arbor"
            if room >= len(source) + len(note) + 1:
                bottom.append_text(safe_line(source, len(source), style=SOURCE_STYLES.get(source, DIM)))
                bottom.append(" " + note, f"italic {LOG_GONE_STYLE}")
            else:       # narrow: what matters more than the source, which the name implies
                bottom.append_text(safe_line(note if room >= len(note) else "log deleted", room,
                                             style=f"italic {LOG_GONE_STYLE}"))
        elif room >= 4:
            bottom.append_text(safe_line(source, min(14, room), style=SOURCE_STYLES.get(source, DIM)))
        more = f" +{row.children}"
        if row.children and not row.is_open and \
                width - numbers.cell_len - bottom.cell_len >= len(more):
            bottom.append(more, CHILD_STYLE)      # sub-agents and forks folded under it
        gap = width - bottom.cell_len - numbers.cell_len
        if gap > 0:
            bottom.pad_right(gap)
        bottom.append_text(numbers)
        return [top, bottom]
