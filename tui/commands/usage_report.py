"""`arbor usage [--by session|day|week|month|model|project] [--since D] [--until D]
[--source S] [--json] [--timezone TZ] [--db PATH]`: tokens and cost, one row per group.

Days are the user's local days (`--timezone` names another zone). The figures come from the
totals the store keeps as entries are written; a response counts once in any total. A group
holding a response of a model without a price is "incomplete": its cost is what could be
priced, marked "+", and the models without a price are named below the table.
Exit status: 0 shown, 1 a bad overrides file (ARBOR_PRICES) or time zone, 2 the store cannot
be opened (or the command line is wrong).
"""

from __future__ import annotations

import argparse
import json
import sys

from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain, say

GROUPINGS = ("session", "day", "week", "month", "model", "project")


def _day(text: str):
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day (YYYY-MM-DD)") from None


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Tokens and cost of the agents' responses in the store, one row per "
                     "group and a total (each response counted once).")
    p.add_argument("--by", choices=GROUPINGS, default="day", metavar="GROUP",
                   help=f"one row per {', '.join(GROUPINGS[:-1])} or {GROUPINGS[-1]} "
                        "(default: day)")
    p.add_argument("--since", type=_day, metavar="YYYY-MM-DD", help="from this local day on")
    p.add_argument("--until", type=_day, metavar="YYYY-MM-DD",
                   help="up to this local day (included)")
    from core.agents.registry import sources

    p.add_argument("--source", choices=sources(), metavar="AGENT",
                   help=f"only sessions from this agent: {', '.join(sources())}")
    p.add_argument("--json", action="store_true",
                   help='print {"rows": [...], "totals": {...}} instead of a table')
    p.add_argument("--timezone", metavar="TZ",
                   help="days in this zone (an IANA name such as Europe/Paris; default: local)")
    add_db_argument(p)


def run(args: argparse.Namespace) -> int:
    from core.usage.pricing import PricesError
    from core.usage.tokens import local_zone

    try:
        local_zone(args.timezone)
    except ValueError as error:
        say(str(error), prefix="arbor usage: ")
        return EXIT_FAILED
    store = open_store_or_explain(args.db, read_only=True)
    if store is None:
        return EXIT_STORE
    try:
        if store.usage.prices_stale():
            note = _reprice(store.path)
            if note:
                say(str(note), prefix="arbor usage: ")
        report = store.usage.report(args.by, since=args.since, until=args.until,
                                    source=args.source, timezone=args.timezone)
    except PricesError as error:
        say(str(error), prefix="arbor usage: ")
        return EXIT_FAILED
    finally:
        store.close()
    if args.json:
        sys.stdout.write(json.dumps(report.as_json(), ensure_ascii=False) + "\n")
        return EXIT_OK
    _print_table(report, args)
    return EXIT_OK


def _reprice(path) -> str | None:
    """Price again what was priced with other prices, through a connection that may write
    (the command's own is read-only); None when done, else why the costs are shown as they
    were worked out (a store that cannot be written, a busy one)."""
    from core import open_store
    from core.model.errors import ArborError
    from core.usage.pricing import PricesError

    writer = None
    try:
        writer = open_store(path, create=False)
        writer.usage.reprice()
    except PricesError:
        raise            # the prices themselves are wrong: the command fails, as it did
    except (ArborError, *(writer.errors if writer is not None else ())) as error:
        return (f"costs are shown with the prices they were worked out with; updating them "
                f"to this arbor's failed: {error}")
    finally:
        if writer is not None:
            writer.close()
    return None


_TITLES = {"session": "Session", "day": "Day", "week": "Week of", "month": "Month",
           "model": "Model", "project": "Project"}


def _print_table(report, args) -> None:
    from rich.text import Text

    from core.usage.tokens import fmt_cost, fmt_usd

    from tui.render.safe_text import clean   # names, models and folders come from logs: untrusted
    from .fit_table import Column, add_row, fit_table, left_out_note
    from .shared import stdout_console

    out = stdout_console()
    if not report.rows:
        out.print(Text("No usage recorded" + (" in that range." if args.since or args.until
                                               else " in this store yet."), style="dim"))
        return
    total = report.totals
    by = report.by
    # names are cut at their end, folders in their middle; the columns that matter least
    # are left out first on a narrow terminal: models, a column of zeros, cache, output,
    # input, uid
    first = Column(_TITLES[by], footer="Total", cut={"session": "end", "model": "end",
                                                     "project": "middle"}.get(by),
                   least={"session": 24, "model": 20}.get(by, 16))
    columns = [first]
    uid = Column("Uid", style="dim", expendable=1) if by == "session" else None
    if uid:
        columns.append(uid)
    models = Column("Models", style="dim", cut="end", least=12, expendable=20) \
        if by != "model" else None
    if models:
        columns.append(models)
    figures = []
    for name, value, expendable in (("Input", total.input_tokens, 2),
                                    ("Output", total.output_tokens, 3),
                                    ("Cache write", total.cache_creation_tokens, 5),
                                    ("Cache read", total.cache_read_tokens, 4),
                                    ("Total", total.total_tokens, 0)):
        figures.append(Column(name, justify="right", footer=f"{value:,}",
                              expendable=expendable + (10 if expendable and not value else 0)))
    columns += figures
    cost = Column("Cost", justify="right", footer=fmt_cost(total))
    columns.append(cost)
    for key, label, figure in report.rows:
        if by == "session":
            name = Text(clean(label) or "(unnamed)", style="bold")
            if figure.subagent_cost_usd or figure.subagent_tokens:
                name.append(f"\n  sub-agents {fmt_usd(figure.subagent_cost_usd)}", style="dim")
            first.cells.append(name)
            uid.cells.append(clean(key)[:8])
        else:
            first.cells.append(Text(clean(key)))
        if models:
            models.cells.append(Text(", ".join(clean(_short(m)) for m in sorted(figure.models))))
        add_row(figures, f"{figure.input_tokens:,}", f"{figure.output_tokens:,}",
                f"{figure.cache_creation_tokens:,}", f"{figure.cache_read_tokens:,}",
                f"{figure.total_tokens:,}")
        cost.cells.append(Text(fmt_cost(figure), style="yellow" if figure.incomplete else ""))
    table, left_out = fit_table(columns, out.width)
    out.print(table)
    note = left_out_note(left_out)
    if note is not None:
        out.print(note)
    if total.incomplete:
        out.print(Text(f"+ incomplete: no price for {', '.join(clean(m) for m in sorted(total.unpriced))} "
                       "(tokens counted, cost not; ARBOR_PRICES can name a file of prices)",
                       style="yellow"))
    if total.reasoning_tokens:
        out.print(Text(f"reasoning (part of output): {total.reasoning_tokens:,} tokens", style="dim"))
    if report.by == "session":
        shown = sum(f.responses for _k, _l, f in report.rows)
        if shown != total.responses:
            out.print(Text(f"{shown - total.responses:,} responses appear in more than one session "
                           "(resumed or forked copies): counted in each, once in the total.",
                           style="dim"))


def _short(model: str) -> str:
    """A model name without its date suffix (claude-sonnet-4-5-20250929 -> claude-sonnet-4-5)."""
    head, _, tail = model.rpartition("-")
    return head if len(tail) == 8 and tail.isdigit() and head else model
