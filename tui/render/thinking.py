"""Thinking hidden (H): a message as the messages pane draws it without its thinking.

The stored entry is never changed: the pane draws a copy whose content has no thinking
blocks (and says so where a reply had nothing else)."""

from __future__ import annotations

from dataclasses import replace

from core.model import values
from core.model.entries import block_type

HIDDEN_NOTE = "∴ thinking hidden (H shows it)"


def has_thinking(item) -> bool:
    message = item.entry.message if item is not None else None
    content = message.get("content") if message else None
    return isinstance(content, list) and any(
        isinstance(block, dict) and block_type(block) in ("thinking", "redacted_thinking")
        for block in content)


def without_thinking(item):
    """`item` (a MessageSource.Item), or a copy drawn without its thinking blocks."""
    if not has_thinking(item):
        return item
    entry = item.entry
    message = entry.message
    kept = [block for block in message["content"]
            if not (isinstance(block, dict)
                    and block_type(block) in ("thinking", "redacted_thinking"))]
    if not kept:
        kept = [{"type": "text", "text": HIDDEN_NOTE}]
    data = dict(entry.data)
    data["message"] = {**message, "content": kept}
    return replace(item, entry=values.replace(entry, data=data))
