"""Keys pressed in a pane they were not made for: each does what it means there, or says in
one short notification why not. A key the focused pane binds is the pane's; these are the
app's own bindings (not shown in the footer), reached only when the pane has none for the
key. `y` and `p` act on the session shown, from any pane; `n` and `N` go to what ctrl+f
found (in the entry tree); the others say where they apply.

A mixin of ArborApp, like history_actions and tree_actions."""

from __future__ import annotations

from textual.binding import Binding

BINDINGS = [
    Binding("y", "copy_uid", "Copy uid", show=False),
    Binding("p", "project_filter", "Project", show=False),
    Binding("n", "next_found", "Next found", show=False),
    Binding("N", "previous_found", "Previous found", show=False),
    Binding("f", "say_whole", "Whole message", show=False),
    Binding("space", "say_fold", "Fold", show=False),
    Binding("T", "say_label_times", "Label times", show=False),
    Binding("F", "cycle_message_filter", "Filter messages", show=False),   # (tree_actions)
]


class KeyAnswers:
    """Mixed into ArborApp (uses its panes and say)."""

    def action_copy_uid(self) -> None:
        if not self._any_session():
            return
        self.sessions_pane.action_copy_uid()

    def action_project_filter(self) -> None:
        if not self._any_session():
            return
        self.sessions_pane.action_project_filter()

    def action_next_found(self) -> None:
        self._go_found(1)

    def action_previous_found(self) -> None:
        self._go_found(-1)

    def _go_found(self, step: int) -> None:
        pane = self.entries_pane
        if not pane.hits or getattr(self, "_tree_session", None) != self.session_id:
            self.say("Nothing found yet: ctrl+f finds words in this session, then n / N go "
                     "through them.", markup=False)
            return
        if not self.tree_mode:
            self.action_toggle_tree()
        self.set_focus(pane)
        pane.action_next_hit() if step > 0 else pane.action_previous_hit()

    def action_say_whole(self) -> None:
        self.say("f shows the highlighted message whole: in the messages pane (tab to it).",
                 markup=False)

    def action_say_fold(self) -> None:
        self.say("Nothing folds in the branches pane: space opens messages, and sub-agents "
                 "under a session.", markup=False)

    def action_say_label_times(self) -> None:
        self.say("T shows when each label was set, in the entry tree: t shows the tree.",
                 markup=False)

    def _say_no_messages(self) -> None:
        self.say(self.messages_pane.empty_text.plain or "There are no messages here.", markup=False)

    def _any_session(self) -> bool:
        if self.sessions_pane.highlighted is None:
            self.say("There is no session here.", markup=False)
            return False
        return True
