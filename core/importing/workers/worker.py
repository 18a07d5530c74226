"""A worker process of a big import (started by parallel.Workers: `main()` here).

It reads jobs on its standard input and answers on its standard output, one frame each
(`frames.py`): first the settings (the folder for its scratch stores, the rates the store
keeps), then batches of files. Each batch is imported, by the same code as any import,
into a new scratch store of its own (core/store/sqlite/merge.py), which the importing
process moves into the store and deletes. The answer is each file's `FileResult` and the
scratch file's path. Nothing is written to the terminal: the importing process reads
what went wrong from the answer, and imports a batch itself when its worker fails.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from .frames import read_frame, write_frame


class Orphaned(BaseException):
    """The importing process is gone (killed: it could not stop its workers). What it
    gave this worker is of no use to anyone: the worker stops, within a progress tick
    (0.1 s) of a file it is reading, instead of reading its batch to the end."""


def parent_watch(parent: int):
    """A progress callback that raises Orphaned once this process's parent is no longer
    `parent` (an orphan is adopted by init or a subreaper)."""
    def check(_progress=None) -> None:
        if os.getppid() != parent:
            raise Orphaned
    return check


class Telling:
    """A batch's progress callback: `orphaned()` at each tick, and at most every `every`
    seconds (None: never) a frame saying how many bytes of the batch are read, so that
    the importing process's progress moves while a long session is read here."""

    def __init__(self, stdout, job: int, orphaned, every: float | None):
        self.stdout = stdout
        self.job = job
        self.orphaned = orphaned
        self.every = every
        self.before = 0          # bytes of the batch's files read to their end
        self.told = time.monotonic()

    def __call__(self, progress=None) -> None:
        self.orphaned()
        if progress is None or self.every is None:
            return
        now = time.monotonic()
        if now - self.told >= self.every:
            self.told = now
            write_frame(self.stdout, {"job": self.job, "reading": self.before + progress.done})

    def file_read(self, path: Path) -> None:
        try:
            self.before += os.stat(path).st_size
        except OSError:
            pass


def _serve(stdin, stdout, parent: int) -> None:
    from core.store.sqlite.merge import open_scratch
    from core.importing.driver import import_file

    orphaned = parent_watch(parent)
    settings = read_frame(stdin)
    if not isinstance(settings, dict):
        return
    orphaned()   # (an importing process killed as this one started: its folder is not ours)
    folder = settings["folder"]
    template = open_scratch(os.path.join(folder, f"template-{os.getpid()}.db"),
                            cards=settings.get("cards") or [])
    try:
        while True:
            job = read_frame(stdin)
            if job is None:
                return
            orphaned()   # (jobs sent before the importing process died are still there)
            try:
                store = open_scratch(job["out"], template=template)
                telling = Telling(stdout, job["job"], orphaned, settings.get("tell_every"))
                seeds = None
                try:
                    results = []
                    if job.get("tail") is not None:
                        # a file the importing process began: read on from its record
                        seeds = _seed(store, job["tail"], job["files"][0])
                        if seeds is None:
                            raise LookupError("the store has no record of this file")
                    for path, fmt in job["files"]:
                        results.append(import_file(store, Path(path), fmt, budget=float("inf"),
                                                   progress=telling))
                        telling.file_read(Path(path))
                finally:
                    store.close()
                answer = {"job": job["job"], "out": job["out"], "results": results}
                if seeds is not None:
                    answer["seeds"] = seeds
                write_frame(stdout, answer)
            except Exception as error:  # noqa: BLE001 - said to the importing process
                write_frame(stdout, {"job": job["job"], "out": job["out"],
                                     "error": f"{type(error).__name__}: {error}"})
    finally:
        template.close()


def _seed(store, store_path: str, file: tuple[str, str]) -> dict[str, int] | None:
    """The scratch store seeded with the file's record and sessions (sqlite/tail.py)."""
    from core.importing.files import record_key

    path, fmt = file
    seeds = store.imports.seed_tail(store_path, record_key(Path(path), fmt))
    if seeds is not None:
        # the responses the store's import wrote waiting for their price (`prices_later`)
        # priced first, as that import prices them after its head, before the tail is read
        # (so the sessions' totals sum in the same order)
        store.usage.price_waiting()
    return seeds


def main(parent: int | None = None) -> int:
    """`parent`: the importing process's pid (by default this process's parent now: the
    importing process may have been killed while this one started, and then its parent
    is already another)."""
    try:
        os.nice(10)   # the importing process moves batches in: it goes first
    except OSError:
        pass
    parent = os.getppid() if parent is None else parent
    try:
        _serve(sys.stdin.buffer, sys.stdout.buffer, parent)
    except (EOFError, BrokenPipeError, KeyboardInterrupt, Orphaned):
        pass   # the importing process went away or was interrupted: nothing to say
    return 0

