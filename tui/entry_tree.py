"""The layout of a session's entry tree: which rows show, in what order, with which guides.

Pure (no Textual, no store): it is given the session's outline (seq, parent, type, role of
every entry) and answers with rows. A straight run of entries stays at one indentation
(a conversation of 5,000 messages is 5,000 rows at one level, never 5,000 nested levels);
only where the tree splits do the children indent, oldest first, drawn with guides. Past
MAX_INDENT split levels the depth is written as a number in place of the outermost guides
(the row is no wider), so a session with hundreds of rewinds stays readable. Everything
here is iterative: a tree thousands of splits deep costs no recursion.

Filters hide entries without losing the shape: a shown entry hangs under its nearest
shown ancestor. Folds: a folded entry hides everything under it; a folded run of tool
steps (tool calls and their results, one after another) becomes one row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from tui.entry_filters import FILTER_HELP, FILTERS  # noqa: F401 - (named here too)

MAX_INDENT = 6

# entry types shown by the default filter besides messages
_STORY_TYPES = frozenset({"message", "custom_message", "compaction", "branch_summary"})
TOOL_RESULT_ROLES = frozenset({"toolResult", "tool"})


def shows(mode: str, entry_type: str, role: str | None, *, tool: bool, labelled: bool) -> bool:
    """Whether the filter `mode` shows an entry: the one definition the entry tree (f) and
    the messages pane (F) share. `tool`: a tool result, or a tool call with no words of its
    own; `labelled`: the entry has a label. The default filter leaves out what is not
    conversation: model and thinking-level changes, labels, session names, and the lines
    Claude Code writes beside the conversation (attachments, skill listings, mode and
    permission changes, hooks, file snapshots)."""
    if mode == "everything":
        return True
    if mode == "labelled":
        return labelled
    if mode == "user only":
        return entry_type == "message" and role == "user"
    if entry_type not in _STORY_TYPES:
        return False
    if mode == "no tools":
        return not tool
    return True


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    seq: int
    parent: int | None
    type: str
    role: str | None


@dataclass(slots=True)
class TreeRow:
    seq: int                 # the entry (for a folded run: its first entry)
    levels: tuple[bool, ...]  # per split level above: do more siblings follow there
    starts: bool             # the first row of a child subtree (drawn with a connector)
    folded: int = 0          # entries hidden under a folded entry
    run: int = 0             # a folded run of tool steps: how many entries it holds
    run_start: int | None = None  # the run of tool steps this row belongs to (fold key)
    has_children: bool = False

    @property
    def depth(self) -> int:
        return len(self.levels)

    def guide(self) -> str:
        """Tree guides before the row's marker (at most MAX_INDENT levels, then a number)."""
        if not self.levels:
            return ""
        shown = self.levels[-MAX_INDENT:]
        parts = ["│ " if more else "  " for more in shown[:-1]]
        last = shown[-1]
        if self.starts:
            parts.append("├─" if last else "└─")
        else:
            parts.append("│ " if last else "  ")
        guide = "".join(parts)
        if len(self.levels) > len(shown):   # the depth where the outermost guides were
            mark = f"┄{len(self.levels)} "
            guide = mark + guide[len(mark):]
        return guide


@dataclass
class EntryTree:
    """A session's outline, laid out on demand for a filter and a set of folds."""

    outline: list[OutlineEntry]
    labels: dict[int, str] = field(default_factory=dict)
    # assistant entries that call tools AND say something in words: not tool steps
    worded: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.by_seq = {e.seq: e for e in self.outline}
        self.calls = self.answered_calls(self.outline, self.by_seq)
        self.tool_calls = self.calls - self.worded     # calls with nothing else to read

    @staticmethod
    def answered_calls(outline: list[OutlineEntry], by_seq: dict[int, OutlineEntry] | None = None
                       ) -> set[int]:
        """Assistant entries a tool result answers: the tool calls (read from the shape
        alone; whether one also has words needs its data, see `worded`)."""
        by_seq = by_seq if by_seq is not None else {e.seq: e for e in outline}
        answered = {e.parent for e in outline
                    if e.role in TOOL_RESULT_ROLES and e.parent is not None}
        return {seq for seq in answered if seq in by_seq and by_seq[seq].role == "assistant"}

    def is_tool(self, seq: int) -> bool:
        """A tool result, or a tool call with no words of its own (hidden by "no tools")."""
        entry = self.by_seq[seq]
        return entry.role in TOOL_RESULT_ROLES or seq in self.tool_calls

    def is_step(self, seq: int) -> bool:
        """A tool result or any tool call, worded or not: what a run of tool steps holds."""
        return self.by_seq[seq].role in TOOL_RESULT_ROLES or seq in self.calls

    def shows(self, seq: int, mode: str) -> bool:
        entry = self.by_seq[seq]
        return shows(mode, entry.type, entry.role, tool=mode == "no tools" and self.is_tool(seq),
                     labelled=seq in self.labels)

    def path_to(self, head_seq: int | None) -> list[int]:
        """The entries from the root to `head_seq`, root first (iterative: paths are long)."""
        path: list[int] = []
        seen: set[int] = set()
        seq = head_seq
        while seq is not None and seq not in seen:
            entry = self.by_seq.get(seq)
            if entry is None:
                break
            path.append(seq)
            seen.add(seq)
            seq = entry.parent
        path.reverse()
        return path

    def hidden_depths(self, head_seq: int | None, mode: str) -> list[int]:
        """The depths on the path to `head_seq` whose entries the filter leaves out (the
        messages pane's view of the same filter), in order."""
        if mode == "everything":
            return []
        return [depth for depth, seq in enumerate(self.path_to(head_seq))
                if not self.shows(seq, mode)]

    def _shown_children(self, mode: str) -> dict[int | None, list[int]]:
        """Shown entry (None: the top) -> its shown children, oldest first."""
        nearest: dict[int, int | None] = {}  # entry -> nearest shown ancestor-or-self

        def anchor(seq: int | None) -> int | None:
            # walk up until an entry whose answer is known (iterative: trees are deep)
            path = []
            while seq is not None and seq not in nearest:
                entry = self.by_seq.get(seq)
                if entry is None:
                    seq = None
                    break
                path.append(seq)
                seq = entry.parent
            answer = nearest.get(seq) if seq is not None else None
            for item in reversed(path):
                if self.shows(item, mode):
                    answer = item
                nearest[item] = answer
            return answer

        kids: dict[int | None, list[int]] = {}
        for entry in self.outline:  # seq order: oldest children first
            if not self.shows(entry.seq, mode):
                continue
            parent = anchor(entry.parent) if entry.parent is not None else None
            nearest[entry.seq] = entry.seq
            kids.setdefault(parent, []).append(entry.seq)
        return kids

    def rows(self, mode: str = "default", folded: Iterable[int] = (),
             folded_runs: Iterable[int] = ()) -> list[TreeRow]:
        """The rows to draw, top to bottom. `folded`: entries whose subtree is folded;
        `folded_runs`: first entries of runs of tool steps shown as one row."""
        folded = set(folded)
        folded_runs = set(folded_runs)
        kids = self._shown_children(mode)
        run_of, run_end, run_length = self._runs(kids)
        rows: list[TreeRow] = []
        stack: list[tuple[int, tuple[bool, ...], bool]] = []  # (seq, levels, starts)
        tops = kids.get(None, [])
        stack.extend(self._children_of(tops, ()))
        while stack:
            seq, levels, starts = stack.pop()
            if seq in folded_runs and run_of.get(seq) == seq:
                rows.append(TreeRow(seq, levels, starts, run=run_length[seq], run_start=seq,
                                    has_children=True))
                stack.extend(self._children_of(kids.get(run_end[seq], []), levels))
                continue
            children = kids.get(seq, [])
            row = TreeRow(seq, levels, starts, run_start=run_of.get(seq),
                          has_children=bool(children))
            rows.append(row)
            if seq in folded and children:
                row.folded = self._count_below(seq, kids)
                continue
            stack.extend(self._children_of(children, levels))
        return rows

    @staticmethod
    def _children_of(children: list[int], levels: tuple[bool, ...]):
        """Stack items for an entry's children, pushed so the oldest pops first: one child
        goes on at the same level, several each start a subtree one level in."""
        if len(children) == 1:
            return [(children[0], levels, False)]
        last = len(children) - 1
        return [(child, levels + (position < last,), True)
                for position, child in reversed(list(enumerate(children)))]

    def _runs(self, kids: dict[int | None, list[int]]):
        """Straight runs of two or more tool steps: entry -> its run's first entry, and
        per first entry the run's last entry and length. One pass over the shown tree."""
        parent_of = {child: parent for parent, children in kids.items() for child in children}
        run_of: dict[int, int] = {}
        run_end: dict[int, int] = {}
        run_length: dict[int, int] = {}
        for seq, parent in parent_of.items():
            if not self.is_step(seq):
                continue
            if parent is not None and self.is_step(parent) and len(kids.get(parent, [])) == 1:
                continue  # not the first of its run
            run = [seq]
            while True:
                children = kids.get(run[-1], [])
                if len(children) != 1 or not self.is_step(children[0]):
                    break
                run.append(children[0])
            if len(run) > 1:
                for member in run:
                    run_of[member] = seq
                run_end[seq], run_length[seq] = run[-1], len(run)
        return run_of, run_end, run_length

    @staticmethod
    def _count_below(seq: int, kids: dict[int | None, list[int]]) -> int:
        count, stack = 0, list(kids.get(seq, []))
        while stack:
            item = stack.pop()
            count += 1
            stack.extend(kids.get(item, []))
        return count
