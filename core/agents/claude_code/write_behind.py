"""Writing one line behind the reader (`_WriteBehind`, a part of `importer._Import`): the
line held back is written when the next one is read, so that it can look at it (usage is
counted once per request, on the last line of a `message.id` run; a compact boundary gets
the summary that follows it); its conversion into an entry, and the spawn points of the
sub-agents its tool calls start."""

from __future__ import annotations

from core.importing.base import SHAPE_ERRORS, odd_shape
from core.model.entries import COMPACTION, MESSAGE, SESSION_INFO, content_text
from .convert import convert_message, learn_tools
from .nodes import ASSISTANT, BOUNDARY, USER_OTHER
from .sidechains import spawn_calls
from .snapshot import short_key

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

    from core.importing.session import SessionTarget

_LINE_SKIP = frozenset({"type", "uuid", "timestamp", "message"})
_MISSING = object()


class _WriteBehind:
    """The entries of one read, written one line behind it."""

    def _queue(self, node: int, entry_id: str, d: dict[str, Any], number: int, ts,
               start: tuple[int, int]) -> None:
        self._write_held(d)
        self.held = (node, entry_id, d, number, ts)
        self.held_at = start

    def _write_held(self, next_d: dict[str, Any] | None) -> None:
        held = self.held
        if held is None:
            return
        self.held = None
        node, entry_id, d, number, timestamp = held
        target = self._target_for(self.owner[node])
        e = self.eff[node]
        parent_seq = self.seq[e] if e >= 0 else None
        known = target.known.get(entry_id)
        k = self.kind[node]
        message = d.get("message")
        counted = False
        if k == ASSISTANT and isinstance(message, dict):
            msgid = message.get("id") or d.get("requestId")
            if isinstance(msgid, str):
                following = None
                if next_d is not None and next_d.get("type") == "assistant":
                    nm = next_d.get("message")
                    following = (nm.get("id") if isinstance(nm, dict) else None) or \
                        next_d.get("requestId")
                if following != msgid and msgid not in self.counted and not (
                        self.counted_before and short_key(msgid) in self.counted_before):
                    self.counted[msgid] = None
                    counted = True
            else:
                counted = True
        if known is not None:
            self.seq[node] = known
            if k == ASSISTANT:
                learn_tools(message, self.tool_names)
                self._spawns(message, known, target, record=False)
            return
        summary = None
        if k == BOUNDARY and next_d is not None and next_d.get("isCompactSummary") and \
                next_d.get("parentUuid") == d.get("uuid"):
            nm = next_d.get("message")
            summary = content_text(nm.get("content")) if isinstance(nm, dict) else None
        # (the store reads each response's usage from the entry: core/store/usage/rows.py)
        try:
            entry_type, payload, usage = self._convert(d, node, k, timestamp, counted, summary)
        except SHAPE_ERRORS as error:
            self.result.skip(number, odd_shape(error))
            t = d.get("type")
            entry_type, payload, usage = f"claude:{t if isinstance(t, str) else 'unknown'}", \
                dict(d), None
        seq, written = target.add(entry_id, parent_seq, entry_type, payload, timestamp)
        self.seq[node] = seq
        if written:
            if k == ASSISTANT:
                self._spawns(message, seq, target)
            elif k == USER_OTHER and d.get("toolUseResult") is not None:
                self._spawned_agent(d, message, target)

    def _spawns(self, message: Any, seq: int, target: SessionTarget, record: bool = True) -> None:
        """Agent/Task tool calls in this reply: spawn points for the sub-agents they start."""
        for block in spawn_calls(message):
            self.spawn_calls[block["id"]] = seq
            if record:
                target.spawn(f"claude:{block['id']}", seq)

    def _spawned_agent(self, d: dict[str, Any], message: Any, target: SessionTarget) -> None:
        """A tool result that names the sub-agent it ran (`toolUseResult.agentId`): a spawn
        point for sub-agent files without a meta.json naming their tool call."""
        used = d.get("toolUseResult")
        agent = used.get("agentId") if isinstance(used, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(agent, str) or not agent or not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call = block.get("tool_use_id")
                seq = self.spawn_calls.get(call) if isinstance(call, str) else None
                if seq is None and isinstance(call, str):
                    point = self.store.sessions.spawn_point(f"claude:{call}", target.uid)
                    seq = point[1] if point is not None and point[0] == target.id else None
                if seq is not None:
                    target.spawn(f"claude-agent:{agent}", seq)
                return

    def _extra(self, d: dict[str, Any]) -> dict[str, Any]:
        """The line's fields that the entry does not hold elsewhere: less type, uuid,
        timestamp and message, and less those kept once for the file (lineDefaults)."""
        extra = dict(d)
        pop = extra.pop
        for key in _LINE_SKIP:
            pop(key, None)
        if self.defaults:
            get = extra.get
            for key, value in self.defaults.items():
                if get(key, _MISSING) == value:
                    del extra[key]
        return extra

    def _convert(self, d, node, k, timestamp, counted, summary):
        t = d.get("type")
        message = d.get("message")
        if (t == "user" or t == "assistant") and isinstance(message, dict):
            pimsg, usage = convert_message(message, t, timestamp, self.tool_names, counted)
            if d.get("isCompactSummary"):
                pimsg["kind"] = "compaction_summary"
            return MESSAGE, {"message": pimsg, "claude": self._extra(d)}, usage
        if k == BOUNDARY:
            meta = d.get("compactMetadata") if isinstance(d.get("compactMetadata"), dict) else {}
            kept = None
            segment = meta.get("preservedSegment")
            if isinstance(segment, dict) and isinstance(segment.get("headUuid"), str):
                head = self.index.get(segment["headUuid"])
                if head is not None and self._is_ancestor(head, node):
                    kept = segment["headUuid"]
            data = {"summary": summary or str(d.get("content") or ""), "firstKeptEntryId": kept,
                    "tokensBefore": meta.get("preTokens", 0), "claude": self._extra(d)}
            if meta.get("trigger"):
                data["trigger"] = meta["trigger"]
            return COMPACTION, data, None
        if t == "custom-title" and isinstance(d.get("customTitle"), str):
            return SESSION_INFO, {"name": d["customTitle"], "claude": self._extra(d)}, None
        return f"claude:{t if isinstance(t, str) else 'unknown'}", dict(d), None
