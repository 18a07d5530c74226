"""The help screen: every key, what it does, and the model in a few lines."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from .backdrop import FrozenBackdrop

KEYS = [
    ("Move", [
        ("tab / shift+tab", "next / previous pane"),
        ("z", "zoom: the pane with focus alone, full width (z again: every pane). Narrower "
              "than 100 columns the pane with focus and the one it drives share the width "
              "(messages alone); narrower than 70, one pane at a time"),
        ("↑ ↓ j k", "move the cursor; in a message taller than the screen, a line at a time"),
        ("pgup pgdn", "a page up, down (through a long message first)"),
        ("home end  g G", "the first, the last"),
        ("enter", "sessions: open · branches: make current · messages: open/fold "
                  "(on a sub-agent: open its session)"),
        ("space", "open or fold a message (tool calls and results start folded), a sub-agent's "
                  "thread under its tool call, or the sub-agents and forks listed under a session"),
        ("← →", "sessions: fold / list the sub-agents and forks under a session"),
    ]),
    ("Change (nothing is ever deleted)", [
        ("b", "branch at the highlighted message, or at the highlighted branch's head "
              "(named: enter accepts the suggested name)"),
        ("r", "roll back to a checkpoint or the highlighted message (with a branch summary)"),
        ("l", "label the highlighted message or branch (empty clears)"),
        ("m", "a named checkpoint at the highlighted message or branch head"),
        ("c", "compact the branch: preview, edit the summary, confirm"),
        ("enter", "make the highlighted branch current"),
        ("a", "sessions: archive (confirmed) · branches: hide (confirmed), or show again"),
        ("R", "rename the highlighted session, or branch"),
        ("u", "undo the last operation of this app (branch, roll back, label, checkpoint, "
              "compact, archive, hide, make current, rename); again: the one before it"),
        ("A", "show archived sessions and hidden branches (or stop showing them)"),
    ]),
    ("Sessions", [
        ("y", "copy the highlighted session's uid (under the pane, with its project folder; "
              "arbor export and arbor resume take it)"),
        ("p", "list only the highlighted session's project, or all again"),
        ("x", "stop the first import (a store's first start imports the agents' logs, newest "
              "first; the next start goes on where it stopped)"),
    ]),
    ("Carry on in your agent", [
        ("o", "open in agent: the highlighted branch, or the branch up to the highlighted "
              "message, as a new session of the agent that wrote it (pi, Claude Code, Codex), "
              "run here; arbor comes back when the agent exits"),
        ("O", "open in another agent: pick one of the agents arbor writes sessions for (the "
              "one that wrote the branch first); the branch, its tool calls under the agent's "
              "own tools, as a new session of that agent, run here; r in the picker masks "
              "secrets; a branch too large for the agent is offered compacted first"),
    ]),
    ("The entry tree", [
        ("t", "branches pane: show the session's entries as a tree (t again: the branches)"),
        ("f", "cycle the filter: default, no tools, user only, labelled, everything"),
        ("space ← →", "fold / unfold the subtree under an entry, or a run of tool steps"),
        ("enter", "show the entry in the messages pane, in a branch through it"),
        ("ctrl+f  n N", "find words in this session (and labels); next / previous found"),
        ("T", "show when each label was set"),
        ("l  b", "label the entry; branch at it"),
    ]),
    ("Look", [
        ("v", "toggle replayed context (compaction applied) / raw entries (in the context "
              "view a reply written as several entries is one message, each tool call drawn "
              "with its result: diffs, commands and output, numbered lines, checklists)"),
        ("f", "messages pane: the whole highlighted message, nothing cut, full screen; p there opens it in "
              "$PAGER"),
        ("F", "filter the messages as the entry tree's f does: default (no bookkeeping lines, "
              "model changes or labels), no tools, user only, labelled, everything"),
        ("H", "hide / show the thinking of every reply (the entries are kept as they are)"),
        ("d", "compare the highlighted branch with another of the session: both from where "
              "they parted, side by side (stacked when narrow), with what each cost, the files "
              "each changed, its tools and its messages; tab switches side, enter shows a message on "
              "its branch, f lists every file either side changed, escape goes back"),
        ("/", "search session names (as typed: pieces of words, typos) and all message text "
              "(words by their stems: migration finds Migrate; \"quotes\" for an exact phrase)"),
        ("$", "usage: cost by model over the last 30 days, by project, the most expensive "
              "sessions (enter opens one; copies made by o count in their original's row); "
              "there, w m y a: the last week, month, year, all of it; c: dates typed; costs "
              "also show on sessions, branches and responses"),
        ("ctrl+p", "command palette (every action, and Import agent logs…)"),
        ("?", "this help"),
        ("q", "quit"),
    ]),
]


def help_text() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(justify="right", style="bold #87d787", no_wrap=True)
    table.add_column(style="#c8c8c8")
    for section, keys in KEYS:
        if table.row_count:
            table.add_row(Text(""), Text(""))
        table.add_row(Text(""), Text(section, "bold #5fafff"))
        for key, what in keys:
            table.add_row(Text(key), Text(what))
    table.add_row(Text(""), Text(""))
    table.add_row(Text(""), Text("Sessions hold branches; a branch is a head entry on a tree of "
                                 "immutable entries. Branching and rolling back make a new head; "
                                 "compaction appends a summary entry.", "#808890"))
    return table


class HelpScroll(VerticalScroll):
    """The help's text, focused from the moment it opens: the scrolling keys of a container,
    and those of the panes and of a pager (j k, space, g G)."""

    BINDINGS = [
        Binding("down,j", "scroll_down", "Down", show=False),
        Binding("up,k", "scroll_up", "Up", show=False),
        Binding("pagedown,space", "page_down", "Page down", show=False),
        Binding("pageup,b", "page_up", "Page up", show=False),
        Binding("end,G", "scroll_end", "End", show=False),
        Binding("home,g", "scroll_home", "Top", show=False),
    ]


class HelpScreen(FrozenBackdrop[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]
    AUTO_FOCUS = "#help-body"

    def compose(self) -> ComposeResult:
        # (the title and the keys that scroll stay in sight; the text between them scrolls)
        with Vertical(classes="dialog wide", id="help-dialog") as dialog:
            dialog.border_title = Text("arbor · keys", "bold")
            with HelpScroll(id="help-body"):
                yield Static(help_text())
            yield Static(Text("↑ ↓ j k scroll · pgdn space page · home end · escape closes",
                              "#5c6370"), classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)
