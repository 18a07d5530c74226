"""The entries pane: a session's whole entry tree, one row per entry (t switches to it
from the branches pane and back).

The layout comes from `tui.entry_tree` (splits indented, straight runs at one level,
depth capped with a number); the rows are drawn on the Line API (`RowList`), and an
entry's data is read only when its row is drawn (`entry_of`, cached), so a session of
100,000 entries costs its outline and a screenful of reads.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual.binding import Binding

from core.model.entries import TOOL_CALL_BLOCKS, Entry, block_type, content_text
from core.history.outcomes import NO_SUMMARY, SHELL_ROLE, SUMMARY_ROLES, marked, reply_outcome

from tui.entry_filters import FILTERS
from tui.render.formatting import (
    CURRENT_STYLE, DIM, FAINT, LABEL_STYLE, ROLE_NAMES, ROLE_STYLES, clock_time)
from tui.render.safe_text import safe_line
from .row_list import RowList

if TYPE_CHECKING:   # (loaded with the first tree read, not before the first frame)
    from tui.entry_tree import EntryTree, TreeRow

HIT_STYLE = "bold #1c1c1c on #87d7ff"
HEAD_STYLE = "#87d787"
_ROLE_WORDS = {"user": "user", "assistant": "assistant", "toolResult": "result", "tool": "result"}


def entry_summary(entry: Entry) -> tuple[str, str, str]:
    """(word, its style, one line of text) describing an entry in the tree."""
    data = entry.data
    message = entry.message
    if message is not None:
        role = str(message.get("role") or entry.role or "?")
        content = message.get("content")
        if role == "assistant" and isinstance(content, list):
            calls = [b for b in content if isinstance(b, dict) and block_type(b) in TOOL_CALL_BLOCKS]
            words = [b for b in content if isinstance(b, dict) and block_type(b) in ("text", "output_text")]
            if calls and not words:
                names = ", ".join(str(b.get("name") or "?") for b in calls[:3])
                return "⚙ tool", ROLE_STYLES["toolResult"], names + (" …" if len(calls) > 3 else "")
            text = content_text(words) if words else content_text(content)
            outcome = reply_outcome(message)
            if outcome is not None and not text.strip():
                text = marked(outcome)
            return "assistant", ROLE_STYLES["assistant"], text
        if role in ("toolResult", "tool"):
            name = str(message.get("toolName") or message.get("name") or "")
            text = content_text(content)
            return "↳ result", ROLE_STYLES["toolResult"], f"{name}: {text}" if name else text
        if role == SHELL_ROLE:
            return "shell", ROLE_STYLES[role], f"$ {message.get('command') or ''}"
        if role in SUMMARY_ROLES:
            return ROLE_NAMES[role], "bold #d787d7", str(message.get("summary") or NO_SUMMARY)
        text = content_text(content)
        outcome = reply_outcome(message)
        if outcome is not None and not text.strip():
            text = marked(outcome)
        return _ROLE_WORDS.get(role, role), ROLE_STYLES.get(role, "bold"), text
    kind = entry.type
    if kind in ("compaction", "branch_summary"):
        word = "compaction" if kind == "compaction" else "branch summary"
        return word, "bold #d787d7", str(data.get("summary", ""))
    if kind == "model_change":
        return "model", DIM, f"→ {data.get('modelId') or data.get('model') or '?'}"
    if kind == "thinking_level_change":
        return "thinking", DIM, f"→ {data.get('thinkingLevel', '?')}"
    if kind == "custom_message":
        return "note", "bold", content_text(data.get("content"))
    return kind, DIM, ""


def highlight_words(text: Text, words: list[str]) -> Text:
    """`text` with every case-insensitive occurrence of the words marked."""
    plain = text.plain.lower()
    for word in words:
        if not word:
            continue
        for match in re.finditer(re.escape(word.lower()), plain):
            text.stylize(HIT_STYLE, match.start(), match.end())
    return text


def around_first(text: str, words: list[str], room: int) -> str:
    """`text` from a little before the first word found, so that the word is on screen."""
    lowered = text[: 64 * 1024].lower()
    found = [i for i in (lowered.find(w.lower()) for w in words if w) if i >= 0]
    if not found or min(found) + max(len(w) for w in words) < room - 1:
        return text
    start = max(0, min(found) - max(4, room // 4))
    return "…" + text[start:]


class EntriesPane(RowList):
    ROW_HEIGHT = 1
    BORDER_TITLE = "Entries"

    BINDINGS = [
        Binding("tab", "app.focus_next_pane", "Pane", tooltip="Sessions → entries → messages"),
        Binding("z", "app.zoom", "Zoom", tooltip="This pane alone, full width (z again: every pane)"),
        Binding("t", "app.toggle_tree", "Branches", tooltip="Show the branches instead of the entries"),
        Binding("enter", "app.show_entry", "Show", tooltip="Show the highlighted entry in its branch"),
        Binding("space", "toggle_fold", "Fold",
                tooltip="Fold or unfold the subtree (in a run of tool steps: the run)"),
        Binding("f", "cycle_filter", "Filter",
                tooltip="Cycle the filter: default, no tools, user only, labelled, everything"),
        Binding("ctrl+f", "app.find_in_session", "Find", tooltip="Find text in this session"),
        Binding("n", "next_hit", "Next hit", show=False, tooltip="The next entry found"),
        Binding("N", "previous_hit", "Previous hit", show=False, tooltip="The previous entry found"),
        Binding("T", "toggle_times", "Label times", show=False,
                tooltip="Show or hide when each label was set"),
        Binding("l", "app.label", "Label", tooltip="Label the highlighted entry"),
        Binding("u", "app.undo", "Undo", show=False, tooltip="Undo the last operation of this app"),
        Binding("left", "fold", "Fold", show=False),
        Binding("right", "unfold", "Unfold", show=False),
    ]

    def __init__(self, now: datetime, **kwargs) -> None:
        super().__init__(**kwargs)
        self.now = now
        self.entry_tree: EntryTree | None = None
        self.rows: list[TreeRow] = []
        self.mode = FILTERS[0]
        self.folded: set[int] = set()
        self.folded_runs: set[int] = set()
        self.entry_of: Callable[[int], Entry | None] = lambda seq: None
        self.heads: dict[int, list[tuple[str, bool]]] = {}   # seq -> (branch title, current)
        self.current_path: frozenset[int] = frozenset()
        self.label_times: dict[int, str] = {}
        self.show_times = False
        self.hits: list[int] = []          # found entries, in tree order of the session
        self.hit_words: list[str] = []
        self.note = ""                     # shown in the title after the filter (the find)
        self._entries: OrderedDict[int, Entry | None] = OrderedDict()

    # ------------------------------------------------------------------ the model
    def set_tree(self, tree: EntryTree | None, *, entry_of: Callable[[int], Entry | None],
                 heads: dict[int, list[tuple[str, bool]]], current_path: frozenset[int],
                 label_times: dict[int, str], keep_seq: int | None = None,
                 same_session: bool = False) -> None:
        """A session's tree (or None); folds, filter and the find are kept within one session."""
        previous = self.highlighted_seq if keep_seq is None else keep_seq
        self.entry_tree = tree
        self.entry_of = entry_of
        self.heads = heads
        self.current_path = current_path
        self.label_times = label_times
        self._entries.clear()
        if not same_session:
            self.folded.clear()
            self.folded_runs.clear()
            self.hits, self.hit_words, self.note = [], [], ""
            previous = keep_seq
        self.relayout(keep_seq=previous, notify=False)

    def relayout(self, keep_seq: int | None = None, *, notify: bool = True) -> None:
        tree = self.entry_tree
        self.rows = tree.rows(self.mode, self.folded, self.folded_runs) if tree else []
        cursor = None
        if keep_seq is not None:
            cursor = self.index_of(keep_seq)
        if cursor is None and self.current_path:
            # the head of the current branch: where the conversation is now
            heads = [i for i, row in enumerate(self.rows) if row.seq in self.current_path]
            cursor = heads[-1] if heads else None
        self.set_row_count(len(self.rows), cursor if cursor is not None else 0, notify=notify)
        self._update_title()

    def index_of(self, seq: int) -> int | None:
        for index, row in enumerate(self.rows):
            if row.seq == seq:
                return index
        return None

    @property
    def highlighted_seq(self) -> int | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor].seq
        return None

    @property
    def highlighted(self) -> Entry | None:
        seq = self.highlighted_seq
        return self._entry(seq) if seq is not None else None

    def _entry(self, seq: int) -> Entry | None:
        if seq in self._entries:
            self._entries.move_to_end(seq)
            return self._entries[seq]
        entry = self.entry_of(seq)
        self._entries[seq] = entry
        if len(self._entries) > 2000:
            self._entries.popitem(last=False)
        return entry

    def _update_title(self) -> None:
        title = Text("Entries · ", end="")
        title.append(self.mode, "#d7af5f")
        title.append(f" · {len(self.rows):,}")
        if self.note:
            title.append(" · ")
            title.append_text(safe_line(self.note, 30, style="#87d7ff"))
        self.border_title = title

    # -------------------------------------------------------------------- drawing
    def render_row(self, index: int, width: int) -> list[Text]:
        row = self.rows[index]
        line = Text(" ", end="")
        line.append(row.guide(), FAINT)
        on_path = row.seq in self.current_path
        if row.run:
            line.append("▸ ", DIM)
            line.append(f"⚙ {row.run:,} tool steps", ROLE_STYLES["toolResult"])
            line.append("  space unfolds", FAINT)
            return [line]
        if row.folded:
            line.append("▸ ", DIM)
        else:
            line.append("● " if on_path else "○ ", CURRENT_STYLE if on_path else FAINT)
        entry = self._entry(row.seq)
        if entry is None:
            line.append("(gone)", FAINT)
            return [line]
        word, style, text = entry_summary(entry)
        line.append(word, style)
        line.append(" ")
        for title, current in self.heads.get(row.seq, []):
            line.append_text(safe_line(f"[{title}]", 24, style=f"bold {HEAD_STYLE}" if current
                                       else HEAD_STYLE))
            line.append(" ")
        label = (self.entry_tree.labels if self.entry_tree else {}).get(row.seq)
        if label:
            line.append_text(safe_line(f" {label} ", 24, style=LABEL_STYLE))
            if self.show_times and row.seq in self.label_times:
                line.append(f" {clock_time(self.label_times[row.seq], self.now)}", DIM)
            line.append(" ")
        if row.folded:
            line.append(f"+{row.folded:,} below ", DIM)
        room = max(4, width - line.cell_len)
        text = text.strip()
        hit = self.hit_words and row.seq in self._hit_set
        if hit:
            text = around_first(text, self.hit_words, room)
        body = safe_line(text, room, style="" if on_path else DIM)
        if hit:
            highlight_words(body, self.hit_words)
        line.append_text(body)
        return [line]

    @property
    def _hit_set(self) -> set[int]:
        cached = getattr(self, "_hits_cached", None)
        if cached is None or cached[0] is not self.hits:
            cached = (self.hits, set(self.hits))
            self._hits_cached = cached
        return cached[1]

    # -------------------------------------------------------------------- actions
    def action_cycle_filter(self) -> None:
        self.mode = FILTERS[(FILTERS.index(self.mode) + 1) % len(FILTERS)]
        self.relayout(keep_seq=self._nearest_kept())

    def _nearest_kept(self) -> int | None:
        """The highlighted entry, or (when the new filter hides it) its nearest ancestor
        the filter shows."""
        seq = self.highlighted_seq
        tree = self.entry_tree
        while seq is not None and tree is not None and not tree.shows(seq, self.mode):
            seq = tree.by_seq[seq].parent
        return seq

    def action_toggle_fold(self) -> None:
        if not self.rows:
            return
        row = self.rows[self.cursor]
        if row.run_start is not None:
            self.folded_runs ^= {row.run_start}
            self.relayout(keep_seq=row.run_start)
        elif row.has_children:
            self.folded ^= {row.seq}
            self.relayout(keep_seq=row.seq)

    def action_fold(self) -> None:
        if self.rows and not self.rows[self.cursor].folded and not self.rows[self.cursor].run:
            self.action_toggle_fold()

    def action_unfold(self) -> None:
        if self.rows and (self.rows[self.cursor].folded or self.rows[self.cursor].run):
            self.action_toggle_fold()

    def action_toggle_times(self) -> None:
        self.show_times = not self.show_times
        self.invalidate()
        self.app.notify("Label times shown." if self.show_times else "Label times hidden.",
                        markup=False)

    def set_hits(self, words: list[str], hits: list[int], note: str) -> None:
        self.hit_words, self.note = words, note
        order = {row.seq: i for i, row in enumerate(self.rows)}
        # tree order: n walks down the tree as drawn
        self.hits = sorted(hits, key=lambda seq: (order.get(seq, len(order)), seq))
        self.invalidate()
        self._update_title()

    def _go_to_hit(self, step: int) -> None:
        if not self.hits:
            self.app.notify("Nothing found yet: ctrl+f finds text in this session.", markup=False)
            return
        hits = self._hit_set
        positions = [i for i, row in enumerate(self.rows) if row.seq in hits]
        hidden = len(hits) - len(positions)
        if not positions:
            self.app.say(f"All {len(hits):,} entries found are hidden by the filter "
                         f"({self.mode}) or a fold: f changes the filter.", severity="warning")
            return
        if step > 0:
            after = [i for i in positions if i > self.cursor]
            target = after[0] if after else positions[0]
        else:
            before = [i for i in positions if i < self.cursor]
            target = before[-1] if before else positions[-1]
        self.move_cursor(target)
        number = positions.index(target) + 1
        note = f"{number}/{len(positions)}"
        if hidden:
            note += f" (+{hidden} hidden)"
        self.note = f"{' '.join(self.hit_words)} {note}"
        self._update_title()

    def action_next_hit(self) -> None:
        self._go_to_hit(1)

    def action_previous_hit(self) -> None:
        self._go_to_hit(-1)
