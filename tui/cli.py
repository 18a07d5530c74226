"""The `arbor` command: the browser by default, subcommands registered below.

This is the one place the command line is assembled. A subcommand is a module in
`tui/commands/` (see its `__init__` for what the module provides) plus one line in
`COMMANDS`. Only the module of the command that runs is imported, so `arbor --help` and
every subcommand start without loading Textual, Rich or the store.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections import namedtuple

# name: as typed, `arbor NAME ...`; module: its module in tui/commands/; summary: one line
# for `arbor --help`. (A namedtuple: `dataclasses` would cost more start-up than all the rest.)
Command = namedtuple("Command", "name module summary")


COMMANDS: tuple[Command, ...] = (
    Command("import", "import_logs", "read the logs agents write into the store"),
    Command("list", "list_sessions", "the sessions: uid, name, source, project, branches, messages, cost"),
    Command("export", "export_session", "write one session out as pi JSONL, Markdown, JSON or HTML"),
    Command("resume", "resume_branch", "carry on from a branch in the agent that wrote it"),
    Command("search", "search_messages", "find messages by their words: for people, scripts and agents"),
    Command("usage", "usage_report", "tokens and cost per day, week, month, session, model or project"),
    Command("watch", "watch", "follow running agents: import what they append as it is written"),
    Command("push", "push", "copy sessions to a team store (PostgreSQL): only what is new"),
    Command("mcp", "mcp_server", "serve the store to agents over MCP (stdio): search, read, label"),
)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-"):
        command = next((c for c in COMMANDS if c.name == argv[0]), None)
        if command is None:
            return _unknown(argv[0])
        return _run_command(command, argv[1:])
    from .commands import browse

    parser = _top_parser()
    browse.configure(parser)
    args = _parse(parser, argv)
    return args if isinstance(args, int) else browse.run(args)


def run() -> None:
    """The `arbor` console script: `main`, then the exit without the garbage collections the
    interpreter makes as it shuts down. Those walk every object the command made to find
    cycles that are about to be freed anyway, 10–17 ms of a 90 ms `arbor import` here; the
    store is closed and output flushed by then, and every file arbor writes is closed where
    it is written. (Only the process's own entry point: a test calling `main` goes on.)"""
    code = main()
    import gc

    gc.freeze()
    raise SystemExit(code)


def _run_command(command: Command, argv: list[str]) -> int:
    module = importlib.import_module(f".commands.{command.module}", __package__)
    parser = argparse.ArgumentParser(prog=f"arbor {command.name}", description=command.summary,
                                     formatter_class=_HelpFormatter)
    module.configure(parser)
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    from core.model.errors import StoreUnreachable

    from .commands.shared import EXIT_INTERRUPTED, EXIT_STORE

    try:
        with _StoppedBySignals(not getattr(module, "KEEPS_SIGNALS", False)):
            return module.run(args)
    except StoreUnreachable as error:
        # (the store's server went away while the command ran: one sentence, not a trace)
        from .render.safe_text import clean

        print(f"arbor {command.name}: {clean(str(error))}", file=sys.stderr)
        return EXIT_STORE
    except KeyboardInterrupt as error:
        left = getattr(module, "INTERRUPTED", "")
        how = f"stopped by {error.name}" if isinstance(error, Stopped) else "interrupted"
        try:
            print(f"\narbor {command.name}: {how}" + (f"; {left}." if left else "."),
                  file=sys.stderr)
        except (OSError, ValueError):
            pass   # (a SIGHUP: the terminal may be gone)
        return 128 + error.signum if isinstance(error, Stopped) else EXIT_INTERRUPTED


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised as Ctrl-C raises KeyboardInterrupt: a command stopped by
    `kill`, `timeout` or a closed terminal cleans up as it does after Ctrl-C (an import
    rolls back to its last commit, stops its workers and deletes their scratch stores)
    instead of dying where it stands."""

    def __init__(self, signum: int, name: str):
        super().__init__(name)
        self.signum, self.name = signum, name


class _StoppedBySignals:
    """Within it, SIGTERM and SIGHUP raise `Stopped` in the main thread (`active`: the
    command has not said it handles them itself, as `resume` does: its agent owns the
    terminal)."""

    def __init__(self, active: bool):
        self.active = active
        self.previous: dict[int, object] = {}

    def __enter__(self):
        if not self.active:
            return self
        import signal

        def stop(signum, _frame):
            raise Stopped(signum, signal.Signals(signum).name)

        for name in ("SIGTERM", "SIGHUP"):
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                self.previous[number] = signal.signal(number, stop)
            except ValueError:   # not the main thread: signals stay as they are
                break
        return self

    def __exit__(self, *exc):
        import signal

        for number, handler in self.previous.items():
            signal.signal(number, handler)
        return False


def _top_parser() -> argparse.ArgumentParser:
    width = max(len(c.name) for c in COMMANDS) + 2
    listing = "\n".join(f"  {c.name:<{width}}{c.summary}" for c in COMMANDS)
    return argparse.ArgumentParser(
        prog="arbor", formatter_class=_RawDescriptionHelpFormatter,
        usage="arbor [--db PATH] [--demo] [--archived] [--no-follow]\n       arbor COMMAND [--help] ...",
        epilog=f"commands:\n{listing}\n\n'arbor COMMAND --help' shows what a command takes.")


def _columns() -> int:
    """The terminal's width (argparse asks shutil for it whenever an argument is added,
    and shutil loads bz2, lzma and zlib: ~2 ms of every command's start)."""
    from .commands.shared import columns

    return columns()


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, as wide as `_columns()` says (as wide as argparse makes it)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class _RawDescriptionHelpFormatter(_HelpFormatter):
    """The same, keeping the description's and epilog's own lines, each wrapped between
    words to the width; a listed line's (`  name  what it does`) under its second column."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import re
        import textwrap

        out = []
        for line in text.splitlines():
            listed = re.match(r"\s+\S+\s+", line)
            out.append(textwrap.fill(line, width, initial_indent=indent,
                                     subsequent_indent=indent + " " * (listed.end() if listed else 0),
                                     break_long_words=False, break_on_hyphens=False) or indent)
        return "\n".join(out)


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    """The parsed arguments, or the exit status argparse chose (--help: 0, an error: 2)."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 2


def _unknown(word: str) -> int:
    import difflib

    from .commands.shared import fail

    names = [c.name for c in COMMANDS]
    close = difflib.get_close_matches(word, names, n=1)
    hint = f"did you mean 'arbor {close[0]}'?" if close else f"the commands are {', '.join(names)}"
    return fail(f"there is no command '{word}'; {hint} (arbor --help tells more)")
