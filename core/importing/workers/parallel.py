"""A big import converts its new files in worker processes while this process writes.

Reading a log is Python (parse each line, build the tree, convert each message); writing
it is SQLite's. One process does both in turn and uses one core; here worker processes
(worker.py) import batches of new Claude Code files into scratch stores of their own
(core/store/sqlite/merge.py), by the same code as any import, while this process moves
finished batches into the store with a few statements a table: the store gets exactly the
rows a one-process import writes.

Which files go to the workers: Claude Code logs never imported before (no record), in
runs of consecutive planned files, BATCH_BYTES or BATCH_FILES a batch; the rest (a file that
grew, other formats) is imported here, in its turn. Batches are moved in in plan order, so
whatever depends on order (which copy of a response counts) comes out as it would. A
session moves in a stretch of entries at a time, and the transaction is committed about
every COMMIT_EVERY seconds, so agents writing to the store wait no longer than they do
behind any import (sqlite_merge.merge_sessions: what a commit there leaves). A batch whose
worker fails, or that cannot move in (a session the store has already, under the same
uid), is imported here instead, from the first file not moved in: the outcome is the same,
only slower.

ARBOR_IMPORT_WORKERS sets how many workers (0: none); by default one a CPU, up to four,
and none on one CPU or for an import of less than PARALLEL_MIN_BYTES.
"""

from __future__ import annotations

import os
import time
from _thread import allocate_lock
from pathlib import Path

from core.importing.base import FileResult
from .scratch import (ABANDONED_AFTER, FOLDER_PREFIX, OWNER_LOCK,  # noqa: F401 (theirs too)
                      own_folder, remove_scratch, scratch_parent, sweep_abandoned)

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Callable

BATCH_BYTES = 2 << 20
BATCH_FILES = 64
PARALLEL_MIN_BYTES = 8 << 20
MAX_WORKERS = 4
# How far the workers may read ahead of the batches moved in: in batches a worker, and
# in bytes of logs (scratch stores on disk take about 1.4 times as much).
AHEAD = 32
AHEAD_BYTES = 256 << 20
# A batch this big (one long session) is read early, outside that window (`_send_early`).
BIG_BYTES = 16 << 20
# While the import may be stopped, how often waiting for a batch looks whether it was (s).
STOP_LOOK = 0.1
# How often a worker says how far it has read in its batch (s), when the import asks.
TELL_EVERY = 0.5


def workers_wanted(files: int, size: int) -> int:
    """How many worker processes an import of `files` new files of `size` bytes in all uses."""
    setting = os.environ.get("ARBOR_IMPORT_WORKERS", "").strip()
    if setting:
        try:
            return max(0, min(int(setting), files))
        except ValueError:
            pass
    if size < PARALLEL_MIN_BYTES or files < 2:
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 0 if (cpus or 1) < 2 else min(cpus or 1, MAX_WORKERS, files)


def batches(planned: list, eligible: Callable[[int], bool]) -> list[list[int]]:
    """Runs of consecutive planned files the workers may import, cut into batches."""
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for index in range(len(planned)):
        if not eligible(index):
            if current:
                out.append(current)
                current, size = [], 0
            continue
        length = _size(planned[index][0])
        if current and (size + length > BATCH_BYTES or len(current) >= BATCH_FILES):
            out.append(current)
            current, size = [], 0
        current.append(index)
        size += length
    if current:
        out.append(current)
    return out



def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


class Workers:
    """The worker processes of one import and the batches given to them."""

    def __init__(self, count: int, cards: list[tuple[str, str]], parent: str | None = None,
                 answered: Callable[[int], None] | None = None,
                 reading: Callable[[int, int], None] | None = None):
        """`answered(job)`: called (in a reading thread) as each job's answer comes;
        `reading(job, bytes)`: as a worker says how far it has read in a job's files."""
        import queue   # (imported here: an import too small for workers loads none of this)

        self._answers = queue.Queue()
        self._answered_now = answered
        self._reading_now = reading
        self.procs: list = []
        self._load: list[int] = []
        self._next_job = 0
        self._job_worker: dict[int, int] = {}
        self._job_load: dict[int, int] = {}
        self._load_lock = allocate_lock()
        self._dead: set[int] = set()
        self.folder: str | None = None
        self._owner: int | None = None
        try:
            self._start(count, cards, parent)
        except BaseException:   # Ctrl-C or a signal while they start: none is left behind
            self.close(stop=True)
            raise

    def _start(self, count: int, cards: list[tuple[str, str]], parent: str | None) -> None:
        import subprocess
        import sys
        import tempfile
        import threading

        from .frames import write_frame

        parent = parent or tempfile.gettempdir()
        self.folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX, dir=parent)   # (mode 0700)
        self._owner = own_folder(self.folder)
        sweep_abandoned(parent, self.folder)
        # The worker imports this very `core`, wherever it was imported from, before
        # anything of the current folder (which may have a `core` of its own); it runs in
        # the current folder, since the paths it is given are the user's as given.
        root = str(Path(__file__).resolve().parent.parent.parent.parent)   # the folder holding `core`
        start = (f"import sys; sys.path.insert(0, {root!r}); "
                 f"from core.importing.workers.worker import main; sys.exit(main({os.getpid()}))")
        for number in range(count):
            log = open(os.path.join(self.folder, f"worker-{number}.log"), "wb")
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-c", start], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=log,
                    # a Ctrl-C is this process's to handle: a process group of its own;
                    # but in this session, not a new one (`start_new_session`): Linux
                    # shares the CPU between sessions first (autogroups), and only then
                    # by niceness within one, so a worker in a session of its own took
                    # as much as this process, whatever its `os.nice` (worker.py); here
                    # this process, which writes the store, goes first
                    process_group=0)
            finally:
                log.close()
            self.procs.append(proc)
            self._load.append(0)
            try:
                write_frame(proc.stdin, {"folder": self.folder, "cards": cards, "tell_every":
                                         TELL_EVERY if self._reading_now is not None else None})
            except OSError:
                self._dead.add(number)
            threading.Thread(target=self._listen, args=(number, proc), daemon=True,
                             name=f"arbor-import-worker-{number}").start()

    def _listen(self, number: int, proc) -> None:
        from .frames import read_frame

        try:
            while True:
                answer = read_frame(proc.stdout)
                if isinstance(answer, dict) and "reading" in answer:
                    try:
                        self._reading_now(answer["job"], answer["reading"])
                    except Exception:  # noqa: BLE001 - progress only: never the import's end
                        pass
                    continue
                if isinstance(answer, dict):
                    # (its bytes are read: the next batch may go to it, whenever this
                    # answer is taken; a tail's is taken last, after all the batches)
                    self._unload(number, answer.get("job"))
                self._answers.put((number, answer))
                if self._answered_now is not None and isinstance(answer, dict):
                    try:
                        self._answered_now(answer["job"])
                    except Exception:  # noqa: BLE001 - progress only: never the import's end
                        pass
        except (EOFError, OSError, ValueError):
            self._answers.put((number, None))   # gone: its batches are imported here

    def submit(self, files: list[tuple[str, str]], size: int = 0,
               tail: str | None = None) -> int | None:
        """Give a batch of `size` bytes to the worker alive with the fewest bytes to read;
        its job number (None: none alive). `tail` (the store's path): the batch is one file
        this import began, read on from its record in a scratch store seeded from the store
        (sqlite/tail.py)."""
        alive = [i for i in range(len(self.procs)) if i not in self._dead]
        if not alive:
            return None
        number = min(alive, key=lambda i: self._load[i])
        job = self._next_job
        self._next_job += 1
        out = os.path.join(self.folder, f"batch-{job}.db")
        from .frames import write_frame

        with self._load_lock:   # (counted before it is sent: its answer may come at once)
            self._load[number] += size + 1   # (+1: of equal bytes, the fewer jobs)
            self._job_load[job] = size + 1
        self._job_worker[job] = number
        try:
            write_frame(self.procs[number].stdin, {"job": job, "files": files, "out": out,
                                                   "tail": tail})
        except OSError:
            self._dead.add(number)
            self._unload(number, job)
            return self.submit(files, size, tail)
        return job

    def _unload(self, number: int, job) -> None:
        """Worker `number` has read `job`'s bytes (answered, or never given them)."""
        with self._load_lock:
            self._load[number] -= self._job_load.pop(job, 0)

    def take(self, job: int, answered: dict[int, dict], stop=None) -> dict | None:
        """The answer to `job` (None: its worker died first). Answers to other jobs that
        come meanwhile are kept in `answered`. `stop` (an Event): once it is set, waiting
        ends with ImportStopped."""
        import queue

        while job not in answered:
            if self._job_worker.get(job) in self._dead:
                return None
            if stop is None:
                number, answer = self._answers.get()
            else:
                try:
                    number, answer = self._answers.get(timeout=STOP_LOOK)
                except queue.Empty:
                    if stop.is_set():
                        from core.importing.base import ImportStopped

                        raise ImportStopped from None
                    continue
            if answer is None:
                self._dead.add(number)
                continue
            answered[answer["job"]] = answer
        return answered.pop(job)

    def sent_all(self) -> None:
        """No more batches come: each worker ends once it has answered those it was given,
        while this process moves them in (a worker's end took up to 0.45 s at load 4,
        waited for by `close` after the last batch was moved in)."""
        for proc in self.procs:
            try:
                proc.stdin.close()
            except OSError:
                pass

    def close(self, *, stop: bool = False) -> None:
        """End the workers (idle ones end at once; `stop`: busy ones too, the import is
        failing) and delete their scratch stores."""
        import subprocess

        for proc in self.procs:
            try:
                proc.stdin.close()
            except OSError:
                pass
            if stop:
                proc.kill()
        deadline = time.monotonic() + 2
        for proc in self.procs:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.folder is not None:
            remove_scratch(self.folder)
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None


class ParallelImport:
    """Which planned files the workers import, and their results in plan order."""

    def __init__(self, store, planned: list, new: set, *, commit_every: float, stop=None,
                 read: Callable[[list[int]], None] | None = None,
                 reading: Callable[[list[int], int], None] | None = None,
                 tails: dict[int, int] | None = None):
        """`read(indexes)`: told (in a reading thread) of the planned files a worker has
        read, as its answer for their batch comes (before they are moved in);
        `reading(indexes, bytes)`: how far a worker has read in a batch's files so far.
        `tails`: planned files this import began (index -> bytes left), which a worker
        reads on in, each from its record, to be merged in by `tail_result`."""
        from core.importing.detect import CLAUDE_CODE

        self.store = store
        self.read = read
        self.reading = reading
        self._batch_of_job: dict[int, int] = {}
        self._early_answers: set[int] = set()   # (answered before `_send` knew the job)
        self._jobs_lock = allocate_lock()
        self.stop = stop   # an Event: waiting for a batch ends once it is set (`Workers.take`)
        self.planned = planned
        self.commit_every = commit_every

        def eligible(index: int) -> bool:
            path, fmt, problem = planned[index]
            return fmt == CLAUDE_CODE and problem is None and path in new

        self.batches = batches(planned, eligible) if store.imports.takes_scratch else []
        path = getattr(store, "path", None)
        self._store_path = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
        self.tails = {index: size for index, size in (tails or {}).items()
                      if planned[index][1] == CLAUDE_CODE and self._store_path is not None
                      and store.imports.takes_scratch}
        self._tail_jobs: dict[int, int | None] = {}
        self._tail_of_job: dict[int | None, int] = {}
        self.first_of: dict[int, int] = {}
        self.owned: set[int] = set()
        self.results: dict[int, FileResult] = {}
        self.workers: Workers | None = None
        self._jobs: dict[int, int | None] = {}
        self._answered: dict[int, dict] = {}
        self._next = 0                   # batches before it are sent
        self._early: set[int] = set()    # batches sent before their turn (`_send_early`)
        self._landed = 0
        self._moved: set[int] = set()
        self.big = False   # the store was told a big import runs (`_big`)

    def start(self) -> bool:
        """Start the workers, when the import is worth them; whether it was."""
        owned = [index for batch in self.batches for index in batch]
        count = workers_wanted(len(owned) + len(self.tails),
                               sum(map(_size, (self.planned[i][0] for i in owned)))
                               + sum(self.tails.values()))
        if not count:
            self.batches = []
            self.tails = {}
            # a killed import's folder goes even when this one needs no workers
            sweep_abandoned(scratch_parent(getattr(self.store, "path", None)))
            return False
        self.first_of = {batch[0]: number for number, batch in enumerate(self.batches)}
        self.owned = set(owned)
        self._sizes = {i: _size(self.planned[i][0]) for i in owned}
        self._bytes = [sum(self._sizes[i] for i in batch) for batch in self.batches]
        self.workers = Workers(min(count, len(self.batches) + len(self.tails)),
                               self.store.imports.price_cards(),
                               scratch_parent(getattr(self.store, "path", None)),
                               self._heard if self.read is not None else None,
                               self._heard_reading if self.reading is not None else None)
        try:
            # the tails first: each keeps a worker longest, and the batches go to the
            # others (`submit` gives each to the worker with the fewest bytes to read)
            for index, size in self.tails.items():
                path, fmt, _problem = self.planned[index]
                job = self._tail_jobs[index] = self.workers.submit([(str(path), fmt)], size,
                                                                   tail=self._store_path)
                with self._jobs_lock:
                    self._tail_of_job[job] = index
            self._top_up()
            self._big(True)
        except BaseException:   # (a signal before the caller holds this: nothing left behind)
            self.close(stop=True)
            raise
        return True

    def _big(self, running: bool) -> None:
        """Tell the store a big import runs (its search index merges in bigger steps) or
        has ended; a store that cannot be told (unreachable) is left as it is."""
        try:
            self.store.imports.big_import(running)
            self.big = running
        except self.store.errors:
            pass

    def owns(self, index: int) -> bool:
        return index in self.owned

    def pressed(self) -> bool:
        """Whether the batches sent and not moved in fill half the window the workers may
        read ahead (`_top_up`) or more: then the workers wait for this process (it reads a
        long session between batches), not the other way round."""
        workers = self.workers
        if workers is None:   # (closed: nothing is read apart any more)
            return False
        limit = AHEAD * len(workers.procs)
        ahead = [n for n in range(self._landed, self._next) if n not in self._early]
        return len(ahead) * 2 >= limit or sum(self._bytes[n] for n in ahead) * 2 >= AHEAD_BYTES

    def result(self, index: int, import_here: Callable[[int], FileResult]) -> FileResult:
        """The result of planned file `index` (one the workers own). At a batch's first
        file the batch is taken back and moved into the store; what does not move in is
        imported here (`import_here`)."""
        number = self.first_of.get(index)
        if number is not None:
            self._land(number, import_here)
        return self.results.pop(index)

    def _top_up(self) -> None:
        """Send the batches in plan order, as far ahead of the one moved in next as AHEAD
        and AHEAD_BYTES allow (what waits on disk as scratch stores), and a big one early."""
        self._send_early()
        limit = AHEAD * len(self.workers.procs)
        while self._next < len(self.batches):
            number = self._next
            if number not in self._early:
                ahead = [n for n in range(self._landed, number) if n not in self._early]
                if ahead and (len(ahead) >= limit or
                              sum(self._bytes[n] for n in ahead) >= AHEAD_BYTES):
                    return
                self._send(number)
            self._next += 1

    def _send_early(self) -> None:
        """A batch of BIG_BYTES or more (one long session) keeps a worker as long as many
        batches do. Sent in its turn, the batches after it wait for it, and so do all the
        workers but its own once the window is full: it is sent at once instead, wherever
        it is in the plan, so that it is read while the others are, and ready when its turn
        comes. One at a time (its scratch store is as big), the next once it is moved in;
        not with one worker, which would read it before the batches this process needs
        first."""
        if len(self.workers.procs) < 2 or any(n >= self._landed for n in self._early):
            return
        for number in range(self._next, len(self.batches)):
            if self._bytes[number] >= BIG_BYTES:
                self._early.add(number)
                self._send(number)
                return

    def _send(self, number: int) -> None:
        job = self._jobs[number] = self.workers.submit(
            [(str(self.planned[i][0]), self.planned[i][1]) for i in self.batches[number]],
            self._bytes[number])
        if job is not None:
            with self._jobs_lock:
                self._batch_of_job[job] = number
                early = job in self._early_answers
            if early:
                self.read(self.batches[number])

    def _heard(self, job: int) -> None:
        with self._jobs_lock:
            number = self._batch_of_job.get(job)
            if number is None:
                self._early_answers.add(job)
                return
        self.read(self.batches[number])

    def _heard_reading(self, job: int, done: int) -> None:
        with self._jobs_lock:
            number = self._batch_of_job.get(job)
            tail = self._tail_of_job.get(job)
        if number is not None:
            self.reading(self.batches[number], done)
        elif tail is not None:   # (how far in the file: its first part counts too)
            self.reading([tail], done)

    def _land(self, number: int, import_here: Callable[[int], FileResult]) -> None:
        batch = self.batches[number]
        job = self._jobs.pop(number, None)
        answer = self.workers.take(job, self._answered, self.stop) if job is not None else None
        self._landed += 1
        self._top_up()
        if self._next >= len(self.batches):
            self.workers.sent_all()
        moved = 0
        if answer is not None:
            try:
                if "results" in answer:
                    moved = self._move_in(answer["out"], answer["results"], batch)
            finally:
                _remove(answer["out"])
        for index in batch[moved:]:
            self.results[index] = import_here(index)

    def _move_in(self, scratch: str, results: list[FileResult], batch: list[int]) -> int:
        """Move the batch's sessions in, up to its first file that cannot (one whose import
        failed there, or whose session the store has already); returns how many files
        moved in. The sessions move in together: a commit while they do leaves each of them
        as an interrupted import does, so the files are whole in the store only once all
        are in, and none counts as moved in before (the rest is imported here)."""
        store = self.store
        if len(results) != len(batch):
            return 0
        uids = [uid for result in results for uid in _uids(result)]
        if len(uids) != len(set(uids)):
            return 0     # two files into one session: imported here, one after the other
        files = 0
        for result in results:
            if result.status == "failed" or any(
                    store.sessions.id_by_uid(uid) is not None for uid in _uids(result)):
                break   # imported here: whatever failed there, it says so itself
            files += 1
        uids = [uid for result in results[:files] for uid in _uids(result)]
        last = time.monotonic()

        def pace() -> None:
            """Commit when the transaction has held the store long enough."""
            nonlocal last
            if time.monotonic() - last >= self.commit_every:
                store.commit_and_continue()
                last = time.monotonic()

        moved = 0
        with store.imports.scratch_attached(scratch):
            if store.imports.scratch_problems():
                return 0
            try:
                with store.transaction():
                    if not store.imports.merge_scratch_sessions(uids, pace=pace):
                        return 0
                    store.imports.merge_scratch_prices()
                moved = files
            except store.errors:
                pass   # rolled back to the last commit: the files are imported here
        for index, result in zip(batch[:moved], results):
            self.results[index] = result
            self._moved.add(index)
        return moved

    def reads_tail(self, index: int) -> bool:
        """Whether a worker reads on in planned file `index` (`tails`)."""
        return self._tail_jobs.get(index) is not None

    def tail_result(self, index: int, import_here: Callable[[], FileResult]) -> FileResult:
        """The result of the read of planned file `index`'s tail, merged into the store
        (sqlite/tail.py); when it cannot be (its worker failed, its sessions changed
        meanwhile), the tail is read here (`import_here`) from the file's record. Waiting
        for it ends with ImportStopped once the import is stopped (nothing of it is in
        the store then: the next import goes on from the record)."""
        job = self._tail_jobs.pop(index, None)
        if self.stop is not None and self.stop.is_set():
            from core.importing.base import ImportStopped

            raise ImportStopped   # (not merged once stopped, even if read: it may be long)
        answer = self.workers.take(job, self._answered, self.stop) \
            if job is not None and self.workers is not None else None
        result = None
        if answer is not None:
            try:
                if "seeds" in answer and len(answer.get("results") or ()) == 1:
                    result = self._merge_tail(answer["out"], answer["results"][0],
                                              answer["seeds"], index)
            finally:
                _remove(answer["out"])
        if result is None:
            return import_here()
        self._moved.add(index)
        return result

    def _merge_tail(self, scratch: str, result: FileResult, seeds: dict[str, int],
                    index: int) -> FileResult | None:
        """Merge one tail in, in one transaction (a commit part-way would leave entries
        its record does not cover); None when it did not."""
        from core.importing.files import record_key

        store = self.store
        if result.status != "imported":
            return None
        path, fmt, _problem = self.planned[index]
        with store.imports.scratch_attached(scratch):
            if store.imports.scratch_problems():
                return None
            try:
                with store.transaction():
                    if not store.imports.merge_scratch_tail(seeds, record_key(path, fmt)):
                        return None
                    store.imports.merge_scratch_prices()
            except store.errors:
                return None
        return result

    @property
    def converted(self) -> int:
        """How many files were read by workers and moved in."""
        return len(self._moved)

    def moved_in(self, index: int) -> bool:
        """Whether planned file `index` was read by a worker and moved in (not imported here)."""
        return index in self._moved

    def close(self, *, stop: bool = False) -> None:
        if self.workers is not None:
            self.workers.close(stop=stop)
            self.workers = None
        if self.big:
            self._big(False)


def _uids(result: FileResult) -> list[str]:
    return [session.uid for session in result.sessions] if result.status == "imported" else []


def _remove(path: str) -> None:
    """A scratch file (never a store: this process made it, and has detached it)."""
    for name in (path, path + "-journal", path + "-wal", path + "-shm"):
        try:
            os.unlink(name)
        except FileNotFoundError:
            pass
