"""The seed API's run and capability events, and a session's capabilities."""

from __future__ import annotations

import json

from core.model.clock import parse, to_text

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor

    from core.seed.session_types import (
        SequencedSessionCapabilityEvent, SequencedSessionRunEvent, SessionCapabilities,
        SessionCapabilityEvent, SessionRunEvent)

from core.store.records import _dumps
from . import Room


class EventsRoom(Room):
    def add_run_event(self, event: SessionRunEvent) -> str:
        """Record a run event (an id is given when it has none) and return its id."""
        event.id = event.id or self._store.id_factory() + self._store.id_factory()
        stamp = to_text(event.timestamp or self._store.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.RUN_EVENT_INSERT,
                         (event.id, event.session_id, event.run_id, event.event_type, event.source,
                          event.status, event.model, event.mode, stamp,
                          None if event.data is None else _dumps(event.data)))
        return event.id

    def run_events(self, session_id: str, after_seq: int = 0, limit: int = 0
                   ) -> list[SequencedSessionRunEvent]:
        """A session's run events after the cursor `after_seq`, oldest first."""
        from core.seed.session_types import SequencedSessionRunEvent, SessionRunEvent

        if limit:
            rows = self._all(self._sql.RUN_EVENTS_AFTER_LIMIT, (session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.RUN_EVENTS_AFTER, (session_id, after_seq))
        return [SequencedSessionRunEvent(r[0], SessionRunEvent(
            r[2], r[4], r[1], r[3], r[5], r[6], r[7], r[8], parse(r[9]),
            json.loads(r[10]) if r[10] else None)) for r in rows]

    def add_capability_event(self, event: SessionCapabilityEvent) -> str:
        """Record a capability event (an id is given when it has none) and return its id."""
        event.id = event.id or self._store.id_factory() + self._store.id_factory()
        stamp = to_text(event.timestamp or self._store.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.CAPABILITY_EVENT_INSERT,
                         (event.id, event.session_id, event.run_id, event.event_type, event.source,
                          event.actor, event.capability, event.old_value, event.new_value, stamp,
                          None if event.data is None else _dumps(event.data)))
        return event.id

    def capability_events(self, session_id: str, after_seq: int = 0, limit: int = 0
                          ) -> list[SequencedSessionCapabilityEvent]:
        """A session's capability events after the cursor `after_seq`, oldest first."""
        from core.seed.session_types import SequencedSessionCapabilityEvent, SessionCapabilityEvent

        if limit:
            rows = self._all(self._sql.CAPABILITY_EVENTS_AFTER_LIMIT,
                             (session_id, after_seq, int(limit)))
        else:
            rows = self._all(self._sql.CAPABILITY_EVENTS_AFTER, (session_id, after_seq))
        return [SequencedSessionCapabilityEvent(r[0], SessionCapabilityEvent(
            r[2], r[4], r[1], r[3], r[5], r[6], r[7], r[8], r[9], parse(r[10]),
            json.loads(r[11]) if r[11] else None)) for r in rows]

    def save_capabilities(self, caps: SessionCapabilities) -> None:
        """A session's capabilities (the newest save wins)."""
        stamp = to_text(caps.updated_at or self._store.clock())
        with self.transaction() as conn:
            conn.execute(self._sql.CAPABILITIES_SET,
                         (caps.session_id, caps.mode, int(caps.delegate_mode),
                          int(caps.multi_agent), int(caps.workflows), int(caps.web_search),
                          int(caps.browser), int(caps.a2a_master), stamp))

    def load_capabilities(self, session_id: str) -> SessionCapabilities | None:
        from core.seed.session_types import SessionCapabilities

        row = self._one(self._sql.CAPABILITIES_GET, (session_id,))
        if row is None:
            return None
        return SessionCapabilities(row[0], row[1], bool(row[2]), bool(row[3]), bool(row[4]),
                                   bool(row[5]), bool(row[6]), bool(row[7]), parse(row[8]))
