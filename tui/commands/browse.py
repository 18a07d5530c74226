"""`arbor [--db PATH] [--demo] [--archived]`: open the browser (the default command).

Textual is imported only here, in `run`, once the store is open: a store that cannot be
opened gives one sentence and exit status 2 before any screen.
"""

from __future__ import annotations

import argparse
import gc

from .shared import EXIT_STORE, add_db_argument, announce_upgrade, open_or_explain


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Browse, branch, roll back, label and compact AI agent sessions."
    add_db_argument(parser)
    parser.add_argument("--demo", action="store_true",
                        help="build the deterministic demo store (in the user data dir unless "
                             "--db) and open it")
    parser.add_argument("--archived", action="store_true", help="show archived sessions too")
    parser.add_argument("--no-follow", action="store_true",
                        help="do not follow running agents (by default what they append to the "
                             "logs this store imported, and to the agents' usual folders, is "
                             "imported and shown as it is written; never for --demo); nor "
                             "import their logs on a store's first start")


def run(args: argparse.Namespace) -> int:
    # Start-up makes ~57,000 objects that live as long as the app (modules, classes,
    # styles, widgets): the cyclic collector's ~90 passes over them before the first frame
    # are wasted work (~10 ms of ~220 ms CPU). The app turns it on again (after freezing
    # what start-up made) once the first screen is drawn, the highlighted session's
    # messages included; and here whatever happens.
    gc.disable()
    follow = not (args.demo or args.no_follow)
    # A store not made yet is to have its first import: its process starts first of all
    # (on the other core while this one makes the store and loads Textual), and is told
    # the store once it is made.
    first_import = _start_early(args) if follow else None
    try:
        store = open_or_explain(lambda: _open(args))
        if store is None:
            if first_import is not None:
                first_import.cancel()
            return EXIT_STORE
        # (asked without loading anything of the importers: most starts only follow)
        from core.store.first_import import due

        first_due = follow and due(store)
        if first_import is not None:
            if first_due:
                first_import.tell_store()
            else:   # (another process made it and imported first)
                first_import.cancel()
                first_import = None
        elif first_due:   # on the other core while Textual loads
            from core.importing.first_run.process import launch

            first_import = launch(store)
        from tui.app import ArborApp

        app = ArborApp(store, show_archived=args.archived, follow=follow)
        app.early_first_import = first_import
        app.first_import_due = first_due
        try:
            app.run()
        finally:
            if first_import is not None:   # (the app stops it as it closes; and if it failed)
                first_import.stop()
        store.close()
        return app.return_code or 0
    finally:
        gc.enable()


def _start_early(args: argparse.Namespace):
    """The first import's process, started before the store is opened, where `--db` (or
    ARBOR_DB, or the default) names a store file that is not there yet; else None."""
    import os

    from core.model.errors import ArborError
    from core.store.location import store_location

    try:
        location = store_location(args.db)
    except ArborError:
        return None   # (said when the store is opened)
    if not isinstance(location, os.PathLike) or os.path.lexists(location):
        return None   # (most starts: whether it is due is asked of the store, once open)
    from core.importing.first_run.process import FirstRunProcess

    return FirstRunProcess.early(location)


def _open(args: argparse.Namespace):
    from core import open_store
    from core.store.location import demo_db_path, sqlite_path, store_location

    if args.demo:
        from core.demo import build_demo

        path = sqlite_path(args.db) if args.db else demo_db_path()
        build_demo(path)
        return open_store(path, create=False, on_upgrade=announce_upgrade)
    return open_store(store_location(args.db), on_upgrade=announce_upgrade)
