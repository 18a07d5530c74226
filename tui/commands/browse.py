"""`arbor [--db PATH] [--demo] [--archived]`: open the browser (the default command).

Textual is imported only here, in `run`, once the store is open (a new store: while it is
made, in a thread): a store that cannot be opened gives one sentence and exit status 2
before any screen.
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
    try:
        # A store not made yet is to have its first import: its process starts first of all
        # (on the other core while this one makes the store and loads Textual), and is told
        # the store once it is made. Starting it and making the store wait on the system
        # (the new process's exec, the file's syncs): done in a thread while Textual loads.
        location = _new_store_location(args) if follow else None
        if location is not None:
            making = _Making(args, location)
            making.start()
            import tui.app  # noqa: F401 - (meanwhile)

            store, first_import, first_due = making.result()
        else:
            store, first_import, first_due = _open_then_start(args, follow)
        if store is None:
            return EXIT_STORE
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


def _open_then_start(args: argparse.Namespace, follow: bool, first_import=None):
    """The store opened (None after one sentence); whether it is due its first import; and
    the process of that import: `first_import` (started before the store was made) told the
    store or cancelled, or one started now. (store, process or None, due)"""
    store = open_or_explain(lambda: _open(args))
    if store is None:
        if first_import is not None:
            first_import.cancel()
        return None, None, False
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
    return store, first_import, first_due


class _Making:
    """A new store (`location`: `_new_store_location`'s), in a thread: its first import's
    process started, the store made and the process told it (`_open_then_start`), while the
    main thread loads Textual."""

    def __init__(self, args: argparse.Namespace, location):
        self.args = args
        self.location = location
        self.made = None
        self.failure: BaseException | None = None
        self.thread = None

    def start(self) -> None:
        import threading

        self.preload()
        self.thread = threading.Thread(target=self._make, name="arbor-new-store")
        self.thread.start()

    @staticmethod
    def preload() -> None:
        # (what the thread imports that the app's modules import too, imported here first:
        # two threads importing the same modules at once, each holding one the other waits
        # for, can deadlock; the thread goes on to import only the store's own modules,
        # which the app's do not: tests/test_first_run_early_start.py)
        import subprocess  # noqa: F401
        import tempfile  # noqa: F401

        import core.seed.models  # noqa: F401
        import core.store.records  # noqa: F401
        import core.util.fastjson  # noqa: F401
        from core import open_store  # noqa: F401
        from core.importing.first_run.process import FirstRunProcess  # noqa: F401
        from core.store.first_import import due  # noqa: F401

    def _make(self) -> None:
        try:
            from core.importing.first_run.process import FirstRunProcess

            first_import = FirstRunProcess.early(self.location)
            self.made = _open_then_start(self.args, True, first_import)
        except BaseException as failure:  # noqa: BLE001 - raised again on the main thread
            self.failure = failure

    def result(self):
        """(store, process, due), once made: as `_open_then_start` gives them."""
        self.thread.join()
        if self.failure is not None:
            raise self.failure
        return self.made


def _new_store_location(args: argparse.Namespace):
    """Where `--db` (or ARBOR_DB, or the default) names a store file that is not there yet,
    its path; else None (most starts: whether it is due is asked of the store, once open)."""
    import os

    from core.model.errors import ArborError
    from core.store.location import store_location

    try:
        location = store_location(args.db)
    except ArborError:
        return None   # (said when the store is opened)
    if not isinstance(location, os.PathLike) or os.path.lexists(location):
        return None
    return location


def _open(args: argparse.Namespace):
    from core import open_store
    from core.store.location import demo_db_path, sqlite_path, store_location

    if args.demo:
        from core.demo import build_demo

        path = sqlite_path(args.db) if args.db else demo_db_path()
        build_demo(path)
        return open_store(path, create=False, on_upgrade=announce_upgrade)
    return open_store(store_location(args.db), on_upgrade=announce_upgrade)
