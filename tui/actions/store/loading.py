"""Loading what the panes show: the first page of sessions before the first frame, the
rest in a thread after it; a session's branch tree and a branch's messages when the
cursors stop on them; polling the store's data version for what other processes wrote;
and reloading everything shown, cursors kept by id, after one of the app's own changes.

A mixin of ArborApp. A store that does not answer now shows what was read a moment ago
(shown_cache) or says "not loaded", and is read again when it answers (calls.py).
"""

from __future__ import annotations

import gc
import itertools
from functools import partial

from rich.text import Text
from textual import work

from core.handoff.deleted_logs import logs_gone
from core.seed.models import InternalSession
from core.store import SessionSummary

from tui.components.branches_pane import flatten, mark_continued, own_usage, visible_branches
from tui.components.empty_state import EmptyState, empty_text, importing_text
from tui.render.formatting import FAINT
from . import search_indexing

FIRST_PAGE = 100

# Each read of the list takes a number as it starts; a list read before the one shown is
# not shown over it (the first page is read on the screen's thread while a worker may still
# be reading the whole list of a moment before: on a store being imported, an empty one).
_read_numbers = itertools.count(1)


class StoreLoading:
    """Mixed into ArborApp (uses its store, panes, _update_status/_error/say)."""

    _shown_read = 0   # the number of the list read shown

    def _show_first_page(self) -> None:
        number = next(_read_numbers)
        try:
            first = self.store.sessions.list(include_archived=self.show_archived,
                                             limit=FIRST_PAGE)
        except self.store.errors:
            return   # (said once, by the worker that reads the whole list next)
        if first:   # (no rows: the worker tells an empty store from one all archived)
            self._sessions_loaded(first, 0, None, False, partial=len(first) == FIRST_PAGE,
                                  show=False, number=number)

    def _show_first_session(self) -> None:
        if self.sessions:   # (drawn in the first frame)
            self._first_rows_drawn()
        self._catch_up()
        self._look_early_for_first_rows()   # (a first import's, when the first page had none)
        self.call_after_refresh(self._load_the_rest)

    def _load_the_rest(self) -> None:
        if not gc.isenabled():   # (off while starting: tui/commands/browse.py)
            gc.freeze()
            gc.enable()
        self.load_sessions(first=True)
        self._starting = False
        search_indexing.start(self)   # (after an upgrade: the index's backlog, in a thread)
        if self.poll_interval:
            self.set_interval(self.poll_interval, self._poll)
        if self.follow:   # (after the store's first import, when it is to have one)
            self._begin_first_run()

    @work(thread=True, exclusive=True, group="sessions")
    def load_sessions(self, keep_id: int | None = None, live: bool = False,
                      first: bool = False) -> None:
        # (the second connection: the app's own reads, such as the highlighted session's
        # messages, do not wait behind these)
        store = self.store.reader()
        number = next(_read_numbers)
        try:
            if first:   # the version the poll compares with: read before the list
                version = store.data_version()
                self.call_from_thread(setattr, self, "_data_version", version)
            rows = store.sessions.list(include_archived=self.show_archived)
            figures = store.usage.by_session()   # (handed to the pane on the app's thread)
            gone = logs_gone(store)              # sessions whose agent deleted the log
            hidden = 0
            if not rows and not self.show_archived:
                hidden = store.sessions.count(archived=True)
        except store.errors as error:
            self.call_from_thread(self._error, error, quiet=True)
            return
        self.call_from_thread(self._sessions_loaded, rows, hidden, keep_id, live, figures=figures,
                              gone=gone, number=number)

    def _sessions_loaded(self, rows: list[SessionSummary], hidden: int, keep_id: int | None,
                         live: bool, partial: bool = False, show: bool = True,
                         figures=None, gone: set[str] | None = None,
                         number: int | None = None) -> None:
        """Rows read: list them; with `show`, also show the highlighted session (the first
        page leaves that to `_after_first_frame`). `number`: the read's (a read begun
        before the one shown is dropped); None: read just now, on this thread."""
        if number is None:
            number = next(_read_numbers)
        if number < self._shown_read or self._ending():   # (q while a worker read)
            return
        self._shown_read = number
        first_rows = bool(rows) and not self.sessions   # (none listed before these)
        if figures is not None:
            self.sessions_pane.figures = figures
        if gone is not None:
            self.sessions_pane.log_gone = gone
        self.sessions = rows
        self._partial = partial
        self._hidden_archived = hidden
        self.loaded = True
        empty = not rows
        self._show_panes(not empty)
        empty_state = self.query_one(EmptyState)
        if empty:
            first = self.first_import
            text = importing_text(self.store_label, first.places) if self.importing_first() \
                else empty_text(self.store_label)
            if hidden:
                text.append(f"\n\n{hidden:,} archived sessions are hidden: run arbor --archived "
                            "to see them.", "#d7af5f")
            empty_state.update(text)
            self.session_id, self.branch = None, None
            self._update_status()
            return
        now = self.clock()
        self.sessions_pane.now = now
        self.messages_pane.now = now
        pane = self.sessions_pane
        if keep_id is None:
            keep_id = pane.highlighted.id if pane.highlighted else None
        pane.set_sessions(rows, keep_id, notify=False)
        highlighted = pane.highlighted
        if highlighted is not None and show:
            if first_rows or pane.awaits_drawing:   # (the rows first; then what they show)
                if not pane.awaits_drawing:
                    pane.when_drawn(self._after_first_rows)
            elif highlighted.id != self.session_id:
                self.show_session(highlighted.id)
            elif live:
                self._live_session_refresh()
        self._update_status()
        # What is loaded now lives long (10,000 rows, rendered strips): keep it out of the
        # cyclic collector's full passes, which otherwise pause the app for 50-100 ms.
        gc.freeze()

    def _after_first_rows(self) -> None:
        """(once the first rows of an empty store are drawn) what they show."""
        if not self._ending():
            self._first_rows_drawn()
            self._catch_up()

    def _show_panes(self, show: bool) -> None:
        """The three panes, or the empty-store screen; focus follows (never a hidden pane)."""
        panes = self.query_one("#panes")
        was_shown = panes.display
        panes.display = show
        self.query_one(EmptyState).display = not show
        if not show:
            self.set_focus(None)
        elif not was_shown or self.focused is None:
            self.set_focus(self.sessions_pane)

    def show_session(self, session_id: int, *, keep_branch: int | None = None,
                     keep_seq: int | None = None, at_end: bool = True,
                     keep_view: bool = False) -> None:
        """Load a session's branch tree, then the highlighted (by default current) branch."""
        try:
            with self.store.reading():
                branches = self.store.branches.of_session(session_id)
                labels = self.store.annotations.branch_labels(session_id)
                checkpoints = self.store.annotations.checkpoints_of_session(session_id)
            self.shown_cache.keep_session(session_id, (branches, labels, checkpoints))
        except self.store.errors as error:
            kept = self.shown_cache.session(session_id) if self.health.transient(error) else None
            if kept is None:
                if self.health.transient(error):
                    self._not_loaded(session_id, error)
                else:
                    self._error(error)
                return
            self._store_trouble(error, quiet=True)   # (as it was read a moment ago)
            branches, labels, checkpoints = kept
        self.session_id = session_id
        shown = visible_branches(branches, show_hidden=self.show_archived)
        rows = flatten(shown, labels, [c for c in checkpoints if not c.is_hidden])
        mark_continued(self.store, session_id, rows)
        pane = self.branches_pane
        pane.usage_of = partial(own_usage, self.store)
        total = self.sessions_pane.figures.get(session_id) if self.sessions_pane.figures else None
        pane.priced_as = (total.cost_usd, len(total.unpriced)) if total is not None else None
        pane.set_branches(rows, keep_branch, notify=False)
        session = self._session(session_id)
        title = Text("Branches · ", end="")
        title.append(f"{len(rows)}")
        hidden = sum(1 for b in branches if b.is_hidden)
        if hidden and not self.show_archived:
            title.append(f" +{hidden} hidden", FAINT)
        pane.border_title = title
        # (passed on as the Text it is: a border title read back from a widget is a markup
        # string, and a name holding `[` and escapes would be parsed as markup again)
        subtitle = self._session_subtitle(session) if session is not None else None
        if subtitle is not None:
            pane.border_subtitle = subtitle
        self._tree_session_shown(session_id, branches, subtitle)
        branch = pane.highlighted
        if branch is None:
            self.branch = None
            empty = "This session has no branches." if not self.first_import_left(session_id) \
                else "Still importing: branches show once all is read." \
                if self.importing_first() else "Import stopped part-way: the next start reads on."
            self.messages_pane.set_source(None, empty_text=Text(empty, FAINT))
            self._update_messages_title()
            return
        self.show_branch(branch, keep_seq=keep_seq, at_end=at_end, keep_view=keep_view)

    def _not_loaded(self, session_id: int, error: BaseException) -> None:
        """A session (or branch) the store could not give now: its panes say so, and it
        is read again once the store answers (store_calls)."""
        self._store_trouble(error, quiet=True)
        if session_id != self.session_id:
            self.session_id = session_id
            self.branch = None
            pane = self.branches_pane
            pane.set_branches([], None, notify=False)
            pane.border_title = Text("Branches")
            session = self._session(session_id)
            pane.border_subtitle = self._session_subtitle(session) if session else Text("")
        else:
            self.branch = None
        self.messages_pane.set_source(None, empty_text=Text(
            "Not loaded: the store does not answer; retrying.", "#d7875f"))
        self._update_messages_title()

    def show_branch(self, branch: InternalSession, *, keep_seq: int | None = None,
                    keep_depth: int | None = None, at_end: bool = True,
                    keep_view: bool = False) -> None:
        from tui.message_source import MessageSource   # (not needed for the first frame)

        try:
            with self.store.reading():
                labels = self.store.annotations.entry_labels(branch.external_session_id)
                source = MessageSource(self.store, branch, raw=self.raw,
                                       opened=self.messages_pane.opened,
                                       hidden=self._hidden_for(branch, labels))
                source.on_read_error = self._read_failed
            self.shown_cache.keep_branch(branch.id, (self.raw, self._message_filter), source,
                                         labels)
        except self.store.errors as error:
            kept = self.shown_cache.branch(branch.id, (self.raw, self._message_filter)) \
                if self.health.transient(error) else None
            if kept is None:
                if self.health.transient(error):
                    self._not_loaded(branch.external_session_id, error)
                else:
                    self._error(error)
                return
            self._store_trouble(error, quiet=True)   # (as it was read a moment ago)
            source, labels = kept
        self.branch = branch
        self._tree_branch_shown(branch)
        if source.warning and source.warning not in self._warned:
            self._warned.add(source.warning)
            self.say(source.warning, title="Replay", severity="warning", markup=False)
        self.messages_pane.set_source(source, labels=labels, keep_seq=keep_seq, keep_depth=keep_depth,
                                      at_end=at_end, keep_view=keep_view,
                                      empty_text=self._messages_empty_text(branch))
        self._update_messages_title()
        self._update_status()
        gc.freeze()

    def _poll(self) -> None:
        # (while the store does not answer, its probe looks instead: store_health)
        if not self._polling and self.health.answering:
            self._polling = True
            self._poll_store()

    @work(thread=True, exclusive=True, group="poll")
    def _poll_store(self) -> None:
        """Read the store's data version in a thread: a long search holding the store's
        connection must not freeze the screen."""
        try:
            version = self.store.reader().data_version()
        except self.store.errors as error:
            self.call_from_thread(self._polled, None, error)
            return
        self.call_from_thread(self._polled, version)

    def _polled(self, version: int | None, error: BaseException | None = None) -> None:
        self._polling = False
        if error is not None:
            self._store_trouble(error, quiet=True)
        # (None: the first load has not read its version yet, and reads the list after it)
        if version is not None and self._data_version is not None and \
                version != self._data_version:
            self._data_version = version
            self.load_sessions(live=True)

    def _live_session_refresh(self) -> None:
        """Another process wrote: reload what is shown, keeping every cursor by id."""
        branch = self.branches_pane.highlighted
        item = self.messages_pane.highlighted
        follow = self.messages_pane.at_end
        self.show_session(self.session_id, keep_branch=branch.id if branch else None,
                          keep_seq=None if follow or item is None else item.entry.seq,
                          at_end=True, keep_view=True)

    def reload(self, *, session_id: int | None = None, branch_id: int | None = None,
               keep_seq: int | None = None, at_end: bool = True, keep_order: bool = True) -> None:
        """After one of our own changes: re-read everything shown, synchronously. The
        sessions stay in the order shown (`keep_order`): the change made one of them the
        newest, and the list must not move under the cursor."""
        try:
            rows = self.store.sessions.list(include_archived=self.show_archived)
            self.sessions_pane.figures = self.store.usage.by_session()
            self._data_version = self.store.reader().data_version()
        except self.store.errors as error:
            self._error(error, quiet=True)
            return
        keep = session_id if session_id is not None else self.session_id
        self.sessions = rows
        if not rows:
            self._sessions_loaded(rows, 0, None, False)
            return
        self._show_panes(True)
        self.sessions_pane.set_sessions(rows, keep, notify=False, keep_order=keep_order)
        highlighted = self.sessions_pane.highlighted
        if highlighted is not None:
            same = highlighted.id == keep
            self.show_session(highlighted.id, keep_branch=branch_id if same else None,
                              keep_seq=keep_seq if same else None, at_end=at_end)
        self._update_status()

    def _read_failed(self, error: BaseException) -> None:
        """Messages that could not be read while drawing (a damaged store, or one that
        does not answer now): said after the frame, never from inside it."""
        self.call_later(self._error, error, quiet=True)
