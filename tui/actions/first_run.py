"""The store's first import, seen from the app (core/importing/first_run/ says when a store
is to have one): `arbor` on a store that has not finished its first import reads the logs
agents keep in their usual folders, newest first, in a process of its own
(core/importing/first_run/process.py: started by `arbor` before its first frame, or here
once the first screen is drawn), while the panes show the sessions as they land; the status
line says how far it is (sessions, MB, time left) and that x stops it. Following running
agents begins once it ends (or is stopped): the follower never reads a file the first
import still owns. The app stops the process (at the file's last commit) when it closes,
so that the next start goes on from there; if the app dies, the process sees its stdin
close and stops too. A mixin of ArborApp.
"""

from __future__ import annotations

from textual.message import Message

from tui.render.safe_text import clean

# Rows are looked for this often (s) while none is shown yet: the first rows land within a
# commit (core.importing.COMMIT_EVERY) of the import's start, and are drawn the frame after
# the look that finds them.
FIRST_ROWS_LOOK = 0.02


class FirstRunMoved(Message):
    """The first import read more (posted at most every RunProgress.interval)."""


class FirstRunEnded(Message):
    """The first import ended (finished, stopped, failed, or was not wanted)."""

    def __init__(self, report=None, error: str | None = None) -> None:
        super().__init__()
        self.report = report      # {"stopped": files left, "summary": its words}
        self.error = error


def progress_forms(run, stopping: bool) -> list[str]:
    """The status line's words for the import, longest first (status_line picks the one
    that fits): sessions, MB, time left, the key that stops it."""
    from core.importing.run_progress import megabytes_text, time_left_text

    files, count, done, total, left = run.snapshot()
    share = f"{100 * done // total}%" if total else "0%"
    if stopping:
        tail = ["stopping…"] * 4
    else:
        when = time_left_text(left)
        tail = [f"{when} · x stops", f"{when} · x stops", f"{when} · x stops", "x stops"]
    words = [f"importing {files:,}/{count:,} sessions · {megabytes_text(done, total)} · {tail[0]}",
             f"importing {files:,}/{count:,} · {megabytes_text(done, total)} · {tail[1]}",
             f"importing {share} · {tail[2]}",
             f"{share} · {tail[3]}"]
    return words


class FirstRunActions:
    """Mixed into ArborApp (uses its store, follow options, say, _poll, _update_status)."""

    first_import = None   # core.importing.first_run.process.FirstRunProcess
    early_first_import = None   # ... one `arbor` started before the app (commands/browse.py)
    first_import_due: bool | None = None   # what `arbor` found before the app (None: ask)
    _first_run_keys_shown = False
    _first_run_files = 0
    _first_rows_version: int | None = None   # the store's data version the last look saw
    _first_rows_look = None   # the timer of the next look for the first rows

    def _begin_first_run(self) -> None:
        """Once the first screen is drawn: the first import's process `arbor` started before
        it, or one started now if the store is to have one (the process asks again), then
        following once it ends; a store that is not to have one is followed at once, with
        no process started."""
        first = self.early_first_import
        if first is None:
            from core.store.first_import import due

            known = self.first_import_due
            if not (due(self.store) if known is None else known):
                self._start_following()   # (most starts: no process, follow at once)
                return
        from core.importing.first_run.process import FirstRunProcess, store_location_text

        if first is None:
            options = self.follow if isinstance(self.follow, dict) else {}
            first = FirstRunProcess(store_location_text(self.store), options.get("home"))
        self.first_import = first
        first.listener = self._first_run_said
        if first.process is None and not first.ended.is_set():
            first.start()
        elif first.ended.is_set():    # (ended before the app listened)
            self._first_run_said("ended")
        elif first.started.is_set():
            self._first_run_said("moved")
        if self.sessions:   # (rows on screen already: of an import stopped before)
            first.tell_drawn()
        if self._first_rows_look is None:   # (not looking since the mount already)
            self._look_for_first_rows()

    def _look_early_for_first_rows(self) -> None:
        """(the first frame drawn) Where `arbor` started the first import's process before
        the app and the first page (read at mount) had no row yet: its first rows are looked
        for from now on, not once the rest of the start is done (~0.2 s later)."""
        if self.early_first_import is not None and not self.sessions:
            self._first_rows_look = self.set_timer(FIRST_ROWS_LOOK, self._look_for_first_rows)

    def _first_run_said(self, kind: str) -> None:
        """(the process's reading thread) its lines, as messages to the app."""
        first = self.first_import
        if kind == "ended":
            self.post_message(FirstRunEnded(first.report, first.error and clean(first.error)))
        else:
            self.post_message(FirstRunMoved())

    def _look_for_first_rows(self) -> None:
        """Until the first rows are shown, the store is looked at every FIRST_ROWS_LOOK s,
        here on the screen's thread (its data version, one PRAGMA; when it moved, the first
        page, one indexed query): the rows are drawn in the next frame, and their session's
        branches and messages are read after it (_first_rows_shown); then the ordinary
        poll's pace is enough."""
        self._first_rows_look = None
        first = self.first_import or self.early_first_import
        if first is None or first.ended.is_set() or self.sessions or self._ending():
            return
        try:
            version = self.store.data_version()
        except self.store.errors:
            version = None   # (the poll says why)
        if version is not None and version != self._first_rows_version:
            self._first_rows_version = version
            self._show_first_page()
            if self.sessions:
                self.sessions_pane.when_drawn(self._first_rows_shown)
                return
        self._first_rows_look = self.set_timer(FIRST_ROWS_LOOK, self._look_for_first_rows)

    def _first_rows_shown(self) -> None:
        """The first rows are on screen: now the highlighted session's branches and
        messages, and the whole list with its costs (in a thread)."""
        if self._ending():
            return
        self._first_rows_drawn()
        self._catch_up()
        self.load_sessions(first=self._data_version is None)

    def _first_rows_drawn(self) -> None:
        """(rows are on screen) The first import's process, told: it yields to the app from
        its first commit until the app has drawn rows (core/importing/first_run/priority.py)."""
        first = self.first_import or self.early_first_import
        if first is not None:
            first.tell_drawn()

    def importing_first(self) -> bool:
        return self.first_import is not None and self.first_import.running

    def first_import_left(self, session_id: int) -> bool:
        """Whether the first import (running, or stopped) has not read all of this
        session's log: it has entries and no branch yet (a session's branches are made
        when its log is read to the end)."""
        first = self.first_import
        if first is None or not first.started.is_set():
            return False
        session = self._session(session_id)
        return session is not None and session.message_count > 0

    def first_run_status(self) -> list[str] | None:
        first = self.first_import
        if first is None or not first.running:
            return None
        return progress_forms(first.run, first.stopping)

    def on_first_run_moved(self, _message: FirstRunMoved) -> None:
        if self._ending():
            return
        if not self._first_run_keys_shown:
            self._first_run_keys_shown = True
            self.refresh_bindings()    # (x in the footer)
            if not self.sessions:   # (the empty screen says it is importing)
                # (it may take the place of the start's own load, which reads the version
                # the poll compares with: then this one does)
                self.load_sessions(first=self._data_version is None)
        self._update_status()
        files = self.first_import.run.snapshot()[0] if self.first_import else 0
        if not self.sessions or files != self._first_run_files:
            self._first_run_files = files   # (a session read to its end: shown at once)
            self._poll()

    def on_first_run_ended(self, message: FirstRunEnded) -> None:
        if self._ending():
            return   # (and no following begins)
        first = self.first_import
        self.refresh_bindings()
        report = message.report
        if message.error is not None:
            self.say(f"The first import stopped: {message.error}. arbor import --discover "
                     "tries again and says more.", title="Import", severity="error",
                     markup=False)
        elif report is not None:
            stopped = report.get("stopped") or 0
            if stopped:
                self.say(f"Import stopped: {stopped:,} file"
                         f"{'s' if stopped != 1 else ''} still to read. arbor goes on "
                         "from there the next time it starts (or arbor import --discover).",
                         title="Import", timeout=10, markup=False)
            else:
                self.say(clean(str(report.get("summary", "")))[:600], title="Import",
                         timeout=10, markup=False)
        if first is not None and first.started.is_set():
            self._poll()
        self._start_following()
        self._update_status()

    def action_stop_import(self) -> None:
        first = self.first_import
        if first is None or not first.running:
            return
        first.ask_to_stop()
        self._update_status()

    def _stop_first_run(self) -> None:
        first = self.first_import or self.early_first_import
        if first is not None:
            first.stop()
