"""Which consecutive entries make one reply as a reader sees it.

Agents write one model response as several entries: Claude Code one line per content
block (thinking, text, each tool call), all with the same `message.id` (kept as
`responseId`); Codex one line per output item (reasoning, message, function call), with no
id at all. The tool results answering the response's calls follow, one entry each, with
Claude Code's progress lines in between. A reader wants one message: the response, each
tool call shown with its result. Nothing stored changes; this only decides, entry by entry
along a path, whether an entry *joins* the group the entries before it make:

* an assistant entry joins when it has the open group's `responseId`, or, having no
  `responseId`, directly follows an assistant entry of the group that also has none and
  did not end (no `stopReason`: pi writes one whole response per entry, with one);
* a tool result joins when it answers a call of the open group;
* a progress line (`claude:progress`) joins any open group;
* anything else (a user message, a compaction, an unknown entry) never joins, and closes
  the group.

`step()` is the rule as a state machine for reading a path front to back (exports);
`Grouping` answers "does entry i join?" for a path read a window at a time (the messages
pane), looking back only as far as the start of the group.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, NamedTuple

from core.model.entries import MESSAGE, TOOL_CALL_BLOCKS, Entry, block_type

PROGRESS_TYPES = frozenset({"claude:progress"})

ASSISTANT = "assistant"
RESULT = "result"
PROGRESS = "progress"
OTHER = "other"

# How far back `Grouping` looks for a point where the grouping is known; a run longer
# than this without one starts a group there (it never happens with real logs).
LOOK_BACK = 5000


class Open(NamedTuple):
    """The group open after an entry: its response id, the ids of its calls, and whether
    its newest assistant entry may be followed by more of the same response."""

    response: str | None
    calls: frozenset[str]
    may_continue: bool


def kind(entry: Entry | None) -> str:
    if entry is None:
        return OTHER
    if entry.type == MESSAGE:
        message = entry.message
        if message is None:
            return OTHER
        role = message.get("role")
        if role == "assistant":
            return ASSISTANT
        if result_call_id(message) is not None:
            return RESULT
        return OTHER
    if entry.type in PROGRESS_TYPES:
        return PROGRESS
    return OTHER


def response_id(message: dict[str, Any]) -> str | None:
    value = message.get("responseId")
    return value if isinstance(value, str) and value else None


def result_call_id(message: dict[str, Any]) -> str | None:
    """The id of the call a tool-result message answers (None: not a tool result)."""
    if message.get("role") not in ("toolResult", "tool"):
        return None
    value = message.get("toolCallId", message.get("tool_call_id"))
    return value if isinstance(value, str) else None


def call_ids(message: dict[str, Any]) -> frozenset[str]:
    """The ids of the tool calls an assistant message makes."""
    ids: set[str] = set()
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block_type(block) in TOOL_CALL_BLOCKS:
                value = block.get("id", block.get("call_id"))
                if isinstance(value, str):
                    ids.add(value)
    calls = message.get("tool_calls")  # OpenAI's shape
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids.add(call["id"])
    return frozenset(ids)


def _opened(message: dict[str, Any]) -> Open:
    return Open(response_id(message), call_ids(message), not message.get("stopReason"))


def step(state: Open | None, entry: Entry | None) -> tuple[bool, Open | None]:
    """Whether `entry` joins the group open before it (`state`), and the state after it."""
    what = kind(entry)
    if what == ASSISTANT:
        message = entry.message
        response = response_id(message)
        if state is not None and (
                (response is not None and state.response == response) or
                (response is None and state.response is None and state.may_continue)):
            return True, Open(response, state.calls | call_ids(message),
                              not message.get("stopReason"))
        return False, _opened(message)
    if what == RESULT:
        if state is not None and result_call_id(entry.message) in state.calls:
            # a result ends a response without an id: what follows is the next request's
            may_continue = state.may_continue and state.response is not None
            return True, Open(state.response, state.calls, may_continue)
        return False, None
    if what == PROGRESS:
        return (True, state) if state is not None else (False, None)
    return False, None


def groups(entries: Iterable[Entry]) -> Iterator[list[Entry]]:
    """The entries of a path, front to back, in groups (a list per message shown)."""
    state: Open | None = None
    group: list[Entry] = []
    for entry in entries:
        joined, state = step(state, entry)
        if not joined and group:
            yield group
            group = []
        group.append(entry)
    if group:
        yield group


class Grouping:
    """`joins(i)` for the entries of one path given by `entry_at(i)` (None: not an entry,
    e.g. a summary marker), answered from at most one group's worth of entries before i
    (plus, the first time, the way back to a point where the state is known)."""

    def __init__(self, entry_at: Callable[[int], Entry | None], count: int) -> None:
        self.entry_at = entry_at
        self.count = count
        self._after: dict[int, tuple[bool, Open | None]] = {}

    def joins(self, index: int) -> bool:
        if index <= 0 or index >= self.count:
            return False
        return self._decide(index)[0]

    def span(self, index: int) -> tuple[int, int]:
        """The first and last index of the group holding `index`."""
        first = index
        while first > 0 and self.joins(first):
            first -= 1
        last = index
        while last + 1 < self.count and self.joins(last + 1):
            last += 1
        return first, last

    def _decide(self, index: int) -> tuple[bool, Open | None]:
        known = self._after.get(index)
        if known is not None:
            return known
        start = self._known_start(index)
        state = self._after[start - 1][1] if start - 1 in self._after else None
        for position in range(start, index + 1):
            if position in self._after:
                state = self._after[position][1]
                continue
            decided = step(state, self.entry_at(position))
            self._after[position] = decided
            state = decided[1]
        return self._after[index]

    def _known_start(self, index: int) -> int:
        """An index at or before `index` from which stepping with no open group gives the
        right answers: after one decided before, or at an entry that cannot join."""
        position = index
        floor = max(0, index - LOOK_BACK)
        while position > floor:
            if position - 1 in self._after or self._starts_fresh(position):
                return position
            position -= 1
        return floor

    def _starts_fresh(self, index: int) -> bool:
        entry = self.entry_at(index)
        what = kind(entry)
        if what == OTHER:
            return True
        if what != ASSISTANT:
            return False
        response = response_id(entry.message)
        position = index - 1
        skip = (RESULT, PROGRESS) if response is not None else (PROGRESS,)
        while position >= 0 and index - position < LOOK_BACK:
            before = self.entry_at(position)
            what = kind(before)
            if what not in skip:
                if what != ASSISTANT:
                    return True
                earlier = before.message
                if response is not None:
                    return response_id(earlier) != response
                return response_id(earlier) is not None or bool(earlier.get("stopReason"))
            position -= 1
        return position < 0
