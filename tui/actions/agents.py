"""The app's actions with agents: open the highlighted branch in the agent that wrote it
(o) or in another one (O, agent_handoff.py), import agents' logs (the palette's Import), and follow running agents
while the app is open (live_follow.py). A mixin of ArborApp.
"""

from __future__ import annotations

from pathlib import Path

from textual import work

from tui.render.safe_text import clean


class AgentActions:
    """Mixed into ArborApp (uses its store, panes, say/_error/reload, _poll)."""

    def action_open_in_agent(self) -> None:
        """Carry on from the highlighted branch, or the branch up to the highlighted
        message, in the agent that wrote it (see agent_handoff)."""
        from .agent_handoff import open_in_agent

        point = self._open_point()
        if point is not None:
            branch, at, _entry = point
            open_in_agent(self, branch.external_session_id, branch.id, at)

    def action_open_in_other_agent(self) -> None:
        """O: the same branch (or branch up to the message), in an agent picked from those
        arbor can write a session for (see agent_handoff)."""
        from core.agents.registry import get
        from core.handoff import targets
        from ..components.agent_picker import AgentPicker, choice_for, what_text
        from ..components.branches_pane import branch_title
        from .agent_handoff import installed, open_in_other_agent

        point = self._open_point()
        if point is None:
            return
        branch, at, entry = point
        if branch.head_seq is None:
            self.say("This branch has no messages yet: there is nothing to open in an agent.",
                     markup=False)
            return
        session = self._session(branch.external_session_id)
        source = session.source if session is not None else ""
        choices = [choice_for(get(target), source, installed(target))
                   for target in targets.offered(source)]

        def picked(choice) -> None:
            if choice is not None:
                open_in_other_agent(self, branch.external_session_id, branch.id, at,
                                    choice.source, redact=choice.redact)

        self.push_screen(AgentPicker(what_text(branch_title(branch), entry), choices), picked)

    def _open_point(self):
        """What o and O open: (the branch, the entry's seq and id it is opened up to, or
        None and None for its head), from the focused pane; None (and a word why) when
        there is nothing."""
        self._catch_up()
        at = entry_id = None
        if self._focused_pane() is self.messages_pane and self.branch is not None:
            item = self.messages_pane.highlighted
            branch = self.branch
            if self._in_child_session(item):
                return None
            if item is not None and item.entry.seq != branch.head_seq:
                at, entry_id = item.entry.seq, item.entry.id
        elif self._focused_pane() is self.entries_pane:   # the branch up to the entry
            picked = self._tree_branch_point()
            if picked is None:
                return None
            branch, entry = picked
            if entry.seq != branch.head_seq:
                at, entry_id = entry.seq, entry.id
        else:
            branch = self._target_branch()
        if branch is None:
            return None
        return branch, at, entry_id

    def on_store_grew(self, _message) -> None:
        """The following thread imported what an agent wrote: look at the store now."""
        self._poll()

    def action_import_logs(self) -> None:
        from tui.components.import_dialog import ImportDialog

        self.push_screen(ImportDialog(), self._import)

    def _import(self, choice) -> None:
        if choice is None:
            return
        self.say("Importing…", markup=False)
        self._run_import(choice)

    @work(thread=True, exclusive=True, group="import")
    def _run_import(self, choice) -> None:
        try:
            from core.importing import discover, import_paths
        except ImportError:
            self.call_from_thread(self.notify, "This arbor has no importers yet.", severity="error",
                                  markup=False)
            return
        try:
            paths = discover() if choice == "discover" else list(choice)
            if not paths:
                self.call_from_thread(self.notify, "No agent logs found in the usual places.",
                                      severity="warning", markup=False)
                return
            # on the process's background-writing connection (the screen reads through
            # the first one): see store_writes
            report = import_paths(self.store.write_handle(), [Path(p) for p in paths])
        except (OSError, *self.store.errors) as error:
            self.call_from_thread(self._error, error)
            return
        summary = getattr(report, "summary", None)
        text = clean(summary() if callable(summary) else str(report))
        self.call_from_thread(self.say, text[:600], title="Import", timeout=10)
        self.call_from_thread(self.reload)

    def _start_following(self) -> None:
        """Follow running agents (core.importing.follow) in a thread of its own, once the
        first frame is drawn: what they write is imported and shown at once."""
        from .live_follow import LiveFollow, StoreGrew

        options = self.follow if isinstance(self.follow, dict) else {}
        self.live_follow = LiveFollow(self.store, lambda: self.post_message(StoreGrew()),
                                      **options)
        self.live_follow.start()
        self._update_status()
