"""`arbor export SESSION --format pi|markdown|json|html [--branch ID|--all-branches] [-o FILE]
[--db PATH]`.

SESSION is a session uid, a unique uid prefix, or a session name. pi writes JSONL v3
(re-importing it gives the same tree), markdown a readable transcript of one branch (the
current one unless --branch), json the whole session, html one self-contained page of a
branch or (--all-branches) the whole tree (tui/render/html_export.py). Output goes to stdout
unless -o names a file (`-o -` is stdout too); output_file says how each kind of -o target
is written (a file replaced whole, a device or FIFO written in place, a link written through).
Exit status: 0 written, 1 no such session/branch (or the file cannot be written, or is a
SQLite database or the store itself, which an export never replaces),
2 the store cannot be opened. Textual is not imported here.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path

from . import output_file
from .output_file import is_stdout
from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain, say

# An export writes its -o file only when complete.
INTERRUPTED = ("a file given with -o was not written (a device, FIFO or socket may have had part "
               "of it); output to the terminal is incomplete")


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Write one session out as pi JSONL, Markdown, JSON or one self-contained "
                     "HTML page.")
    p.add_argument("session", metavar="SESSION", help="a session uid, unique uid prefix, or name")
    p.add_argument("--format", "-f", choices=("pi", "markdown", "json", "html"), default="markdown",
                   metavar="FORMAT",
                   help="pi: JSONL that imports back to the same tree; markdown: a transcript of a "
                   "branch (the default); json: the whole session; html: a page to read in a "
                   "browser, of a branch or (--all-branches) the whole tree")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--branch", "-b", metavar="ID", help="markdown, html: the branch (id or "
                       "name); default: the current branch")
    which.add_argument("--all-branches", action="store_true",
                       help="html: every branch, the session's whole tree")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write here instead of stdout ('-': stdout). A file is replaced whole "
                        "once the export is complete; a device, FIFO or socket is written to, "
                        "never replaced; a symbolic link is written through")
    p.add_argument("--redact", action="store_true",
                   help="mask API keys, tokens, private keys and passwords in what is written "
                        "(the store is not changed); says how many were masked")
    add_db_argument(p)


def _export(store, args: argparse.Namespace, out) -> int:
    from core.export.formats import export_session, resolve_branch, resolve_session

    if getattr(args, "redact", False):
        from core.handoff.redact import Redactor
        from core.handoff.redacted_store import RedactedStore

        args.redactor = Redactor()
        store = RedactedStore(store, args.redactor)

    if args.format != "html":
        if args.all_branches:
            from core.model.errors import ArborError

            raise ArborError("--all-branches is for --format html (pi and json hold every "
                             "branch already)")
        return export_session(store, args.session, args.format, out, branch=args.branch)
    from tui.render.html_export import export_html

    session = resolve_session(store, args.session)
    branch = None
    if not args.all_branches and (args.branch or store.branches.of_session(session.id)):
        branch = resolve_branch(store, session, args.branch)
    return export_html(store, session, out, branch=branch, all_branches=args.all_branches)


def run(args: argparse.Namespace) -> int:
    from core.model.errors import ArborError

    store = open_store_or_explain(args.db, read_only=True)
    if store is None:
        return EXIT_STORE
    try:
        if not is_stdout(args.output):
            target = Path(args.output).expanduser()
            refusal = _refusal(target, store.path)
            if refusal:
                say(refusal)
                return EXIT_FAILED
            count = output_file.write(target, lambda out: _export(store, args, out))
            what = ("line", "lines") if args.format == "pi" else ("entry", "entries")
            say(f"wrote {count:,} {what[count != 1]} to {target}", prefix="")
        else:
            out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n",
                                   write_through=True) if hasattr(sys.stdout, "buffer") else sys.stdout
            try:
                _export(store, args, out)
                out.flush()
            finally:
                if out is not sys.stdout:
                    out.detach()
    except ArborError as error:
        say(str(error))
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as error:
        say(f"cannot write: {error.strerror or error}")
        return EXIT_FAILED
    finally:
        store.close()
    if getattr(args, "redactor", None) is not None:
        say(args.redactor.summary())
    return EXIT_OK


def _refusal(target: Path, store_path: Path) -> str | None:
    """Why the export must not replace `target`, if it must not: it is the store being read,
    or any SQLite database or part of one (asked of SQLite, never read as a file)."""
    from core.store import sqlite_probe

    keep = "the export will not write over it (give another -o)"
    try:
        if os.path.samefile(target, store_path):
            return f"{target} is the store being exported from; {keep}"
    except (OSError, TypeError):
        pass  # the target does not exist (yet), or the store is on a server
    found = sqlite_probe.probe(target)
    if found.kind == sqlite_probe.HELD:   # a link, by any name, to a side file of the store
        return f"{target} is {found.reason}; {keep}"
    if found.kind == sqlite_probe.ARBOR:
        return f"{target} is an arbor store; {keep}"
    if found.kind == sqlite_probe.SIDECAR:
        return f"{target} belongs to the SQLite database beside it; {keep}"
    if found.kind == sqlite_probe.SQLITE:
        return f"{target} is a SQLite database; {keep}"
    if found.kind == sqlite_probe.UNREADABLE:
        return f"cannot tell whether {target} is a database ({found.reason}); {keep}"
    return None
