"""`arbor watch [--db PATH] [FOLDER...]`: follow running agents without the app.

Keeps the store in step with the agents' logs (see core.importing.follow): what an agent appends is
imported from the file's stored offset as it is written, one line printed per import.
Runs until Ctrl-C, SIGTERM or SIGHUP (tui/cli.py turns both signals into Ctrl-C). Killing
it at any moment loses and duplicates nothing: the next run goes on from the offsets the
store recorded.
"""

from __future__ import annotations

import argparse
import sys

from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Follow running agents: import what they append to their logs as it "
                          "is written (the folders the store imported from, the agents' usual "
                          "folders, and any FOLDER given).")
    add_db_argument(parser)
    parser.add_argument("folders", nargs="*", metavar="FOLDER",
                        help="also follow these folders (new and changed logs are imported)")
    parser.add_argument("--no-discover", action="store_true",
                        help=f"do not follow the agents' usual folders ({_places()})")
    parser.add_argument("--poll", action="store_true",
                        help="poll (stat) instead of file system notifications, e.g. on a network "
                             "file system (also: ARBOR_FOLLOW_POLL=1)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing per import")


STOP_WAIT = 0.5   # seconds Ctrl-C waits for the following thread before the process ends


def run(args: argparse.Namespace) -> int:
    import threading

    store = open_store_or_explain(args.db)
    if store is None:
        return EXIT_STORE
    from core.importing.follow import Follower

    stop = threading.Event()
    follower = Follower(store, places=args.folders, discover=not args.no_discover,
                        poll=True if args.poll else None,
                        on_import=None if args.quiet else _printer(store))
    # (an Event, not Thread.is_alive: a join cut by Ctrl-C can leave a running thread
    # looking stopped)
    ended = threading.Event()
    runner = threading.Thread(target=_follow, args=(follower, stop, ended), name="arbor-watch",
                              daemon=True)
    runner.start()
    telling = _Teller(follower, quiet=args.quiet)
    ended_alone = False
    try:
        while not ended.wait(0.1):
            telling.tell()
        ended_alone = True
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        # Within a second, whatever it is doing: a thread still inside an import or a
        # connection attempt (a server that does not answer) is left to end with the
        # process. What it had not committed is not kept; the next run imports it.
        if ended.wait(STOP_WAIT):
            store.close()
    stats = follower.stats
    untold = stats.failures != telling.failures and stats.unreachable is None
    if stats.last_error and (ended_alone or (untold and not args.quiet)):
        print(f"arbor watch: last problem: {_clean(stats.last_error)}", file=sys.stderr)
    print(f"arbor watch: stopped ({stats.entries:,} entries imported in "
          f"{stats.imports:,} passes)", file=sys.stderr)
    return EXIT_FAILED if ended_alone else EXIT_OK


def _follow(follower, stop, ended) -> None:
    """The following thread: an error nobody foresaw ends it with a sentence, not a
    traceback (the main thread says it and exits 1)."""
    try:
        follower.run(stop)
    except Exception as error:  # noqa: BLE001 - told as the last problem
        follower.stats.last_error = f"{type(error).__name__}: {error}"
    finally:
        ended.set()


def _clean(text: str) -> str:
    from tui.render.safe_text import clean

    return clean(text)


class _Teller:
    """What `arbor watch` says on stderr as it follows: that it follows; a store whose
    server does not answer, in one sentence, once per outage, and that it answers again;
    any other problem once while it lasts."""

    def __init__(self, follower, *, quiet: bool):
        self.follower = follower
        self.quiet = quiet
        self.following = False
        self.failures = 0
        self.told: str | None = None
        self.outage = 0              # the outage told (FollowStats.outages)
        self.outage_since = 0.0

    def tell(self) -> None:
        import time

        stats = self.follower.stats
        if not self.following and stats.mode not in ("starting",):
            self.following = True
            self._say(f"following {stats.roots} folder{'s' if stats.roots != 1 else ''} "
                      f"({stats.mode}); Ctrl-C stops")
        if stats.unreachable is not None:
            self.failures = stats.failures   # (each failed try is part of the outage)
            if stats.outages != self.outage:
                self.outage, self.outage_since = stats.outages, time.monotonic()
                self.told = stats.unreachable
                self._say(f"{_clean(stats.unreachable)}; still following: what the agents "
                          "write meanwhile is imported once it answers")
            return
        if self.outage and self.outage_since:
            gone = time.monotonic() - self.outage_since
            self.outage_since = 0.0
            self.failures = stats.failures
            self._say(f"the store answers again (after {gone:.0f} s); importing what was "
                      "written meanwhile")
        if stats.failures != self.failures:
            self.failures = stats.failures
            problem = stats.last_error
            if problem != self.told and not self.quiet:   # (once while it lasts)
                self.told = problem
                self._say(f"{_clean(problem or '')} (trying again)")

    @staticmethod
    def _say(text: str) -> None:
        print(f"arbor watch: {text}", file=sys.stderr, flush=True)


def _printer(store):
    """One line per file that gained something: time, what was added, session, file.
    (Session names and paths are untrusted: printed without their control characters.)"""
    import time

    from tui.render.safe_text import clean

    def show(report) -> None:
        stamp = time.strftime("%H:%M:%S")
        for item in report.files:
            added = item.entries_added
            new = item.sessions_added
            if not added and not new:
                continue
            what = f"+{added:,} entr{'y' if added == 1 else 'ies'}"
            threads = item.threads_added
            if new > threads:
                what += f", {new - threads} new session{'s' if new - threads != 1 else ''}"
            if threads:
                what += f", {threads} new sub-agent{'s' if threads != 1 else ''}"
            name = clean(item.session_name)[:60] or "(unnamed)"
            print(f"{stamp}  {what:<28} {name}  ({clean(item.path)})", flush=True)

    return show


def _places() -> str:
    from core.agents.registry import places_text

    return places_text()
