"""The entry tree's filters (f in the entries pane, F in the messages pane): their names,
in the order the keys step through them, and what each shows. Apart from tui.entry_tree,
which lays the tree out, so that the app's first frame (which names the filters, and
lays out no tree) does not load that."""

from __future__ import annotations

FILTERS = ("default", "no tools", "user only", "labelled", "everything")
FILTER_HELP = {
    "default": "messages, compactions and branch summaries",
    "no tools": "without tool calls and tool results",
    "user only": "only what the user wrote",
    "labelled": "only labelled entries",
    "everything": "every entry, model and thinking-level changes too",
}
