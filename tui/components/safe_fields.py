"""Text fields that never hold a control character.

Textual's `Input` and `TextArea` draw what they hold as it is: an ESC pasted into one (a
name copied from a log, say) went to the terminal, where an OSC 52 writes the clipboard
and `\\x1b[2J` clears the screen. These take every text they are given (typed, pasted,
set) through `safe_text.clean`, so a control character is shown as its picture (`␛`) and
the text a dialog returns is the text the user saw.
"""

from __future__ import annotations

from textual.widgets import Input, TextArea

from tui.render.safe_text import clean


class SafeInput(Input):
    def replace(self, text: str, start: int, end: int) -> None:
        super().replace(clean(text), start, end)   # (typed and pasted text comes here)

    def validate_value(self, value: str) -> str:
        return clean(value)


class SafeTextArea(TextArea):
    def edit(self, edit):
        edit.text = clean(edit.text)   # (typed, pasted and inserted text comes here)
        return super().edit(edit)

    def load_text(self, text: str) -> None:
        super().load_text(clean(text))
