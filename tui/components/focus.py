"""Focus given at once when a screen opens on a key.

`Widget.focus()` only queues the change, behind the keys already waiting: keys typed in
the same burst as the key that opened a dialog (a paste, a script's `send-keys 'Rnew
name'`, a fast typist) reached the dialog before its field had focus, and the first of them
was lost. `Screen.set_focus` takes effect at once: the next key goes to the field (which
selects its text first, so a prefilled name is replaced by what is typed)."""

from __future__ import annotations

from textual.widget import Widget


def focus_now(widget: Widget) -> None:
    widget.screen.set_focus(widget)
