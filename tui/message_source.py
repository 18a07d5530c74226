"""What the messages pane shows for one branch, read from the store a window at a time.

Two views of the same root-to-head path:
- raw: every entry, index = depth;
- context (the replay an agent resumes with): the newest compaction's summary marker
  first, then the path from the compaction's first kept entry on, compaction entries left
  out. Only the depths of the (few) compaction entries are needed to map an index to a
  depth, so a 100,000-message branch opens without reading it.

Sessions that started at an entry of this branch (a sub-agent at the tool call that
spawned it, a fork at its fork point; see core.history.lineage) get a row of their own right
after that entry. Opened, the row is followed by the child's own messages (its current
branch, read the same way, one level deeper): display indexes then map to the branch's
own rows and to the children's through a short table of those insertions.

In the context view, the entries of one response and the tool results answering its
calls make one group (core.history.responses): the pane shows a group as one message. A child
session's row goes after the group holding the entry it started at (the tool call that
spawned a sub-agent is shown with its result, then the sub-agent's thread). The raw view
shows every entry on its own.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from core.model.entries import COMPACTION, Entry
from core.model.errors import ReplayError, StoreBusy, StoreUnreachable
from core.history.replay import repeats_summary
from core.history.responses import Grouping
from core.seed.models import InternalSession
from core.store import SpawnedSession, Store

WINDOW = 200
MAX_WINDOWS = 64


@dataclass(frozen=True, slots=True)
class Item:
    """One row of the messages pane: an entry, a compaction's summary marker (kind
    "summary"), or (kind "spawn") a session that started at `entry`. `nest` is how many
    opened child sessions the row is inside."""

    kind: str  # "entry" | "summary" | "spawn"
    entry: Entry
    nest: int = 0
    child: SpawnedSession | None = None
    usage: object | None = None     # the response's tokens and cost (core.store ResponseUsage)

    @property
    def key(self) -> tuple[str, int]:
        if self.child is not None:
            return ("spawn", self.child.id)
        return (self.kind, self.entry.seq)


@dataclass(slots=True)
class _Insert:
    base: int                  # the row of this branch it follows (an index without inserts)
    child: SpawnedSession
    entry: Entry               # the entry it started at
    nested: "MessageSource | None" = None


class MessageSource:
    # Told (once per source) when a window of entries cannot be read (a damaged store): the
    # rows are left blank instead of the pane's drawing failing. The app sets it.
    on_read_error: "Callable[[BaseException], None] | None" = None

    def __init__(self, store: Store, branch: InternalSession, raw: bool = False, *,
                 opened: set[int] | None = None, nest: int = 0,
                 within: frozenset[int] = frozenset(), from_depth: int = 0,
                 hidden: list[int] | None = None):
        """`from_depth`: only the entries at that depth and deeper, raw (a branch's own
        part after where it parted from another, as a comparison shows it). `hidden`: the
        depths a filter leaves out (F; see tui.entry_tree.shows), in order."""
        self.store = store
        self.branch = branch
        self.head = branch.head_seq
        self.floor = max(0, from_depth)
        self.raw = raw or self.floor > 0
        self.nest = nest
        # the ids of the child sessions shown open (shared with the pane and nested sources)
        self.opened: set[int] = opened if opened is not None else set()
        self._within = within | {branch.external_session_id}
        self.warning: str | None = None
        self.read_error: BaseException | None = None
        self.compaction: Entry | None = None
        self.start = self.floor if self.raw else 0
        self.skips: list[int] = []          # depths not shown, from `start` on, in order
        self._shifts: list[int] = []        # skips[i] - i: maps a position to its depth
        self._windows: OrderedDict[int, list[Entry]] = OrderedDict()
        self._usage: dict[int, object] = {}   # entry seq -> its response's usage
        self._inserts: list[_Insert] = []
        self._extra = 0
        self._grouping: Grouping | None = None
        with store.reading():
            self.length = store.paths.length(self.head)
            if not self.raw and self.head is not None:
                try:
                    compaction, start = store.paths.replay_start(self.head)
                except ReplayError as error:
                    self.raw = True
                    self.warning = str(error)
                else:
                    if compaction is not None:
                        self.compaction = compaction
                        self.start = start
                        self.skips = sorted(c.depth for c in store.paths.compactions(self.head)
                                            if c.depth >= start)
                        self._skip_repeated_summary(compaction)
            if self.raw:
                self.start = self.floor
            if hidden:
                self.skips = sorted(set(self.skips).union(d for d in hidden if d >= self.start))
            self._shifts = [depth - i for i, depth in enumerate(self.skips)]
            if not self.raw or self.floor:
                # (a comparison's side is raw, from its floor on, but read as replies)
                self._grouping = Grouping(self._base_entry, self._base_count)
            self._find_inserts()
        self.relayout()

    def _skip_repeated_summary(self, compaction: Entry) -> None:
        """The compaction's summary written again as a message right after it is shown once
        (as the summary marker), as replay does."""
        depth = compaction.depth + 1
        if depth >= self.length:
            return
        seq = self.store.paths.at_depth(self.head, depth)
        if seq is not None and repeats_summary(self.store.entries.get(seq), compaction):
            bisect.insort(self.skips, depth)

    # ------------------------------------------------------------ child sessions
    def _find_inserts(self) -> None:
        if self.head is None:
            return
        for child in self.store.sessions.children(self.branch.external_session_id):
            if child.spawn_seq is None or child.spawn_depth is None or child.id in self._within:
                continue
            if child.spawn_depth >= self.length or \
                    self.store.paths.at_depth(self.head, child.spawn_depth) != child.spawn_seq:
                continue          # it started on another branch
            base = self._base_index_of_depth(child.spawn_depth)
            if base is None:
                continue          # hidden in this view (before the compaction)
            entry = self._entry_at(child.spawn_depth)
            if entry is not None:
                if self._grouping is not None:
                    base = self._grouping.span(base)[1]   # after the call's result
                self._inserts.append(_Insert(base, child, entry))
        self._inserts.sort(key=lambda insert: insert.base)

    @property
    def children(self) -> list[SpawnedSession]:
        return [insert.child for insert in self._inserts]

    def relayout(self) -> None:
        """Count the rows again after a child session was opened or folded."""
        extra = 0
        for insert in self._inserts:
            extra += 1
            if insert.child.id in self.opened:
                if insert.nested is None:
                    insert.nested = self._open(insert.child)
                if insert.nested is not None:
                    insert.nested.relayout()
                    extra += insert.nested.count
        self._extra = extra

    def _open(self, child: SpawnedSession) -> "MessageSource | None":
        try:
            branch = self.store.branches.current(child.id)
            if branch is None:
                return None
            nested = MessageSource(self.store, branch, opened=self.opened, nest=self.nest + 1,
                                   within=self._within)
        except (StoreUnreachable, StoreBusy) as error:
            self._not_now(error)     # (shown folded: the app reads it again once it answers)
            return None
        nested.on_read_error = self.on_read_error
        return nested

    # ----------------------------------------------------------------- indexing
    @property
    def offset(self) -> int:
        return 1 if (self.compaction is not None and not self.raw) else 0

    @property
    def count(self) -> int:
        return self._base_count + self._extra

    @property
    def _base_count(self) -> int:
        return self.offset + max(0, self.length - self.start - len(self.skips))

    # ------------------------------------------------------------------ groups
    def _base_entry(self, base: int) -> Entry | None:
        if self.offset and base == 0:
            return None                       # the compaction's summary marker
        depth = self._base_depth_of(base)
        return self._entry_at(depth) if depth is not None else None

    def group_span(self, index: int) -> tuple[int, int]:
        """The first and last display index of the message holding row `index` (one
        response and its tool results; a row of its own in the raw view)."""
        found = self._resolve(index)
        if found is None:
            return index, index
        source, base = found
        if source._grouping is None:
            return index, index
        first, last = source._grouping.span(base)
        # no child session's row is inside a group: the rows of one are consecutive
        return index - (base - first), index + (last - base)

    def _resolve(self, index: int) -> "tuple[MessageSource, int] | None":
        """The source a display row belongs to and its own row there (None: a child
        session's row)."""
        if index < 0 or index >= self.count:
            return None
        shift = 0
        for insert in self._inserts:
            marker = insert.base + 1 + shift
            if index < marker:
                break
            if index == marker:
                return None
            nested = insert.nested if insert.child.id in self.opened else None
            size = nested.count if nested is not None else 0
            if index <= marker + size:
                return nested._resolve(index - marker - 1)
            shift += 1 + size
        return self, index - shift

    def _to_base(self, index: int) -> tuple[int | None, Item | None]:
        """A display index as (this branch's own row, None), or (None, a child's row)."""
        shift = 0
        for insert in self._inserts:
            marker = insert.base + 1 + shift
            if index < marker:
                break
            if index == marker:
                return None, Item("spawn", insert.entry, self.nest, insert.child)
            nested = insert.nested if insert.child.id in self.opened else None
            size = nested.count if nested is not None else 0
            if index <= marker + size:
                return None, nested.item(index - marker - 1)
            shift += 1 + size
        return index - shift, None

    def _from_base(self, base: int) -> int:
        shift = 0
        for insert in self._inserts:
            if insert.base >= base:
                break
            shift += 1
            if insert.child.id in self.opened and insert.nested is not None:
                shift += insert.nested.count
        return base + shift

    def index_of_key(self, key: tuple[str, int]) -> int | None:
        """The display index of a spawn row, or of an entry in an opened child session."""
        shift = 0
        for insert in self._inserts:
            marker = insert.base + 1 + shift
            if key == ("spawn", insert.child.id):
                return marker
            nested = insert.nested if insert.child.id in self.opened else None
            if nested is not None:
                found = nested.index_of_key(key) if key[0] == "spawn" else \
                    nested.index_of_seq(key[1])
                if found is not None:
                    return marker + 1 + found
            shift += 1 + (nested.count if nested is not None else 0)
        return None

    def depth_of(self, index: int) -> int | None:
        base, _child_item = self._to_base(index)
        return self._base_depth_of(base) if base is not None else None

    def _base_depth_of(self, index: int) -> int | None:
        position = index - self.offset
        if position < 0:
            return None
        # the depth d with d - start - (skips at or below d) == position: skips[i] - i
        # (non-decreasing) counts the skips before it
        depth = self.start + position
        return depth + bisect.bisect_right(self._shifts, depth)

    def index_of_depth(self, depth: int) -> int | None:
        base = self._base_index_of_depth(depth)
        return self._from_base(base) if base is not None else None

    def _base_index_of_depth(self, depth: int) -> int | None:
        if depth < self.start or depth >= self.length:
            return None
        position = bisect.bisect_left(self.skips, depth)
        if position < len(self.skips) and self.skips[position] == depth:
            return None
        return self.offset + depth - self.start - position

    def index_near_depth(self, depth: int) -> int | None:
        """The display index of the deepest row shown at or before `depth` (a filter may
        leave out the entry at `depth` itself); None when none is."""
        depth = min(depth, self.length - 1)
        shown = depth - self.start + 1 - bisect.bisect_right(self.skips, depth)
        if shown <= 0:
            return 0 if self.offset else None
        return self._from_base(self.offset + shown - 1)

    def index_of_seq(self, seq: int, depth: int | None = None) -> int | None:
        if self.compaction is not None and not self.raw and seq == self.compaction.seq:
            return 0
        entry = None
        if depth is None:
            try:
                entry = self.store.entries.get(seq)
            except (StoreUnreachable, StoreBusy) as error:
                self._not_now(error)
                return None
            if entry is None:
                return None
            depth = entry.depth
        if entry is not None and entry.external_session_id != self.branch.external_session_id:
            return self.index_of_key(("entry", seq))      # in an opened child session
        index = self.index_of_depth(depth)
        if index is not None:
            item = self.item(index)
            if item is not None and item.entry.seq == seq:
                return index
        return self.index_of_key(("entry", seq)) if self._inserts else None

    # ------------------------------------------------------------------ reading
    def _entry_at(self, depth: int) -> Entry | None:
        number = depth // WINDOW
        window = self._windows.get(number)
        if window is None:
            try:
                window = self.store.paths.entries(self.head, number * WINDOW, (number + 1) * WINDOW)
            except (StoreUnreachable, StoreBusy) as error:
                # the store does not answer now: blank rows, asked again when drawn again
                # (the app reloads what it shows once the store answers)
                self._not_now(error)
                return None
            except self.store.errors as error:
                window = []          # not asked again: one report, blank rows
                if self.read_error is None:
                    self.read_error = error
                    if self.on_read_error is not None:
                        self.on_read_error(error)
            self._windows[number] = window
            try:
                self._usage.update(self.store.usage.of_responses([e.seq for e in window]))
            except (StoreUnreachable, StoreBusy) as error:
                self._not_now(error)   # (the figures are left out)
            if len(self._windows) > MAX_WINDOWS:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end(number)
        position = depth - number * WINDOW
        return window[position] if 0 <= position < len(window) else None

    def _not_now(self, error: BaseException) -> None:
        """The store does not answer now: told (the app's status line), nothing kept."""
        if self.on_read_error is not None:
            self.on_read_error(error)

    def item(self, index: int) -> Item | None:
        if index < 0 or index >= self.count:
            return None
        base, child_item = self._to_base(index) if self._inserts else (index, None)
        if base is None:
            return child_item
        if self.offset and base == 0:
            return Item("summary", self.compaction, self.nest)
        depth = self._base_depth_of(base)
        entry = self._entry_at(depth) if depth is not None else None
        if entry is None:
            return None
        return Item("entry", entry, self.nest, usage=self._usage.get(entry.seq))

    def describe(self) -> str:
        if self.raw:
            return "raw entries"
        return "context (compaction applied)" if self.compaction is not None else "context"


def is_compaction(entry: Entry) -> bool:
    return entry.type == COMPACTION
