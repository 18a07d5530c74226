"""The first import's process's priority beside the app's (process.py is that process).

- Until its first rows are committed: the app's. The process's start (loading the
  importers, finding the newest log, reading its first lines) is on the path to the app's
  first frame with rows, as much as the app's own start is.
- From then until the app has drawn those rows (it says `drawn` on the process's stdin):
  NICENESS nicer. On a busy machine the app's first frame comes first; the import has
  nothing on that path any more.
- Then the import goes on as a process of its own: its own nice stays NICENESS, and where
  Linux groups it apart (below) it has that group's share again, as any other session has.

Linux with autogroups (the default on most distributions) gives each session (setsid) a
scheduling group, and a process's own nice weighs only within its group: the process
starts a session of its own (a Ctrl-C typed in the terminal is the app's to handle), so its
nice alone changes nothing against the app. Its group's nice (/proc/<pid>/autogroup, this
process alone in it) does, and unlike a process's own nice it can be set back to 0 without
privileges. Elsewhere (no autogroups) the process's own nice is what counts, and stays.
"""

from __future__ import annotations

import os
import threading
import time

NICENESS = 10


def nicer(by: int) -> None:
    """This process `by` nicer, every thread of it (Linux: a thread's nice is its own, and
    the import's writer threads run already)."""
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{os.getpid()}/task")]
    except OSError:
        threads = []
    try:
        if not threads:
            os.nice(by)
        for thread in threads:
            os.setpriority(os.PRIO_PROCESS, thread,
                           min(19, os.getpriority(os.PRIO_PROCESS, thread) + by))
    except (AttributeError, OSError):
        pass   # (no priorities here, or the thread ended meanwhile)


def set_group_nice(value: int) -> bool:
    """The nice of this process's autogroup (Linux); whether it was set. The kernel takes
    one such change every 0.1 s machine-wide (EAGAIN): asked again a few times."""
    for _attempt in range(5):
        try:
            group = os.open(f"/proc/{os.getpid()}/autogroup", os.O_WRONLY)
        except OSError:
            return False   # (no autogroups here)
        try:
            os.write(group, str(value).encode())
            return True
        except BlockingIOError:
            time.sleep(0.1)
        except OSError:
            return False
        finally:
            os.close(group)
    return False


class Yielding:
    """What the module doc says: `committed()` once the first rows are committed (from the
    import's thread), `drawn()` once the app has drawn rows (from the thread reading the
    app's lines); in either order, each once or more."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._drawn = False
        self._grouped = False   # its group made nicer, to be set back

    def committed(self) -> None:
        with self._lock:
            if self._drawn:   # (rows of an earlier import drawn first: nothing to wait for)
                return
            nicer(NICENESS)
            self._grouped = set_group_nice(NICENESS)

    def drawn(self) -> None:
        with self._lock:
            self._drawn = True
            if self._grouped:
                self._grouped = False
                set_group_nice(0)


def after_first_commit(store, then) -> None:
    """`then()` once, after the store's first commit from here on (`Store.on_commit`): the
    first of the commits within a file (`commit_and_continue`, every ~0.1 s of a long log)
    or the end of an outer transaction (a file read in one); not for one rolled back."""
    lock = threading.Lock()
    done = False

    def once() -> None:
        nonlocal done
        with lock:
            if done:
                return
            done = True
        stop()
        then()

    stop = store.on_commit(once)
