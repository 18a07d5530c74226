"""`arbor watch [--db PATH] [FOLDER...]`: follow running agents without the app.

Keeps the store in step with the agents' logs (see core.follow): what an agent appends is
imported from the file's stored offset as it is written, one line printed per import.
Runs until Ctrl-C, SIGTERM or SIGHUP (tui/cli.py turns both signals into Ctrl-C). Killing
it at any moment loses and duplicates nothing: the next run goes on from the offsets the
store recorded.
"""

from __future__ import annotations

import argparse
import sys

from .shared import EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Follow running agents: import what they append to their logs as it "
                          "is written (the folders the store imported from, the agents' usual "
                          "folders, and any FOLDER given).")
    add_db_argument(parser)
    parser.add_argument("folders", nargs="*", metavar="FOLDER",
                        help="also follow these folders (new and changed logs are imported)")
    parser.add_argument("--no-discover", action="store_true",
                        help="do not follow ~/.claude/projects, ~/.codex/sessions and "
                             "~/.pi/agent/sessions")
    parser.add_argument("--poll", action="store_true",
                        help="poll (stat) instead of file system notifications, e.g. on a network "
                             "file system (also: ARBOR_FOLLOW_POLL=1)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing per import")


def run(args: argparse.Namespace) -> int:
    import threading

    store = open_store_or_explain(args.db)
    if store is None:
        return EXIT_STORE
    from core.follow import Follower

    from ..safe_text import clean

    stop = threading.Event()
    follower = Follower(store, places=args.folders, discover=not args.no_discover,
                        poll=True if args.poll else None,
                        on_import=None if args.quiet else _printer(store))
    runner = threading.Thread(target=follower.run, args=(stop,), name="arbor-watch", daemon=True)
    runner.start()
    try:
        told = False
        failures, told_problem = 0, None
        while runner.is_alive():
            runner.join(timeout=0.2)
            if not told and follower.stats.mode not in ("starting",):
                told = True
                print(f"arbor watch: following {follower.stats.roots} folder"
                      f"{'s' if follower.stats.roots != 1 else ''} ({follower.stats.mode}); "
                      "Ctrl-C stops", file=sys.stderr, flush=True)
            if follower.stats.failures != failures:
                failures = follower.stats.failures
                problem = follower.stats.last_error
                if problem != told_problem and not args.quiet:   # (once while it lasts)
                    told_problem = problem
                    print(f"arbor watch: {clean(problem or '')} (trying again)",
                          file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        runner.join(timeout=5)
        store.close()
    if follower.stats.last_error and not args.quiet:
        print(f"arbor watch: last problem: {follower.stats.last_error}", file=sys.stderr)
    print(f"arbor watch: stopped ({follower.stats.entries:,} entries imported in "
          f"{follower.stats.imports:,} passes)", file=sys.stderr)
    return EXIT_OK


def _printer(store):
    """One line per file that gained something: time, what was added, session, file.
    (Session names and paths are untrusted: printed without their control characters.)"""
    import time

    from ..safe_text import clean

    def show(report) -> None:
        stamp = time.strftime("%H:%M:%S")
        for item in report.files:
            added = item.entries_added
            new = item.sessions_added
            if not added and not new:
                continue
            what = f"+{added:,} entr{'y' if added == 1 else 'ies'}"
            if new:
                what += f", {new} new session{'s' if new != 1 else ''}"
            name = clean(item.session_name)[:60] or "(unnamed)"
            print(f"{stamp}  {what:<28} {name}  ({clean(item.path)})", flush=True)

    return show
