"""The footer: the keys that apply to the focus, as many as fit, never one drawn under another.

Textual's Footer lays every shown binding out in a row that scrolls sideways and docks the
command-palette key over its right end: on a narrow terminal the row runs on under that
key (a label cut in the middle, a stray letter after "palette"). This one lays out only the
keys that fit whole, in the order the bindings give them (the most useful first), and lays
them out again when its width changes.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def key_width(key_display: str, description: str) -> int:
    """Cells a compact FooterKey takes, with the margin after it."""
    return cell_len(key_display) + (1 + cell_len(description) if description else 0) + 1


class KeyFooter(Footer):
    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("compact", True)
        super().__init__(**kwargs)
        self._laid_out_width = 0
        self.dropped: list[str] = []     # the keys left out for want of room (tests look)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        width = self.size.width or self.app.size.width
        self._laid_out_width = width
        active = self.screen.active_bindings
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        room = width
        if palette is not None:
            _node, binding, _enabled, _tooltip = palette
            # its left border, the key, a space, the description
            room -= 1 + key_width(self.app.get_key_display(binding), binding.description)
        seen: set[str] = set()
        self.dropped = []
        for _node, binding, enabled, tooltip in active.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            display = self.app.get_key_display(binding)
            need = key_width(display, binding.description)
            if need > room:
                self.dropped.append(binding.key)
                room = 0          # keep the order: nothing after a key that did not fit
                continue
            room -= need
            yield FooterKey(binding.key, display, binding.description, binding.action,
                            disabled=not enabled, tooltip=tooltip).data_bind(compact=Footer.compact)
        if palette is not None:
            _node, binding, enabled, tooltip = palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and event.size.width != self._laid_out_width:
            self.call_after_refresh(self.recompose)
