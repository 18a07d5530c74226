"""A depth range of a branch's path, for plans over long branches (compaction, rollback).

Counted without reading it (`Store.paths.counts`), read only as far as it is looked at: its
first or last entry, its first or last messages, a sample, or all of it a window at a time.
A plan over 100,000 messages so reads a few thousand rows at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from core.model.entries import Entry, message_tokens
from core.store import PathCounts, Store

WINDOW = 2000       # messages read at once when all of a range is read
EXACT_LIMIT = 2000  # up to this many messages, their tokens are counted one by one
SAMPLE = 500        # above it, the tokens are estimated from this many spread over the range


@dataclass(frozen=True)
class PathRange:
    """Depths [start, stop) of the path from the root to `head_seq`."""

    store: Store
    head_seq: int | None
    start: int
    stop: int

    def __bool__(self) -> bool:
        return self.head_seq is not None and self.stop > self.start

    def counts(self) -> PathCounts:
        return self.store.paths.counts(self.head_seq, self.start, self.stop)

    def entries(self) -> list[Entry]:
        """Every entry of the range (reads all of it: for short ranges and tests)."""
        return self.store.paths.entries(self.head_seq, self.start, self.stop)

    def first(self, *, type: str | None = None, not_type: str | None = None) -> Entry | None:
        return self.store.paths.end_entry(self.head_seq, self.start, self.stop, type=type,
                                         not_type=not_type)

    def last(self, *, type: str | None = None, not_type: str | None = None) -> Entry | None:
        return self.store.paths.end_entry(self.head_seq, self.start, self.stop, type=type,
                                         not_type=not_type, last=True)

    def messages(self, count: int | None = None) -> "PathTranscript":
        """Its messages for a summariser (`count`: how many there are, if known)."""
        return PathTranscript(self, self.counts().messages if count is None else count)

    def estimate_tokens(self, messages: int) -> int:
        """The token estimate of its `messages` messages: exact up to EXACT_LIMIT, else
        extrapolated from SAMPLE messages spread evenly over the range."""
        if messages <= 0 or not self:
            return 0
        if messages <= EXACT_LIMIT:
            return sum(message_tokens(m) for m in self.store.paths.messages(self.head_seq, self.start,
                                                                           self.stop))
        sample = self.store.paths.sample(self.head_seq, self.start, self.stop, SAMPLE)
        if not sample:
            return 0
        return round(sum(message_tokens(m) for m in sample) * messages / len(sample))


class PathTranscript:
    """The messages of a `PathRange` as a summariser's `Transcript`: the first or last n are
    one query each; iterating reads WINDOW messages at a time."""

    def __init__(self, span: PathRange, count: int) -> None:
        self.span = span
        self.count = count

    def __len__(self) -> int:
        return self.count

    def head(self, n: int) -> list[dict[str, Any]]:
        span = self.span
        return span.store.paths.messages(span.head_seq, span.start, span.stop, limit=n)

    def tail(self, n: int) -> list[dict[str, Any]]:
        span = self.span
        newest = span.store.paths.messages(span.head_seq, span.start, span.stop, limit=n,
                                          newest_first=True)
        return newest[::-1]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        span = self.span
        for low in range(span.start, span.stop, WINDOW):
            yield from span.store.paths.messages(span.head_seq, low, min(span.stop, low + WINDOW))
