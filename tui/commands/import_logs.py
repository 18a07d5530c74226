"""`arbor import PATH... | --discover [--db PATH]`: read agent logs into the store.

Shows one progress line on a terminal (sessions, MB and time left of the whole import),
then a summary table (a row a file: what happened, session, entries, branches, skipped
lines; a row a folder when many files changed, see import_report.py) and every skipped
line as `file:line  reason`. `--discover` reads the newest logs first, and is the store's
first import (core/importing/first_run/) until one finishes. Ctrl-C stops it at the
file's last commit: it says what it did and that running it again goes on, exit status
130 (a second Ctrl-C stops at once, losing nothing either). Exit status otherwise: 0 when
at least one file was imported (or was already up to date), 1 when nothing could be
imported, 2 when the store cannot be opened, or its server stopped answering during the
import (which stops at once; the next import goes on from where it stopped).
Textual is not imported here: this runs in a plain terminal, fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .import_report import FILES_SHOWN
from .shared import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_STORE, add_db_argument,
                     open_store_or_explain, stderr_console, stdout_console)

# Each file is imported in one transaction: what finished is kept, the file in progress
# was rolled back.
# An import that reads no more than this of appended lines keeps the store's log small
# and leaves it as it is at the end (import_logs._small)
SMALL_GROWTH = 1024 * 1024
INTERRUPTED = ("what it had read up to its last save is kept; run it again to go on from "
               "there")


def configure(p: argparse.ArgumentParser) -> None:
    from core.agents import registry

    p.description = (f"Import the logs of {registry.titles_text('and')} (files or folders, "
                     "recursively; the format is detected from the content).")
    p.epilog = (f"--discover looks in {registry.places_text()}; name a LangGraph database "
                "explicitly.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="log files or folders")
    p.add_argument("--discover", action="store_true", help="also import from the usual places")
    add_db_argument(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table; only errors")
    p.add_argument("--files", action="store_true",
                   help=f"a row for every file in the table (by default a row a folder once "
                        f"there are more than {FILES_SHOWN} files)")


def run(args: argparse.Namespace) -> int:
    if not args.paths and not args.discover:
        print("arbor import: give files or folders to import, or --discover", file=sys.stderr)
        return EXIT_FAILED
    from core.importing import discover

    paths: list[Path] = [Path(p).expanduser() for p in args.paths]
    if args.discover:
        found = discover()
        if not found and not paths:
            from core.agents.registry import places_text

            print(f"arbor import: no agent logs in the usual places ({places_text()})",
                  file=sys.stderr)
            return EXIT_FAILED
        paths.extend(found)
    seen = _look(args.db, paths)
    if seen is not None and seen.unchanged is not None:
        if not args.quiet:
            _say_unchanged(seen.unchanged, None, _store_shown(args.db))
        return EXIT_OK
    guard = None   # the look's connection, kept open until the store is closed
    small = _small(seen)
    try:
        store = open_store_or_explain(args.db)
        if store is not None and small:
            # (then SQLite's log is left as it is: store.close(keep_log=True), the look's
            # connection open meanwhile)
            held = seen.held[0] if seen.held else None
            store.keep_log_small(held)
            guard = held
    finally:
        if seen is not None and guard is None:
            seen.release()   # (now that the store is open: see unchanged.look's `hold`)
    if store is None:
        return EXIT_STORE
    from core.model.errors import StoreUnreachable
    from core.store import first_import

    try:
        # (a store that finished its first import, or never is to have one, is not marked:
        # marking it again cost two commits of every later import)
        first = args.discover and first_import.due(store)
        if first:
            first_import.begin(store)
        # (newest first only where the order shows: not for a few appended lines, whose
        # sessions are in the store already; nor is their first commit cut short)
        report = _run(store, paths, show_progress=not args.quiet and sys.stderr.isatty(),
                      describe_unchanged=not args.quiet, scanned=seen,
                      newest_first=args.discover and not small)
        if first and not report.stopped:
            first_import.finish(store)
    except StoreUnreachable as error:
        return _stopped(error)
    finally:
        store.close(keep_log=True)
        if guard is not None:
            seen.release()
    if report.stopped:
        if not args.quiet:
            from .import_report import print_report

            print_report(report, stdout_console(), store_path=str(store.path),
                         every_file=args.files)
        print(_stopped_line(report), file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.quiet:
        for result in report.failed_files:
            from tui.render.safe_text import clean   # (Rich comes with it: only when there is a failure)

            print(f"{clean(result.path)}: {clean(result.error)}", file=sys.stderr)
    elif report.files and all(f.status == "unchanged" for f in report.files):
        _say_unchanged(len(report.files), report.seconds, str(store.path))
    else:
        from .import_report import print_report

        print_report(report, stdout_console(), store_path=str(store.path), every_file=args.files)
    return EXIT_OK if report.imported_files else EXIT_FAILED


def _small(seen) -> bool:
    """Whether the import only reads on a little from where its files ended (appended
    lines): its store keeps a small write-ahead log when it closes. (A bigger import
    writes back the log it made, as before: keeping SQLite's log small as it goes would
    slow it.)"""
    if seen is None:
        return False
    from core.importing.unchanged import grown_bytes

    grown = grown_bytes(seen)
    return grown is not None and grown <= SMALL_GROWTH


def _stopped(error) -> int:
    """The store's server stopped answering: one sentence, what was done before, exit 2."""
    from tui.render.safe_text import clean

    report = getattr(error, "report", None)
    done = sum(f.status == "imported" for f in report.files) if report is not None else 0
    before = (f"{done} file{'s' if done != 1 else ''} imported before it"
              if done else "nothing imported")
    print(f"arbor import: {clean(str(error))}; stopped ({before}); {INTERRUPTED}.",
          file=sys.stderr)
    return EXIT_STORE


def _look(db, paths):
    """`unchanged.look` at `paths`: whether none changed since its last import (told from
    the records and `stat` alone, without loading the store's API, an importer or Rich),
    and what the import is to be given when something did; None when the store is not a
    plain file."""
    from core.importing.unchanged import look
    from core.store.location import store_location

    try:
        location = store_location(db)
    except Exception:  # noqa: BLE001 - the ordinary path says what is wrong with it
        return None
    if not isinstance(location, Path):
        return None
    return look(location, paths, hold=True)


def _store_shown(db) -> str:
    from core.store.location import store_location

    return str(store_location(db))


def _say_unchanged(count: int, seconds: float | None, store: str) -> None:
    """Nothing to show in a table: one plain line."""
    took = f"{seconds:.2f} s; " if seconds is not None else ""
    print(f"arbor import: {'the file is' if count == 1 else f'all {count} files are'} "
          f"unchanged since the last import ({took}store: {store})")


def _stopped_line(report) -> str:
    """What a stopped import did, and how to go on."""
    left = report.stopped
    done = sum(f.status == "imported" for f in report.files)
    return (f"arbor import: stopped; {done:,} file{'s' if done != 1 else ''} imported, "
            f"{left:,} still to read (what was read is kept): run it again to go on.")


def _run(store, paths, *, show_progress: bool, describe_unchanged: bool, scanned=None,
         newest_first: bool = False):
    """Import with a progress line on stderr once a file is actually read (a run where
    nothing changed never imports Rich). Ctrl-C stops it at the file's last commit (see
    `_StopOnInterrupt`)."""
    from core.importing import import_paths

    shown: list = []
    stop = _StopOnInterrupt()

    def update(run) -> None:
        if not shown:
            if not run.files_total:
                return
            shown.append(_ProgressLine())
        shown[0].update(run, stop.is_set())

    run = None   # (the totals are for the progress line alone: `-q` does without them)
    if show_progress:
        from core.importing.run_progress import RunProgress

        run = RunProgress(update)
    with stop:
        try:
            return import_paths(store, paths, describe_unchanged=describe_unchanged,
                                scanned=scanned, newest_first=newest_first, stop=stop,
                                run=run)
        finally:
            if shown:
                shown[0].close()


class _StopOnInterrupt:
    """The import's stop (`is_set()`, as a threading.Event's, which an import of a few
    lines is not to load): the first Ctrl-C (SIGINT) sets it, which stops the import at
    the file's next commit with a report of what it did; a second one raises
    KeyboardInterrupt as usual (which stops at once: a write transaction rolls back to its
    last commit too). Outside the main thread signals stay as they are."""

    def __init__(self):
        self.stopped = False
        self.previous = None

    def is_set(self) -> bool:
        return self.stopped

    def __enter__(self):
        import signal

        def first(_signum, _frame):
            self.stopped = True
            signal.signal(signal.SIGINT, signal.default_int_handler)

        try:
            self.previous = signal.signal(signal.SIGINT, first)
        except ValueError:   # not the main thread
            self.previous = None
        return self

    def __exit__(self, *exc):
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


class _ProgressLine:
    """One line on stderr, rewritten as the import goes (transient: gone when it ends):
    sessions done of all, a bar, MB done of all, time left, how to stop."""

    def __init__(self):
        from rich.progress import BarColumn, Progress, TextColumn

        columns = [TextColumn("{task.fields[sessions]}"), BarColumn(bar_width=None),
                   TextColumn("{task.fields[mb]}"), TextColumn("{task.fields[left]}")]
        self.bar = Progress(*columns, console=stderr_console(), transient=True, expand=True)
        self.bar.start()
        self.task = self.bar.add_task("", total=1, sessions="", mb="", left="")

    def update(self, run, stopping: bool) -> None:
        from core.importing.run_progress import megabytes_text, time_left_text

        files, count, done, total, left = run.snapshot()
        self.bar.update(self.task, completed=done, total=max(total, 1),
                        sessions=f"{files:,}/{count:,} sessions",
                        mb=megabytes_text(done, total),
                        left="stopping…" if stopping else
                        f"{time_left_text(left)} · ctrl+c stops")

    def close(self) -> None:
        self.bar.stop()
