"""`SessionManager`: the Go session `Manager` over the arbor store.

A manager's session is an external session; its leaf is the head of the current internal
session. `branch(entry_id)` starts a new current internal session at that entry, so the
old head stays a browsable branch. Every session of a session dir lives in one
`sessions.db` there, as the Go `OpenRootDB` keeps them.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

from core.actions import operations
from core.model.clock import parse
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM, CUSTOM_MESSAGE, LABEL, MESSAGE, MODEL_CHANGE, SESSION_INFO,
    THINKING_LEVEL_CHANGE, Entry, content_text)
from core.model.errors import AmbiguousId, ArborError, NotFound, OutsideSessionDir, ReplayError
from core.model.ids import generate_id
from .models import InternalSession
from core.history.replay import ReplayState
from .session_types import (
    CompactionEntry, Header, SequencedMessage, SequencedSessionCapabilityEvent,
    SequencedSessionRunEvent, SessionCapabilities, SessionCapabilityEvent, SessionDetail,
    SessionInfo, SessionRunEvent)
from core.store import Store, open_store

ROOT_DB_NAME = "sessions.db"
CURRENT_VERSION = 3
PREVIEW_LENGTH = 80

_roots: dict[str, Store] = {}
_roots_lock = threading.Lock()


def open_root_db(session_dir: str | os.PathLike) -> Store:
    """The shared `sessions.db` of a session dir, migrated; one per process and dir."""
    path = (Path(session_dir).expanduser() / ROOT_DB_NAME).resolve()
    key = str(path)
    with _roots_lock:
        store = _roots.get(key)
        if store is None or store.closed:
            store = _roots[key] = open_store(path)
        return store


def close_root_dbs() -> None:
    with _roots_lock:
        for store in _roots.values():
            store.close()
        _roots.clear()


def apply_migrations(conn) -> int:
    from core.store.sqlite import migrations
    from core.store.sqlite.backend import SQLiteBackend

    return migrations.apply_migrations(conn, backend=SQLiteBackend)


def session_file(db: str | os.PathLike, uid: str) -> str:
    """The file name of a session: `DB#ID`, with `%` and `#` in the id written as `%25` and
    `%23`, so the last `#` always ends the store's path (which may hold `#` itself)."""
    return f"{db}#{uid.replace('%', '%25').replace('#', '%23')}"


def _split_file(path: str) -> tuple[str, str]:
    """(store path, session id) of a `session_file` name."""
    if "#" not in path:
        raise NotFound(f"{path} does not name a session (expected DB#SESSION_ID)")
    db, _, uid = path.rpartition("#")
    return db, re.sub("%2[35]", lambda m: "#" if m.group() == "%23" else "%", uid)


class SessionManager:
    """Manages one session's state and persistence."""

    CURRENT_VERSION = CURRENT_VERSION

    def __init__(self, cwd: str, session_dir: str | os.PathLike, *, kind: str = "session",
                 store: Store | None = None):
        self.cwd = cwd
        self.session_dir = str(session_dir)
        self.kind = kind
        self.store = store or open_root_db(session_dir)
        self.external_session_id: int | None = None
        self.session_id: str | None = None

    # --------------------------------------------------------------- creating
    @classmethod
    def new(cls, cwd: str, session_dir: str | os.PathLike) -> "SessionManager":
        return cls(cwd, session_dir)

    @classmethod
    def new_sub_agent(cls, cwd: str, session_dir: str | os.PathLike) -> "SessionManager":
        """A manager whose sessions are kept apart from the ones a user continues."""
        return cls(cwd, session_dir, kind="subagent")

    def init(self) -> None:
        self.init_with_id("")

    def init_with_id(self, session_id: str) -> None:
        with self.store.transaction():
            external = self.store.sessions.create(
                "", uid=session_id or None, cwd=self.cwd, kind=self.kind,
                header_version=CURRENT_VERSION)
            self.store.branches.create(external.id, name="main", is_current=True)
        self.external_session_id = external.id
        self.session_id = external.uid

    # ---------------------------------------------------------------- opening
    @classmethod
    def _attach(cls, store: Store, session_dir: str, uid: str) -> "SessionManager":
        external = store.sessions.by_uid(uid)
        if external is None:
            raise NotFound(f"no session {uid!r} in {session_dir}")
        manager = cls(external.cwd, session_dir, kind=external.kind, store=store)
        manager.external_session_id = external.id
        manager.session_id = external.uid
        return manager

    @classmethod
    def open(cls, path: str) -> "SessionManager":
        """Open a session by the file name `get_file()` gives (`.../sessions.db#ID`)."""
        db, uid = _split_file(path)
        session_dir = str(Path(db).parent)
        if not Path(db).exists():
            raise NotFound(f"there is no session store at {db}")
        return cls._attach(open_root_db(session_dir), session_dir, uid)

    @classmethod
    def open_by_id(cls, cwd: str, session_dir: str | os.PathLike, session_id: str) -> "SessionManager":
        """The session of `cwd` whose id is, or starts with, `session_id`; ambiguity is an error."""
        store = open_root_db(session_dir)
        found = store.sessions.find(uid_prefix=session_id, cwd=cwd)
        exact = [s for s in found if s.uid == session_id]
        if exact:
            found = exact
        if not found:
            raise NotFound(f"no session matching {session_id!r} for {cwd}")
        if len(found) > 1:
            ids = ", ".join(s.uid for s in found[:5])
            raise AmbiguousId(f"{session_id!r} matches {len(found)} sessions ({ids}); give more of the id")
        return cls._attach(store, str(session_dir), found[0].uid)

    @classmethod
    def open_by_id_exact(cls, session_dir: str | os.PathLike, session_id: str) -> "SessionManager":
        return cls._attach(open_root_db(session_dir), str(session_dir), session_id)

    @classmethod
    def open_by_path_or_id(cls, cwd: str, session_dir: str | os.PathLike, value: str) -> "SessionManager":
        if "#" in value:
            return cls.open(value)
        return cls.open_by_id(cwd, session_dir, value)

    @classmethod
    def continue_recent(cls, cwd: str, session_dir: str | os.PathLike, *,
                        store: Store | None = None) -> "SessionManager":
        """The most recent session for `cwd`, or a new one. `store`: a store other than the
        session dir's `sessions.db` (for example the one `arbor --db` browses)."""
        store = store or open_root_db(session_dir)
        found = store.sessions.find(cwd=cwd, kind="session", limit=1)
        if found:
            return cls._attach(store, str(session_dir), found[0].uid)
        manager = cls(cwd, session_dir, store=store)
        manager.init()
        return manager

    # --------------------------------------------------------------- state
    def _require(self) -> int:
        if self.external_session_id is None:
            raise ArborError("session not initialised: call init() first")
        return self.external_session_id

    def current_branch(self) -> InternalSession:
        branch = self.store.branches.current(self._require())
        if branch is None:
            raise ArborError(f"session {self.session_id} has no current branch")
        return branch

    def _current_branch_id(self) -> int:
        branch_id = self.store.branches.current_id(self._require())
        if branch_id is None:
            raise ArborError(f"session {self.session_id} has no current branch")
        return branch_id

    def _append(self, entry_type: str, data: dict[str, Any]) -> Entry:
        with self.store.transaction():
            return self.store.entries.append_to_branch(self._current_branch_id(), entry_type, data)

    # -------------------------------------------------------------- appending
    def append_message(self, message: dict[str, Any]) -> str:
        if not isinstance(message, dict) or "role" not in message:
            raise ValueError("a message is a dict with a role and content")
        return self._append(MESSAGE, {"message": message}).id

    def append_compaction(self, summary: str, first_kept_entry_id: str, tokens_before: int) -> str:
        return self._append(COMPACTION, {"summary": summary, "firstKeptEntryId": first_kept_entry_id,
                                         "tokensBefore": tokens_before}).id

    def append_model_change(self, provider_name: str, model_id: str) -> str:
        return self._append(MODEL_CHANGE, {"provider": provider_name, "modelId": model_id}).id

    def append_thinking_level_change(self, level: str) -> str:
        return self._append(THINKING_LEVEL_CHANGE, {"thinkingLevel": level}).id

    def append_session_info(self, name: str) -> str:
        with self.store.transaction():
            entry = self._append(SESSION_INFO, {"name": name})
            self.store.sessions.rename(self._require(), name)
            return entry.id

    def append_label(self, target_id: str, label: str | None) -> str:
        """A label entry at the leaf (as pi writes them); None or "" clears the label."""
        with self.store.transaction():
            target = self.store.entries.find(self._require(), target_id)
            if target is None:
                raise NotFound(f"entry {target_id!r} does not exist in this session")
            data: dict[str, Any] = {"targetId": target_id}
            if label:
                data["label"] = label
            entry = self._append(LABEL, data)
            self.store.annotations.add_label(self._require(), label, target_seq=target.seq, entry_seq=entry.seq)
            return entry.id

    def append_branch_summary(self, from_id: str, summary: str) -> str:
        return self._append(BRANCH_SUMMARY, {"fromId": from_id, "summary": summary}).id

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        return self._append(CUSTOM, {"customType": custom_type, "data": data}).id

    def append_custom_message(self, custom_type: str, content: Any, display: bool = True) -> str:
        return self._append(CUSTOM_MESSAGE, {"customType": custom_type, "content": content,
                                             "display": display}).id

    def branch(self, entry_id: str | None) -> InternalSession:
        """Move the leaf to `entry_id` on a new current branch; the old head stays a branch."""
        with self.store.transaction():
            return operations.branch(self.store, self._current_branch_id(), entry_id)

    # ---------------------------------------------------------------- reading
    def get_replay_state(self) -> ReplayState:
        return self.store.paths.replay(self.current_branch().head_seq)

    def get_messages(self) -> list[dict[str, Any]]:
        return self.get_replay_state().messages

    def get_leaf_id(self) -> str | None:
        return self.current_branch().head_id

    def get_latest_compaction(self) -> CompactionEntry | None:
        head = self.current_branch().head_seq
        entry = self.store.paths.newest_compaction(head) if head is not None else None
        return CompactionEntry.from_entry(entry) if entry else None

    def get_header(self) -> Header:
        external = self.store.sessions.get(self._require())
        return Header("session", CURRENT_VERSION, external.uid, external.created_at, external.cwd,
                      external.parent_session)

    def get_file(self) -> str:
        return session_file(self.store.path, self.session_id)

    # ------------------------------------------------------------------ usage
    def record_usage(self, provider: str, protocol: str, model: str, input_tokens: int,
                     output_tokens: int, total_tokens: int, duration_ms: int) -> None:
        self.store.usage.record(self._require(), provider, protocol, model, int(input_tokens),
                                int(output_tokens), int(total_tokens), int(duration_ms))

    def record_usage_from_provider_usage(self, provider: str, protocol: str, model: str,
                                         usage: Any, duration_ms: int) -> None:
        """Accepts a dict or object in OpenAI, Anthropic or pi spelling; no usage records zeros."""
        def pick(*names: str) -> int:
            for name in names:
                value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
                if isinstance(value, (int, float)):
                    return int(value)
            return 0
        if usage is None:
            usage = {}
        inp = pick("input_tokens", "InputTokens", "prompt_tokens", "input")
        out = pick("output_tokens", "OutputTokens", "completion_tokens", "output")
        total = pick("total_tokens", "TotalTokens", "totalTokens") or inp + out
        self.record_usage(provider, protocol, model, inp, out, total, duration_ms)

    # --------------------------------------------------------- static helpers
    generate_id = staticmethod(generate_id)
    apply_migrations = staticmethod(apply_migrations)
    open_root_db = staticmethod(open_root_db)

    @staticmethod
    def delete_session(path: str, session_dir: str | os.PathLike) -> None:
        """Delete the session `path` names, only when it lives in `session_dir`."""
        db, uid = _split_file(path)
        root = (Path(session_dir).expanduser() / ROOT_DB_NAME).resolve()
        if Path(db).resolve() != root:
            raise OutsideSessionDir(f"{path} is not a session of {session_dir}; nothing was deleted")
        store = open_root_db(session_dir)
        external = store.sessions.by_uid(uid)
        if external is None:
            raise NotFound(f"no session {uid!r} in {session_dir}")
        store.sessions.delete(external.id)

    @staticmethod
    def _infos(session_dir, cwd: str | None, detailed: bool) -> list[SessionInfo]:
        """One query for the whole listing; the preview is the first user message."""
        store = open_root_db(session_dir)
        out: list[SessionInfo] = []
        for uid, name, session_cwd, updated, count, message in store.sessions.listing(
                kind="session", cwd=cwd, preview=detailed):
            path = session_file(store.path, uid)
            if not detailed:
                out.append(SessionInfo(path, parse(updated), name, session_cwd))
                continue
            preview = ""
            if isinstance(message, dict):
                preview = " ".join(content_text(message.get("content")).split())
                if len(preview) > PREVIEW_LENGTH:
                    preview = preview[: PREVIEW_LENGTH - 1] + "…"
            out.append(SessionDetail(path, parse(updated), name, session_cwd, uid, count, preview))
        return out

    @staticmethod
    def list_for_dir(cwd: str, session_dir) -> list[SessionInfo]:
        return SessionManager._infos(session_dir, cwd, False)

    @staticmethod
    def list_all(session_dir) -> list[SessionInfo]:
        return SessionManager._infos(session_dir, None, False)

    @staticmethod
    def list_for_dir_detailed(cwd: str, session_dir) -> list[SessionDetail]:
        return SessionManager._infos(session_dir, cwd, True)  # type: ignore[return-value]

    @staticmethod
    def list_all_detailed(session_dir) -> list[SessionDetail]:
        return SessionManager._infos(session_dir, None, True)  # type: ignore[return-value]

    @staticmethod
    def list_session_messages_with_seq(session_dir, session_id: str) -> list[SequencedMessage]:
        """The visible replay of the session's current branch, each message with its seq."""
        manager = SessionManager.open_by_id_exact(session_dir, session_id)
        head = manager.current_branch().head_seq
        store = manager.store
        with store.reading():
            try:
                compaction, start = store.paths.replay_start(head)
            except ReplayError:  # a stored compaction off the path: the whole path, as replay
                compaction, start = None, 0
            out = []
            if compaction is not None:
                from core.history.replay import compaction_summary_message
                out.append(SequencedMessage(compaction.seq, compaction.id,
                                            compaction_summary_message(compaction)))
            from core.history.replay import as_message
            for entry in store.paths.entries(head, start):
                if entry.type == COMPACTION:
                    continue
                message = as_message(entry)
                if message is not None:
                    out.append(SequencedMessage(entry.seq, entry.id, message))
        return out

    @staticmethod
    def list_session_messages_after(session_dir, session_id: str, after_seq: int,
                                    limit: int = 0) -> list[SequencedMessage]:
        """Message entries of the current branch written after the cursor `after_seq`."""
        manager = SessionManager.open_by_id_exact(session_dir, session_id)
        store = manager.store
        head = manager.current_branch().head_seq
        out: list[SequencedMessage] = []
        if head is None:
            return out
        after = after_seq
        while True:
            batch = store.entries.of_session(manager._require(), after_seq=after, limit=500)
            if not batch:
                break
            for entry in batch:
                after = entry.seq
                if entry.type != MESSAGE or entry.seq > head:
                    continue
                if store.paths.at_depth(head, entry.depth) == entry.seq:
                    out.append(SequencedMessage(entry.seq, entry.id, entry.message or {}))
                    if limit and len(out) >= limit:
                        return out
        return out

    # ------------------------------------------------------------ events
    @staticmethod
    def save_session_run_event(session_dir, event: SessionRunEvent) -> str:
        return open_root_db(session_dir).events.add_run_event(event)

    @staticmethod
    def list_session_run_events_with_seq(session_dir, session_id: str, after_seq: int = 0,
                                         limit: int = 0) -> list[SequencedSessionRunEvent]:
        return open_root_db(session_dir).events.run_events(session_id, after_seq, limit)

    @staticmethod
    def list_session_run_events(session_dir, session_id: str) -> list[SessionRunEvent]:
        return [s.event for s in SessionManager.list_session_run_events_with_seq(session_dir, session_id)]

    @staticmethod
    def list_session_run_events_after(session_dir, session_id: str, after_seq: int,
                                      limit: int = 0) -> list[SequencedSessionRunEvent]:
        return SessionManager.list_session_run_events_with_seq(session_dir, session_id, after_seq, limit)

    @staticmethod
    def save_session_capability_event(session_dir, event: SessionCapabilityEvent) -> str:
        return open_root_db(session_dir).events.add_capability_event(event)

    @staticmethod
    def list_session_capability_events_with_seq(session_dir, session_id: str, after_seq: int = 0,
                                                limit: int = 0) -> list[SequencedSessionCapabilityEvent]:
        return open_root_db(session_dir).events.capability_events(session_id, after_seq, limit)

    @staticmethod
    def list_session_capability_events(session_dir, session_id: str) -> list[SessionCapabilityEvent]:
        return [s.event for s in
                SessionManager.list_session_capability_events_with_seq(session_dir, session_id)]

    @staticmethod
    def list_session_capability_events_after(session_dir, session_id: str, after_seq: int,
                                             limit: int = 0) -> list[SequencedSessionCapabilityEvent]:
        return SessionManager.list_session_capability_events_with_seq(session_dir, session_id,
                                                                      after_seq, limit)

    @staticmethod
    def save_session_capabilities(session_dir, caps: SessionCapabilities) -> None:
        open_root_db(session_dir).events.save_capabilities(caps)

    @staticmethod
    def load_session_capabilities(session_dir, session_id: str) -> tuple[SessionCapabilities | None, bool]:
        caps = open_root_db(session_dir).events.load_capabilities(session_id)
        return caps, caps is not None


# Module-level names, as the Go package exports them.
new = SessionManager.new
new_sub_agent = SessionManager.new_sub_agent
open_session = SessionManager.open
open_by_id = SessionManager.open_by_id
open_by_id_exact = SessionManager.open_by_id_exact
open_by_path_or_id = SessionManager.open_by_path_or_id
continue_recent = SessionManager.continue_recent
delete_session = SessionManager.delete_session
list_for_dir = SessionManager.list_for_dir
list_all = SessionManager.list_all
list_for_dir_detailed = SessionManager.list_for_dir_detailed
list_all_detailed = SessionManager.list_all_detailed
list_session_messages_with_seq = SessionManager.list_session_messages_with_seq
list_session_messages_after = SessionManager.list_session_messages_after
save_session_run_event = SessionManager.save_session_run_event
list_session_run_events = SessionManager.list_session_run_events
list_session_run_events_with_seq = SessionManager.list_session_run_events_with_seq
list_session_run_events_after = SessionManager.list_session_run_events_after
save_session_capability_event = SessionManager.save_session_capability_event
list_session_capability_events = SessionManager.list_session_capability_events
list_session_capability_events_with_seq = SessionManager.list_session_capability_events_with_seq
list_session_capability_events_after = SessionManager.list_session_capability_events_after
save_session_capabilities = SessionManager.save_session_capabilities
load_session_capabilities = SessionManager.load_session_capabilities
