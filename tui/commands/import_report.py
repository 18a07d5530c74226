"""The table `arbor import` prints: one row per file, then what was not imported and every
skipped line as `file:line  reason`. Anything that reports an import (a later `watch`, say)
prints it the same way.
"""

from __future__ import annotations

MAX_SKIPPED_SHOWN = 500


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

    from ..safe_text import clean

    def plain(value, limit: int = 0, style: str = "") -> Text:
        # Paths and names come from files: shown literally, never as markup, and no
        # control character reaches the terminal (ESC, BEL, C1: an OSC 52 in a file name)
        text = clean(value)
        if limit and len(text) > limit:
            text = text[: limit - 1] + "…"
        return Text(text, style)

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
                  "not-a-log": Text("not a log", "yellow"), "skipped": Text("left alone", "dim"),
                  "unreadable": Text("unreadable", "red"), "failed": Text("failed", "red")}.get(
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
        table.add_row(plain(shown), plain(result.format or "—"), status, sessions if result.sessions else "—",
                      str(result.entries_added), str(result.branches_added),
                      str(len(result.skipped)))
    console.print(table)
    problems = [f for f in report.files if f.error]
    if problems:
        console.print(Text(f"Not imported ({len(problems)}):", "bold"))
        for result in problems:
            console.print(Text.assemble(plain(result.path, style="cyan"), "  ", plain(result.error)))
    skipped = report.skipped
    if skipped:
        console.print(Text(f"Skipped lines ({len(skipped)}):", "bold"))
        for item in skipped[:MAX_SKIPPED_SHOWN]:
            console.print(Text.assemble(plain(item.where(), style="cyan"), "  ", plain(item.reason)))
        if len(skipped) > MAX_SKIPPED_SHOWN:
            console.print(Text(f"… and {len(skipped) - MAX_SKIPPED_SHOWN} more"))
    duplicates = sum(f.duplicates for f in report.files)
    tail = (f"{report.messages_added} messages added; {report.lines} lines read in "
            f"{report.seconds:.2f} s"
            + (f"; {duplicates} exact duplicate lines counted once" if duplicates else "")
            + (f"; store: {store_path}" if store_path else ""))
    console.print(Text(tail, "dim"))
