"""A one-line text prompt (label, rename): returns the text, or None when cancelled.

The field shows the value with its control characters made visible (`␛`); submitted
without an edit, the value comes back as it was given, not as it was shown."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from .backdrop import FrozenBackdrop
from tui.render.safe_text import clean
from .safe_fields import SafeInput
from .focus import focus_now


class TextPrompt(FrozenBackdrop[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: Text, *, value: str = "", placeholder: str = "",
                 hint: Text | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title_text = title
        self.given = value
        self.initial = clean(value).replace("\n", " ")
        self.placeholder = placeholder
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog small"):
            yield Static(self.title_text, classes="dialog-title")
            yield SafeInput(value=self.initial, placeholder=self.placeholder, id="prompt-input")
            yield Static(self.hint or Text("enter saves · escape cancels", "#808890"), classes="dialog-hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        focus_now(field)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self.given if event.value == self.initial else event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
