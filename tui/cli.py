"""The `arbor` command: the browser by default, `import` and `export` as subcommands.

Textual is imported only when the browser starts, so the subcommands start fast.
A store that cannot be opened gives one sentence and exit status 2, before any screen.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any, Callable

EXIT_STORE = 2


def _fail(message: str) -> int:
    print(f"arbor: {message}", file=sys.stderr)
    return EXIT_STORE


def announce_upgrade(name: str) -> None:
    """Said before a migration of an existing store runs (some take seconds on a big one)."""
    print(f"arbor: updating the store for this version of arbor (once): {name}…",
          file=sys.stderr, flush=True)


def open_or_explain(open_it: Callable[[], Any]) -> Any | None:
    """Open a store; for a foreseeable fault print one sentence and return None."""
    from core.errors import ArborError

    try:
        return open_it()
    except ArborError as error:
        _fail(str(error))
    except sqlite3.DatabaseError as error:
        _fail(f"the store is damaged ({error})")
    return None


def demo_db_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("arbor", appauthor=False) / "demo.db"


def browse_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arbor",
        description="Browse, branch, roll back, label and compact AI agent sessions.",
        epilog="Subcommands: 'arbor import PATH...' reads agent logs; "
               "'arbor export SESSION' writes one out. Each has --help.",
    )
    parser.add_argument("--db", metavar="PATH", help="the store to open (default: $ARBOR_DB or the user data dir)")
    parser.add_argument("--demo", action="store_true",
                        help="build the deterministic demo store (in the user data dir unless --db) and open it")
    parser.add_argument("--archived", action="store_true", help="show archived sessions too")
    return parser


EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("import", "export"):
        try:
            if argv[0] == "import":
                from .import_command import main as import_main

                return import_main(argv[1:])
            from .export_command import main as export_main

            return export_main(argv[1:])
        except KeyboardInterrupt:
            # Each file is imported in one transaction: what finished is kept, the file in
            # progress was rolled back; an export writes its -o file only when complete.
            what = ("files imported before it are kept; the one being read was not changed"
                    if argv[0] == "import" else
                    "a file given with -o was not written; output to the terminal is incomplete")
            print(f"\narbor {argv[0]}: interrupted; {what}.", file=sys.stderr)
            return EXIT_INTERRUPTED
    args = browse_parser().parse_args(argv)
    store = open_or_explain(lambda: open_for_browsing(args))
    if store is None:
        return EXIT_STORE
    from .app import ArborApp

    app = ArborApp(store, show_archived=args.archived)
    app.run()
    store.close()
    return app.return_code or 0


def open_for_browsing(args: argparse.Namespace):
    from core import open_store

    if args.demo:
        from core.demo import build_demo

        path = Path(args.db) if args.db else demo_db_path()
        build_demo(path)
        return open_store(path, create=False, on_upgrade=announce_upgrade)
    return open_store(args.db, on_upgrade=announce_upgrade)
