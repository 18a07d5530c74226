"""Pick the agent to open a branch in (O): the agents arbor can write a session for, the
one that wrote the branch first, with a toggle that masks secrets in what is written."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from tui.render.formatting import DIM, FAINT
from tui.render.safe_text import safe_line
from .backdrop import FrozenBackdrop
from .focus import focus_now


@dataclass(frozen=True)
class AgentChoice:
    """One agent of the picker."""

    source: str            # its key ("codex")
    title: str             # its name for people
    colour: str
    wrote_it: bool         # the agent that wrote the branch
    installed: bool        # its command is on PATH here


@dataclass(frozen=True)
class Picked:
    source: str
    redact: bool


def option_text(choice: AgentChoice) -> Text:
    line = Text(end="")
    line.append_text(safe_line(f"{choice.title:<14}", style=f"bold {choice.colour}"))
    if choice.wrote_it:
        line.append(f"{'wrote it: carries it on':<26}", "")
    else:
        line.append(f"{'a new session':<26}", DIM)
    if not choice.installed:
        line.append("not on PATH here", "#d7af5f")
    return line


class AgentPicker(FrozenBackdrop[Picked | None]):
    """Dismissed with the chosen agent and whether to mask secrets, or None."""

    DEFAULT_CSS = """
    #agent-choices { height: auto; max-height: 12; }
    #agent-redact { margin-top: 1; }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel"),
                Binding("r", "toggle_redact", "Mask secrets")]

    def __init__(self, what: Text, choices: list[AgentChoice]) -> None:
        super().__init__(id="agent-picker")
        self.what = what
        self.choices = choices
        self.redact = False

    def compose(self) -> ComposeResult:
        title = Text("Open ", "bold")
        title.append_text(self.what)
        title.append(" in…", "bold")
        with VerticalScroll(classes="dialog", id="agent-picker-dialog"):
            yield Static(title, classes="dialog-title")
            yield OptionList(*[Option(option_text(c), id=c.source) for c in self.choices],
                             id="agent-choices")
            yield Static(self._redact_line(), id="agent-redact")
            yield Static(Text("The branch is written as a session of the agent chosen, which "
                              "runs here; arbor comes back when it exits and shows what it "
                              "added. The branch in arbor is not changed.", DIM),
                         classes="dialog-hint")
            yield Static(Text("↑↓ choose · enter open · r mask secrets · escape cancel", FAINT),
                         classes="dialog-hint")

    def _redact_line(self) -> Text:
        line = Text(end="")
        line.append("[x] " if self.redact else "[ ] ", "bold #87d787" if self.redact else DIM)
        line.append("Mask secrets", "bold" if self.redact else "")
        line.append(": API keys, tokens, private keys, passwords", DIM)
        return line

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        focus_now(options)

    def on_click(self, event) -> None:
        if getattr(event.widget, "id", None) == "agent-redact":
            self.action_toggle_redact()

    def action_toggle_redact(self) -> None:
        self.redact = not self.redact
        self.query_one("#agent-redact", Static).update(self._redact_line())

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(Picked(str(event.option.id), self.redact))

    def action_cancel(self) -> None:
        self.dismiss(None)


def what_text(branch_title: str, entry_id: str | None) -> Text:
    """"branch main" or "main up to 3f2a9c1d", for the picker's title."""
    out = safe_line(branch_title, 40, style="bold #5fafff")
    if entry_id:
        out.append(" up to ", "bold")
        out.append_text(safe_line(entry_id[:8], 8, style="bold"))
    return out


def choice_for(agent, source: str, installed: bool) -> AgentChoice:
    return AgentChoice(agent.source, agent.title, agent.colour,
                       agent.source == source, installed)
