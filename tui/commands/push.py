"""`arbor push [SESSION…|--all] --to URL [--db PATH]`.

Copies sessions from the local store (--db, else ARBOR_DB, else the default file) to
another store, usually a team's PostgreSQL server: only what the target does not have yet
(core/export/push.py), so pushing again after more work adds just that work. SESSION is a uid, a
unique uid prefix or a name; --all pushes every session, archived ones too.
Exit status: 0 pushed (or nothing new), 1 no such session, 2 a store cannot be opened.
"""

from __future__ import annotations

import argparse
import sys

from .shared import (EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, fail, open_or_explain,
                     open_store_or_explain)

INTERRUPTED = "each session is copied in one transaction: those pushed before stay pushed"


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Copy sessions to another store (a team's postgresql:// server): only "
                     "what it does not have yet.")
    p.add_argument("sessions", metavar="SESSION", nargs="*",
                   help="a session uid, unique uid prefix, or name")
    p.add_argument("--all", action="store_true", help="every session (archived ones too)")
    p.add_argument("--to", metavar="URL", required=True,
                   help="the store to copy into: a postgresql:// URL (or a file)")
    p.add_argument("-q", "--quiet", action="store_true", help="say nothing unless it fails")
    p.add_argument("--redact", action="store_true",
                   help="mask API keys, tokens, private keys and passwords in the entries pushed "
                        "(this store is not changed; entries the other store has already are "
                        "not sent again)")
    add_db_argument(p)


def run(args: argparse.Namespace) -> int:
    from core.model.errors import ArborError
    from core.export.formats import resolve_session

    if bool(args.sessions) == bool(args.all):
        return fail("give the sessions to push, or --all")
    source = open_store_or_explain(args.db, read_only=True)
    if source is None:
        return EXIT_STORE
    try:
        try:
            if args.all:
                ids = [s.id for s in reversed(source.sessions.list(include_archived=True))]
            else:
                ids = [resolve_session(source, ref).id for ref in args.sessions]
        except ArborError as error:
            print(f"arbor: {error}", file=sys.stderr)
            return EXIT_FAILED
        if _same_store(source, args.to):
            return fail("--to names the store being pushed from")
        target = open_store_or_explain(args.to)
        if target is None:
            return EXIT_STORE
        try:
            redactor = None
            if args.redact:
                from core.handoff.redact import Redactor
                from core.handoff.redacted_store import RedactedStore

                try:
                    redactor = Redactor()
                except ArborError as error:
                    return fail(str(error))
                code = _push(RedactedStore(source, redactor), target, ids, quiet=args.quiet)
                print(f"arbor: {redactor.summary()}", file=sys.stderr)
                return code
            return _push(source, target, ids, quiet=args.quiet)
        finally:
            target.close()
    finally:
        source.close()


def _same_store(source, to: str) -> bool:
    from core.store.location import store_location

    location = open_or_explain(lambda: store_location(to))
    return location is not None and str(location) == str(source.path)


def _push(source, target, ids: list[int], *, quiet: bool) -> int:
    from core.export.push import push_sessions

    try:
        report = push_sessions(source, target, ids)
    except target.errors as error:
        return fail(f"the push to {target.path} failed: {error}")
    if not quiet:
        changed = [s for s in report.sessions if s.changed]
        for pushed in changed:
            what = [f"{pushed.entries_added} entries"]
            if pushed.branches_added:
                what.append(f"{pushed.branches_added} branches")
            if pushed.heads_moved:
                what.append(f"{pushed.heads_moved} heads moved")
            if pushed.labels_added:
                what.append(f"{pushed.labels_added} labels")
            new = " (new)" if pushed.new_session else ""
            print(f"{pushed.uid}  {pushed.name[:50]}{new}: {', '.join(what)}")
        print(f"pushed {len(changed)} of {len(report.sessions)} sessions to {target.path}"
              f" ({report.entries_added} entries new there)", file=sys.stderr)
    return EXIT_OK
