"""The shape shared by dialogs that end in a confirm or a cancel (compaction, rollback)."""

from __future__ import annotations

from typing import TypeVar

from textual.binding import Binding
from textual.widgets import Button

from .backdrop import FrozenBackdrop

ResultT = TypeVar("ResultT")


class ActionDialog(FrozenBackdrop[ResultT]):
    """escape or the Cancel button dismisses with None; the `confirm` button runs
    `action_confirm`, which each dialog defines (and binds to ctrl+s with its own name)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "confirm":
            self.action_confirm()
        else:
            self.action_cancel()

    def action_confirm(self) -> None:
        raise NotImplementedError

    def action_cancel(self) -> None:
        self.dismiss(None)
