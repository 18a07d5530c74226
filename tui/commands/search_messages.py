"""`arbor search WORDS [--project P] [--source S] [--limit N] [--json] [--db PATH]`: message
text through the search index, for people and for scripts and agents.

The query is what `/` takes in the app: words (matched by their stems and as prefixes) and
"exact phrases" in quotes. Hits come best first. `--json` prints one object whose shape
stays as it is (fields are only ever added):

    {"query": "...", "coverage": {"percent": 100, "complete": true},
     "hits": [{"rank": 1, "session_uid": "...", "session_name": "...", "source": "claude_code",
               "project": "/home/me/src/app", "branch": "main", "entry_id": "...",
               "role": "assistant", "type": "message", "timestamp": "...", "snippet": "..."}]}

`rank` is the hit's place, 1 the best; `branch` is the name of a branch whose path holds
the entry (the session's current one when it does), null when none does any more.
`coverage` says how much of the history the search index covered (less than 100 only
while it catches up after an upgrade or a big import).
Exit status: 0 something found, 1 nothing found, 2 the store cannot be opened, the query
has no word, or the command line is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys

from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, fail, open_store_or_explain

LIMIT = 20


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Search all message text: words match by their stems and as prefixes, "
                     '"an exact phrase" in quotes as written. Best hits first.')
    p.add_argument("words", nargs="+", metavar="WORDS", help="what to find")
    p.add_argument("--project", "-p", metavar="P",
                   help="only sessions in folder P or below it, or whose folder is named P")
    from core.agents.registry import sources

    p.add_argument("--source", "-s", choices=sources(), metavar="AGENT",
                   help=f"only sessions from this agent: {', '.join(sources())}")
    p.add_argument("--limit", "-n", type=int, default=LIMIT, metavar="N",
                   help=f"at most N hits (default {LIMIT})")
    p.add_argument("--json", action="store_true", help="one JSON object (see arbor search --help)")
    add_db_argument(p)
    p.epilog = ("exit status: 0 found, 1 nothing found, 2 the store cannot be opened or the "
                "query has no word")


def run(args: argparse.Namespace) -> int:
    from core.history.search_query import SearchQuery

    query = SearchQuery(" ".join(args.words))
    if not query:
        return fail("nothing to search for: give at least one word or number")
    if args.limit < 1:
        return fail("--limit takes a number of 1 or more")
    store = open_store_or_explain(args.db, read_only=True)
    if store is None:
        return EXIT_STORE
    try:
        rows = search(store, query, project=args.project, source=args.source, limit=args.limit)
        coverage = store.search.coverage()
    except store.errors as error:   # a damaged store: one sentence
        return fail(f"cannot search the store: {error}")
    finally:
        store.close()
    if args.json:
        out = {"query": query.text,
               "coverage": {"percent": coverage.percent, "complete": not coverage.pending},
               "hits": rows}
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=1) + "\n")
    else:
        _print(rows, coverage)
    return EXIT_OK if rows else EXIT_FAILED


def search(store, query, *, project: str | None = None, source: str | None = None,
           limit: int = LIMIT) -> list[dict]:
    """The hits `arbor search` shows, as JSON-ready dicts, best first: in every session, as
    `/` searches (archived ones too), or those of a project or an agent."""
    from .list_sessions import in_project

    scope = facts = None
    if project is not None or source is not None:
        # (the store gives the sessions whose folder holds the project's name or path, of
        # the agent asked for; in_project says which of them are the project's)
        facts = store.search.session_facts(cwd_holding=_cwd_piece(project), source=source)
        scope = {key for key, (_uid, src, cwd, _active) in facts.items()
                 if (source is None or src == source)
                 and (project is None or in_project(cwd, project))}
    hits = store.search.messages(query, limit=limit, sessions=scope)
    if facts is None:
        facts = store.search.session_facts({hit.external_session_id for hit in hits})
    rows = []
    for rank, hit in enumerate(hits, 1):
        uid, src, cwd, _active = facts.get(hit.external_session_id, ("", "", "", True))
        branch = store.branches.containing(hit.seq)
        rows.append({"rank": rank, "session_uid": uid, "session_name": hit.session_name,
                     "source": src, "project": cwd, "branch": branch.name if branch else None,
                     "entry_id": hit.entry_id, "role": hit.role, "type": hit.type,
                     "timestamp": hit.timestamp, "snippet": hit.snippet})
    return rows


def _cwd_piece(project: str | None) -> str | None:
    """Text every folder of the project has in it (`in_project`: the folder named so, or
    the path and the folders inside it); None for no project."""
    if project is None:
        return None
    import os

    if "/" not in project and project not in (".", ".."):
        return project
    return os.path.abspath(os.path.expanduser(project)).rstrip("/") or "/"


def _print(rows: list[dict], coverage) -> None:
    """For people: per hit a line naming it (role, session, branch, time, uid) and the
    snippet under it. Every stored string is cleaned (no escape sequence reaches the
    terminal); bold only on a terminal."""
    from core.util.visible_text import clean
    from tui.render.role_names import ROLE_NAMES

    out = sys.stdout
    bold, dim, end = ("\x1b[1m", "\x1b[2m", "\x1b[0m") if out.isatty() else ("", "", "")
    if not rows:
        out.write("No messages found.\n")
    for row in rows:
        when = (row["timestamp"] or "")[:16].replace("T", " ")
        role = row["role"] or row["type"]
        role = clean(ROLE_NAMES.get(role, role)).replace("\n", " ")
        name = clean(row["session_name"] or "(unnamed)").replace("\n", " ")
        branch = f" · {clean(row['branch'])}" if row["branch"] else ""
        out.write(f"{bold}{role}{end} in {name}{branch} · {when} {dim}"
                  f"{clean(row['session_uid'])[:8]} {clean(row['entry_id'])[:12]}{end}\n")
        out.write(f"  {clean(row['snippet']).replace(chr(10), ' ')}\n")
    if coverage.pending:
        out.write(f"{dim}(the search index covers {coverage.percent}% of the history so far;"
                  f" indexing goes on in the app){end}\n")
