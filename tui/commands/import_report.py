"""What `arbor import` prints: a table, then what was not imported and every skipped line
as `file:line  reason`, then a line of totals.

The table has a row a file when there are few (`FILES_SHOWN`), or few that changed (the
unchanged ones are then counted, not listed), or when asked (`--files`); otherwise a row a
folder (a Claude Code or pi project, a Codex day), those with the most entries added
first. A first import of months of logs reads thousands of files: a row each made a table
of 15,000 terminal lines that took 10 s to print (5,000 files).
"""

from __future__ import annotations

import os

MAX_SKIPPED_SHOWN = 500
FILES_SHOWN = 25        # more files than this: a row a folder, unless every file is asked for
FOLDERS_SHOWN = 30

_STATUS = {"imported": ("imported", "green"), "unchanged": ("unchanged", "dim"),
           "not-a-log": ("not a log", "yellow"), "skipped": ("left alone", "dim"),
           "unreadable": ("unreadable", "red"), "failed": ("failed", "red")}


def _common_folder(paths: list[str]) -> str:
    try:
        folder = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
    except ValueError:
        return ""
    return folder


def _folder_of(path: str) -> str:
    """The folder a file is counted under: its own, or for a sub-agent's log
    (`<project>/<session>/subagents/agent-….jsonl`) the project of its session."""
    folder = os.path.dirname(path)
    if os.path.basename(folder) == "subagents":
        folder = os.path.dirname(os.path.dirname(folder))
    return folder


def print_report(report, console, *, store_path: str = "", every_file: bool = False) -> None:
    from rich.text import Text

    folder = _common_folder([f.path for f in report.files if os.path.exists(f.path)])
    if folder == "/":
        folder = ""
    title = _plain("arbor import" + (f" — {folder}" if folder else ""))
    rows = report.files if every_file or len(report.files) <= FILES_SHOWN else \
        [f for f in report.files if f.status != "unchanged"]
    if len(rows) <= FILES_SHOWN or every_file:
        console.print(_file_table(report, rows, folder, title))
    else:
        console.print(_folder_table(report, folder, title))
    problems = [f for f in report.files if f.error]
    if problems:
        console.print(Text(f"Not imported ({len(problems)}):", "bold"))
        for result in problems:
            console.print(Text.assemble(_plain(result.path, style="cyan"), "  ",
                                        _plain(result.error)))
    skipped = report.skipped
    if skipped:
        # (skipped, or imported changed: kept raw, made a root; each line says which)
        console.print(Text(f"Lines not imported as written ({len(skipped)}):", "bold"))
        for item in skipped[:MAX_SKIPPED_SHOWN]:
            console.print(Text.assemble(_plain(item.where(), style="cyan"), "  ",
                                        _plain(item.reason)))
        if len(skipped) > MAX_SKIPPED_SHOWN:
            console.print(Text(f"… and {len(skipped) - MAX_SKIPPED_SHOWN} more"))
    duplicates = sum(f.duplicates for f in report.files)
    tail = (f"{report.messages_added:,} messages added; {report.lines_read:,} lines read in "
            f"{report.seconds:.2f} s"
            + (f"; {duplicates:,} exact duplicate lines counted once" if duplicates else "")
            + (f"; store: {store_path}" if store_path else ""))
    console.print(Text(tail, "dim"))


def _plain(value, limit: int = 0, style: str = ""):
    """Paths and names come from files: shown literally, never as markup, and no control
    character reaches the terminal (ESC, BEL, C1: an OSC 52 in a file name)."""
    from rich.text import Text

    from ..safe_text import clean

    text = clean(value)
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text, style)


def _shown(path: str, folder: str) -> str:
    return os.path.relpath(path, folder) if folder and path.startswith(folder) else path


def _file_table(report, rows: list, folder: str, title):
    """A row for each of `rows` (the files that changed, when the others are left out:
    the caption says how many)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", show_footer=True, expand=False,
                  pad_edge=False, caption_justify="left")
    hidden = len(report.files) - len(rows)
    if hidden:
        table.caption = Text(f"{hidden} more files unchanged (arbor import --files lists "
                             "every file).", "dim")
    # one format among them: said once, in the title, and its column left out, as is that of
    # skipped lines when there are none (room for the names in 80 columns)
    formats = {result.format for result in rows if result.format}
    one_format = len(formats) == 1
    if one_format:
        title.append(f" · {formats.pop()}", "dim")
    table.add_column("File", footer=Text(f"{len(report.files):,} files"), overflow="fold",
                     min_width=18, max_width=40)
    if not one_format:
        table.add_column("Format", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Session", overflow="fold", min_width=14, max_width=30,
                     footer=Text(f"{report.sessions_added:,} new"))
    skipped = len(report.skipped)
    for name, total in (("Entries", report.entries_added), ("Branches", report.branches_added),
                        ("Skipped", skipped))[:3 if skipped else 2]:
        table.add_column(name, justify="right", footer=f"{total:,}", no_wrap=True)
    for result in rows:
        label, style = _STATUS.get(result.status, (result.status, ""))
        sessions = Text()
        for index, session in enumerate(result.sessions):
            if index:
                sessions.append("\n")
            sessions.append_text(_plain(session.name, 28))
            sessions.append(f"\n{session.uid[:24]}" + ("…" if len(session.uid) > 24 else ""),
                            "dim")
            if session.created:
                sessions.append(" new", "green")
        cells = [_plain(_shown(result.path, folder))]
        if not one_format:
            cells.append(_plain(result.format or "—"))
        cells += [Text(label, style), sessions if result.sessions else "—",
                  f"{result.entries_added:,}", f"{result.branches_added:,}"]
        if skipped:
            cells.append(f"{len(result.skipped):,}")
        table.add_row(*cells)
    return table


class _Folder:
    __slots__ = ("files", "unchanged", "other", "new", "entries", "branches", "skipped")

    def __init__(self):
        self.files = self.unchanged = self.other = 0
        self.new = self.entries = self.branches = self.skipped = 0

    def add(self, result) -> None:
        self.files += 1
        if result.status == "unchanged":
            self.unchanged += 1
        elif result.status != "imported":
            self.other += 1
        self.new += result.sessions_added
        self.entries += result.entries_added
        self.branches += result.branches_added
        self.skipped += len(result.skipped)


def _folder_table(report, folder: str, title):
    """A row a folder: its files, how many were unchanged and how many not imported
    (listed below the table), sessions new, entries and branches added, lines skipped; the
    FOLDERS_SHOWN with the most entries added."""
    from rich.table import Table
    from rich.text import Text

    folders: dict[str, _Folder] = {}
    for result in report.files:
        folders.setdefault(_folder_of(result.path), _Folder()).add(result)
    ranked = sorted(folders.items(), key=lambda item: (-item[1].entries, -item[1].files, item[0]))
    table = Table(title=title, title_justify="left", show_footer=True, expand=False,
                  pad_edge=False, caption_justify="left")
    # (columns that would hold only zeros are left out: the table fits 80 columns)
    columns = [column for column in (
        ("Files", "files", len(report.files)),
        ("Un-\nchanged", "unchanged", sum(f.unchanged for f in folders.values())),
        ("Not\nimported", "other", sum(f.other for f in folders.values())),
        ("New\nsessions", "new", report.sessions_added),
        ("Entries", "entries", report.entries_added),
        ("Branches", "branches", report.branches_added),
        ("Skipped\nlines", "skipped", len(report.skipped))) if column[2] or column[1] == "files"]
    table.add_column("Folder", footer=Text(f"{len(folders):,} folders"), overflow="fold",
                     min_width=16, max_width=48)
    for heading, _field, total in columns:
        table.add_column(heading, justify="right", footer=f"{total:,}", no_wrap=True)
    for name, counts in ranked[:FOLDERS_SHOWN]:
        shown = _shown(name, folder) if name != folder else "."
        cells = []
        for _title, field, _total in columns:
            value = getattr(counts, field)
            style = "yellow" if field == "other" and value else "dim" if field == "unchanged" else ""
            cells.append(Text(f"{value:,}", style))
        table.add_row(_plain(shown), *cells)
    hidden = len(ranked) - FOLDERS_SHOWN
    table.caption = Text(
        (f"… and {hidden} more folders. " if hidden > 0 else "")
        + "arbor import --files lists every file.", "dim")
    return table
