"""The app's views: compare two branches (d), usage and costs ($), search (/), help (?),
raw entries or replayed context (v), thinking shown or hidden (H), a pane zoomed (z); and
going to what one of those screens chose (`_jump`, `_show_compared`). A mixin of ArborApp.
The entry tree and its filters are in tree.py.
"""

from __future__ import annotations

from tui.components.pane_row import PaneRow


class ViewActions:
    """Mixed into ArborApp (uses its store, panes, say/_error, show_session/show_branch)."""

    def action_compare(self) -> None:
        """d: the highlighted branch (or the one shown) against another of its session."""
        from tui.components.branch_picker import BranchPicker
        from tui.components.compare_screen import CompareScreen

        self._catch_up()
        branch = self._target_branch() if self._focused_pane() is self.branches_pane else self.branch
        if branch is None:
            return
        rows = self.branches_pane.rows
        if not any(row.branch.id != branch.id for row in rows):
            self.say("This session has one branch: there is nothing to compare it with.", markup=False)
            return
        labels = {row.branch.id: row.label for row in rows if row.label}
        session = self._session(branch.external_session_id)

        def chosen(other_id: int | None) -> None:
            if other_id is None:
                return
            try:
                mine = self.store.branches.get(branch.id)
                other = self.store.branches.get(other_id)
            except self.store.errors as error:
                self._error(error)
                return
            if mine is None or other is None:
                self.say("That branch is no longer in the store.", severity="warning", markup=False)
                return
            self.push_screen(CompareScreen(self.store, mine, other, labels=labels, now=self.clock(),
                                           session_name=session.name if session else ""),
                             self._show_compared)

        self.push_screen(BranchPicker(branch, rows), chosen)

    def _show_compared(self, shown: tuple[int | None, int, int] | None) -> None:
        """enter on a message of a comparison: that message on its branch (one in a
        sub-agent shown inside a side: in its own session, as search would show it)."""
        from tui.components.search_screen import SearchResult

        if shown is None:
            return
        branch_id, seq, session_id = shown
        if branch_id is None:
            self._jump(SearchResult(session_id, seq))
            return
        try:
            entry = self.store.entries.get(seq)
        except self.store.errors as error:
            self._error(error)
            return
        if entry is None:
            return
        self.show_session(session_id, keep_branch=branch_id, keep_seq=seq)
        source = self.messages_pane.source
        if source is not None and source.index_of_seq(seq, entry.depth) is None and not self.raw:
            self.raw = True     # hidden by the branch's compaction: the raw entries show it
            self.say("The message is before the branch's compaction: showing raw entries (v).",
                     markup=False)
            self.show_branch(self.branches_pane.highlighted, keep_seq=seq, keep_depth=entry.depth)
        self.set_focus(self.messages_pane)

    def action_search(self) -> None:
        from tui.components.search_screen import SearchScreen

        reader = self._reader()
        if reader is not None:
            self.push_screen(SearchScreen(reader, self.clock(), include_archived=self.show_archived),
                             self._jump)

    def action_usage(self) -> None:
        from core.usage.tokens import local_zone

        from tui.components.usage_screen import UsageScreen

        today = self.clock().astimezone(local_zone()).date()
        reader = self._reader()
        if reader is not None:
            self.push_screen(UsageScreen(reader, today, self.sessions), self._jump)

    def _jump(self, result) -> None:
        if result is None:
            return
        session = self._session(result.session_id)
        if session is None:
            if not self.show_archived:
                self.show_archived = True
                self.reload(session_id=result.session_id)
                session = self._session(result.session_id)
            if session is None:
                self.say("That session is no longer in the store.", severity="warning")
                return
        index = self.sessions_pane.reveal(result.session_id)
        if index is not None:
            self.sessions_pane.move_cursor(index, notify=False)
        if result.seq is None:
            self.show_session(result.session_id)
            self.set_focus(self.sessions_pane)
            return
        try:
            branch = self.store.branches.containing(result.seq)
            entry = self.store.entries.get(result.seq)
        except self.store.errors as error:
            self._error(error)
            return
        if branch is None or entry is None:
            self.say("That message is on no branch's path (it was left behind by every branch).",
                        severity="warning", markup=False)
            self.show_session(result.session_id)
            return
        self.show_session(result.session_id, keep_branch=branch.id)
        source = self.messages_pane.source
        if source is not None and source.index_of_seq(entry.seq, entry.depth) is None and not self.raw:
            self.raw = True
            self.say("The message is before the branch's compaction: showing raw entries (v).",
                        markup=False)
        self.show_branch(self.branches_pane.highlighted or branch, keep_seq=entry.seq,
                         keep_depth=entry.depth)
        self.set_focus(self.messages_pane)

    def action_help(self) -> None:
        from tui.components.help_screen import HelpScreen

        self.push_screen(HelpScreen())

    def action_toggle_view(self) -> None:
        self._catch_up()
        self.raw = not self.raw
        if self.branch is not None:
            item = self.messages_pane.highlighted
            keep_seq = item.entry.seq if item is not None else None
            keep_depth = item.entry.depth if item is not None and item.kind == "entry" \
                and not item.nest else None
            self.show_branch(self.branch, keep_seq=keep_seq, keep_depth=keep_depth, at_end=False)
        self._update_status()

    def action_toggle_thinking(self) -> None:
        """H: every reply drawn without (or again with) its thinking; the entries stay."""
        pane = self.messages_pane
        pane.set_show_thinking(not pane.show_thinking)
        self._update_messages_title()
        self.say("Thinking shown." if pane.show_thinking else "Thinking hidden (H shows it).",
                 markup=False)

    def action_toggle_zoom(self) -> None:
        """z: the pane with focus alone, full width (z again: as the width allows)."""
        self.query_one(PaneRow).toggle_zoom()

    action_zoom = action_toggle_zoom
