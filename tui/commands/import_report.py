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
    """The report, every line within `console.width`: names and paths cut with "…",
    columns left out when even that is not enough (a line under the table says which)."""
    from rich.text import Text

    from tui.render.cut_text import cut_middle
    from .fit_table import left_out_note

    width = console.width
    folder = _common_folder([f.path for f in report.files if os.path.exists(f.path)])
    if folder == "/":
        folder = ""
    rows = report.files if every_file or len(report.files) <= FILES_SHOWN else \
        [f for f in report.files if f.status != "unchanged"]
    if len(rows) <= FILES_SHOWN or every_file:
        title, table, caption, left_out = _file_table(report, rows, folder, width)
    else:
        title, table, caption, left_out = _folder_table(report, folder, width)
    heading = Text("arbor import", "bold", end="")
    if folder:
        heading.append(" — ")
        heading.append_text(cut_middle(_plain(folder), max(12, width - heading.cell_len
                                                                  - title.cell_len)))
    heading.append_text(title)
    console.print(heading, no_wrap=True, overflow="ellipsis")
    console.print(table)
    hint = "a wider terminal shows " + ("it" if len(left_out) == 1 else "them")
    for note in (caption, left_out_note(left_out, hint)):
        if note is not None:
            console.print(note)
    problems = [f for f in report.files if f.error]
    if problems:
        console.print(Text(f"Not imported ({len(problems)}):", "bold"))
        for result in problems:
            _noted(console, _plain(_shown(result.path, folder), style="cyan"),
                   _plain(result.error))
    skipped = report.skipped
    if skipped:
        # (skipped, or imported changed: kept raw, made a root; each line says which)
        console.print(Text(f"Lines not imported as written ({len(skipped)}):", "bold"))
        for item in skipped[:MAX_SKIPPED_SHOWN]:
            _noted(console, _plain(_shown(item.where(), folder), style="cyan"),
                   _plain(item.reason))
        if len(skipped) > MAX_SKIPPED_SHOWN:
            console.print(Text(f"… and {len(skipped) - MAX_SKIPPED_SHOWN} more"))
    duplicates = sum(f.duplicates for f in report.files)
    tail = (f"{report.messages_added:,} messages added; {report.lines_read:,} lines read in "
            f"{report.seconds:.2f} s"
            + (f"; {duplicates:,} exact duplicate lines counted once" if duplicates else "")
            + (f"; store: {store_path}" if store_path else ""))
    console.print(Text(tail, "dim"))


def _noted(console, where, what) -> None:
    """`where  what` on a line when it fits; else `where` on its own line (cut in its
    middle if need be) and `what` under it, indented, wrapped between words."""
    from rich.padding import Padding
    from rich.text import Text

    from tui.render.cut_text import cut_middle

    line = Text.assemble(where, "  ", what)
    if line.cell_len <= console.width:
        console.print(line, no_wrap=True)
        return
    console.print(cut_middle(where, console.width), no_wrap=True)
    what.overflow = "ellipsis"     # (a word longer than the line is cut, not broken)
    console.print(Padding(what, (0, 0, 0, 4), expand=False))


def _plain(value, limit: int = 0, style: str = ""):
    """Paths and names come from files: shown literally, never as markup, and no control
    character reaches the terminal (ESC, BEL, C1: an OSC 52 in a file name)."""
    from rich.text import Text

    from tui.render.safe_text import clean

    text = clean(value)
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return Text(text, style)


def _shown(path: str, folder: str) -> str:
    return os.path.relpath(path, folder) if folder and path.startswith(folder) else path


def _file_table(report, rows: list, folder: str, width: int):
    """A row for each of `rows` (the files that changed, when the others are left out:
    the caption says how many): the title's tail, the table, the caption, the columns
    left out. Where the session column does not fit beside a path of 36 cells, each
    file's sessions are listed under its path instead."""
    from rich.text import Text

    from .fit_table import fit_table

    title = Text(end="")
    hidden = len(report.files) - len(rows)
    caption = Text(f"{hidden} more files unchanged (arbor import --files lists every file).",
                   "dim") if hidden else None
    # one format among them: said once, in the title, and its column left out, as is that of
    # skipped lines when there are none
    formats = {result.format for result in rows if result.format}
    if len(formats) == 1:
        title.append(f" · {next(iter(formats))}", "dim")
    table, left_out = fit_table(_file_columns(report, rows, folder, len(formats) > 1, False), width)
    if "Session" in left_out:
        table, left_out = fit_table(_file_columns(report, rows, folder, len(formats) > 1, True),
                                    width)
    return title, table, caption, left_out


def _file_columns(report, rows: list, folder: str, formats: bool, fold: bool) -> list:
    """The file table's columns: the sessions in a column of their own, or (`fold`)
    under each file's path."""
    from rich.text import Text

    from .fit_table import Column

    file = Column("File", footer=Text(f"{len(report.files):,} files"), cut="middle", least=36)
    kind = Column("Format", expendable=2) if formats else None
    result_ = Column("Result")
    session = None if fold else Column("Session", cut="end", least=18, expendable=3,
                                       footer=Text(_new(report, "new")))
    skipped = len(report.skipped)
    counts = [Column(name, justify="right", footer=f"{total:,}")
              for name, total in (("Entries", report.entries_added),
                                  ("Branches", report.branches_added),
                                  ("Skipped", skipped))[:3 if skipped else 2]]
    if fold:
        file.footer = Text(f"{len(report.files):,} files, {_new(report, 'new sessions')}")
    for result in rows:
        label, style = _STATUS.get(result.status, (result.status, ""))
        sessions = Text()
        for made in result.sessions:
            if sessions.plain or fold:
                sessions.append("\n")
            sessions.append("  ↳ " if fold else "", "dim")
            sessions.append_text(_plain(made.name))
            sessions.append("  " if fold else "\n")
            if made.created:
                sessions.append("new ", "green")
            sessions.append_text(_plain(made.uid, style="dim"))
        path = _plain(_shown(result.path, folder))
        file.cells.append(path.append_text(sessions) if fold else path)
        if kind:
            kind.cells.append(_plain(result.format or "—"))
        result_.cells.append(Text(label, style))
        if session:
            session.cells.append(sessions if result.sessions else "—")
        numbers = [result.entries_added, result.branches_added, len(result.skipped)]
        for column, number in zip(counts, numbers):
            column.cells.append(f"{number:,}")
    return [c for c in (file, kind, result_, session, *counts) if c is not None]


def _new(report, words: str) -> str:
    """New sessions as the list shows them, sub-agents' threads apart."""
    threads = report.threads_added
    text = f"{report.sessions_added - threads:,} {words}"
    return f"{text}, {threads:,} sub-agent thread{'s' if threads != 1 else ''}" if threads \
        else text


class _Folder:
    __slots__ = ("files", "unchanged", "other", "new", "threads", "entries", "branches",
                 "skipped")

    def __init__(self):
        self.files = self.unchanged = self.other = 0
        self.new = self.threads = self.entries = self.branches = self.skipped = 0

    def add(self, result) -> None:
        self.files += 1
        if result.status == "unchanged":
            self.unchanged += 1
        elif result.status != "imported":
            self.other += 1
        self.threads += result.threads_added
        self.new += result.sessions_added - result.threads_added
        self.entries += result.entries_added
        self.branches += result.branches_added
        self.skipped += len(result.skipped)


def _folder_table(report, folder: str, width: int):
    """A row a folder: its files, how many were unchanged and how many not imported
    (listed below the table), sessions new, entries and branches added, lines skipped; the
    FOLDERS_SHOWN with the most entries added."""
    from rich.text import Text

    from .fit_table import Column, fit_table

    folders: dict[str, _Folder] = {}
    for result in report.files:
        folders.setdefault(_folder_of(result.path), _Folder()).add(result)
    ranked = sorted(folders.items(), key=lambda item: (-item[1].entries, -item[1].files, item[0]))
    # (columns that would hold only zeros are left out; on a narrow terminal, unchanged
    # files, branches and new sessions go next, before a folder is cut to under 16 cells)
    fields = [field for field in (
        ("Files", "files", len(report.files), 0),
        ("Un-\nchanged", "unchanged", sum(f.unchanged for f in folders.values()), 3),
        ("Not\nimported", "other", sum(f.other for f in folders.values()), 0),
        ("New\nsessions", "new", report.sessions_added - report.threads_added, 1),
        ("Sub-agent\nthreads", "threads", report.threads_added, 1),
        ("Entries", "entries", report.entries_added, 0),
        ("Branches", "branches", report.branches_added, 2),
        ("Skipped\nlines", "skipped", len(report.skipped), 0)) if field[2] or field[1] == "files"]
    name = Column("Folder", footer=Text(f"{len(folders):,} folders"), cut="middle", least=16)
    counts = [Column(heading, justify="right", footer=f"{total:,}", expendable=expendable)
              for heading, _field, total, expendable in fields]
    for place, tally in ranked[:FOLDERS_SHOWN]:
        name.cells.append(_plain(_shown(place, folder) if place != folder else "."))
        for column, (_heading, field, _total, _expendable) in zip(counts, fields):
            value = getattr(tally, field)
            style = "yellow" if field == "other" and value else "dim" if field == "unchanged" else ""
            column.cells.append(Text(f"{value:,}", style))
    hidden = len(ranked) - FOLDERS_SHOWN
    caption = Text((f"… and {hidden} more folders. " if hidden > 0 else "")
                   + "arbor import --files lists every file.", "dim")
    table, left_out = fit_table([name, *counts], width)
    return Text(end=""), table, caption, left_out
