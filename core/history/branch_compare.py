"""Two branches of one session side by side, from the entry they last shared.

"Which of my two attempts was better, and what did each change?" Each side is the part of
a branch's path after the common ancestor (its fork from the other). What is shown first is
read without reading the sides: their entry and message counts (`Store.paths.counts`), their
tokens and cost (`Store.usage.of_path`, from the usage rows kept as entries are written), the
first thing asked and the last reply on each side (a few rows from each end). The tool
calls and the files each side changed need the side's replies: `scan_side` reads only the
assistant's messages, a window at a time, so a caller can show figures as they come in and
stop when it is no longer looked at.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

from core.seed.models import InternalSession
from .path_range import PathRange
from core.store import PathCounts, Store
from .touched_files import FileChange, calls_in, changes_of

WINDOW = 2000       # assistant messages read at once by scan_side
ENDS = 40           # messages read from each end of a side for its first ask and last reply


def common_depth(store: Store, head_a: int | None, head_b: int | None) -> int:
    """The depth of the deepest entry on both paths (-1: they share nothing).

    A path is stored as runs of one chain (an entry's first child carries on its chain;
    any later child starts a new one), so two paths hold the same entry at a depth exactly
    when they are on the same chain there, and they share a prefix: comparing their runs,
    root first, finds where they part without reading an entry."""
    if head_a is None or head_b is None:
        return -1
    runs_a, runs_b = store.paths.segments(head_a), store.paths.segments(head_b)
    shared = -1
    for (chain_a, low_a, high_a), (chain_b, low_b, high_b) in zip(runs_a, runs_b):
        if chain_a != chain_b or low_a != low_b:
            break
        shared = min(high_a, high_b)
        if high_a != high_b:
            break
    return shared


@dataclass
class FileTouch:
    """What one side did to one file: every change, summed."""

    path: str
    actions: Counter = field(default_factory=Counter)   # action -> how many calls
    added: int | None = None
    removed: int | None = None

    @property
    def changes(self) -> int:
        return sum(self.actions.values())

    def take(self, change: FileChange) -> None:
        self.actions[change.action] += 1
        if change.added is not None:
            self.added = (self.added or 0) + change.added
        if change.removed is not None:
            self.removed = (self.removed or 0) + change.removed

    @property
    def last_action(self) -> str:
        return next(reversed(self.actions)) if self.actions else ""


@dataclass
class SideWork:
    """The tool calls and changed files of a side, as far as it has been read."""

    tool_calls: Counter = field(default_factory=Counter)    # tool name -> calls
    files: dict[str, FileTouch] = field(default_factory=dict)
    read: int = 0            # assistant messages read so far
    progress: float = 0.0    # the part of the side read, 0 to 1
    done: bool = False

    @property
    def call_count(self) -> int:
        return sum(self.tool_calls.values())

    def snapshot(self) -> "SideWork":
        """A copy that the reading (in another thread) no longer changes."""
        files = {path: FileTouch(path, Counter(touch.actions), touch.added, touch.removed)
                 for path, touch in self.files.items()}
        return SideWork(Counter(self.tool_calls), files, self.read, self.progress, self.done)

    def take(self, message: dict) -> None:
        self.read += 1
        for call in calls_in(message):
            self.tool_calls[call.name or "(unnamed tool)"] += 1
            for change in changes_of(call):
                touch = self.files.get(change.path)
                if touch is None:
                    touch = self.files[change.path] = FileTouch(change.path)
                touch.take(change)


@dataclass
class Side:
    """One branch's own part: depths [start, stop) of its path."""

    branch: InternalSession
    span: PathRange
    counts: PathCounts
    usage: object                 # core.usage.tokens.Figure
    first_ask: str                # the first user message's text on this side
    last_reply: str               # the last assistant text on this side
    subagents: int = 0            # sub-agents started on this side (their usage is in `usage`)
    work: SideWork = field(default_factory=SideWork)

    @property
    def start(self) -> int:
        return self.span.start

    @property
    def stop(self) -> int:
        return self.span.stop


@dataclass
class Comparison:
    a: Side
    b: Side
    fork_depth: int               # -1: the branches share no entry
    fork_seq: int | None
    shared_messages: int          # messages before the sides part

    @property
    def sides(self) -> tuple[Side, Side]:
        return self.a, self.b

    def snapshot(self) -> "Comparison":
        """The comparison as read so far, for a reader in another thread than `scan_side`'s
        (a screen drawing it while the sides are still read)."""
        return replace(self, a=replace(self.a, work=self.a.work.snapshot()),
                       b=replace(self.b, work=self.b.work.snapshot()))


_TEXT_BLOCKS = ("text", "output_text", "input_text")


def said(message: dict) -> str:
    """What a message says in words: its text, without thinking, tool calls or results."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        return "\n".join(block["text"] for block in content if isinstance(block, dict)
                         and block.get("type") in _TEXT_BLOCKS
                         and isinstance(block.get("text"), str)).strip()
    return ""


def _first_said(messages: list[dict]) -> str:
    return next((text for text in map(said, messages) if text), "")


def side(store: Store, branch: InternalSession, fork_depth: int) -> Side:
    """A branch's part after `fork_depth`, with what can be known without reading it."""
    head = branch.head_seq
    length = store.paths.length(head)
    span = PathRange(store, head, fork_depth + 1, length)
    counts = span.counts()
    fork_seq = store.paths.at_depth(head, fork_depth) if head is not None and fork_depth >= 0 else None
    usage = store.usage.of_path(head, after_seq=fork_seq)
    subagents = _spawned_usage(store, branch, span)
    if subagents is not None:
        # a sub-agent started on this side worked for it: its usage counts here, apart
        usage.merge(subagents[1])
        usage.subagent_cost_usd += subagents[1].cost_usd - subagents[1].subagent_cost_usd
        usage.subagent_tokens += subagents[1].total_tokens - subagents[1].subagent_tokens
    first = store.paths.messages(head, span.start, span.stop, limit=ENDS, role="user")
    last = store.paths.messages(head, span.start, span.stop, limit=ENDS, newest_first=True,
                               role="assistant")
    return Side(branch, span, counts, usage, _first_said(first), _first_said(last),
                subagents[0] if subagents is not None else 0)


def _spawned_usage(store: Store, branch: InternalSession, span: PathRange) -> tuple[int, object] | None:
    """How many sessions (sub-agents, forks of kind subagent/subgraph) were started from this
    side, and their usage (each one's current branch, whole)."""
    from .lineage import SPAWNED_KINDS
    from core.usage.tokens import Figure

    found, total = 0, Figure()
    for child in store.sessions.children(branch.external_session_id):
        depth = child.spawn_depth
        if child.kind not in SPAWNED_KINDS or depth is None or not span.start <= depth < span.stop:
            continue
        if store.paths.at_depth(span.head_seq, depth) != child.spawn_seq:
            continue                     # started on another branch
        current = store.branches.current(child.id)
        if current is not None:
            total.merge(store.usage.of_path(current.head_seq))
        found += 1
    return (found, total) if found else None


def compare(store: Store, a: InternalSession, b: InternalSession) -> Comparison:
    """Both branches from their common ancestor: counts, usage, first ask and last reply of
    each side (their tool calls and files: `scan_side`)."""
    if a.external_session_id != b.external_session_id:
        raise ValueError("only branches of one session can be compared")
    with store.reading():
        depth = common_depth(store, a.head_seq, b.head_seq)
        fork_seq = store.paths.at_depth(a.head_seq, depth) if depth >= 0 else None
        shared = store.paths.counts(a.head_seq, 0, depth + 1).messages if depth >= 0 else 0
        return Comparison(side(store, a, depth), side(store, b, depth), depth, fork_seq, shared)


def scan_side(store: Store, one: Side, *, window: int = WINDOW,
              stop: Callable[[], bool] = lambda: False) -> Iterator[SideWork]:
    """Read the side's replies a window at a time into `one.work`, yielding it after each
    window; `stop()` ends the reading early (the screen was closed)."""
    work = one.work
    span = one.span
    low = span.start
    while low < span.stop:
        if stop():
            return
        high = min(span.stop, low + window * 2)     # about half the entries are replies
        with store.reading():
            messages = store.paths.messages(span.head_seq, low, high, role="assistant")
        for message in messages:
            work.take(message)
        low = high
        work.progress = (low - span.start) / max(1, span.stop - span.start)
        yield work
    work.progress, work.done = 1.0, True
    yield work
