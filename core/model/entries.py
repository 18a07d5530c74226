"""Entries: the immutable commits of the tree, and what can be read out of their data."""

from __future__ import annotations

import json

from .values import Record

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

# Entry types of the Go session package (and pi); any other type is kept as given.
SESSION = "session"
MESSAGE = "message"
MODEL_CHANGE = "model_change"
THINKING_LEVEL_CHANGE = "thinking_level_change"
COMPACTION = "compaction"
BRANCH_SUMMARY = "branch_summary"
CUSTOM = "custom"
CUSTOM_MESSAGE = "custom_message"
LABEL = "label"
SESSION_INFO = "session_info"
# A `custom` entry standing for a LangGraph checkpoint (written by core.langgraph's
# checkpointer, and by the LangGraph importer for a checkpoint that added no message).
LANGGRAPH_CHECKPOINT = "langgraph:checkpoint"

KNOWN_TYPES = frozenset(
    {MESSAGE, MODEL_CHANGE, THINKING_LEVEL_CHANGE, COMPACTION, BRANCH_SUMMARY, CUSTOM,
     CUSTOM_MESSAGE, LABEL, SESSION_INFO}
)

TOOL_CALL_BLOCKS = frozenset({"toolCall", "tool_call", "tool_use", "function_call", "server_tool_use"})
TOOL_RESULT_BLOCKS = frozenset({"toolResult", "tool_result", "function_call_output"})

# Only this much of one entry's text goes into the full-text index.
FTS_TEXT_LIMIT = 64 * 1024


class Entry(Record):
    """One stored entry of a session's tree (a row of `entries`)."""

    __slots__ = _fields = ("seq", "id", "external_session_id", "parent_seq", "type", "timestamp",
                           "depth", "chain", "msg_index", "role", "data", "parent_id")
    seq: int
    id: str
    external_session_id: int
    parent_seq: int | None
    type: str
    timestamp: str
    depth: int
    chain: int
    msg_index: int
    role: str | None
    data: dict[str, Any]
    parent_id: str | None

    def __init__(self, seq: int, id: str, external_session_id: int, parent_seq: int | None,
                 type: str, timestamp: str, depth: int, chain: int, msg_index: int,
                 role: str | None, data: dict[str, Any] | None = None,
                 parent_id: str | None = None):
        self.seq = seq
        self.id = id
        self.external_session_id = external_session_id
        self.parent_seq = parent_seq
        self.type = type
        self.timestamp = timestamp
        self.depth = depth
        self.chain = chain
        self.msg_index = msg_index
        self.role = role
        self.data = {} if data is None else data
        self.parent_id = parent_id

    @property
    def message(self) -> dict[str, Any] | None:
        if self.type == MESSAGE:
            message = self.data.get("message")
            return message if isinstance(message, dict) else None
        return None

    def to_dict(self) -> dict[str, Any]:
        """The entry as a pi/Go JSONL line: type, id, parentId, timestamp, then its fields."""
        out: dict[str, Any] = {
            "type": self.type,
            "id": self.id,
            "parentId": self.parent_id,
            "timestamp": self.timestamp,
        }
        for key, value in self.data.items():
            out.setdefault(key, value)
        return out


def role_of(entry_type: str, data: dict[str, Any]) -> str | None:
    if entry_type == MESSAGE and isinstance(data.get("message"), dict):
        role = data["message"].get("role")
        return str(role) if role is not None else None
    return None


_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
# Built once: json.dumps() with an option builds a new encoder on every call.
_encode_args = json.JSONEncoder(ensure_ascii=False).encode


def block_type(block: dict[str, Any]) -> str:
    """A content block's type, "" when it is not text (a log may hold any JSON there)."""
    kind = block.get("type")
    return kind if type(kind) is str else ""


def content_text(content: Any) -> str:
    """The readable text of a message's content: a string, or text-like parts of its blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content)
    if len(content) == 1 and type(content[0]) is dict:  # the common case: one block
        block = content[0]
        kind = block_type(block)
        if kind in _TEXT_BLOCKS:
            text = block.get("text", "")
            return text if type(text) is str else str(text)
        if kind == "thinking":
            text = block.get("thinking", "")
            return text if type(text) is str else str(text)
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
            continue
        if not isinstance(block, dict):
            continue
        kind = block_type(block)
        if kind in _TEXT_BLOCKS:
            parts.append(str(block.get("text", "")))
        elif kind == "thinking":
            parts.append(str(block.get("thinking", "")))
        elif kind in TOOL_CALL_BLOCKS:
            name = block.get("name", "")
            args = block.get("arguments", block.get("input", block.get("args")))
            parts.append(f"{name} {_encode_args(args) if args is not None else ''}")
        elif kind in TOOL_RESULT_BLOCKS:
            parts.append(content_text(block.get("content", block.get("output"))))
        elif "text" in block:
            parts.append(str(block["text"]))
    return "\n".join([p for p in parts if p])


def entry_text(entry_type: str, data: dict[str, Any]) -> str:
    """What the full-text index holds for an entry."""
    if entry_type in (MESSAGE, CUSTOM_MESSAGE):
        message = data.get("message", data)
        if isinstance(message, dict):
            return content_text(message.get("content"))
        return ""
    if entry_type in (COMPACTION, BRANCH_SUMMARY):
        return str(data.get("summary", ""))
    if entry_type == SESSION_INFO:
        return str(data.get("name", ""))
    return ""


def search_text(entry_type: str, data: dict[str, Any]) -> str:
    """Exactly the text the full-text index holds for an entry.

    The index keeps no copy of it (it is contentless), so removing an entry from the index
    needs this same text again: it must stay a pure function of the stored entry. Text that
    UTF-8 cannot hold (lone surrogates) is written with "?" in its place.
    """
    if entry_type == MESSAGE:  # entry_text's first case, without the call (the common one)
        message = data.get("message", data)
        text = content_text(message.get("content")) if isinstance(message, dict) else ""
    else:
        text = entry_text(entry_type, data)
    if not text:
        return ""
    text = text[:FTS_TEXT_LIMIT]
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def tool_call_count(message: dict[str, Any] | None) -> int:
    if not message:
        return 0
    content = message.get("content")
    count = 0
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block_type(block) in TOOL_CALL_BLOCKS:
                count += 1
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        count += len(calls)
    return count


def estimate_tokens(text: str) -> int:
    """A rough token estimate (about four characters a token), as pi estimates."""
    return (len(text) + 3) // 4


def message_tokens(message: dict[str, Any] | None) -> int:
    if not message:
        return 0
    return estimate_tokens(content_text(message.get("content"))) + 4


def langgraph_checkpoint(entry_type: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """What a LangGraph checkpoint entry says of its checkpoint (id, step, source), or None
    when the entry is not one."""
    if entry_type != CUSTOM or data.get("customType") != LANGGRAPH_CHECKPOINT:
        return None
    inner = data.get("data")
    if not isinstance(inner, dict):
        return {}
    meta = inner.get("metadata") if isinstance(inner.get("metadata"), dict) else {}
    return {"checkpoint_id": inner.get("checkpoint_id"),
            "step": inner.get("step", meta.get("step")),
            "source": inner.get("source", meta.get("source"))}
