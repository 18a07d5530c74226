"""Keys in the order they were typed, each acting on what the keys before it left.

Textual 8.2.8 routes a key the moment the app reads it: to the widget focused then. The
key's binding runs later, when the key has bubbled back up to the app. Keys read in one
burst (a fast typist, a paste of keys, tmux send-keys) are therefore all routed before the
first one acts: `l` opens the label prompt, but the `a` typed right after it already went
to the pane behind; `escape` closes a dialog, but the `r` after it went into the dialog.

`KeysInOrder` (an App mixin) holds each key until the one before it is done: it has come
back up to the app (its binding ran) or stopped on the way, which a callback sent up the
same path right behind it tells; and when that key changed the screen (a dialog opened or
closed), until the new screen has been drawn and focused. Then the next key is routed,
to the widget focused now. A key held longer than SAFETY seconds goes on anyway.
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar

from textual import events
from textual.app import App
from textual.dom import DOMNode

SAFETY = 0.5  # seconds: the longest a key waits for the one before it
ReturnType = TypeVar("ReturnType")


class KeysInOrder(App[ReturnType]):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._held: deque[events.Key] = deque()
        self._in_flight: events.Key | None = None
        self._flight_screen = None
        self._flight_timer = None

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            if not event.is_forwarded:
                self._held.append(event)
                await self._send_held()
                return
            await super().on_event(event)  # back up at the app: its bindings run
            if event is self._in_flight:
                self._done(event)
            return
        await super().on_event(event)

    async def _send_held(self) -> None:
        while self._held and self._in_flight is None:
            event = self._held.popleft()
            target = self.focused or self.screen  # where App.on_event routes it
            self._in_flight, self._flight_screen = event, self.screen
            await super().on_event(event)  # a priority binding, or routed to `target`
            if not event.is_forwarded:  # a priority binding took it: done already
                self._landed()
                continue
            self._follow(target, event)
            if self._in_flight is event:
                self._flight_timer = self.set_timer(SAFETY, lambda: self._overdue(event),
                                                    name="key order")

    def _follow(self, node: DOMNode, event: events.Key) -> None:
        """A callback behind the key in `node`'s queue, then in its parent's, up to the app:
        when it arrives, the key has arrived before it, or stopped on the way."""
        def step() -> None:
            if self._in_flight is not event:
                return
            parent = node._parent
            if parent is None or parent is self:
                if not self.call_later(self._done, event):
                    self._done(event)
            else:
                self._follow(parent, event)

        if not node.call_later(step):  # closed meanwhile: the key went no further
            self._done(event)

    def _done(self, event: events.Key) -> None:
        if self._in_flight is not event:
            return
        screen = self.screen
        if screen is not self._flight_screen:
            # a dialog opened or closed: the next key goes to it once it is drawn and has
            # its focus (given by a callback queued on the app while it mounted)
            self._flight_screen = screen
            if screen.call_after_refresh(lambda: self.call_later(self._landed_of, event)):
                return
        self._landed()

    def _landed_of(self, event: events.Key) -> None:
        if self._in_flight is event:
            self._landed()

    def _landed(self) -> None:
        self._in_flight = None
        if self._flight_timer is not None:
            self._flight_timer.stop()
            self._flight_timer = None
        if self._held:
            self.call_next(self._send_held)

    def _overdue(self, event: events.Key) -> None:
        if self._in_flight is event:
            self._landed()
