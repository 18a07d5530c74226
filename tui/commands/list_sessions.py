"""`arbor list [--json] [--project P] [--source S] [--archived] [--db PATH]`: the sessions.

One row per session, newest activity first, a sub-agent or fork right under the session it
came from: uid (the shortest prefix that names it alone, which `arbor export` and
`arbor resume` accept; `--json` gives the whole uid), name, source, project (cwd), branches,
messages, last activity and cost (sub-agents' included, as in the app).
`--project P` keeps the sessions whose folder is P or inside it, or whose folder's last
part is P (`--project webapp`); `.` is the current folder.
Exit status: 0 listed (even none), 2 the store cannot be opened (or the command line is
wrong).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from core.history.session_list import in_project, listing, unique_prefixes  # noqa: F401

from .shared import EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("The sessions in the store, newest activity first: uid, name, source, "
                     "project folder, branches, messages, last activity and cost.")
    p.add_argument("--project", "-p", metavar="P",
                   help="only sessions in folder P or below it, or whose folder is named P")
    from core.agents.registry import sources

    p.add_argument("--source", "-s", choices=sources(), metavar="AGENT",
                   help=f"only sessions from this agent: {', '.join(sources())}")
    p.add_argument("--archived", action="store_true", help="archived sessions too")
    p.add_argument("--json", action="store_true", help="a JSON list, one object per session")
    add_db_argument(p)


def run(args: argparse.Namespace) -> int:
    store = open_store_or_explain(args.db, read_only=True)
    if store is None:
        return EXIT_STORE
    try:
        every = store.sessions.list(include_archived=True)
        usage = store.usage.by_session()
    finally:
        store.close()
    rows = listing(every, usage, project=args.project, source=args.source,
                   archived=args.archived)
    if args.json:
        sys.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    else:
        _print_table(rows)
    return EXIT_OK


def _print_table(rows: list[dict]) -> None:
    from rich.table import Table
    from rich.text import Text

    from core.usage.tokens import fmt_usd

    from .shared import stdout_console

    out = stdout_console()
    if not rows:
        out.print(Text("No sessions.", style="dim"))
        return
    from .fit_table import Column, add_row, fit_table, left_out_note

    home = os.path.expanduser("~")
    # names cut at their end, folders in their middle; on a narrow terminal the columns
    # that matter least are left out first: branches, last activity, source, project, msg
    columns = [Column("Uid", style="cyan"), Column("Name", cut="end", least=20),
               Column("Source", expendable=3), Column("Project", cut="middle", least=12,
                                                      expendable=2, style="dim"),
               Column("Br", justify="right", expendable=5),
               Column("Msg", justify="right", expendable=1),
               Column("Last activity", expendable=4), Column("Cost", justify="right")]
    for row in rows:
        name = Text("  " * row["depth"] + ("↳ " if row["depth"] else ""))
        name.append(_line(row["name"] or "(unnamed)"), style="italic dim" if row["archived"] else "")
        cwd = row["cwd"] or ""
        if home and home != "/" and (cwd == home or cwd.startswith(home + "/")):
            cwd = "~" + cwd[len(home):]
        cost = fmt_usd(row["cost_usd"]) + ("+" if row["cost_incomplete"] else "") \
            if row["cost_usd"] or row["cost_incomplete"] else "—"
        add_row(columns, Text(_line(row["short_uid"])), name, Text(_line(row["source"] or "?")),
                Text(_line(cwd)), f"{row['branches']:,}", f"{row['messages_with_subagents']:,}",
                _when(row["last_activity"]), cost)
    table, left_out = fit_table(columns, out.width, show_footer=False)
    out.print(table)
    note = left_out_note(left_out)
    if note is not None:
        out.print(note)


def _line(value) -> str:
    """An untrusted string for one table cell: no control characters, no line breaks (the
    cells are Text objects, so no markup is read in it either)."""
    from tui.render.safe_text import clean

    return clean(value).replace("\n", " ")


def _when(stamp: str | None) -> str:
    """A stored time as the user's local 'YYYY-MM-DD HH:MM'."""
    from core.model.clock import parse

    moment = parse(stamp) if stamp else None
    if moment is None:
        return "?"
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
