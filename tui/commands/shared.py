"""What every `arbor` command shares: exit statuses, `--db`, and opening the store or
saying in one sentence why it cannot be opened.

Nothing here imports Textual, Rich or the store at import time: `arbor --help` and the
subcommands start fast.
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

EXIT_OK = 0
EXIT_FAILED = 1  # nothing was done: nothing imported, no such session, cannot write the output
EXIT_STORE = 2  # the store cannot be opened (or the command line is wrong, as argparse says)
EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C

DB_HELP = ("the store: a file or a postgresql:// URL (default: $ARBOR_DB, else arbor.db in the"
           " user data dir)")


def fail(message: str) -> int:
    """Print `arbor: message` on stderr; the exit status for a store that cannot be used."""
    print(f"arbor: {message}", file=sys.stderr)
    return EXIT_STORE


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH|URL", help=DB_HELP)


def announce_upgrade(name: str) -> None:
    """Said before a migration of an existing store runs (some take seconds on a big one)."""
    print(f"arbor: updating the store for this version of arbor (once): {name}…",
          file=sys.stderr, flush=True)


def open_or_explain(open_it: Callable[[], Any]) -> Any | None:
    """Run `open_it`; for a foreseeable fault print one sentence and return None.

    Only `ArborError` is caught: core says in a sentence why a store cannot be opened,
    whatever its backend (the CLI knows nothing of SQLite or PostgreSQL)."""
    from core.errors import ArborError

    try:
        return open_it()
    except ArborError as error:
        fail(str(error))
    return None


def open_store_or_explain(db: str | None, *, create: bool = True, read_only: bool = False):
    """The store `--db` (or `ARBOR_DB`) names, opened; None after one sentence on stderr.
    `read_only`: for a command that only reads (see `Store`): never created, works in a
    folder that cannot be written."""

    def open_it():
        from core import open_store
        from core.paths import store_location

        return open_store(store_location(db), create=create, read_only=read_only,
                          on_upgrade=announce_upgrade)

    return open_or_explain(open_it)


def stdout_console():
    """A Rich console for stdout: as wide as the terminal, or 120 columns into a pipe."""
    from rich.console import Console

    out = Console(highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out = Console(highlight=False, soft_wrap=False, width=120)
    return out


def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)
