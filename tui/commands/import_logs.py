"""`arbor import PATH... | --discover [--db PATH]`: read agent logs into the store.

Shows a progress bar on a terminal, then a summary table (one row per file: format, what
happened, session, entries, branches, skipped lines) and every skipped line as
`file:line  reason`. Exit status: 0 when at least one file was imported (or was already
up to date), 1 when nothing could be imported, 2 when the store cannot be opened.
Textual is not imported here: this runs in a plain terminal, fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .shared import (EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain,
                     stderr_console, stdout_console)

# Each file is imported in one transaction: what finished is kept, the file in progress
# was rolled back.
INTERRUPTED = "files imported before it are kept; the one being read was not changed"


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Import Claude Code, Codex, pi and LangGraph logs (files or folders, "
                     "recursively; the format is detected from the content).")
    p.epilog = ("--discover looks in ~/.claude/projects, ~/.codex/sessions and "
                "~/.pi/agent/sessions; name a LangGraph database explicitly.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="log files or folders")
    p.add_argument("--discover", action="store_true", help="also import from the usual places")
    add_db_argument(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table; only errors")


def run(args: argparse.Namespace) -> int:
    if not args.paths and not args.discover:
        print("arbor import: give files or folders to import, or --discover", file=sys.stderr)
        return EXIT_FAILED
    from core.importers import discover

    paths: list[Path] = [Path(p).expanduser() for p in args.paths]
    if args.discover:
        found = discover()
        if not found and not paths:
            print("arbor import: no agent logs in the usual places (~/.claude/projects, "
                  "~/.codex/sessions, ~/.pi/agent/sessions)", file=sys.stderr)
            return EXIT_FAILED
        paths.extend(found)
    store = open_store_or_explain(args.db)
    if store is None:
        return EXIT_STORE
    err = stderr_console()
    try:
        report = _run(store, paths, err, show_progress=not args.quiet and err.is_terminal)
    finally:
        store.close()
    if not args.quiet:
        from .import_report import print_report

        print_report(report, stdout_console(), store_path=str(store.path))
    else:
        for result in report.failed_files:
            print(f"{result.path}: {result.error}", file=sys.stderr)
    return EXIT_OK if report.imported_files else EXIT_FAILED


def _run(store, paths, err, *, show_progress: bool):
    from core.importers import import_paths

    if not show_progress:
        return import_paths(store, paths)
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn,
                               TimeRemainingColumn)

    columns = [TextColumn("{task.fields[files]}"), TextColumn("{task.description}"), BarColumn(),
               DownloadColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("", total=1, files="")

        def update(progress) -> None:
            name = Path(progress.path).name
            if len(name) > 40:
                name = "…" + name[-39:]
            bar.update(task, description=f"{name} ({progress.phase})", completed=progress.done,
                       total=max(progress.total, 1),
                       files=f"[{progress.file_index + 1}/{progress.file_count}]")

        return import_paths(store, paths, progress=update)
