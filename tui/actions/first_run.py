"""The store's first import, run by the app itself (core/importing/first_run.py says when a
store is to have one): `arbor` on a store that has not finished its first import reads the
logs agents keep in their usual folders, newest first, on the store's background-writing
connection, while the panes show the sessions as they land; the status line says how far
it is (sessions, MB, time left) and that x stops it. Following running agents begins once
it ends (or is stopped): the follower never reads a file the first import still owns.

A plain thread, as live_follow.py's follower is: it may outlive a screen, and the app stops
it (at the file's last commit) when it closes, so that the next start goes on from there.
A mixin of ArborApp, with the thread in `FirstRun`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual.message import Message

from tui.render.safe_text import clean

# Rows are looked for this often (s) while none is shown yet: the first rows land within a
# commit (core.importing.COMMIT_EVERY) of the import's start.
FIRST_ROWS_LOOK = 0.05


class FirstRunMoved(Message):
    """The first import read more (posted at most every RunProgress.interval)."""


class FirstRunEnded(Message):
    """The first import ended (finished, stopped, failed, or was not wanted)."""

    def __init__(self, report=None, error: str | None = None) -> None:
        super().__init__()
        self.report = report
        self.error = error


class FirstRun:
    """The first import's thread: decides whether the store is to have one, reads the
    agents' folders newest first, and records it finished unless stopped."""

    def __init__(self, store, post, home: Path | None = None) -> None:
        from core.importing.run_progress import RunProgress

        self.store = store
        self.post = post                 # thread-safe, never waits (App.post_message)
        self.home = home
        self.stop_event = threading.Event()
        self.started = threading.Event()   # set once it is known to import something
        self.ended = threading.Event()
        self.places: list[Path] = []
        self.run = RunProgress(lambda _run: self.post(FirstRunMoved()))
        self.thread = threading.Thread(target=self._run, name="arbor-first-import", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        report = error = None
        try:
            report = self._import()
        except Exception as failure:  # noqa: BLE001 - never take the app down with it
            error = clean(f"{type(failure).__name__}: {failure}")
        finally:
            self.ended.set()
            self.post(FirstRunEnded(report, error))

    def _import(self):
        from core.importing import first_run
        from core.importing.driver import import_paths
        from core.importing.files import discover

        writing = self.store.write_handle()   # (opened here: the screen's thread never connects)
        if self.stop_event.is_set() or not first_run.pending(writing):
            return None
        self.places = discover(self.home)
        if not self.places:
            return None
        self.started.set()
        first_run.begin(writing)
        report = import_paths(writing, self.places, newest_first=True, stop=self.stop_event,
                              run=self.run, describe_unchanged=False)
        if not report.stopped:
            first_run.finish(writing)
        return report

    def stop(self, timeout: float = 5.0) -> None:
        """Stop at the file's last commit (and wait for it, up to `timeout` s)."""
        self.stop_event.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    @property
    def running(self) -> bool:
        return self.started.is_set() and not self.ended.is_set()


def progress_forms(run, stopping: bool) -> list[str]:
    """The status line's words for the import, longest first (status_line picks the one
    that fits): sessions, MB, time left, the key that stops it."""
    from core.importing.run_progress import megabytes_text, time_left_text

    files, count, done, total, left = run.snapshot()
    share = f"{100 * done // total}%" if total else "0%"
    if stopping:
        tail = ["stopping…"] * 4
    else:
        when = f"{time_left_text(left)} left"
        tail = [f"{when} · x stops", f"{when} · x stops", f"{when} · x stops", "x stops"]
    words = [f"importing {files:,}/{count:,} sessions · {megabytes_text(done, total)} · {tail[0]}",
             f"importing {files:,}/{count:,} · {megabytes_text(done, total)} · {tail[1]}",
             f"importing {share} · {tail[2]}",
             f"{share} · {tail[3]}"]
    return words


class FirstRunActions:
    """Mixed into ArborApp (uses its store, follow options, say, _poll, _update_status)."""

    first_import: FirstRun | None = None
    _first_run_keys_shown = False

    def _begin_first_run(self) -> None:
        """Once the first screen is drawn (nothing of the importers is loaded before it):
        the first import if the store is to have one (decided in the thread), then
        following."""
        options = self.follow if isinstance(self.follow, dict) else {}
        self.first_import = FirstRun(self.store, self.post_message, home=options.get("home"))
        self.first_import.start()
        self._look_for_first_rows()

    def _look_for_first_rows(self) -> None:
        """Until the first rows are shown, the store is looked at every FIRST_ROWS_LOOK s
        (then the ordinary poll's pace is enough)."""
        first = self.first_import
        if first is None or first.ended.is_set() or self.sessions:
            return
        self._poll()
        self.set_timer(FIRST_ROWS_LOOK, self._look_for_first_rows)

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
        return progress_forms(first.run, first.stop_event.is_set())

    def on_first_run_moved(self, _message: FirstRunMoved) -> None:
        if not self._first_run_keys_shown:
            self._first_run_keys_shown = True
            self.refresh_bindings()    # (x in the footer)
            if not self.sessions:
                self.load_sessions()   # (the empty screen says it is importing)
        self._update_status()
        if not self.sessions:
            self._poll()

    def on_first_run_ended(self, message: FirstRunEnded) -> None:
        first = self.first_import
        self.refresh_bindings()
        report = message.report
        if message.error is not None:
            self.say(f"The first import stopped: {message.error}. arbor import --discover "
                     "tries again and says more.", title="Import", severity="error",
                     markup=False)
        elif report is not None:
            if report.stopped:
                self.say(f"Import stopped: {report.stopped:,} file"
                         f"{'s' if report.stopped != 1 else ''} still to read. arbor goes on "
                         "from there the next time it starts (or arbor import --discover).",
                         title="Import", timeout=10, markup=False)
            else:
                self.say(clean(report.summary())[:600], title="Import", timeout=10,
                         markup=False)
        if first is not None and first.started.is_set():
            self._poll()
        self._start_following()
        self._update_status()

    def action_stop_import(self) -> None:
        first = self.first_import
        if first is None or not first.running:
            return
        first.stop_event.set()
        self._update_status()

    def _stop_first_run(self) -> None:
        if self.first_import is not None:
            self.first_import.stop()
