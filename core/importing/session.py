"""Writing one external session: find or create it by uid, add only entries that are new.

Entry ids are deterministic (the log's own ids, or `L<line>` for lines that have none),
so a second import of the same file finds every entry already there and adds nothing,
and a file that grew gets only its new lines.

A log its own agent rewrote (pi opening a version 1 file migrates it to version 3 in
place: every line gets a new random id) names entries the store already holds by other
ids. An entry is therefore also recognised by what it is and where it is, as git knows a
commit: the same type, time and data under the same parent (a stored entry, or none for a
root) is the same entry, whatever its id. Its new id becomes an alias of the stored one:
kept in the file's import record (`ALIASES`), so that later lines naming it (a parent, a
label's target, a compaction's first kept entry) find it, and nothing is written twice:
no new branch, no message or response counted again.
"""

from __future__ import annotations

from contextvars import ContextVar
from datetime import datetime

from core.history.lineage import SPAWNED_KINDS
from core.model.entries import MESSAGE, tool_call_count
from .base import SessionResult, stored_time, title_from_text

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any


# Set by the import driver for formats that cannot resume from an offset (Codex, pi): their
# entries are committed about every 0.1 s as they are written, so agents are not locked
# out; an interrupted import of such a file is read again from its start next time, where
# the entries' ids make it add only what is missing.
PACING: ContextVar[Any] = ContextVar("arbor_import_pacing", default=None)

# Set by the import driver to the aliases kept in the file's import record, {session uid:
# {alias: stored entry id}} (see the module doc); a SessionTarget adds those it finds.
ALIASES: ContextVar[Any] = ContextVar("arbor_import_aliases", default=None)

# A resumed read of fewer bytes than this (a log that grew by a few lines) writes its
# entries inline: the bulk writer's thread, its larger page cache (set, then shrunk back)
# and its module cost more than the few rows it would write (~8 ms of a 60 ms import).
INLINE_BELOW = 1 << 20


class StoredIds:
    """Entry id -> seq of a session's stored entries, looked up one at a time (a file that
    grew by a few lines asks a few questions), and read whole once many are asked.

    An id found missing is not asked about again (a new line's id is asked about up to
    three times before its entry is written) until this session writes it (`written`) or
    the store commits and goes on (`Store.write_generation`: others may write between)."""

    WHOLE_AFTER = 2000

    def __init__(self, store, external_session_id: int):
        self.store, self.external_session_id = store, external_session_id
        self.found: dict[str, int] = {}
        self.missing: set[str] = set()
        self.generation = store.write_generation
        self.asked = 0
        self.whole = False

    def get(self, entry_id: str, default=None):
        found = self.found.get(entry_id)
        if found is not None or self.whole:
            return found if found is not None else default
        if entry_id in self.missing:
            if self.generation == self.store.write_generation:
                return default
            self.missing.clear()
            self.generation = self.store.write_generation
        self.asked += 1
        if self.asked > self.WHOLE_AFTER:
            self.found.update(self.store.entries.seqs(self.external_session_id))
            self.whole = True
            self.missing.clear()
            return self.found.get(entry_id, default)
        seq = self.store.entries.seq_of(self.external_session_id, entry_id)
        if seq is None:
            self.missing.add(entry_id)
            return default
        self.found[entry_id] = seq
        return seq

    def __contains__(self, entry_id: str) -> bool:
        return self.get(entry_id) is not None

    def __setitem__(self, entry_id: str, seq: int) -> None:
        self.found[entry_id] = seq
        self.missing.discard(entry_id)

    def written(self, entry_id: str) -> None:
        """This session wrote the entry (its seq is not kept: see `remember_new`)."""
        self.missing.discard(entry_id)


class SessionTarget:
    def __init__(self, store, *, uid: str, name: str, source: str, cwd: str = "",
                 metadata: dict[str, Any] | None = None, created_at: datetime | None = None,
                 kind: str = "session", parent_session: str | None = None,
                 spawn_ref: str | None = None, remember_new: bool = True,
                 ids_on_demand: bool = False, background: bool = True,
                 rewritten_keys: tuple[str, ...] = ()):
        # remember_new=False: the importer keeps its own node -> seq map, so new entry ids
        # are not kept here (saves memory on large files); existing ids still are.
        # background=False: entries are written inline, not by the bulk writer's thread
        # (for a small read, see INLINE_BELOW); the rows are the same.
        # rewritten_keys: data keys the agent's own rewrite of a log may drop or change
        # (not compared when an entry is recognised by its content, see the module doc).
        self.known: dict[str, int] | StoredIds
        self.remember_new = remember_new
        self.store = store
        existing = store.sessions.id_by_uid(uid)   # (not `by_uid`: a session's model and
        if existing is None:                        # its branches are not needed here)
            session = store.sessions.create(
                name, uid=uid, cwd=cwd or "", source=source, kind=kind,
                parent_session=parent_session, metadata=metadata or {}, created_at=created_at)
            self.id = session.id
            self.known: dict[str, int] = {}
            created = True
        else:
            self.id = existing
            # ids_on_demand: the caller asks about few ids (it goes on from an offset)
            self.known = StoredIds(store, existing) if ids_on_demand else \
                store.entries.seqs(existing)
            created = False
            if metadata:
                self.update_metadata(metadata)
        if spawn_ref is not None:
            store.sessions.set_lineage(self.id, spawn_ref=spawn_ref)
        self.uid = uid
        self.source = source
        self.spawns: list[tuple[str, int]] = []
        self.writer = store.entries.writer(self.id, background=background)
        self.result = SessionResult(uid=uid, name=name, source=source, created=created,
                                    spawned=kind in SPAWNED_KINDS)
        self.tool_calls = 0
        shared = ALIASES.get()
        self.aliases: dict[str, str] = shared.setdefault(uid, {}) if shared is not None else {}
        self.rewritten_keys = frozenset(rewritten_keys)
        self._first_new: int | None = None     # the first seq this import wrote
        self._claimed: set[int] = set()          # stored entries recognised by content
        self._roots: list[int] | None = None

    def update_metadata(self, metadata: dict[str, Any], current: dict[str, Any] | None = None) -> None:
        """Merge facts into the session's metadata (empty values never overwrite)."""
        if current is None:
            current = self.store.sessions.metadata(self.id)
        merged = dict(current)
        changed = False
        for key, value in metadata.items():
            if value not in (None, "", [], {}) and merged.get(key) != value:
                merged[key] = value
                changed = True
        if changed:
            self.store.sessions.set_metadata(self.id, merged)

    def set_cwd(self, cwd: str) -> None:
        if cwd:
            self.store.sessions.set_cwd_if_empty(self.id, cwd)

    def seq_of(self, entry_id: str | None) -> int | None:
        if entry_id is None:
            return None
        return self._lookup(entry_id)

    def has(self, entry_id: str) -> bool:
        return self._lookup(entry_id) is not None

    def stored_id(self, entry_id: str) -> str:
        """The id the store knows an entry by (the log's own, unless it is an alias)."""
        return self.aliases.get(entry_id, entry_id)

    def _lookup(self, entry_id: str) -> int | None:
        seq = self.known.get(entry_id)
        if seq is None and self.aliases:
            stored = self.aliases.get(entry_id)
            if stored is not None:
                seq = self.known.get(stored)
                if seq is not None:
                    self.known[entry_id] = seq
        return seq

    def _same_stored(self, parent_seq: int | None, entry_type: str, data: dict[str, Any],
                     timestamp: Any) -> Any:
        """A stored entry that is this one by content and place (see the module doc): one
        written before this import, under the same parent, of the same type, time and data
        (less `rewritten_keys`, arbor's own `arbor:` notes and empty values)."""
        store = self.store
        if parent_seq is None:
            if self._roots is None:
                self._roots = [seq for seq, parent in store.entries.parents(self.id)
                               if parent is None]
            candidates = [store.entries.get(seq) for seq in self._roots]
        else:
            candidates = store.entries.children(parent_seq)
        wanted = None
        for entry in candidates:
            if entry is None or entry.type != entry_type or entry.seq in self._claimed or (
                    self._first_new is not None and entry.seq >= self._first_new):
                continue
            if entry.timestamp != timestamp and stored_time(entry.timestamp) != stored_time(timestamp):
                continue
            if wanted is None:
                wanted = self._comparable(data)
            if self._comparable(entry.data) == wanted:
                return entry
        return None

    def _comparable(self, data: dict[str, Any]) -> dict[str, Any]:
        skip = self.rewritten_keys
        return {k: v for k, v in data.items()
                if v is not None and k not in skip and not k.startswith("arbor:")}

    def add(self, entry_id: str, parent_seq: int | None, entry_type: str, data: dict[str, Any],
            timestamp: Any, tool_calls: int | None = None) -> tuple[int, bool]:
        """Write the entry unless its id is already there. Returns (seq, written).

        `tool_calls`: how many tool calls the message holds, when the caller knows."""
        pacer = PACING.get()
        if pacer is not None and pacer.due():
            pacer.commit_written()
        seq = self._lookup(entry_id)
        if seq is not None:
            return seq, False
        if not self.result.created and (parent_seq is None or self._first_new is None
                                        or parent_seq < self._first_new):
            same = self._same_stored(parent_seq, entry_type, data, timestamp)
            if same is not None:
                self._claimed.add(same.seq)
                self.known[entry_id] = same.seq
                self.aliases[entry_id] = same.id
                self.result.recognised += 1
                return same.seq, False
        seq = self.writer.add_row(parent_seq, entry_type, data, entry_id, timestamp)
        if self._first_new is None:
            self._first_new = seq
        if self.remember_new:
            self.known[entry_id] = seq
        elif type(self.known) is StoredIds:
            self.known.written(entry_id)
        self.result.entries_added += 1
        if entry_type == MESSAGE:
            self.result.messages_added += 1
            if tool_calls is not None:
                self.tool_calls += tool_calls
            else:
                message = data.get("message")
                if isinstance(message, dict):
                    self.tool_calls += tool_call_count(message)
        return seq, True

    def flush(self) -> None:
        """Write buffered entries (call before reading them back from the store)."""
        self.writer.flush()
        self._write_spawns()

    def spawn(self, key: str, seq: int) -> None:
        """The entry `seq` started a child session known by `key` (see core.history.lineage);
        recorded once the entry itself is written."""
        self.spawns.append((key, seq))

    def _write_spawns(self) -> None:
        for key, seq in self.spawns:
            self.store.sessions.add_spawn_point(self.id, key, seq)
        self.spawns.clear()

    def finish(self, *, name: str | None = None) -> SessionResult:
        self.writer.flush()
        self._write_spawns()
        store = self.store
        if name:
            stored = store.sessions.name(self.id)
            if stored is not None and (self.result.created or not stored):
                store.sessions.rename(self.id, name)
            self.result.name = name if (self.result.created or not stored) else stored
        else:
            self.result.name = store.sessions.name(self.id) or ""
        if self.tool_calls:
            store.branches.add_tool_calls_to_current(self.id, self.tool_calls)
        self.result.entries_total, self.result.branches_total = store.sessions.sizes(self.id)
        return self.result


def first_text_title(store, seqs: list[int], limit: int = 48) -> str:
    """The text of the first user message among these entries, as a short name."""
    from core.model.entries import content_text

    for seq in seqs[:64]:
        entry = store.entries.get(seq)
        if entry is None:
            continue
        message = entry.message
        if message and message.get("role") == "user":
            text = content_text(message.get("content"))
            if text.strip():
                return title_from_text(text, limit)
    return ""
