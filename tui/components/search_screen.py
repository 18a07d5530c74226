"""Search: session names and all message text (FTS5), with a result list that jumps."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import on, work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from core.model.errors import ArborError
from core.store import SearchHit, SearchResults, SessionSummary, Store
from core.store.live_search import LiveSearch

from .backdrop import FrozenBackdrop
from tui.render.formatting import DIM, FAINT, ROLE_STYLES, SOURCE_STYLES, age, clock_time, count
from tui.render.role_names import ROLE_NAMES
from tui.render.safe_text import safe_line
from .row_list import RowList
from .safe_fields import SafeInput
from .focus import focus_now

NAME_LIMIT = 50
TEXT_LIMIT = 200


@dataclass
class SearchResult:
    session_id: int
    seq: int | None = None          # None: the session itself (a name hit)


class ResultList(RowList):
    ROW_HEIGHT = 2
    BINDINGS = [Binding("enter", "select", "Jump", show=True)]

    def __init__(self, now: datetime, **kwargs) -> None:
        super().__init__(**kwargs)
        self.now = now
        self.sessions: list[SessionSummary] = []
        self.hits: list[SearchHit] = []

    def set_results(self, sessions: list[SessionSummary], hits: list[SearchHit]) -> None:
        self.sessions, self.hits = sessions, hits
        self.set_row_count(len(sessions) + len(hits), 0, notify=False)

    def result(self, index: int) -> SearchResult | None:
        if index < len(self.sessions):
            return SearchResult(self.sessions[index].id)
        index -= len(self.sessions)
        if 0 <= index < len(self.hits):
            hit = self.hits[index]
            return SearchResult(hit.external_session_id, hit.seq)
        return None

    def render_row(self, index: int, width: int) -> list[Text]:
        if index < len(self.sessions):
            session = self.sessions[index]
            top = Text(" ▤ ", "#5fafff")
            top.append_text(safe_line(session.name or "(unnamed)", width - 12, style="bold"))
            bottom = Text("   session · ", FAINT)
            bottom.append_text(safe_line(session.source, 14, style=SOURCE_STYLES.get(session.source, DIM)))
            bottom.append(f" · {session.message_count:,} messages · {age(session.updated_at, self.now)}", FAINT)
            return [top, bottom]
        hit = self.hits[index - len(self.sessions)]
        top = Text(" ", end="")
        role = hit.role or hit.type
        shown = ROLE_NAMES.get(role, role)
        top.append_text(safe_line(shown, 12, style=ROLE_STYLES.get(role or "", "bold")))
        top.append("  ")
        top.append_text(safe_line(hit.snippet, max(10, width - top.cell_len - 1)))
        bottom = Text("   in ", FAINT)
        bottom.append_text(safe_line(hit.session_name or "(unnamed)", max(10, width - 30), style=DIM))
        bottom.append(f" · {clock_time(hit.timestamp, self.now)}", FAINT)
        return [top, bottom]

    def action_select(self) -> None:
        if self.row_count:
            self.post_message(self.Selected(self, self.cursor))


class SearchScreen(FrozenBackdrop[SearchResult | None]):
    BINDINGS = [
        Binding("escape", "cancel", "Close"),
        Binding("down", "results", "Results", show=False),
    ]

    def __init__(self, store: Store, now: datetime, *, include_archived: bool = False,
                 query: str = "") -> None:
        super().__init__()
        self.store = store
        self.now = now
        self.include_archived = include_archived
        self.query_text = query
        self._live: LiveSearch | None = None
        self._live_lock = threading.Lock()
        self._closed = False
        self._asked = 0          # the number of the newest query: an older one's answer is stale
        self._pending = False
        self._enter_pending = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog search", id="search-dialog"):
            yield Static(Text("Search sessions, labels and messages", "bold"), classes="dialog-title")
            yield SafeInput(self.query_text, placeholder='words to find (names, labels, all message'
                            ' text); "an exact phrase" in quotes',
                            id="search-input")
            yield Static(Text("type to search · ↓ results · enter jumps · escape closes", FAINT),
                         id="search-status")
            yield ResultList(self.now, id="search-results")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = False
        focus_now(field)
        if self.query_text:
            self._ask(self.query_text)

    def on_unmount(self) -> None:
        self._asked += 1     # (a search still running answers no one)
        with self._live_lock:
            live, self._live, self._closed = self._live, None, True
        if live is not None:
            live.stop()
            live.close()

    def _searcher(self) -> LiveSearch | None:
        """(a worker) The screen's searches' own connection, opened on first use (in a
        thread: opening may wait for a server)."""
        with self._live_lock:
            if self._live is None and not self._closed:
                self._live = LiveSearch(self.store, include_archived=self.include_archived)
            return self._live

    # Every key searches at once: the search the key made stale is stopped where it runs
    # (its own connection: core/store/live_search.py) and its worker replaced; the answer
    # of the key comes first (the newest matching messages), the best-first one after it
    # while no other key comes.

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        self._ask(event.value)

    def _ask(self, value: str) -> None:
        self._asked += 1
        self._pending = True
        if self._live is not None:
            self._live.stop()
        self._search(value, self._asked)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        results = self.query_one(ResultList)
        if self._pending:
            self._enter_pending = True  # go to the results when they arrive
        elif results.row_count:
            results.focus()

    @property
    def busy(self) -> bool:
        return self._pending

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str, asked: int) -> None:
        query = query.strip()
        worker = get_current_worker()
        phases, retried = [True, False], False
        while phases:
            if asked != self._asked or worker.is_cancelled:
                return          # a newer key came: its worker answers
            try:
                live = self._searcher()
                if live is None:
                    return
                results = live.run(query, quick=phases[0], names=NAME_LIMIT, messages=TEXT_LIMIT)
            except (ArborError, *self.store.errors) as error:
                if asked != self._asked:
                    return      # stopped by a newer key
                if "interrupted" in str(error) and not retried:
                    retried = True   # (the stop meant for an older search, caught late)
                    continue
                self.app.call_from_thread(self._show, asked, query, None, str(error), True)
                return
            quick = phases.pop(0)
            self.app.call_from_thread(self._show, asked, query, results, None, not quick)
            if not query:
                return

    def _show(self, asked: int, query: str, results: SearchResults | None, error: str | None,
              final: bool) -> None:
        if asked != self._asked or not self.is_mounted:
            return  # an older search finished after a newer one started
        if final:
            self._pending = False
        names = results.sessions if results is not None else []
        hits = results.hits if results is not None else []
        self.query_one(ResultList).set_results(names, hits)
        if self._enter_pending and (final or names or hits):
            self._enter_pending = False
            if names or hits:
                self.query_one(ResultList).focus()
        status = self.query_one("#search-status", Static)
        if error:
            status.update(safe_line(error, 200, style="bold #ff5f5f"))
        elif query and results is not None:
            from core.history.search_query import SearchQuery

            # (a phrase's hits are not ranked: core/store/search.py)
            ranked = final and not SearchQuery(query).phrases
            order = "best first" if ranked else "newest first" if final else "newest first, ranking…"
            text = Text(f"{count(len(names), 'session')} by name · {count(len(hits), 'message')}"
                        f"{' (' + ('best ' if ranked else 'newest ') + str(TEXT_LIMIT) + ')' if len(hits) >= TEXT_LIMIT else ''}"
                        f"{' · ' + order if hits else ''}"
                        " · ↓ results · enter jumps", FAINT)
            if results.coverage.pending:
                text.append(f" · stemmed search covers {results.coverage.percent}% of history"
                            " so far (indexing…)", "#d7af5f")
            status.update(text)
        else:
            status.update(Text("type to search · ↓ results · enter jumps · escape closes", FAINT))

    def action_results(self) -> None:
        results = self.query_one(ResultList)
        if results.row_count:
            results.focus()

    @on(ResultList.Selected)
    def _selected(self, event: ResultList.Selected) -> None:
        event.stop()
        self.dismiss(self.query_one(ResultList).result(event.index))

    def action_cancel(self) -> None:
        self.dismiss(None)
