"""The sessions pane: every external session, newest activity first, two lines a row."""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.binding import Binding

from core.store import SessionSummary

from ..formatting import DIM, FAINT, SOURCE_STYLES, age, short_count
from ..safe_text import safe_line
from .row_list import RowList


class SessionsPane(RowList):
    """Rows: name and age; source, branch count and message count, aligned in columns."""

    ROW_HEIGHT = 2
    BORDER_TITLE = "Sessions"

    BINDINGS = [
        Binding("tab", "app.focus_next_pane", "Pane", tooltip="Sessions → branches → messages"),
        Binding("enter", "app.open_session", "Open", tooltip="Show this session's branches"),
        Binding("a", "app.archive", "Archive", tooltip="Archive the highlighted session"),
        Binding("R", "app.rename", "Rename", tooltip="Rename the highlighted session"),
        Binding("b", "app.branch", "Branch", show=False),
        Binding("r", "app.rollback", "Roll back", show=False),
        Binding("l", "app.label", "Label", show=False),
        Binding("c", "app.compact", "Compact", show=False),
    ]

    def __init__(self, now: datetime, **kwargs) -> None:
        super().__init__(**kwargs)
        self.sessions: list[SessionSummary] = []
        self.now = now

    def set_sessions(self, sessions: list[SessionSummary], keep_id: int | None = None,
                     *, notify: bool = True) -> None:
        cursor = None
        if keep_id is not None:
            cursor = next((i for i, s in enumerate(sessions) if s.id == keep_id), None)
            if cursor is None:  # gone (archived): stay at the same place in the list
                cursor = min(self.cursor, max(0, len(sessions) - 1))
        self.sessions = sessions
        self.set_row_count(len(sessions), cursor if cursor is not None else 0, notify=notify)
        self.border_title = f"Sessions [{len(sessions):,}]" if sessions else "Sessions"

    @property
    def highlighted(self) -> SessionSummary | None:
        if 0 <= self.cursor < len(self.sessions):
            return self.sessions[self.cursor]
        return None

    def render_row(self, index: int, width: int) -> list[Text]:
        session = self.sessions[index]
        when = age(session.updated_at, self.now)
        name_width = max(4, width - len(when) - 3)
        top = Text(" ", end="")
        name = session.name or "(unnamed)"
        top.append_text(safe_line(name, name_width, style="bold" if session.is_active else f"italic {DIM}"))
        top.pad_right(max(0, width - 1 - len(when) - top.cell_len))
        top.append(when, DIM)
        top.append(" ")
        numbers = Text(end="")
        branch_style = "bold" if session.branch_count > 1 else DIM
        if width >= 32:
            numbers.append(f"{session.branch_count:>3}", branch_style)
            numbers.append(" br ", FAINT)
            numbers.append(f"{session.message_count:>7,}", DIM)
            numbers.append(" msg ", FAINT)
        else:  # a narrow terminal: short counts, so the source still fits
            numbers.append(f"{session.branch_count:>2}", branch_style)
            numbers.append("br ", FAINT)
            numbers.append(f"{short_count(session.message_count):>4}", DIM)
            numbers.append("m ", FAINT)
        bottom = Text(" ", end="")
        source = session.source or "?"
        room = width - numbers.cell_len - 2
        if not session.is_active and room >= 20:
            bottom.append_text(safe_line(source, room - 9, style=SOURCE_STYLES.get(source, DIM)))
            bottom.append(" archived", f"italic {FAINT}")
        elif room >= 4:
            bottom.append_text(safe_line(source, min(14, room), style=SOURCE_STYLES.get(source, DIM)))
        gap = width - bottom.cell_len - numbers.cell_len
        if gap > 0:
            bottom.pad_right(gap)
        bottom.append_text(numbers)
        return [top, bottom]
