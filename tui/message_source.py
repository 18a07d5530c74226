"""What the messages pane shows for one branch, read from the store a window at a time.

Two views of the same root-to-head path:
- raw: every entry, index = depth;
- context (the replay an agent resumes with): the newest compaction's summary marker
  first, then the path from the compaction's first kept entry on, compaction entries left
  out. Only the depths of the (few) compaction entries are needed to map an index to a
  depth, so a 100,000-message branch opens without reading it.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass

from core.entries import COMPACTION, Entry
from core.errors import ReplayError
from core.models import InternalSession
from core.store import Store

WINDOW = 200
MAX_WINDOWS = 64


@dataclass(frozen=True, slots=True)
class Item:
    """One row of the messages pane: an entry, or (kind "summary") a compaction's summary marker."""

    kind: str  # "entry" | "summary"
    entry: Entry

    @property
    def key(self) -> tuple[str, int]:
        return (self.kind, self.entry.seq)


class MessageSource:
    def __init__(self, store: Store, branch: InternalSession, raw: bool = False):
        self.store = store
        self.branch = branch
        self.head = branch.head_seq
        self.raw = raw
        self.warning: str | None = None
        self.compaction: Entry | None = None
        self.start = 0
        self.skips: list[int] = []
        self._windows: OrderedDict[int, list[Entry]] = OrderedDict()
        with store.reading():
            self.length = store.path_length(self.head)
            if not raw and self.head is not None:
                try:
                    compaction, start = store.replay_start(self.head)
                except ReplayError as error:
                    self.raw = True
                    self.warning = str(error)
                else:
                    if compaction is not None:
                        self.compaction = compaction
                        self.start = start
                        self.skips = sorted(c.depth for c in store.compactions_on_path(self.head)
                                            if c.depth >= start)

    # ----------------------------------------------------------------- indexing
    @property
    def offset(self) -> int:
        return 1 if (self.compaction is not None and not self.raw) else 0

    @property
    def count(self) -> int:
        if self.raw:
            return self.length
        return self.offset + max(0, self.length - self.start - len(self.skips))

    def depth_of(self, index: int) -> int | None:
        if self.raw:
            return index
        position = index - self.offset
        if position < 0:
            return None
        depth = self.start + position
        for skipped in self.skips:
            if skipped <= depth:
                depth += 1
            else:
                break
        return depth

    def index_of_depth(self, depth: int) -> int | None:
        if self.raw:
            return depth if 0 <= depth < self.length else None
        if depth < self.start or depth >= self.length:
            return None
        position = bisect.bisect_left(self.skips, depth)
        if position < len(self.skips) and self.skips[position] == depth:
            return None
        return self.offset + depth - self.start - position

    def index_of_seq(self, seq: int, depth: int | None = None) -> int | None:
        if self.compaction is not None and not self.raw and seq == self.compaction.seq:
            return 0
        if depth is None:
            entry = self.store.get_entry(seq)
            if entry is None:
                return None
            depth = entry.depth
        index = self.index_of_depth(depth)
        if index is None:
            return None
        item = self.item(index)
        return index if item is not None and item.entry.seq == seq else None

    # ------------------------------------------------------------------ reading
    def _entry_at(self, depth: int) -> Entry | None:
        number = depth // WINDOW
        window = self._windows.get(number)
        if window is None:
            window = self.store.path_entries(self.head, number * WINDOW, (number + 1) * WINDOW)
            self._windows[number] = window
            if len(self._windows) > MAX_WINDOWS:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end(number)
        position = depth - number * WINDOW
        return window[position] if 0 <= position < len(window) else None

    def item(self, index: int) -> Item | None:
        if index < 0 or index >= self.count:
            return None
        if self.offset and index == 0:
            return Item("summary", self.compaction)
        depth = self.depth_of(index)
        entry = self._entry_at(depth) if depth is not None else None
        return Item("entry", entry) if entry is not None else None

    def describe(self) -> str:
        if self.raw:
            return "raw entries"
        return "context (compaction applied)" if self.compaction is not None else "context"


def is_compaction(entry: Entry) -> bool:
    return entry.type == COMPACTION
