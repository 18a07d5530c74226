"""`MemoryStore`: the session protocol of `SessionManager`, held in memory (for tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.model.clock import parse, to_text, utc_now
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM, LABEL, MESSAGE, MODEL_CHANGE, SESSION_INFO,
    THINKING_LEVEL_CHANGE, Entry, role_of)
from core.model.errors import ArborError, NotFound
from core.model.ids import generate_id
from core.history.replay import ReplayState, replay_entries
from .session_types import CompactionEntry, Header

if TYPE_CHECKING:
    from core.model.clock import Clock

CURRENT_VERSION = 3


class MemoryStore:
    def __init__(self, cwd: str = "", *, clock: Clock | None = None):
        self.cwd = cwd
        self.clock = clock or utc_now
        self._entries: dict[str, Entry] = {}
        self._order: list[str] = []
        self._leaf: str | None = None
        self._heads: list[str | None] = []  # earlier leaves left by branch()
        self._labels: dict[str, str] = {}
        self._header: Header | None = None

    def init(self) -> None:
        self.init_with_id("")

    def init_with_id(self, session_id: str) -> None:
        self._header = Header("session", CURRENT_VERSION, session_id or generate_id(),
                              parse(to_text(self.clock())), self.cwd)

    def _append(self, entry_type: str, data: dict[str, Any]) -> str:
        if self._header is None:
            raise ArborError("session not initialised: call init() first")
        entry_id = generate_id()
        while entry_id in self._entries:
            entry_id = generate_id()
        parent = self._entries.get(self._leaf) if self._leaf else None
        depth = parent.depth + 1 if parent else 0
        msg_index = (parent.msg_index if parent else 0) + (1 if entry_type == MESSAGE else 0)
        entry = Entry(len(self._order) + 1, entry_id, 0, parent.seq if parent else None, entry_type,
                      to_text(self.clock()), depth, 0, msg_index, role_of(entry_type, data), data,
                      parent.id if parent else None)
        self._entries[entry_id] = entry
        self._order.append(entry_id)
        self._leaf = entry_id
        return entry_id

    def append_message(self, message: dict[str, Any]) -> str:
        return self._append(MESSAGE, {"message": message})

    def append_compaction(self, summary: str, first_kept_entry_id: str, tokens_before: int) -> str:
        return self._append(COMPACTION, {"summary": summary, "firstKeptEntryId": first_kept_entry_id,
                                         "tokensBefore": tokens_before})

    def append_model_change(self, provider_name: str, model_id: str) -> str:
        return self._append(MODEL_CHANGE, {"provider": provider_name, "modelId": model_id})

    def append_thinking_level_change(self, level: str) -> str:
        return self._append(THINKING_LEVEL_CHANGE, {"thinkingLevel": level})

    def append_session_info(self, name: str) -> str:
        return self._append(SESSION_INFO, {"name": name})

    def append_label(self, target_id: str, label: str | None) -> str:
        if target_id not in self._entries:
            raise NotFound(f"entry {target_id!r} does not exist in this session")
        data: dict[str, Any] = {"targetId": target_id}
        if label:
            data["label"] = label
            self._labels[target_id] = label
        else:
            self._labels.pop(target_id, None)
        return self._append(LABEL, data)

    def append_branch_summary(self, from_id: str, summary: str) -> str:
        return self._append(BRANCH_SUMMARY, {"fromId": from_id, "summary": summary})

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        return self._append(CUSTOM, {"customType": custom_type, "data": data})

    def branch(self, entry_id: str | None) -> None:
        if entry_id is not None and entry_id not in self._entries:
            raise NotFound(f"entry {entry_id!r} does not exist in this session")
        self._heads.append(self._leaf)
        self._leaf = entry_id

    def get_label(self, entry_id: str) -> str | None:
        return self._labels.get(entry_id)

    def path(self) -> list[Entry]:
        out = []
        current = self._entries.get(self._leaf) if self._leaf else None
        while current is not None:
            out.append(current)
            current = self._entries.get(current.parent_id) if current.parent_id else None
        return out[::-1]

    def get_replay_state(self) -> ReplayState:
        return replay_entries(self.path())

    def get_messages(self) -> list[dict[str, Any]]:
        return self.get_replay_state().messages

    def get_leaf_id(self) -> str | None:
        return self._leaf

    def get_latest_compaction(self) -> CompactionEntry | None:
        for entry in reversed(self.path()):
            if entry.type == COMPACTION:
                return CompactionEntry.from_entry(entry)
        return None

    def get_file(self) -> str:
        return ""

    def get_header(self) -> Header | None:
        return self._header

    def entries(self) -> list[Entry]:
        return [self._entries[i] for i in self._order]
