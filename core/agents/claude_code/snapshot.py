"""What a read of a Claude Code transcript records at each commit point, and how a later read
goes on from it (`Resumable`, a part of `importer._Import`): the small facts of the session
and, of the recent past, the ids as short keys."""

from __future__ import annotations

from functools import lru_cache

from core.util.digests import blake2b
from .sidechains import Sidechain

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

# How much of the recent past a resumed read is told (`_Import.snapshot`).
KEPT_PROMPTS, KEPT_COUNTED, KEPT_TOOLS, KEPT_SIDECHAINS = 500, 256, 256, 32


@lru_cache(maxsize=4096)   # (a snapshot at each commit point keys the same ~1,000 ids again)
def short_key(text: str) -> str:
    """A 48-bit digest of an id, as 12 hex digits: what the import record keeps of the ids a
    resumed read only has to recognise (prompts' parents, counted message ids, tool call
    ids), a third of their length, so that the record of a long session stays a few
    KB (it is written again with every append: 63 KB of ids made a tenth of the time an
    import of ten appended lines took). Ids are unique within a session, and among the
    ~1,000 a record keeps, two share a key with a chance of 2e-9."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _kept_tools(state: dict[str, Any]) -> dict[str, str]:
    """The tool names a record keeps, by `short_key` of their call ids."""
    names, calls = state.get("tool_names"), state.get("tool_calls")
    if isinstance(names, list) and isinstance(calls, str):
        kept = {}
        for call in calls.split():
            key, _, place = call.partition(":")
            if place.isdigit() and int(place) < len(names) and isinstance(names[int(place)], str):
                kept[key] = names[int(place)]
        return kept
    whole = state.get("tools")
    return {short_key(k): v for k, v in whole.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(whole, dict) else {}


class _ToolNames(dict):
    """Tool call id -> tool name, for naming tool results: the calls of this read by id, and
    those a resumed read was told of by `short_key` (`keyed`)."""

    __slots__ = ("keyed",)

    def __init__(self, keyed: dict[str, str]):
        super().__init__()
        self.keyed = keyed

    def get(self, call_id, default=None):
        name = dict.get(self, call_id)
        if name is None:
            name = self.keyed.get(short_key(call_id)) if isinstance(call_id, str) else None
        return default if name is None else name


class Resumable:
    """The part of `importer._Import` that records where a read is and picks a read up
    from such a record."""

    def _safe_point(self) -> tuple[int, int]:
        """(offset, lines before it) from which a new read gets to where this one is:
        the first line not yet fully in the store (the line written one behind, metadata
        lines waiting for the next node, lines waiting for their parent)."""
        points = [(self.consumed, self.consumed_line)]
        if self.held is not None:
            points.append(self.held_at)
        if self.pending_meta:
            first = self.pending_meta[0]
            points.append((first[3], first[1] - 1))
        for items in self.waiting.values():
            for offset, number in items:
                points.append((offset, number - 1))
        return min(points)

    def _commit_point(self, number: int) -> None:
        """Commit what is written so far (agents waiting for the store get their turn),
        with the record of how far the file got."""
        self.result.lines = number
        if self.target is None:
            return
        for target in self._targets():
            target.flush()
        offset, line = self._safe_point()
        self.pacer.commit(offset, line, self.snapshot(), self.target.uid)

    def snapshot(self) -> dict[str, Any]:
        """What a read resumed at `_safe_point()` needs (see `_restore`). Kept small: of the
        newest 500 prompts, 256 counted message ids and 256 tool calls, the ids as
        `short_key`s, each list one string."""
        node_id = self._node_id
        held = self.held[1] if self.held is not None else None
        # prompts that are written (not the one held back, if it is one)
        parents = (self.parent_keys + [short_key(parent) for parent, prompt_id
                                       in self.prompts[-KEPT_PROMPTS - 1:]
                                       if prompt_id != held])[-KEPT_PROMPTS:]
        counted = list(self.counted)[-KEPT_COUNTED:]
        counted = (self.counted_keys + [short_key(m) for m in counted])[-KEPT_COUNTED:]
        tools = self.tool_names
        newest = list(tools.items())[-KEPT_TOOLS:]
        keyed = list(tools.keyed.items())[len(newest) - KEPT_TOOLS:] \
            if isinstance(tools, _ToolNames) and len(newest) < KEPT_TOOLS else []
        kept_tools = dict(keyed)
        for call_id, name in newest:
            kept_tools[short_key(call_id)] = name
        # the calls as "key:n", n the place of their tool's name in a list of the names
        names: dict[str, int] = {}
        calls = " ".join(f"{key}:{names.setdefault(name, len(names))}"
                         for key, name in kept_tools.items())
        return {
            "uid": self.target.uid if self.target else None,
            "defaults": self.defaults, "first_side": self.first_side,
            "facts": {"session_id": self.session_id, "cwd": self.cwd, "model": self.model,
                      "version": self.version, "git_branch": self.git_branch,
                      "agent_id": self.agent_id, "facts_done": self.facts_done,
                      "first_prompt": self.first_prompt[:400],
                      "side_prompt": self.side_prompt[:400]},
            "titles": self.titles, "dangling": self.dangling,
            "forked_from": self.forked_from,
            "prompt_parents": " ".join(parents), "counted_keys": " ".join(counted),
            "tool_names": list(names), "tool_calls": calls,
            "last_node": node_id(self.last_node), "last_main": node_id(self.last_main),
            "clock": [self.clock.last, self.clock.first],
            "read_upto": self.consumed,
            "sidechains": [side.record() for side in self.sidechains[-KEPT_SIDECHAINS:]],
            "task_calls": self.task_calls[-KEPT_SIDECHAINS:],
        }

    def _node_id(self, node: int) -> str | None:
        return self.ids[node] if node >= 0 else None

    def _restore(self, state: dict[str, Any]) -> None:
        """Pick up from a snapshot: the session's entries as nodes (read from the store:
        ids, seqs and parents), and the small facts the snapshot kept."""
        facts = state.get("facts") or {}
        self.defaults = state.get("defaults")
        self.first_side = state.get("first_side")
        self.session_id = facts.get("session_id") or ""
        self.cwd = facts.get("cwd") or ""
        self.model = facts.get("model") or ""
        self.version = facts.get("version") or ""
        self.git_branch = facts.get("git_branch") or ""
        self.agent_id = facts.get("agent_id") or ""
        self.facts_done = bool(facts.get("facts_done"))
        self.first_prompt = facts.get("first_prompt") or ""
        self.side_prompt = facts.get("side_prompt") or ""
        self.titles = dict(state.get("titles") or {})
        self.dangling = int(state.get("dangling") or 0)
        forked = state.get("forked_from")
        if isinstance(forked, list) and len(forked) == 2:
            self.forked_from = (forked[0], forked[1])
        # (a record written before the ids were kept as short keys has them whole)
        counted = state.get("counted_keys")
        self.counted_keys = counted.split() if isinstance(counted, str) else \
            [short_key(m) for m in state.get("counted") or [] if isinstance(m, str)]
        self.counted_before = set(self.counted_keys)
        self.tool_names = _ToolNames(_kept_tools(state))
        clock = state.get("clock") or [None, None]
        if isinstance(clock[0], str):
            self.clock.last = clock[0]
        if isinstance(clock[1], str):
            self.clock.first = clock[1]
        self.read_upto = int(state.get("read_upto") or 0)
        self.sidechains = [side for side in map(Sidechain.restored, state.get("sidechains") or [])
                           if side is not None]
        self.task_calls = [call for call in state.get("task_calls") or []
                           if isinstance(call, list) and len(call) == 4]
        target = self._ensure_target(uid=state.get("uid"), resuming=True)
        if state.get("incomplete"):
            target.result.created = True   # the import that made it never finished
        # The entries already stored become nodes only when a line needs one (its parent,
        # the tip below it): a grown file costs what it adds, not what it holds.
        self.stored = target.known
        parents = state.get("prompt_parents")
        self.parent_keys = parents.split() if isinstance(parents, str) else \
            [short_key(pair[0]) for pair in state.get("prompts") or []
             if isinstance(pair, list) and pair and isinstance(pair[0], str)]
        self.prompt_parents = set(self.parent_keys)
        self.last_node = self._node_for(state.get("last_node"))
        self.last_main = self._node_for(state.get("last_main"))
