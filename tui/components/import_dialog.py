"""Import agent logs from inside the app: paths typed in, or the usual places discovered."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from core.agents.registry import titles_text

from .backdrop import FrozenBackdrop
from tui.render.formatting import DIM, FAINT
from .safe_fields import SafeInput
from .focus import focus_now


class ImportDialog(FrozenBackdrop[list[Path] | str | None]):
    """Returns a list of paths, the string "discover", or None."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="import-dialog"):
            yield Static(Text("Import agent logs", "bold"), classes="dialog-title")
            yield Static(Text(f"Files or folders of {titles_text()}, separated by spaces; "
                              "quote paths with spaces.", DIM), classes="dialog-hint")
            yield SafeInput(placeholder="~/.claude/projects ~/.codex/sessions", id="import-paths")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Import", variant="primary", id="import")
                yield Button("Discover the usual places", id="discover")
                yield Button("Cancel", id="cancel")
            yield Static(Text("enter imports · escape cancels", FAINT), classes="dialog-hint")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        focus_now(field)

    def _paths(self) -> list[Path] | None:
        try:
            words = shlex.split(self.query_one(Input).value)
        except ValueError as error:
            self.app.say(f"Cannot read the paths: {error}", severity="error")
            return None
        return [Path(word).expanduser() for word in words]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        paths = self._paths()
        if paths:
            self.dismiss(paths)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "import":
            paths = self._paths()
            if paths:
                self.dismiss(paths)
            elif paths is not None:
                self.notify("Type one or more paths, or choose Discover.", severity="warning", markup=False)
        elif event.button.id == "discover":
            self.dismiss("discover")
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
