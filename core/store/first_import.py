"""A store's first import, its record (core/importing/first_run/process.py runs one): `arbor`
on a store that has not finished one imports the logs agents keep in their usual folders by
itself (newest first, shown as they land), and `arbor import --discover` is one too.
Whether it is finished is recorded in the store (`store_meta`): FIRST_IMPORT is "started"
when one begins and "done" once one read every file; a stopped one (a key, Ctrl-C, the app
closed) is "started", and the next goes on where it stopped (each file's import record says
how far it got). A store without the row is a newcomer's when it holds nothing at all: no
import record and no session. One that imported anything before is never given one (it
only follows what agents write), nor one that already holds sessions written another way
(an agent through SessionManager, a LangGraph saver, a push from another store: its owner
chose what goes in; the app's hint and the palette's Discover import on request), nor the
demo store (core/demo.py: its sessions are made up, and stay the only ones). Here in
core.store, not core.importing: `arbor` asks before its first frame, and
loads nothing of the importers on a store that only follows.
"""

from __future__ import annotations

FIRST_IMPORT = "first_import"
STARTED = "started"
DONE = "done"
DEMO_MARK = "demo"   # core.demo.DEMO_MARK (not imported for it: ~65 ms)


def pending(store) -> bool:
    """Whether this store is to have its first import (never begun, or not finished)."""
    value = store.get_meta(FIRST_IMPORT)
    if value == DONE or store.get_meta(DEMO_MARK) is not None:
        return False
    if value == STARTED:
        return True
    if store.imports.any_record():
        return False
    return store.sessions.count() == 0 and store.sessions.count(archived=True) == 0


def begin(store) -> None:
    if store.get_meta(FIRST_IMPORT) != STARTED:
        store.set_meta(FIRST_IMPORT, STARTED)


def finish(store) -> None:
    store.set_meta(FIRST_IMPORT, DONE)


def due(store) -> bool:
    """`pending`, or False when the store cannot say (whoever opened it reports why)."""
    try:
        return pending(store)
    except store.errors:
        return False
