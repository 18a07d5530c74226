"""The Go session package's record types, in Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.model.entries import Entry


@dataclass
class Header:
    type: str = "session"
    version: int = 3
    id: str = ""
    timestamp: datetime | None = None
    cwd: str = ""
    parent_session: str | None = None


@dataclass
class CompactionEntry:
    id: str
    parent_id: str | None
    timestamp: str
    summary: str
    first_kept_entry: str
    tokens_before: int
    summary_version: int = 0
    previous_compaction_id: str = ""
    last_summarized_entry: str = ""
    type: str = "compaction"

    @classmethod
    def from_entry(cls, entry: Entry) -> "CompactionEntry":
        data = entry.data
        return cls(entry.id, entry.parent_id, entry.timestamp, str(data.get("summary", "")),
                   str(data.get("firstKeptEntryId", "")), int(data.get("tokensBefore", 0) or 0),
                   int(data.get("summaryVersion", 0) or 0), str(data.get("previousCompactionId", "")),
                   str(data.get("lastSummarizedEntryId", "")))


@dataclass
class SessionInfo:
    path: str
    mod_time: datetime | None
    name: str
    cwd: str


@dataclass
class SessionDetail(SessionInfo):
    id: str = ""
    message_count: int = 0
    preview: str = ""


@dataclass
class SequencedMessage:
    seq: int
    entry_id: str
    message: dict[str, Any]


@dataclass
class SessionRunEvent:
    session_id: str
    event_type: str = ""
    id: str = ""
    run_id: str = ""
    source: str = ""
    status: str = ""
    model: str = ""
    mode: str = ""
    timestamp: datetime | None = None
    data: Any = None


@dataclass
class SessionCapabilityEvent:
    session_id: str
    event_type: str = ""
    id: str = ""
    run_id: str = ""
    source: str = ""
    actor: str = ""
    capability: str = ""
    old_value: str = ""
    new_value: str = ""
    timestamp: datetime | None = None
    data: Any = None


@dataclass
class SequencedSessionRunEvent:
    seq: int
    event: SessionRunEvent


@dataclass
class SequencedSessionCapabilityEvent:
    seq: int
    event: SessionCapabilityEvent


@dataclass
class SessionCapabilities:
    session_id: str
    mode: str = ""
    delegate_mode: bool = False
    multi_agent: bool = False
    workflows: bool = False
    web_search: bool = False
    browser: bool = False
    a2a_master: bool = False
    updated_at: datetime | None = None


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
