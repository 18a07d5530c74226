"""The branches pane: the internal-session tree of one external session.

One row per branch (never per message), each under the branch it forked from, drawn with
tree guides. Deep trees keep their indentation bounded: past MAX_INDENT levels a branch is
drawn no further right than its parent, with its depth written where the outer guides
were ("┄9"), so that a long run of rewinds, each forked from the one before, goes
straight down instead of off the pane.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual.binding import Binding

from core.model import values
from core.seed.models import Checkpoint, InternalSession

from tui.render.formatting import (
    CHECKPOINT_STYLE, CURRENT_STYLE, DIM, FAINT, LABEL_STYLE, branch_title, short_id, usage_amount,
    usage_style)
from tui.render.safe_text import safe_line
from .row_list import RowList

MAX_INDENT = 4
DEPTH_MARK = 4   # cells of "┄12 ", in place of the two outermost guides of a deep row


class BranchRow:
    """One branch's row: the branch, where it sits in the tree, its label and checkpoints.
    (A plain class: a dataclass is made by compiling its methods as it is defined, which
    cost the app's start more than the rest of this module.)"""

    __slots__ = ("branch", "depth", "guide", "guide_next", "label", "checkpoints",
                 "fork_checkpoint", "continued")

    def __init__(self, branch: InternalSession, depth: int, guide: str, guide_next: str,
                 label: str | None, checkpoints: list[Checkpoint], fork_checkpoint: str | None,
                 continued: tuple[str, ...] = ()) -> None:
        self.branch = branch
        self.depth = depth
        self.guide = guide              # tree guides before the marker, first line
        self.guide_next = guide_next    # guides on the second line
        self.label = label
        self.checkpoints = checkpoints
        self.fork_checkpoint = fork_checkpoint
        self.continued = continued      # the agents it was handed to (core.handoff)

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None   # (mutable: `continued` is set after it is made)

    def __repr__(self) -> str:
        return "BranchRow(" + ", ".join(f"{name}={value!r}" for name, value in
                                        zip(self.__slots__, self._fields())) + ")"


def mark_continued(store: Any, session_id: int, rows: list[BranchRow]) -> None:
    """Say on each branch handed to another agent where it goes on ("continued in Codex")."""
    from core.handoff import continued_in

    try:
        found = continued_in(store, session_id)
    except store.errors:
        return      # (a note: the pane shows without it)
    for row in rows:
        here = found.get(row.branch.id)
        if here:
            row.continued = tuple(dict.fromkeys(c.agent for c in here))


def visible_branches(branches: list[InternalSession], *, show_hidden: bool) -> list[InternalSession]:
    """The branches to list: hidden ones only when asked; a branch under a hidden one is
    listed under the nearest branch above it that is shown."""
    if show_hidden:
        return branches
    by_id = {b.id: b for b in branches}
    out = []
    for branch in branches:
        if branch.is_hidden:
            continue
        parent, seen = branch.parent_session_id, set()
        while parent in by_id and by_id[parent].is_hidden and parent not in seen:
            seen.add(parent)
            parent = by_id[parent].parent_session_id
        if parent != branch.parent_session_id:
            branch = values.replace(branch, parent_session_id=parent)
        out.append(branch)
    return out


def suggest_branch_name(source: InternalSession, branches: list[InternalSession]) -> str:
    """A name for a new branch off `source`: its name and "alt N", N free in the session."""
    base = source.name or ("main" if source.parent_session_id is None else branch_title(source))
    taken = {b.name for b in branches}
    number = 1 + sum(1 for b in branches if b.parent_session_id == source.id)
    while f"{base} alt {number}" in taken:
        number += 1
    return f"{base} alt {number}"


def flatten(branches: list[InternalSession], labels: dict[int, str],
            checkpoints: list[Checkpoint]) -> list[BranchRow]:
    """Depth-first rows, oldest sibling first, without recursion (trees may be deep)."""
    by_id = {b.id: b for b in branches}
    children: dict[int | None, list[InternalSession]] = {}
    for branch in branches:
        parent = branch.parent_session_id if branch.parent_session_id in by_id else None
        children.setdefault(parent, []).append(branch)
    for siblings in children.values():
        siblings.sort(key=lambda b: (b.created_at is None, b.created_at, b.id))
    per_branch: dict[int, list[Checkpoint]] = {}
    names: dict[int, str] = {}
    for checkpoint in checkpoints:
        per_branch.setdefault(checkpoint.internal_session_id, []).append(checkpoint)
        names[checkpoint.id] = checkpoint.checkpoint_name or f"checkpoint {checkpoint.id}"
    rows: list[BranchRow] = []
    # stack of (branch, depth, columns, is_last, through): `columns` are the guide columns
    # before its connector, one "has more below" flag each (at most MAX_INDENT of them);
    # `through`: an ancestor drawn in its connector's column has more siblings below
    stack: list[tuple[InternalSession, int, tuple[bool, ...], bool, bool]] = []
    roots = children.get(None, [])
    for position, root in reversed(list(enumerate(roots))):
        stack.append((root, 0, (), position == len(roots) - 1, False))
    seen: set[int] = set()
    while stack:
        branch, depth, columns, is_last, through = stack.pop()
        if branch.id in seen:
            continue
        seen.add(branch.id)
        kids = children.get(branch.id, [])
        below = "".join("│ " if goes_on else "  " for goes_on in columns)
        more = not is_last or through
        if not depth:
            guide, guide_next = "", "│ " if kids else "  "
        else:
            guide = below + ("├─" if more else "└─")
            if depth > MAX_INDENT + 1:   # deep: its depth where the outer guides were
                guide = f"┄{depth}".ljust(DEPTH_MARK) + guide[DEPTH_MARK:]
            if len(columns) == MAX_INDENT:   # its children go below its connector
                guide_next = below + ("│ " if kids or more else "  ") + "  "
            else:
                guide_next = below + ("│ " if more else "  ") + ("│ " if kids else "  ")
        rows.append(BranchRow(branch, depth, guide, guide_next, labels.get(branch.id),
                              sorted(per_branch.get(branch.id, []), key=lambda c: c.id),
                              names.get(branch.branch_point_checkpoint_id)
                              if branch.branch_point_checkpoint_id else None))
        if not depth:
            child_columns, child_through = (), False
        elif len(columns) < MAX_INDENT:
            child_columns, child_through = columns + (more,), False
        else:                       # no further right: they share its connector's column
            child_columns, child_through = columns, more
        for position, child in reversed(list(enumerate(kids))):
            stack.append((child, depth + 1, child_columns, position == len(kids) - 1,
                          child_through))
    return rows


def own_usage(store: Any, branch: InternalSession) -> Any:
    """What the branch's own part cost: the responses after its fork point (a root branch:
    all of its path). None when the store cannot say."""
    if branch.head_seq is None:
        return None
    try:
        return store.usage.of_path(branch.head_seq, after_seq=branch.fork_seq)
    except store.errors:
        return None


class BranchesPane(RowList):
    ROW_HEIGHT = 2
    BORDER_TITLE = "Branches"

    BINDINGS = [
        Binding("tab", "app.focus_next_pane", "Pane", tooltip="Sessions → branches → messages"),
        Binding("z", "app.zoom", "Zoom", tooltip="This pane alone, full width (z again: every pane)"),
        Binding("enter", "app.make_current", "Make current", tooltip="Make the highlighted branch current"),
        Binding("t", "app.toggle_tree", "Tree", tooltip="Show the session's entries as a tree"),
        Binding("b", "app.branch", "Branch", tooltip="New branch at the highlighted branch's head"),
        Binding("r", "app.rollback", "Roll back", tooltip="Roll back to a checkpoint or entry"),
        Binding("l", "app.label", "Label", tooltip="Label the highlighted branch"),
        Binding("c", "app.compact", "Compact", tooltip="Compact the highlighted branch"),
        Binding("o", "app.open_in_agent", "Open in agent", key_display="o/O",
                tooltip="Carry on from this branch in the agent that wrote the session "
                        "(O: in another agent, picked)"),
        Binding("O", "app.open_in_other_agent", "Other agent", show=False,
                tooltip="Carry on from this branch in another agent: pick which"),
        Binding("d", "app.compare", "Compare",
                tooltip="Compare this branch with another of the session, side by side"),
        Binding("u", "app.undo", "Undo", tooltip="Undo the last operation of this app"),
        Binding("m", "app.checkpoint", "Checkpoint", show=False,
                tooltip="A named checkpoint at the highlighted branch's head"),
        Binding("a", "app.hide_branch", "Hide", show=False,
                tooltip="Hide the highlighted branch (or show a hidden one again)"),
        Binding("R", "app.rename_branch", "Rename", show=False, tooltip="Rename the highlighted branch"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rows: list[BranchRow] = []
        # branch -> its own part's usage figure (set by the app; read for the rows on screen)
        self.usage_of: Callable[[InternalSession], Any] | None = None
        # the session's total as listed (set by the app): a price set later changes it, and
        # with it every branch's figure
        self.priced_as: Any = None
        self._usage: dict[tuple, Any] = {}

    def branch_usage(self, branch: InternalSession) -> Any:
        if self.usage_of is None:
            return None
        key = (branch.id, branch.head_seq, branch.fork_seq, self.priced_as)
        if key in self._usage:
            return self._usage[key]
        figure = self.usage_of(branch)
        if figure is not None:   # the store could not say (busy, a server away): ask next time
            if len(self._usage) > 4096:
                self._usage.clear()
            self._usage[key] = figure
        return figure

    def set_branches(self, rows: list[BranchRow], keep_id: int | None = None,
                     *, notify: bool = True) -> None:
        cursor = None
        if keep_id is not None:
            cursor = next((i for i, r in enumerate(rows) if r.branch.id == keep_id), None)
        if cursor is None:
            cursor = next((i for i, r in enumerate(rows) if r.branch.is_current), 0)
        self.rows = rows
        self.set_row_count(len(rows), cursor, notify=notify)

    @property
    def highlighted(self) -> InternalSession | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].branch
        return None

    def render_row(self, index: int, width: int) -> list[Text]:
        row = self.rows[index]
        branch = row.branch
        top = Text(" ", end="")
        top.append(row.guide, FAINT)
        if branch.is_current:
            top.append("● ", CURRENT_STYLE)
        else:
            top.append("○ ", DIM)
        # its own part's cost (or tokens where nothing is priced), right-aligned when it fits
        figure = self.branch_usage(branch)
        amount = usage_amount(figure) if figure is not None and figure.responses else ""
        if amount and width - top.cell_len - len(amount) - 2 < 8:
            amount = ""
        room = len(amount) + 1 if amount else 0
        title_width = max(4, width - top.cell_len - 2 - room)
        style = "bold" if branch.is_current else (f"italic {DIM}" if branch.is_hidden else "")
        top.append_text(safe_line(branch_title(branch), title_width, style=style))
        if row.label and width - top.cell_len - room > 6:
            top.append(" ")
            top.append_text(safe_line(f" {row.label} ", min(24, width - top.cell_len - room - 2),
                                      style=LABEL_STYLE))
        if amount:
            top.pad_right(max(0, width - 1 - len(amount) - top.cell_len))
            top.append(amount, usage_style(figure))
        bottom = Text(" ", end="")
        bottom.append(row.guide_next, FAINT)
        bottom.append(f"{branch.message_count:,} msg", "")
        if branch.is_hidden:
            bottom.append("  hidden", f"italic {FAINT}")
        if row.checkpoints:
            bottom.append(f"  ✓{len(row.checkpoints)}", CHECKPOINT_STYLE)
        if row.continued:
            # handed to another agent: where it goes on matters more than its ids
            room = max(4, width - bottom.cell_len - 1)
            agents = ", ".join(row.continued)
            text = f"  ↪ continued in {agents}"
            bottom.append_text(safe_line(text if len(text) <= room else f"  ↪ {agents}", room,
                                         style=CURRENT_STYLE))
            return [top, bottom]
        if branch.parent_session_id is None:
            bottom.append("  root", DIM)
        elif row.fork_checkpoint:
            bottom.append("  from ✓", CHECKPOINT_STYLE)
            bottom.append_text(safe_line(row.fork_checkpoint, 18, style=CHECKPOINT_STYLE))
        else:
            bottom.append(f"  from {short_id(branch.fork_id)}", DIM)
        bottom.append(f" → {short_id(branch.head_id)}", FAINT)
        return [top, bottom]
