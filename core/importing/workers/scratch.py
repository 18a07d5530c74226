"""An import's scratch folder (its worker processes' scratch stores): where it goes, its
lock, and the sweep of those that killed imports left. Apart from the worker pool
(parallel.py), so that an import with no new files sweeps without loading the pool."""

from __future__ import annotations

import os
import time

# Scratch folders are made beside the store (`scratch_parent`), named so, and hold
# OWNER_LOCK, locked (flock) by their import while it runs: the lock goes with the process,
# however it ends, so a folder whose lock nobody holds is an import's that was killed or
# lost power before it could delete it (up to parallel.AHEAD_BYTES of logs, and a big
# batch, as scratch stores). The next import with workers there deletes such folders.
#
# A folder can also be left without its lock file: by a kill between making the folder
# and putting the lock file in place (an empty folder, or one holding OWNER_LOCK + ".new"),
# or, before the lock file was deleted last, by a kill while the folder was being deleted
# (1.5 MB of scratch stores were seen left so). Such a folder is deleted once nothing in it
# has changed for ABANDONED_AFTER seconds: an import puts its lock file in place within
# microseconds of making the folder, and deletes the lock file last (`remove_scratch`).
FOLDER_PREFIX = ".arbor-import-"
OWNER_LOCK = "owner.lock"
ABANDONED_AFTER = 60.0


def scratch_parent(store_path) -> str:
    """Where an import's scratch folder goes: the store's own folder, on the disk that is
    to hold what the scratch stores hold (the temporary folder is often a tmpfs, in
    memory, and scratch stores of a big import take hundreds of MB); the temporary folder
    when the store's cannot be written to or it has none (a PostgreSQL server's).
    (`tempfile` is loaded only then: with `shutil` and `random` it costs an import that
    reads a few new lines a tenth of its time.)"""
    local = isinstance(store_path, (str, os.PathLike)) and store_path
    folder = os.path.dirname(os.path.abspath(store_path)) if local else ""   # not a URL
    if folder and os.access(folder, os.W_OK | os.X_OK):
        return folder
    import tempfile

    return tempfile.gettempdir()


def own_folder(folder: str) -> int | None:
    """Lock `folder` as this process's (the descriptor holds the lock; None where there is
    no flock). The lock file is locked under another name, then renamed into place, so no
    other import ever finds it there unlocked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system: folders are not swept
        return None
    taking = os.path.join(folder, OWNER_LOCK + ".new")
    fd = os.open(taking, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(taking, os.path.join(folder, OWNER_LOCK))
    except OSError:
        os.close(fd)
        return None
    return fd


def sweep_abandoned(parent: str, own: str | None = None) -> list[str]:
    """Delete the scratch folders in `parent` that no running import owns; the folders
    deleted. A folder with its lock file is deleted when the lock can be taken (its import
    ended); one without, when nothing in it changed for ABANDONED_AFTER seconds (see
    above). Left alone: folders of other users, symbolic links, any folder whose lock is
    held, and a young folder without a lock file (an import may be making it)."""
    removed: list[str] = []
    try:
        names = os.listdir(parent)
    except OSError:
        return removed
    names = [name for name in names if name.startswith(FOLDER_PREFIX)]
    if not names:
        return removed   # (the commonest case: nothing more is loaded)
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return removed
    import stat

    for name in names:
        folder = os.path.join(parent, name)
        if folder == own:
            continue
        try:
            info = os.lstat(folder)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(folder, OWNER_LOCK), os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            if _idle_for(folder) >= ABANDONED_AFTER:
                remove_scratch(folder)
                removed.append(folder)
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue   # its import is running
        try:
            remove_scratch(folder)
            removed.append(folder)
        finally:
            os.close(fd)
    return removed


def remove_scratch(folder: str) -> None:
    """Delete a scratch folder with its lock file last, so that a kill part-way leaves the
    lock file (nobody's once the process is gone), by which the next sweep knows it.

    The folder is first renamed (to a name the sweep still knows): a killed import's worker
    may live on for a moment, and could otherwise make a file in it (a journal) between its
    emptying and its removal; under the new name nothing of it can be reached by path."""
    import secrets
    import shutil

    parent, name = os.path.split(folder)
    if name.startswith(FOLDER_PREFIX):
        try:
            gone = os.path.join(parent, f"{FOLDER_PREFIX}gone-{secrets.token_hex(8)}")
            os.rename(folder, gone)
            folder = gone
        except OSError:
            pass
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name == OWNER_LOCK:
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            _unlink(path)
    _unlink(os.path.join(folder, OWNER_LOCK))
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _idle_for(folder: str) -> float:
    """Seconds since anything in `folder` (or the folder itself) last changed."""
    try:
        newest = os.lstat(folder).st_mtime
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
                except OSError:
                    pass
    except OSError:
        return 0.0
    return time.time() - newest


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass   # gone already, or not ours to delete: the folder stays, and says so by itself
