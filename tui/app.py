"""arbor's session browser: sessions, branches and messages, left to right.

This module composes the panes and routes: messages go up (the panes post
Highlighted/Selected, handled here), attributes go down (the app hands each pane its data),
keys reach the action families of tui/actions/, each a mixin of the app: history,
annotations, sessions, agents, views, the entry tree, the keys of other panes; and the
store's side (tui/actions/store/): loading what is shown, polling, the queue of writes.
Every change goes through `core.actions.operations` (or the store's own rename/archive),
then the panes are reloaded with the cursor kept by id.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Callable

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding

from core.model.clock import utc_now
from core.seed.models import InternalSession
from core.store import SessionSummary, Store

from .actions import key_answers
from .actions.agents import AgentActions
from .actions.annotations import AnnotationActions
from .actions.first_run import FirstRunActions
from .actions.history import HistoryActions
from .actions.key_answers import KeyAnswers
from .actions.screenshot import ScreenshotActions
from .actions.sessions import SessionActions
from .actions.store.calls import StoreCalls
from .actions.store.loading import StoreLoading
from .actions.store.shown_cache import ShownCache
from .actions.targets import ActionTargets
from .actions.tree import TreeActions
from .actions.views import ViewActions
from .components.branches_pane import BranchesPane, branch_title
from .components.empty_state import EmptyState
from .components.entries_pane import EntriesPane
from .components.key_footer import KeyFooter
from .components.messages_pane import MessagesPane
from .components.pane_row import PaneRow
from .components.sessions_pane import SessionsPane
from .components.status_line import StatusLine, status_text
from .key_order import KeysInOrder
from .palette import ArborCommands
from .render.formatting import FAINT
from .render.safe_text import clean, safe_line

Clock = Callable[[], datetime]


def _home_short(path: Path) -> str:
    """The store path, with the home folder written as ~ (a PostgreSQL store: its
    database and host, never the password)."""
    if not isinstance(path, (str, os.PathLike)):
        return path.label()   # a core.store.location.PostgresURL
    try:
        return "~/" + str(Path(path).resolve().relative_to(Path.home()))
    except (ValueError, OSError, RuntimeError):
        return str(path)


class ArborApp(StoreLoading, HistoryActions, AnnotationActions, SessionActions, AgentActions,
               FirstRunActions, ViewActions, TreeActions, KeyAnswers, ActionTargets, ScreenshotActions, StoreCalls,
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
        Binding("O", "open_in_other_agent", "Open in another agent", show=False,
                id="open-in-other-agent"),
        Binding("d", "compare", "Compare", show=False, id="compare"),
        Binding("u", "undo", "Undo", show=False, id="undo"),
        Binding("m", "checkpoint", "Checkpoint", show=False, id="checkpoint"),
        Binding("A", "toggle_archived", "Show archived", show=False, id="toggle-archived"),
        Binding("dollar_sign", "usage", "Usage", show=False, id="usage"),
        Binding("t", "toggle_tree", "Entries/branches", show=False, id="toggle-tree"),
        Binding("H", "toggle_thinking", "Hide/show thinking", show=False, id="toggle-thinking"),
        Binding("ctrl+f", "find_in_session", "Find in session", show=False, id="find-in-session"),
        Binding("z", "toggle_zoom", "Zoom", show=False, id="zoom"),
        # (in the footer only while the first import runs: check_action)
        Binding("x", "stop_import", "Stop import", id="stop-import"),
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
        # FIRST_PAGE: actions/store/loading.py). The rest comes one step a frame, so that none of it delays the one
        # before (nor takes both cores while the terminal draws): the highlighted
        # session's branches and messages, then the whole list and its costs (read in a
        # thread), polling and following.
        self._starting = True
        # (the first import's process yields to the app until a frame has drawn rows:
        # told as that frame is drawn)
        self.sessions_pane.on_rows_drawn = self._first_rows_drawn
        self._show_first_page()
        self._update_status()
        self.call_after_refresh(self._show_first_session)

    def on_unmount(self) -> None:
        self._stop_first_run()   # (at the file's last commit: the next start goes on)
        if self.live_follow is not None:
            self.live_follow.stop()
        self._store_calls_unmounted()

    # ----------------------------------------------------------- titles, status
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
                                  partial=self._partial, alert=self.store_alert(),
                                  progress=self.first_run_status()))

    def on_resize(self, event: events.Resize) -> None:
        # the event's size: this handler runs before App's own, which updates self.size
        self._update_status(event.size.width)

    def _ending(self) -> bool:
        """Whether the app is ending (q while the first import runs): its screen and panes
        are gone, and what a thread said meanwhile (the import's progress, its rows)
        changes nothing."""
        from textual.app import ScreenStackError
        from textual.css.query import NoMatches

        if not self.is_running:
            return True
        try:
            self.query_one("#status")
        except (NoMatches, ScreenStackError):
            return True
        return False

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

    # ---------------------------------------------------------------- helpers
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

    def action_focus_previous_pane(self) -> None:
        if not self.query_one("#panes").display:
            return
        panes = self._panes()
        current = self._focused_pane()
        index = panes.index(current) if current in panes else 0
        self.set_focus(panes[(index - 1) % 3])

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        # z is the panes' `zoom` (in the footer) where the panes are folded for want of
        # room, and the app's `toggle_zoom` (in help and palette only) where they are not;
        # neither where it would change nothing
        if action == "zoom":
            return self.query_one(PaneRow).zoom_in_footer()
        if action == "toggle_zoom":
            return self.query_one(PaneRow).can_zoom()
        if action == "stop_import":
            return self.importing_first()
        return True
