"""The command palette (ctrl+p): every arbor action, with its key and what it does."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from core.agents.registry import titles_text

# (title, key, app action, help)
COMMANDS: list[tuple[str, str, str, str]] = [
    ("Branch", "b", "branch", "New branch at the highlighted message, or at the highlighted branch's head"),
    ("Roll back", "r", "rollback", "New current branch at a checkpoint or the highlighted message"),
    ("Label", "l", "label", "Label the highlighted message or branch (empty clears)"),
    ("Compact branch", "c", "compact", "Preview and compact the shown branch"),
    ("Compare branches", "d", "compare", "The highlighted branch against another of the session, side by "
     "side from where they parted: messages, tool calls, files changed, tokens and cost"),
    ("Make current", "enter", "make_current", "Make the highlighted branch current"),
    ("Open in agent", "o", "open_in_agent", "Carry on from the highlighted branch (or the branch up to the "
     "highlighted message) in the agent that wrote it"),
    ("Open in another agent", "O", "open_in_other_agent", "Carry on from the highlighted branch (or "
     "the branch up to the highlighted message) in another agent, picked from those arbor writes"),
    ("Archive session", "a", "archive", "Hide the highlighted session (nothing is deleted)"),
    ("Rename session", "R", "rename", "Rename the highlighted session"),
    ("Undo", "u", "undo", "Undo the last operation of this app (again: the one before it)"),
    ("Checkpoint", "m", "checkpoint", "A named checkpoint at the highlighted message or branch head"),
    ("Hide branch", "a", "hide_branch", "Hide the highlighted branch, or show a hidden one (nothing is deleted)"),
    ("Rename branch", "R", "rename_branch", "Rename the highlighted branch"),
    ("Toggle raw / context view", "v", "toggle_view", "Raw entries, or the replayed context with compaction applied"),
    ("Hide / show thinking", "H", "toggle_thinking", "Draw every reply without (or with) its thinking"),
    ("Filter messages", "F", "cycle_message_filter", "The entry tree's filters in the messages pane: "
     "default (no bookkeeping lines), no tools, user only, labelled, everything"),
    ("Search", "/", "search", "Session names and all message text"),
    ("Entry tree / branches", "t", "toggle_tree",
     "The middle pane shows the session's entries as a tree, or its branches"),
    ("Find in session", "ctrl+f", "find_in_session",
     "Find words in this session's entries and labels (then n / N)"),
    ("Show archived and hidden", "A", "toggle_archived", "Show or hide archived sessions and hidden branches"),
    ("Usage and cost", "$", "usage", "Cost per day by model, by project, the most expensive sessions"),
    ("Import agent logs…", "", "import_logs", "Read agents' logs into this store: " + titles_text()),
    ("Help", "?", "help", "Every key and what it does"),
    ("Next pane", "tab", "focus_next_pane", "Sessions → branches → messages"),
    ("Zoom / maximise pane", "z", "toggle_zoom",
     "The pane with focus alone, full width (again: every pane the width allows)"),
    ("Previous pane", "shift+tab", "focus_previous_pane", "Messages → branches → sessions"),
]


class ArborCommands(Provider):
    def _commands(self):
        for title, key, action, help_text in COMMANDS:
            display = f"{title}  ({key})" if key else title
            yield display, partial(self.app.run_action, action), help_text

    async def discover(self) -> Hits:
        for display, callback, help_text in self._commands():
            yield DiscoveryHit(display, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for display, callback, help_text in self._commands():
            score = matcher.match(display)
            if score > 0:
                yield Hit(score, matcher.highlight(display), callback, help=help_text)
