"""A yes/no question: `y`/enter confirms, `n`/escape cancels."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from .backdrop import FrozenBackdrop
from .focus import focus_now


class ConfirmDialog(FrozenBackdrop[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, title: Text, question: Text, *, yes: str = "Yes", no: str = "Cancel") -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog small"):
            yield Static(self.title_text, classes="dialog-title")
            yield Static(self.question, classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="warning", id="yes")
                yield Button(self.no, id="no")

    def on_mount(self) -> None:
        focus_now(self.query_one("#yes", Button))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
