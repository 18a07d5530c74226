"""What a key acts on: the highlighted branch, the highlighted message or entry (a
sub-agent's row stands for the reply that started it), the branch as the store has it now,
and the store's reader for a screen's threads; each says why there is none when there is
none. A mixin of ArborApp, used by every family of actions.
"""

from __future__ import annotations

from core.seed.models import InternalSession
from core.store import Store


class ActionTargets:
    """Mixed into ArborApp (uses its store, panes, say/_error)."""

    def _target_branch(self) -> InternalSession | None:
        """The branch an action applies to: the highlighted one in the branches pane."""
        branch = self.branches_pane.highlighted
        if branch is None:
            self.say("There is no branch here.", severity="warning")
        return branch

    def _highlighted_entry(self):
        """(branch, entry) a key acts on in the messages pane or the entry tree; None after
        saying why there is none (no messages; a sub-agent's message shown in place). A
        sub-agent's row stands for the reply that started it (a branch made there keeps the
        whole reply), the compacted context for its compaction entry."""
        if self._focused_pane() is self.entries_pane:
            return self._tree_branch_point()
        item = self.messages_pane.highlighted
        if item is None or self.branch is None:
            self._say_no_messages()
            return None
        if self._in_child_session(item):
            return None
        if item.kind == "spawn":
            item = self.messages_pane.reply_of(item) or item
        return self.branch, item.entry

    def _in_child_session(self, item) -> bool:
        """A message of an opened sub-agent inside this branch's list: actions that change a
        branch apply to the sub-agent's own session, opened with enter on its row."""
        if item is not None and item.nest:
            self.say("This message belongs to a sub-agent shown inside this branch: press enter "
                     "on the sub-agent's row to open its session, then act there.",
                     severity="warning")
            return True
        return False

    def _fresh_branch(self, branch_id: int) -> InternalSession | None:
        """The branch as the store has it now (None: gone, or the store does not answer)."""
        try:
            return self.store.branches.get(branch_id)
        except self.store.errors as error:
            if not self.health.transient(error):
                raise
            return None

    def _kept_seq(self) -> int | None:
        item = self.messages_pane.highlighted
        return item.entry.seq if item is not None else None

    def _reader(self) -> Store | None:
        """The store's reader, for what a screen or dialog reads in its threads (None, and
        said, when it cannot be had now: the reader was never opened, and the store's
        server does not answer)."""
        try:
            return self.store.reader()
        except self.store.errors as error:
            self._error(error)
            return None
