"""arbor's session browser: sessions, branches and messages, left to right.

Messages go up (the panes post Highlighted/Selected), attributes go down (the app hands
each pane its data). Every change goes through `core.actions.operations` (or the store's own
rename/archive), then the panes are reloaded with the cursor kept by id.
"""

from __future__ import annotations

import gc
import os
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Callable

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding

from core.model.clock import utc_now
from core.seed.models import InternalSession
from core.store import SessionSummary, Store

from .actions import key_answers
from .actions.history import HistoryActions
from .actions.key_answers import KeyAnswers
from .actions.store.calls import StoreCalls
from .actions.tree import TreeActions
from .palette import ArborCommands
from .actions.store import search_indexing
from .actions.screenshot import ScreenshotActions
from .components.branches_pane import (BranchesPane, branch_title, flatten, own_usage,
                                       visible_branches)
from .components.empty_state import EmptyState, empty_text
from .components.entries_pane import EntriesPane
from .components.key_footer import KeyFooter
from .components.messages_pane import MessagesPane
from .components.pane_row import PaneRow
from .components.sessions_pane import SessionsPane
from .components.status_line import StatusLine, status_text
from .render.formatting import FAINT, short_id
from .key_order import KeysInOrder
from .render.safe_text import clean, safe_line
from .actions.store.shown_cache import ShownCache

Clock = Callable[[], datetime]
FIRST_PAGE = 100


def _home_short(path: Path) -> str:
    """The store path, with the home folder written as ~ (a PostgreSQL store: its
    database and host, never the password)."""
    if not isinstance(path, (str, os.PathLike)):
        return path.label()   # a core.store.location.PostgresURL
    try:
        return "~/" + str(Path(path).resolve().relative_to(Path.home()))
    except (ValueError, OSError, RuntimeError):
        return str(path)


def _label_description(text: str, what: str) -> str:
    label = text.strip()
    return f"label {what} {label}" if label else f"clear the label of {what}"


class ArborApp(HistoryActions, TreeActions, KeyAnswers, ScreenshotActions, StoreCalls,
               KeysInOrder[int]):
    CSS_PATH = "app.tcss"
    TITLE = "arbor"
    # Focus is given when the first rows arrive (_show_panes), never by Textual at mount:
    # an empty store must not focus a pane it then hides (the footer would show its keys).
    AUTO_FOCUS = None
    COMMANDS = App.COMMANDS | {ArborCommands}
    ENABLE_COMMAND_PALETTE = True

    BINDINGS = [
        Binding("tab", "focus_next_pane", "Next pane", id="next-pane"),
        Binding("shift+tab", "focus_previous_pane", "Previous pane", show=False, id="previous-pane"),
        Binding("slash", "search", "Search", id="search"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("q", "quit", "Quit", id="quit"),
        Binding("b", "branch", "Branch", show=False, id="branch"),
        Binding("r", "rollback", "Roll back", show=False, id="rollback"),
        Binding("l", "label", "Label", show=False, id="label"),
        Binding("c", "compact", "Compact", show=False, id="compact"),
        Binding("a", "archive", "Archive", show=False, id="archive"),
        Binding("R", "rename", "Rename", show=False, id="rename"),
        Binding("v", "toggle_view", "Raw/context", show=False, id="toggle-view"),
        Binding("o", "open_in_agent", "Open in agent", show=False, id="open-in-agent"),
        Binding("d", "compare", "Compare", show=False, id="compare"),
        Binding("u", "undo", "Undo", show=False, id="undo"),
        Binding("m", "checkpoint", "Checkpoint", show=False, id="checkpoint"),
        Binding("A", "toggle_archived", "Show archived", show=False, id="toggle-archived"),
        Binding("dollar_sign", "usage", "Usage", show=False, id="usage"),
        Binding("t", "toggle_tree", "Entries/branches", show=False, id="toggle-tree"),
        Binding("H", "toggle_thinking", "Hide/show thinking", show=False, id="toggle-thinking"),
        Binding("ctrl+f", "find_in_session", "Find in session", show=False, id="find-in-session"),
        Binding("z", "toggle_zoom", "Zoom", show=False, id="zoom"),
        *key_answers.BINDINGS,   # keys of other panes: act here too, or say why not
    ]

    def __init__(self, store: Store, *, show_archived: bool = False, clock: Clock | None = None,
                 poll_interval: float | None = 0.5, store_label: str | None = None,
                 follow: bool | dict = False) -> None:
        super().__init__()
        # follow running agents (core.importing.follow): True, or the Follower's options as a dict
        self.follow = follow
        self.live_follow = None
        self.store = store
        self.store_label = store_label or _home_short(store.path)
        self.show_archived = show_archived
        self.clock = clock or utc_now
        self.poll_interval = poll_interval
        self.raw = False
        self.session_id: int | None = None       # the session whose branches are shown
        self.branch: InternalSession | None = None  # the branch whose messages are shown
        self.sessions: list[SessionSummary] = []
        self.loaded = False
        self._data_version: int | None = None
        self._warned: set[str] = set()
        self._hidden_archived = 0
        self._follow_timer = None
        self._polling = False
        self._partial = False
        self._starting = False   # mounted, the first frame not drawn yet
        self.tree_mode = False   # the middle pane shows the session's entries, not its branches
        self._start_store_calls()
        self.shown_cache = ShownCache()   # for a store that stops answering

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        now = self.clock()
        with PaneRow(id="panes"):
            yield SessionsPane(now, id="sessions", classes="pane")
            yield BranchesPane(id="branches", classes="pane")
            yield EntriesPane(now, id="entries", classes="pane")
            yield MessagesPane(now, id="messages", classes="pane")
        yield EmptyState(id="empty")
        yield StatusLine(id="status")
        yield KeyFooter()

    @property
    def sessions_pane(self) -> SessionsPane:
        return self.query_one(SessionsPane)

    @property
    def branches_pane(self) -> BranchesPane:
        return self.query_one(BranchesPane)

    @property
    def entries_pane(self) -> EntriesPane:
        return self.query_one(EntriesPane)

    @property
    def middle_pane(self) -> BranchesPane | EntriesPane:
        """The pane between sessions and messages: the branches, or the entry tree (t)."""
        return self.entries_pane if self.tree_mode else self.branches_pane

    @property
    def messages_pane(self) -> MessagesPane:
        return self.query_one(MessagesPane)

    def on_mount(self) -> None:
        self._store_calls_mounted()
        self.query_one(EmptyState).display = False
        self.messages_pane.empty_text = Text("loading…", FAINT)
        # The first frame lists the first screenful of sessions (one indexed query, LIMIT
        # FIRST_PAGE). The rest comes one step a frame, so that none of it delays the one
        # before (nor takes both cores while the terminal draws): the highlighted
        # session's branches and messages, then the whole list and its costs (read in a
        # thread), polling and following.
        self._starting = True
        self._show_first_page()
        self._update_status()
        self.call_after_refresh(self._show_first_session)

    def _show_first_page(self) -> None:
        try:
            first = self.store.sessions.list(include_archived=self.show_archived,
                                             limit=FIRST_PAGE)
        except self.store.errors:
            return   # (said once, by the worker that reads the whole list next)
        if first:   # (no rows: the worker tells an empty store from one all archived)
            self._sessions_loaded(first, 0, None, False, partial=len(first) == FIRST_PAGE,
                                  show=False)

    def _show_first_session(self) -> None:
        self._catch_up()
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
        if self.follow:
            from .actions.live_follow import LiveFollow, StoreGrew

            options = self.follow if isinstance(self.follow, dict) else {}
            self.live_follow = LiveFollow(self.store, lambda: self.post_message(StoreGrew()),
                                          **options)
            self.live_follow.start()
            self._update_status()

    def on_unmount(self) -> None:
        if self.live_follow is not None:
            self.live_follow.stop()
        self._store_calls_unmounted()

    def on_store_grew(self, _message) -> None:
        """The following thread imported what an agent wrote: look at the store now."""
        self._poll()

    # ----------------------------------------------------------------- loading
    @work(thread=True, exclusive=True, group="sessions")
    def load_sessions(self, keep_id: int | None = None, live: bool = False,
                      first: bool = False) -> None:
        # (the second connection: the app's own reads, such as the highlighted session's
        # messages, do not wait behind these)
        store = self.store.reader()
        try:
            if first:   # the version the poll compares with: read before the list
                version = store.data_version()
                self.call_from_thread(setattr, self, "_data_version", version)
            rows = store.sessions.list(include_archived=self.show_archived)
            figures = store.usage.by_session()   # (handed to the pane on the app's thread)
            hidden = 0
            if not rows and not self.show_archived:
                hidden = store.sessions.count(archived=True)
        except store.errors as error:
            self.call_from_thread(self._error, error, quiet=True)
            return
        self.call_from_thread(self._sessions_loaded, rows, hidden, keep_id, live, figures=figures)

    def _sessions_loaded(self, rows: list[SessionSummary], hidden: int, keep_id: int | None,
                         live: bool, partial: bool = False, show: bool = True,
                         figures=None) -> None:
        """Rows read: list them; with `show`, also show the highlighted session (the first
        page leaves that to `_after_first_frame`)."""
        if figures is not None:
            self.sessions_pane.figures = figures
        self.sessions = rows
        self._partial = partial
        self._hidden_archived = hidden
        self.loaded = True
        empty = not rows
        self._show_panes(not empty)
        empty_state = self.query_one(EmptyState)
        if empty:
            text = empty_text(self.store_label)
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
            if highlighted.id != self.session_id:
                self.show_session(highlighted.id)
            elif live:
                self._live_session_refresh()
        self._update_status()
        # What is loaded now lives long (10,000 rows, rendered strips): keep it out of the
        # cyclic collector's full passes, which otherwise pause the app for 50-100 ms.
        gc.freeze()

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
        pane = self.branches_pane
        pane.usage_of = partial(own_usage, self.store)
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
            self.messages_pane.set_source(None, empty_text=Text("This session has no branches.", FAINT))
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
        from .message_source import MessageSource   # (not needed for the first frame)

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

    def _update_messages_title(self) -> None:
        pane = self.messages_pane
        title = Text("Messages", end="")
        if self.branch is not None:
            title.append(" · ")
            title.append_text(safe_line(branch_title(self.branch), 30))
            source = pane.source
            if source is not None:
                title.append(" · ")
                title.append("raw" if source.raw else "context", "#d7af5f")
            if not pane.show_thinking:
                title.append(" · no thinking", "#d7af5f")
            self._filter_title(title)
        pane.border_title = title

    def _update_status(self, width: int | None = None) -> None:
        status = self.query_one(StatusLine)
        width = max(40, width or self.size.width)
        messages = sum(s.message_count for s in self.sessions)
        # sessions as listed: a sub-agent or fork under its parent is part of that session
        listed = {s.id for s in self.sessions}
        families = sum(1 for s in self.sessions if s.parent_id is None or s.parent_id not in listed)
        view = "raw entries (v)" if self.raw else "replayed context (v)"
        extras = ["archived shown" if self.show_archived else ""]
        if self.live_follow is not None:
            extras.append("following (polling)" if self.live_follow.mode == "polling"
                          else "following")
        extra = " · ".join(e for e in extras if e)
        status.update(status_text(self.store_label, families, messages, view, width, extra,
                                  partial=self._partial, alert=self.store_alert()))

    def on_resize(self, event: events.Resize) -> None:
        # the event's size: this handler runs before App's own, which updates self.size
        self._update_status(event.size.width)

    def _session(self, session_id: int | None) -> SessionSummary | None:
        return next((s for s in self.sessions if s.id == session_id), None)

    def _session_subtitle(self, session: SessionSummary) -> Text:
        """The session's name; for a sub-agent or fork, also where it came from."""
        parent = self._session(session.parent_id) if session.parent_id is not None else None
        if parent is None:
            return safe_line(session.name, 40)
        what = {"fork": "fork of", "subagent": "sub-agent of"}.get(session.kind, "under")
        line = safe_line(session.name, 24)
        line.append(f" · {what} ", FAINT)
        line.append_text(safe_line(parent.name, 24))
        return line

    @on(MessagesPane.OpenSession)
    def _open_child_session(self, event: MessagesPane.OpenSession) -> None:
        """Enter on a sub-agent's row: that session, listed under its parent."""
        index = self.sessions_pane.reveal(event.session_id)
        if index is None:
            self.say("That session is not listed (archived?): arbor --archived shows it.",
                     severity="warning")
            return
        self.sessions_pane.move_cursor(index, notify=False)
        self.show_session(event.session_id, at_end=False)
        self.set_focus(self.messages_pane)

    def _in_child_session(self, item) -> bool:
        """A message of an opened sub-agent inside this branch's list: actions that change a
        branch apply to the sub-agent's own session, opened with enter on its row."""
        if item is not None and item.nest:
            self.say("This message belongs to a sub-agent shown inside this branch: press enter "
                     "on the sub-agent's row to open its session, then act there.",
                     severity="warning")
            return True
        return False

    # ---------------------------------------------------------- pane messages
    # A cursor move repaints at once; what it shows next (a session's branches, a branch's
    # messages) is loaded FOLLOW_DELAY later, once the keys stop: holding a key down moves
    # smoothly through 10,000 sessions instead of loading each one on the way.
    FOLLOW_DELAY = 0.04

    def _follow_later(self, callback) -> None:
        if self._follow_timer is not None:
            self._follow_timer.stop()
        self._follow_timer = self.set_timer(self.FOLLOW_DELAY, lambda: self._follow_now(callback))

    def _follow_now(self, callback) -> None:
        self._follow_timer = None
        callback()

    @property
    def busy(self) -> bool:
        """Whether a load is pending or running (tests and benchmarks wait for it)."""
        screen_busy = getattr(self.screen, "busy", False)
        return self._starting or self._follow_timer is not None or bool(screen_busy) or any(
            worker.is_running for worker in self.workers) or self.writes.pending > 0

    @on(SessionsPane.Highlighted, "#sessions")
    def _session_highlighted(self, event: SessionsPane.Highlighted) -> None:
        self._follow_later(self._follow_sessions_cursor)

    def _follow_sessions_cursor(self) -> None:
        session = self.sessions_pane.highlighted
        if session is not None and session.id != self.session_id:
            self.show_session(session.id)

    @on(SessionsPane.Selected, "#sessions")
    def _session_selected(self, event: SessionsPane.Selected) -> None:
        self.action_open_session()

    def action_open_session(self) -> None:
        """enter in the sessions pane: its branches, focused (a key, not a message, so that
        the keys after it find the branches pane focused)."""
        self._catch_up()
        self.set_focus(self.middle_pane)

    @on(BranchesPane.Highlighted, "#branches")
    def _branch_highlighted(self, event: BranchesPane.Highlighted) -> None:
        self._follow_later(self._follow_branches_cursor)

    def _follow_branches_cursor(self) -> None:
        branch = self.branches_pane.highlighted
        if branch is not None and (self.branch is None or branch.id != self.branch.id):
            self.show_branch(branch)

    # (the entry tree's handlers are here: Textual finds @on handlers only on the App's own
    # classes, not on a plain mixin like TreeActions)
    @on(EntriesPane.Highlighted, "#entries")
    def _entry_highlighted(self, event: EntriesPane.Highlighted) -> None:
        self._follow_later(self._follow_entries_cursor)

    @on(EntriesPane.Selected, "#entries")
    def _entry_selected(self, event: EntriesPane.Selected) -> None:
        self.action_show_entry()

    def _catch_up(self) -> None:
        """Show now what the pane cursors point at, before a key acts on it.

        A cursor move is followed FOLLOW_DELAY later, and its Highlighted message reaches
        the app after keys already queued: keys typed in one burst (`j tab b`) would
        otherwise act on the session or branch shown before the move."""
        if self._follow_timer is not None:
            self._follow_timer.stop()
            self._follow_timer = None
        if not self.query_one("#panes").display:
            return
        self._follow_sessions_cursor()
        self._follow_branches_cursor()

    # ------------------------------------------------------------------- live
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

    # ---------------------------------------------------------------- helpers
    def _read_failed(self, error: BaseException) -> None:
        """Messages that could not be read while drawing (a damaged store, or one that
        does not answer now): said after the frame, never from inside it."""
        self.call_later(self._error, error, quiet=True)

    def _error(self, error: BaseException, *, quiet: bool = False) -> None:
        """Say why something could not be done. A store that does not answer now goes to
        the status line instead (`quiet`: a read the panes say about themselves)."""
        if self._store_trouble(error, quiet=quiet):
            return
        if isinstance(error, self.store.database_errors):
            message = f"The store could not be read or written: {error}"
        else:
            message = str(error)
        self.say(message, title="arbor", severity="error", markup=False, timeout=8)

    def say(self, message: str, **options) -> None:
        """A notification; names and errors in it are untrusted, so it is cleaned and never
        parsed as markup."""
        options["markup"] = False
        self.notify(clean(message), **options)

    def _focused_pane(self):
        focused = self.focused
        for pane in (self.sessions_pane, self.branches_pane, self.entries_pane, self.messages_pane):
            if focused is pane:
                return pane
        return None

    def _target_branch(self) -> InternalSession | None:
        """The branch an action applies to: the highlighted one in the branches pane."""
        branch = self.branches_pane.highlighted
        if branch is None:
            self.say("There is no branch here.", severity="warning")
        return branch

    def _reader(self) -> Store | None:
        """The store's reader, for what a screen or dialog reads in its threads (None, and
        said, when it cannot be had now: the reader was never opened, and the store's
        server does not answer)."""
        try:
            return self.store.reader()
        except self.store.errors as error:
            self._error(error)
            return None

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

    def _fresh_branch(self, branch_id: int) -> InternalSession | None:
        """The branch as the store has it now (None: gone, or the store does not answer)."""
        try:
            return self.store.branches.get(branch_id)
        except self.store.errors as error:
            if not self.health.transient(error):
                raise
            return None

    # ------------------------------------------------------------------ focus
    def _panes(self):
        return [self.sessions_pane, self.middle_pane, self.messages_pane]

    def action_focus_next_pane(self) -> None:
        if not self.query_one("#panes").display:
            return
        panes = self._panes()
        current = self._focused_pane()
        index = panes.index(current) if current in panes else -1
        # set at once: Widget.focus() would only queue it, and a second tab already queued
        # would still see the old focus
        self.set_focus(panes[(index + 1) % 3])

    def action_toggle_zoom(self) -> None:
        """z: the pane with focus alone, full width (z again: as the width allows)."""
        self.query_one(PaneRow).toggle_zoom()

    action_zoom = action_toggle_zoom

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # z is the panes' `zoom` (in the footer) where the panes are folded for want of
        # room, and the app's `toggle_zoom` (in help and palette only) where they are not;
        # neither where it would change nothing
        if action == "zoom":
            return self.query_one(PaneRow).zoom_in_footer()
        if action == "toggle_zoom":
            return self.query_one(PaneRow).can_zoom()
        return True

    def action_focus_previous_pane(self) -> None:
        if not self.query_one("#panes").display:
            return
        panes = self._panes()
        current = self._focused_pane()
        index = panes.index(current) if current in panes else 0
        self.set_focus(panes[(index - 1) % 3])

    # ---------------------------------------------------------------- actions
    def action_branch(self) -> None:
        from core.actions import operations

        self._catch_up()
        if self.branch is None:
            self.say("Open a session first.", severity="warning")
            return
        pane = self._focused_pane()
        if pane in (self.messages_pane, self.entries_pane):
            picked = self._highlighted_entry()
            if picked is None:
                return
            source, at = picked
            where = f"{'message' if pane is self.messages_pane else 'entry'} {short_id(at.id)}"
        else:
            source = self._target_branch()
            if source is None:
                return
            at = None
            where = f"the head of {branch_title(source)}"
        key = ("branch", source.id)   # (what was typed is offered again on this branch)

        def done(name: str | None) -> None:
            if name is None:
                return
            name = name.strip()
            description = f"branch {name or 'unnamed'} at {where}"

            def write(store):
                with self._recorded(store, source.external_session_id, "branch", description):
                    return operations.branch(store, source.id, at, name=name)

            def written(new) -> None:
                self.say(f"New branch {branch_title(new)} at {where}; it is now current.",
                         title="Branched", markup=False)
                self.reload(branch_id=new.id, keep_seq=at.seq if at is not None else None)

            self._write(description, write, done=written, keep=(key, name))

        self._ask_branch_name(source, where, done, key=key)

    def action_open_in_agent(self) -> None:
        """Carry on from the highlighted branch, or the branch up to the highlighted
        message, in the agent that wrote it (see agent_handoff)."""
        from .actions.agent_handoff import open_in_agent

        self._catch_up()
        at = None
        if self._focused_pane() is self.messages_pane and self.branch is not None:
            item = self.messages_pane.highlighted
            branch = self.branch
            if self._in_child_session(item):
                return
            if item is not None and item.entry.seq != branch.head_seq:
                at = item.entry.seq
        elif self._focused_pane() is self.entries_pane:   # the branch up to the entry
            picked = self._tree_branch_point()
            if picked is None:
                return
            branch, entry = picked
            at = entry.seq if entry.seq != branch.head_seq else None
        else:
            branch = self._target_branch()
        if branch is None:
            return
        open_in_agent(self, branch.external_session_id, branch.id, at)

    def action_rollback(self) -> None:
        from core.actions import operations

        from .components.rollback_dialog import RollbackDialog, RollbackTarget, checkpoint_label

        self._catch_up()
        focused = self._focused_pane()
        entry = None                  # the highlighted entry, offered as a target
        if focused is self.entries_pane:
            picked = self._tree_branch_point()
            if picked is None:
                return
            branch, entry = picked
        else:
            branch = self._target_branch() if focused is self.branches_pane else self.branch
        if branch is None:
            return
        branch = self._fresh_branch(branch.id) or branch
        targets: list[RollbackTarget] = []
        item = self.messages_pane.highlighted
        if focused is self.messages_pane and self._in_child_session(item):
            return
        if entry is None and item is not None and not item.nest and self.branch is not None \
                and self.branch.id == branch.id:
            entry = item.entry
        message_target = None
        if entry is not None and entry.seq != branch.head_seq:
            label = Text("◉ the highlighted entry ", "bold")
            label.append(short_id(entry.id))
            message = entry.message
            if message is not None:
                from core.model.entries import content_text
                label.append("  ")
                label.append_text(safe_line(f"{message.get('role', '?')}: "
                                            f"{content_text(message.get('content'))}", 60, style="italic"))
            message_target = RollbackTarget(label, entry.seq)
        try:
            checkpoints = [c for c in self.store.annotations.checkpoints_of_session(branch.external_session_id)
                           if not c.is_hidden]
            on_path = [(cp, cp.entry_seq is not None and branch.head_seq is not None and
                        self.store.paths.is_ancestor(cp.entry_seq, branch.head_seq)) for cp in checkpoints]
        except self.store.errors as error:
            self._error(error)
            return
        on_path.sort(key=lambda pair: (not pair[1], -(pair[0].entry_seq or 0)))
        for checkpoint, here in on_path:
            if checkpoint.entry_seq is None:
                continue
            targets.append(RollbackTarget(checkpoint_label(checkpoint.checkpoint_name, checkpoint.entry_id,
                                                           here, checkpoint.is_auto),
                                          checkpoint.entry_seq, checkpoint.id))
        initial = 0
        if message_target is not None:
            if focused in (self.messages_pane, self.entries_pane):
                targets.insert(0, message_target)
            else:
                targets.append(message_target)
                initial = 0
        if not targets:
            self.say("No checkpoints in this session: highlight a message in the messages pane "
                        "and press r to roll back to it.", severity="warning", markup=False)
            return

        def done(choice) -> None:
            if choice is None:
                return
            description = f"roll back {branch_title(branch)}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "rollback", description):
                    return operations.rollback(store, branch.id,
                                               checkpoint_id=choice.checkpoint_id,
                                               entry_id=choice.entry_seq, summary=choice.summary)

            def written(new) -> None:
                note = " with a branch summary" if choice.summary else ""
                self.say(f"Rolled back: new current branch {branch_title(new)}{note}. "
                         f"{branch_title(branch)} is kept as it was.", title="Rolled back",
                         markup=False)
                self.reload(branch_id=new.id)

            self._write(description, write, done=written)

        reader = self._reader()
        if reader is not None:
            self.push_screen(RollbackDialog(reader, branch, targets, initial), done)

    def action_label(self) -> None:
        from core.actions import operations

        from .components.text_prompt import TextPrompt

        self._catch_up()
        pane = self._focused_pane()
        if pane is self.messages_pane or pane is self.entries_pane:
            if pane is self.entries_pane:
                entry = self.entries_pane.highlighted
                if entry is None:
                    self.say("This session has no entries to label.", markup=False)
                    return
            else:
                item = self.messages_pane.highlighted
                if item is None:
                    self._say_no_messages()
                    return
                if self._in_child_session(item):
                    return
                entry = item.entry
            key = ("label", "entry", entry.seq)
            shown = self.messages_pane.labels if self.messages_pane.source is not None and \
                self.messages_pane.source.branch.external_session_id == entry.external_session_id \
                else None
            if shown is None:
                try:
                    shown = self.store.annotations.entry_labels(entry.external_session_id)
                except self.store.errors:
                    shown = {}   # (the store does not answer: the label is typed anew)
            current = self.typed(key, shown.get(entry.seq, ""))
            title = Text("Label entry ", "bold")
            title.append(short_id(entry.id), "bold #5fafff")

            def done(text: str | None) -> None:
                if text is None:
                    return
                description = _label_description(text, f"entry {short_id(entry.id)}")

                def write(store):
                    with self._recorded(store, entry.external_session_id, "label", description):
                        operations.set_label(store, entry.seq, text.strip() or None)
                    return store.annotations.entry_labels(entry.external_session_id)

                def written(labels) -> None:
                    self.messages_pane.set_labels(labels)
                    self._tree_labels_changed(labels)
                    self.say("Label cleared." if not text.strip() else "Label saved.",
                             markup=False)

                self._write(description, write, done=written, keep=(key, text))

            self.push_screen(TextPrompt(title, value=current, placeholder="a short label",
                                        hint=Text("enter saves · empty clears · escape cancels", FAINT),
                                        id="label-dialog"), done)
            return
        if pane is self.branches_pane or pane is None:
            branch = self._target_branch()
            if branch is None:
                return
            row = self.branches_pane.rows[self.branches_pane.cursor]
            key = ("label", "branch", branch.id)
            title = Text("Label branch ", "bold")
            title.append_text(safe_line(branch_title(branch), 40, style="bold #5fafff"))

            def done_branch(text: str | None) -> None:
                if text is None:
                    return
                description = _label_description(text, branch_title(branch))

                def write(store):
                    with self._recorded(store, branch.external_session_id, "label", description):
                        operations.set_branch_label(store, branch.id, text.strip() or None)

                def written(_result) -> None:
                    if self.session_id == branch.external_session_id:
                        self.show_session(branch.external_session_id, keep_branch=branch.id,
                                          keep_seq=self._kept_seq())
                    self.say("Label cleared." if not text.strip() else "Label saved.",
                             markup=False)

                self._write(description, write, done=written, keep=(key, text))

            self.push_screen(TextPrompt(title, value=self.typed(key, row.label or ""),
                                        placeholder="a short label",
                                        hint=Text("enter saves · empty clears · escape cancels", FAINT),
                                        id="label-dialog"), done_branch)
            return
        self.say("Labels go on messages and branches: tab to one of those panes first.",
                    severity="warning", markup=False)

    def _kept_seq(self) -> int | None:
        item = self.messages_pane.highlighted
        return item.entry.seq if item is not None else None

    def action_compact(self) -> None:
        from core.actions import operations

        from .components.compact_dialog import CompactDialog

        self._catch_up()
        branch = self._target_branch() if self._focused_pane() is self.branches_pane else self.branch
        if branch is None:
            return
        branch = self._fresh_branch(branch.id) or branch

        def done(choice) -> None:
            if choice is None:
                return
            description = f"compact {branch_title(branch)}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "compact", description):
                    entry_id = operations.compact(store, branch.id, summary=choice.summary,
                                                  keep_recent_tokens=choice.keep_recent_tokens)
                return store.entries.find(branch.external_session_id, entry_id)

            def written(entry) -> None:
                self.say(f"Compacted {branch_title(branch)}: the raw messages are kept (v shows "
                         "them).", title="Compacted", markup=False)
                self.reload(branch_id=branch.id, keep_seq=entry.seq if entry else None)

            self._write(description, write, done=written)

        reader = self._reader()
        if reader is not None:
            self.push_screen(CompactDialog(reader, branch), done)

    def action_compare(self) -> None:
        """d: the highlighted branch (or the one shown) against another of its session."""
        from .components.branch_picker import BranchPicker
        from .components.compare_screen import CompareScreen

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
        from .components.search_screen import SearchResult

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

    def action_make_current(self) -> None:
        from core.actions import operations

        self._catch_up()
        branch = self._target_branch()
        if branch is None:
            return
        if branch.is_current:
            self.say(f"{branch_title(branch)} is already current.", markup=False)
            return
        description = f"make {branch_title(branch)} current"

        def write(store):
            with self._recorded(store, branch.external_session_id, "make_current", description):
                operations.make_current(store, branch.id)

        def written(_result) -> None:
            self.say(f"{branch_title(branch)} is now current.", markup=False)
            self.reload(branch_id=branch.id, keep_seq=self._kept_seq())

        self._write(description, write, done=written)

    def action_archive(self) -> None:
        from .components.confirm_dialog import ConfirmDialog

        session = self.sessions_pane.highlighted
        if session is None:
            return
        if not session.is_active:
            description = f"restore {session.name or 'a session'} from the archive"

            def restore(store):
                with self._recorded(store, session.id, "archive", description):
                    store.sessions.set_active(session.id, True)

            def restored(_result) -> None:
                self.say("Session restored from the archive.", markup=False)
                self.reload(session_id=session.id)

            self._write(description, restore, done=restored)
            return
        question = Text("Archive ")
        question.append_text(safe_line(session.name or "(unnamed)", 60, style="bold"))
        question.append("?\n\nIt leaves the list; nothing is deleted. ", "")
        question.append("arbor --archived", "bold")
        question.append(" shows archived sessions.", "")

        def done(yes: bool | None) -> None:
            if not yes:
                return
            description = f"archive {session.name or 'a session'}"

            def archive(store):
                with self._recorded(store, session.id, "archive", description):
                    store.sessions.set_active(session.id, False)

            def archived(_result) -> None:
                self.say("Session archived.", markup=False)
                self.reload(session_id=session.id)

            self._write(description, archive, done=archived)

        self.push_screen(ConfirmDialog(Text("Archive session", "bold"), question, yes="Archive"), done)

    def action_rename(self) -> None:
        from .components.text_prompt import TextPrompt

        session = self.sessions_pane.highlighted
        if session is None:
            return

        key = ("rename", "session", session.id)

        def done(name: str | None) -> None:
            if name is None or not name.strip():
                return
            description = f"rename {session.name or 'a session'} to {name.strip()}"

            def write(store):
                with self._recorded(store, session.id, "rename", description):
                    store.sessions.rename(session.id, name.strip())

            def written(_result) -> None:
                self.reload(session_id=session.id,
                            branch_id=self.branch.id if self.branch else None,
                            keep_seq=self._kept_seq())

            self._write(description, write, done=written, keep=(key, name))

        self.push_screen(TextPrompt(Text("Rename session", "bold"),
                                    value=self.typed(key, session.name),
                                    placeholder="session name", id="rename-dialog"), done)

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

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.reload()

    def action_help(self) -> None:
        from .components.help_screen import HelpScreen

        self.push_screen(HelpScreen())

    def action_usage(self) -> None:
        from core.usage.tokens import local_zone

        from .components.usage_screen import UsageScreen

        today = self.clock().astimezone(local_zone()).date()
        reader = self._reader()
        if reader is not None:
            self.push_screen(UsageScreen(reader, today, self.sessions), self._jump)

    def action_search(self) -> None:
        from .components.search_screen import SearchScreen

        reader = self._reader()
        if reader is not None:
            self.push_screen(SearchScreen(reader, self.clock(), include_archived=self.show_archived),
                             self._jump)

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

    def action_import_logs(self) -> None:
        from .components.import_dialog import ImportDialog

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
