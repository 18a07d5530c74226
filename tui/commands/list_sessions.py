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

from .shared import EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain

SOURCES = ("claude_code", "codex", "pi", "langgraph", "arbor")
SHORTEST_UID = 8


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("The sessions in the store, newest activity first: uid, name, source, "
                     "project folder, branches, messages, last activity and cost.")
    p.add_argument("--project", "-p", metavar="P",
                   help="only sessions in folder P or below it, or whose folder is named P")
    p.add_argument("--source", "-s", choices=SOURCES, metavar="AGENT",
                   help=f"only sessions from this agent: {', '.join(SOURCES)}")
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


def listing(sessions, usage: dict, *, project: str | None = None, source: str | None = None,
            archived: bool = False) -> list[dict]:
    """The rows `arbor list` shows, as JSON-ready dicts, in the order shown."""
    from core.history.lineage import family_rows

    prefixes = unique_prefixes([s.uid for s in sessions])
    shown = [s for s in sessions if (archived or s.is_active)
             and (source is None or s.source == source)
             and (project is None or in_project(s.cwd, project))]
    rows = family_rows(shown, {s.id for s in shown})
    uid_of = {s.id: s.uid for s in shown}
    out = []
    for row in rows:
        s = row.session
        figure = usage.get(s.id)
        out.append({
            "uid": s.uid, "short_uid": prefixes[s.uid], "name": s.name, "source": s.source,
            "kind": s.kind, "parent_uid": uid_of.get(s.parent_id) if row.depth else None,
            "depth": row.depth, "cwd": s.cwd,
            "branches": s.branch_count, "messages": s.message_count,
            "messages_with_subagents": row.messages, "last_activity": row.updated_at,
            "archived": not s.is_active,
            "cost_usd": round(figure.cost_usd, 6) if figure else 0.0,
            "cost_incomplete": bool(figure and figure.incomplete),
            "tokens": figure.total_tokens if figure else 0,
        })
    return out


def unique_prefixes(uids: list[str]) -> dict[str, str]:
    """Each uid's shortest prefix (at least 8 characters) that no other uid starts with."""
    ordered = sorted(set(uids))
    out = {}
    for index, uid in enumerate(ordered):
        need = SHORTEST_UID
        for other in (ordered[index - 1] if index else None,
                      ordered[index + 1] if index + 1 < len(ordered) else None):
            if other is not None:
                common = len(os.path.commonprefix([uid, other]))
                need = max(need, common + 1)
        out[uid] = uid[:need]
    return out


def in_project(cwd: str | None, project: str) -> bool:
    """Whether a session run in `cwd` belongs to `project`: the same folder or one inside
    it, or a folder whose last part is `project` (when `project` names no folder path)."""
    if not cwd:
        return False
    cwd = cwd.rstrip("/") or "/"
    if "/" not in project and project not in (".", ".."):
        return os.path.basename(cwd) == project or cwd == project
    folder = os.path.abspath(os.path.expanduser(project)).rstrip("/") or "/"
    return cwd == folder or cwd.startswith(folder.rstrip("/") + "/")


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
