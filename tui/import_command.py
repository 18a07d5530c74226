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

EXIT_OK, EXIT_NOTHING, EXIT_STORE = 0, 1, 2
MAX_SKIPPED_SHOWN = 500


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="arbor import",
        description="Import Claude Code, Codex, pi and LangGraph logs (files or folders, "
                    "recursively; the format is detected from the content).",
        epilog="--discover looks in ~/.claude/projects, ~/.codex/sessions and "
               "~/.pi/agent/sessions; name a LangGraph database explicitly.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="log files or folders")
    p.add_argument("--discover", action="store_true", help="also import from the usual places")
    p.add_argument("--db", metavar="PATH", help="the store (default: $ARBOR_DB or the user data dir)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no table; only errors")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser().parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    from rich.console import Console

    out = Console(highlight=False, soft_wrap=False)
    if not out.is_terminal:
        out = Console(highlight=False, soft_wrap=False, width=120)
    err = Console(stderr=True, highlight=False)
    if not args.paths and not args.discover:
        print("arbor import: give files or folders to import, or --discover", file=sys.stderr)
        return EXIT_NOTHING

    from core import open_store
    from core.importers import discover

    paths: list[Path] = [Path(p).expanduser() for p in args.paths]
    if args.discover:
        found = discover()
        if not found and not paths:
            print("arbor import: no agent logs in the usual places (~/.claude/projects, "
                  "~/.codex/sessions, ~/.pi/agent/sessions)", file=sys.stderr)
            return EXIT_NOTHING
        paths.extend(found)
    from .cli import announce_upgrade, open_or_explain

    store = open_or_explain(lambda: open_store(args.db, on_upgrade=announce_upgrade))
    if store is None:
        return EXIT_STORE
    try:
        report = _run(store, paths, err, show_progress=not args.quiet and err.is_terminal)
    finally:
        store.close()
    if not args.quiet:
        print_report(report, out, store_path=str(store.path))
    else:
        for result in report.failed_files:
            print(f"{result.path}: {result.error}", file=sys.stderr)
    return EXIT_OK if report.imported_files else EXIT_NOTHING


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


def _common_folder(paths: list[str]) -> str:
    import os

    try:
        folder = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
    except ValueError:
        return ""
    return folder


def print_report(report, console, *, store_path: str = "") -> None:
    import os

    from rich.table import Table
    from rich.text import Text

    def plain(value, limit: int = 0) -> Text:
        # Paths and names come from files: shown literally, never as markup.
        text = str(value).replace("\x1b", "␛")
        if limit and len(text) > limit:
            text = text[: limit - 1] + "…"
        return Text(text)

    folder = _common_folder([f.path for f in report.files if os.path.exists(f.path)])
    title = "arbor import" + (f" — {folder}" if folder and folder != "/" else "")
    table = Table(title=plain(title), title_justify="left", show_footer=True, expand=False,
                  pad_edge=False)
    table.add_column("File", footer=Text(f"{len(report.files)} files"), overflow="fold",
                     max_width=36)
    table.add_column("Format", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Session", overflow="fold", max_width=30,
                     footer=Text(f"{report.sessions_added} new"))
    table.add_column("Entries", justify="right", footer=str(report.entries_added), no_wrap=True)
    table.add_column("Branches", justify="right", footer=str(report.branches_added), no_wrap=True)
    table.add_column("Skipped", justify="right", footer=str(len(report.skipped)), no_wrap=True)
    for result in report.files:
        shown = os.path.relpath(result.path, folder) if folder and folder != "/" and \
            result.path.startswith(folder) else result.path
        status = {"imported": Text("imported", "green"), "unchanged": Text("unchanged", "dim"),
                  "not-a-log": Text("not a log", "yellow"), "failed": Text("failed", "red")}.get(
            result.status, Text(result.status))
        sessions = Text()
        for index, session in enumerate(result.sessions):
            if index:
                sessions.append("\n")
            sessions.append_text(plain(session.name, 28))
            sessions.append(f"\n{session.uid[:24]}" + ("…" if len(session.uid) > 24 else ""),
                            "dim")
            if session.created:
                sessions.append(" new", "green")
        table.add_row(plain(shown), result.format or "—", status, sessions if result.sessions else "—",
                      str(result.entries_added), str(result.branches_added),
                      str(len(result.skipped)))
    console.print(table)
    problems = [f for f in report.files if f.error]
    if problems:
        console.print(Text(f"Not imported ({len(problems)}):", "bold"))
        for result in problems:
            console.print(Text.assemble(Text(result.path, "cyan"), "  ", plain(result.error)))
    skipped = report.skipped
    if skipped:
        console.print(Text(f"Skipped lines ({len(skipped)}):", "bold"))
        for item in skipped[:MAX_SKIPPED_SHOWN]:
            console.print(Text.assemble(Text(item.where(), "cyan"), "  ", plain(item.reason)))
        if len(skipped) > MAX_SKIPPED_SHOWN:
            console.print(Text(f"… and {len(skipped) - MAX_SKIPPED_SHOWN} more"))
    duplicates = sum(f.duplicates for f in report.files)
    tail = (f"{report.messages_added} messages added; {report.lines} lines read in "
            f"{report.seconds:.2f} s"
            + (f"; {duplicates} exact duplicate lines counted once" if duplicates else "")
            + (f"; store: {store_path}" if store_path else ""))
    console.print(Text(tail, "dim"))
