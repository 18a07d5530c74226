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
    say(message)
    return EXIT_STORE


def columns() -> int:
    """The terminal's width as `shutil.get_terminal_size()` tells it ($COLUMNS, else the
    terminal of stdout, else 80), without loading shutil (and bz2, lzma, zlib with it)."""
    import os

    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            width = 0
    return width or 80


def say(message: str, *, prefix: str = "arbor: ", stream=None) -> None:
    """`prefix` and `message` on stderr (or `stream`), wrapped between words to the
    terminal's width when the stream is a terminal or $COLUMNS is set; a word longer than
    the line (a path, a command to copy) stands whole on a line of its own."""
    import os

    stream = stream or sys.stderr
    text = f"{prefix}{message}"
    try:
        wrap = "COLUMNS" in os.environ or stream.isatty()
    except (AttributeError, ValueError):
        wrap = False
    if wrap:
        import textwrap

        text = "\n".join(textwrap.wrap(text, width=max(20, columns() - 1), subsequent_indent="  ",
                                       break_long_words=False, break_on_hyphens=False)
                         or [text])
    print(text, file=stream)


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
    from core.model.errors import ArborError

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
        from core.store.location import store_location

        return open_store(store_location(db), create=create, read_only=read_only,
                          on_upgrade=announce_upgrade)

    return open_or_explain(open_it)


def stdout_console():
    """A Rich console for stdout: as wide as $COLUMNS says, else the terminal, else 120
    columns into a pipe."""
    import os

    from rich.console import Console

    out = Console(highlight=False, soft_wrap=False)
    if "COLUMNS" in os.environ:
        out = Console(highlight=False, soft_wrap=False, width=columns())
    elif not out.is_terminal:
        out = Console(highlight=False, soft_wrap=False, width=120)
    return out


def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)
