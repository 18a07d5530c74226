"""The import driver: which files to read, each one from where its last import stopped,
in short transactions (see `core.importing` for the API and state.py for the records)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from core.model.errors import ArborError, StoreUnreachable
from core.store.held_files import HeldFile, check_path, open_unless_held
from .base import (FileResult, ImportReport, ImportStopped, ProgressTicker, SessionResult,
                   file_size)
from .files import expand_paths, path_key, record_key
from .detect import CLAUDE_CODE, CODEX, LANGGRAPH, PI, NotALog, detect_format
from .newest import head_length, is_subagent, parents_first
from .session import ALIASES, PACING
from .state import (
    FROM_START, HEAD_BYTES, RESUME, UNCHANGED, FileState, Pacer, Plan, head_hash, plan, tail_hash)
from .unchanged import (DATABASES, FORMATS, Look, is_unchanged, sessions_of, stamp_of,
                        unread_bytes)

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    import threading
    from typing import Callable, Iterable

    from .base import ProgressCallback
    from .run_progress import RunProgress

# An import holds the store's write lock for about this long at a time (seconds).
COMMIT_EVERY = 0.1
# ... but a first import's (`newest_first`) first transaction ends after this long: its
# first rows are in the store (and on screen) at once.
FIRST_COMMIT = 0.02
# A first import (`newest_first`) reads the files of its newest HEAD_FILES sessions (with
# their sub-agents', newest.py) here before any worker starts; one of them bigger than
# HEAD_SLICE bytes only its first FIRST_SLICE at first, up to the commit that passes it (its
# rows are on screen, and the small ones after it are not kept waiting: a 4 MB first slice
# put ~0.3 s before them; 1 MB, read on for a commit after the first rows, 0.1 s of CPU);
# the others of them to their end once the head's other files are read, the longest once
# all the other files are in, read on by a worker meanwhile where there are workers (see
# `import_paths`).
HEAD_FILES = 20
HEAD_SLICE = 4 << 20
# ... and links sub-agents to their sessions as it goes, after the head and then at most
# this often (seconds): until linked, the list shows a sub-agent as a session of its own.
LINK_EVERY = 1.0
FIRST_SLICE = 0   # (its first commit's worth: the first rows)
# A newest-first import of less than this many bytes leaves the price table to its workers
# (`KEPT_ONLY` below): each worker then loads it (~27 MB each) instead of this process once;
# a bigger import keeps the memory (1 GB of logs peaked at 301 MB so, against 274 MB), and
# the table's ~0.3 s is under 1% of its importing process's time.
PRICES_APART_BELOW = 512 << 20
# ... and below that, the files after the head are looked at, and the workers start on
# them, once this many files of the head are read (`early_rest` in `import_paths`).
EARLY_REST_AFTER = 1


def import_paths(store, paths: Iterable[str | os.PathLike], *,
                 progress: ProgressCallback | None = None,
                 describe_unchanged: bool = True, scanned: Look | None = None,
                 newest_first: bool = False, stop: threading.Event | None = None,
                 run: RunProgress | None = None, price_later: bool = False) -> ImportReport:
    """Import files and folders (recursively); see the module doc.

    Files whose record says they are unchanged (same size, mtime and inode: one `stat`
    each, one query for every record) are not opened. `describe_unchanged`: name their
    sessions in the report (one more query; `arbor import -q` does without). `scanned`:
    what `unchanged.look` saw of the same `paths` just before (the files and, when it
    read them, the records' stamps), used instead of walking and asking again.

    `newest_first` (a first import, which shows rows as they land): the files by mtime,
    newest first, a sub-agent's after its session's (newest.py). The files of the newest
    HEAD_FILES sessions are looked at (their format) and read here, in short commits (the
    first one FIRST_COMMIT long), before the others are looked at and worker processes
    start on them (without `price_later`, below PRICES_APART_BELOW: once the head's first
    EARLY_REST_AFTER files are read, the workers reading while this process reads the rest
    of the head);
    one of them bigger than HEAD_SLICE (the session an agent is writing now, often the
    longest) is read FIRST_SLICE far first (its rows are on screen, and the files after it
    are not kept waiting); where several are, all but the one with the most left are read
    on to their end once the head's other files are (they are of the newest sessions too),
    and the rest of the longest after all the other files: with workers, one of them reads
    on in it from its record as they start, into a scratch store seeded with its sessions,
    while this process moves the others' batches in, and its tail is merged in last
    (parallel.ParallelImport.tail_result, sqlite/tail.py): the store is what a read of the
    rest here at that point makes. (Read on in 16 MB steps between the other files before,
    here: this process's reading of a long session was the import's one long serial part,
    its workers idle.)
    `stop` (a threading.Event, or anything with its `is_set()`): once set, the file
    being read stops at its next commit (its record says where the next import goes on)
    and no other is begun; the report's `stopped` counts the files left. `run`: kept up
    to date with the files and bytes done of all (run_progress.py). `price_later` (with
    `newest_first`): the responses of the head are written waiting for their price and
    priced in one go once the head is read (`store.usage.price_waiting`, which prices those
    an earlier stopped import left waiting too), so that the price table is not loaded
    before the first rows are in. Without `price_later`, a newest-first import of less than
    PRICES_APART_BELOW bytes prices the
    responses it reads itself with the rates the store keeps, which its workers' batches bring
    in, and those it has no rate for at the end (with its workers: the table is theirs to load).

    A store whose server stops answering stops the import at once: StoreUnreachable is
    raised, with the report of what was done before as its `report` (what a file had
    read up to its last commit is kept; the next import goes on from there)."""
    started = time.monotonic()
    report = ImportReport()
    new: set[Path] = set()
    rest: list = []          # files of a newest-first import not looked at yet
    stamps: dict = {}        # ... and the records' stamps it judged them by
    try:
        if newest_first:
            found, stamps = _found(store, paths, report, scanned)
            found = parents_first(sorted(found, key=lambda item: item.st.st_mtime_ns,
                                         reverse=True))
            cut = head_length([item.name for item in found], HEAD_FILES)
            planned = plan_found(store, found[:cut], stamps, describe_unchanged, new)
            rest = found[cut:]
            if rest and any(fmt == CODEX for _path, fmt, _problem in planned):
                # (a Codex fork is read after its parent: `_codex_parents_first`, over all)
                planned = plan_found(store, found, stamps, describe_unchanged, new)
                rest = []
        else:
            planned = plan_paths(store, paths, report, describe_unchanged=describe_unchanged,
                                 scanned=scanned, new=new)
    except StoreUnreachable as error:
        error.report = report
        raise
    imported = False
    sizes = {i: file_size(path) for i, (path, fmt, problem) in enumerate(planned)
             if fmt is not None and problem is None}
    subagents = {i for i in sizes if is_subagent(planned[i][0])} if newest_first else set()
    head = sorted(sizes) if newest_first else []
    head = head[:head_length([planned[i][0] for i in head], HEAD_FILES)]
    head_end = len(planned) if rest else head[-1] + 1 if head else 0
    if rest:   # (what is left, as stat saw it: for the totals, until it is looked at)
        for offset, item in enumerate(rest):
            known = stamp_of(stamps, item.key)
            if known is None or not is_unchanged(known[0], known[1], item.st):
                sizes[head_end + offset] = item.st.st_size
                if is_subagent(item.name):
                    subagents.add(head_end + offset)
    if run is not None:
        run.plan(sizes, subagents)
    finished: set[int] = set()
    parts: dict[int, FileResult] = {}     # files read part-way: their results so far
    bases: dict[int, dict[str, tuple[int, int, int]]] = {}   # ... and their sessions before
    reached: dict[int, int] = {}          # ... and how far (bytes)
    deferred: list[int] = []              # ... those not read to the end yet

    def stopping() -> bool:
        return stop is not None and stop.is_set()

    def watch(index: int) -> ProgressCallback | None:
        if progress is None and run is None:
            return None

        def tick(update) -> None:
            if progress is not None:
                progress(update)
            if run is not None:
                run(update)
            if update.done > reached.get(index, 0):
                reached[index] = update.done
        return tick

    first_commit = [FIRST_COMMIT if newest_first else None]

    def here(index: int, limit: int | None = None) -> FileResult:
        path, fmt, _problem = planned[index]
        enough = None
        if stop is not None or limit is not None:
            def enough(offset: int | None) -> bool:
                return stopping() or (limit is not None and offset is not None
                                       and offset >= limit)
        first, first_commit[0] = first_commit[0], None
        try:
            return import_file(store, path, fmt, progress=watch(index), index=index,
                               count=len(planned), enough=enough, first_commit=first)
        except ImportStopped:   # (before it began: nothing of it was read)
            return FileResult(str(path), format=fmt, status="stopped")

    def read(index: int, limit: int | None = None,
             how: Callable[[], FileResult] | None = None) -> bool:
        """Read planned file `index` (up to `limit` bytes; `how`: by that instead); whether
        it was read to its end. Its result goes into the report once it is (or once the
        import stops)."""
        if limit is not None and index not in parts:
            bases[index] = _sizes_before(store, *planned[index][:2])
        result = here(index, limit) if how is None else how()
        parts[index] = _joined(parts.get(index), result, store, bases.get(index))
        if result.status == "stopped":
            return False
        report.files.append(parts.pop(index))
        finished.add(index)
        if run is not None:
            run.file_done(index)
        return True

    def finish_all_but_the_longest() -> None:
        """(at the head's end) the head's files read in slices so far, read to their end
        but the one with the most left (or the one a worker reads on in already, where
        workers started during the head): they are of the newest sessions, to be complete
        with the others; the longest is read on last (`read_deferred`)."""
        if len(deferred) < 2:
            return
        longest = next((i for i in deferred if workers is not None and workers.reads_tail(i)),
                       None)
        if longest is None:
            longest = max(deferred, key=lambda i: sizes.get(i, 0) - reached.get(i, 0))
        for index in [i for i in deferred if i != longest]:
            if stopping():
                return
            if read(index):
                deferred.remove(index)

    def read_deferred() -> None:
        """Read on in the first file left part-read, to its end: by the worker reading
        its tail, when one is, else here."""
        index = deferred[0]
        if workers is not None and workers.reads_tail(index):
            done = read(index, how=lambda: workers.tail_result(index, lambda: here(index)))
        else:
            done = read(index)
        if done:
            deferred.pop(0)

    def look_at_the_rest() -> None:
        """The files after the head: their formats, and the workers for the new ones."""
        nonlocal rest, workers, looked
        looked = True
        if rest:
            planned.extend(plan_found(store, rest, stamps, describe_unchanged, new))
            rest = []
            for i in [i for i in sizes if i >= head_end]:
                del sizes[i]
                subagents.discard(i)
            sizes.update({i: file_size(path) for i, (path, fmt, problem)
                          in enumerate(planned) if i >= head_end and fmt is not None
                          and problem is None})
            subagents.update(i for i in sizes if i >= head_end and is_subagent(planned[i][0]))
            if run is not None:
                run.plan(sizes, subagents)
        new.difference_update(planned[i][0] for i in head)   # (read here, not by workers)
        tails = {i: max(0, sizes.get(i, 0) - reached.get(i, 0)) for i in deferred}
        workers = _workers(store, planned, new, stop, run, tails)

    linked_at = [time.monotonic()]

    def link_as_it_goes(now: bool = False) -> None:
        if now or time.monotonic() - linked_at[0] >= LINK_EVERY:
            link_lineage(store)
            linked_at[0] = time.monotonic()

    def price_the_head() -> None:
        """The responses written waiting (and any an earlier stopped import left) priced now."""
        usage = store.usage
        usage.prices_later = False
        usage.price_waiting()

    keep_writer = getattr(store, "bulk_writes", None)
    workers = None
    failing = True
    price_later = price_later and newest_first
    # The other newest-first imports (`arbor import --discover`) price their own responses
    # only with the rates the store keeps (price_cards.py), which the workers' batches bring
    # in as they are moved in: the others wait, and are priced at the end. The price table
    # is then loaded by the workers, not by this process, which writes the store and
    # bounds the import's wall time.
    until_cards = newest_first and not price_later and \
        sum(sizes.values()) < PRICES_APART_BELOW
    if price_later:
        store.usage.prices_later = True
    elif until_cards:
        from core.store.usage.rows import KEPT_ONLY

        store.usage.prices_later = KEPT_ONLY
    try:
        with keep_writer() if keep_writer is not None else contextlib.nullcontext():
            if not newest_first:
                workers = _workers(store, planned, new, stop, run)
            index = 0
            head_done = looked = False
            # Workers that load the price table themselves (`until_cards`) start on the
            # files after the head once its first file is in (its first rows are on
            # screen), and read while this process reads the rest of the head: started
            # after it, the first batch kept this process waiting while they started,
            # loaded the table and read it (1.7 s of a 100 MB import at load 5), and a
            # core stood idle during the head. (Not with `price_later` or for a bigger
            # import: there the head teaches this process the rates its workers are given
            # when they start, and each worker's own table would cost ~27 MB.)
            early_rest = until_cards and bool(rest) and head_end > EARLY_REST_AFTER
            while True:
                if stopping():
                    break
                if newest_first and index == head_end and not head_done:
                    # (after the head: the newest files are not read while workers start,
                    # but for `early_rest`)
                    head_done = True
                    finish_all_but_the_longest()
                    if stopping():   # (as if stopped before them: no workers started)
                        break
                    if price_later:
                        price_the_head()
                    link_as_it_goes(now=True)
                    if not looked:
                        look_at_the_rest()
                    if until_cards and workers is None:   # (no worker to learn the rates)
                        until_cards = False
                        price_the_head()
                elif early_rest and index == EARLY_REST_AFTER and not looked:
                    look_at_the_rest()
                if index >= len(planned):
                    break
                path, fmt, problem = planned[index]
                if isinstance(problem, FileResult):
                    report.files.append(problem)
                elif fmt is None:
                    report.files.append(FileResult(str(path), status=problem[0], error=problem[1]))
                elif workers is not None and workers.owns(index):
                    try:
                        result = workers.result(index, here)
                    except ImportStopped:
                        break
                    if progress is not None and workers.moved_in(index):
                        size = file_size(path)
                        ticker = ProgressTicker(progress, str(path), index, len(planned), size)
                        ticker.phase = "read apart, moved in"
                        ticker(size, force=True)
                    if result.status == "stopped":
                        parts[index] = result
                        break
                    finished.add(index)
                    if run is not None:
                        run.file_done(index)
                    report.files.append(result)
                    imported = True
                elif index < head_end and unread_bytes(
                        stamps, path_key(path), sizes.get(index, 0)) > HEAD_SLICE:
                    # (a session that grew reads what it grew by in one go, however long)
                    imported = True
                    if not read(index, FIRST_SLICE) and not stopping():
                        deferred.append(index)
                else:
                    imported = True
                    read(index)
                if newest_first and imported and index >= head_end:
                    link_as_it_goes()
                index += 1
            while deferred and not stopping():
                try:
                    read_deferred()
                except ImportStopped:   # (stopped while its tail's worker read)
                    break
            if until_cards:   # (those no kept rate priced; also when stopped)
                until_cards = False
                price_the_head()
            report.files.extend(parts.values())   # (those stopped part-way)
        failing = False
    except StoreUnreachable as error:
        report.files.extend(parts.values())
        report.seconds = time.monotonic() - started
        error.report = report
        raise
    finally:
        if price_later or until_cards:
            store.usage.prices_later = False
        if workers is not None:
            report.converted = workers.converted
            workers.close(stop=failing or stopping())
    report.stopped = sum(1 for i in sizes if i not in finished)
    if imported:
        link_lineage(store)
    report.seconds = time.monotonic() - started
    return report


def _workers(store, planned: list, new: set[Path], stop, run: RunProgress | None = None,
             tails: dict[int, int] | None = None):
    """Worker processes for the new files of `planned`, started (None: not worth it); `run`
    is told which files they read, and when they have. `tails`: files begun here (index ->
    bytes left) that a worker reads on in (parallel.ParallelImport)."""
    from core.importing.workers.scratch import scratch_parent, sweep_abandoned

    if new:
        from core.importing.workers.parallel import ParallelImport

        workers = ParallelImport(store, planned, new, commit_every=COMMIT_EVERY, stop=stop,
                                 read=run.read_apart if run is not None else None,
                                 reading=run.reading_apart if run is not None else None,
                                 tails=tails)
        if not workers.start():
            return None
        if run is not None:
            run.apart(workers.owned, held=workers.pressed)
        return workers
    if planned:
        # a killed import's scratch folder goes even when this import has nothing new
        sweep_abandoned(scratch_parent(getattr(store, "path", None)))
    return None


def _joined(before: FileResult | None, after: FileResult, store,
            base: dict[str, tuple[int, int, int]] | None) -> FileResult:
    """One file's result from those of the reads it was read in (`after` read on from where
    `before` stopped). A stopped read's result counts nothing (its sessions are counted at
    their end), so what the file added is told from the store: its sessions' sizes now,
    less `base`, their sizes before its first read (`_sizes_before`)."""
    if before is None:
        return after
    after.first_line = before.first_line
    after.skipped = before.skipped + after.skipped
    after.duplicates += before.duplicates
    if after.status == "stopped" or base is None:
        return after
    for session in after.sessions:
        entries, messages, branches = _sizes_of(store, session.uid)
        was = base.get(session.uid, (0, 0, 0))
        session.created = session.uid not in base
        session.entries_added = entries - was[0]
        session.messages_added = messages - was[1]
        session.branches_added = branches - was[2]
    return after


def _sizes_before(store, path: Path, fmt: str) -> dict[str, tuple[int, int, int]]:
    """uid -> (entries, messages, branches) of the sessions a file's record names."""
    row = store.imports.source(record_key(path, fmt))
    uids = row[4].get("sessions") if row is not None else None
    return {uid: _sizes_of(store, uid) for uid in uids if isinstance(uid, str)} \
        if isinstance(uids, list) else {}


def _sizes_of(store, uid: str) -> tuple[int, int, int]:
    session = store.sessions.by_uid(uid)
    if session is None:
        return 0, 0, 0
    entries, branches = store.sessions.sizes(session.id)
    return entries, session.message_count, branches


def plan_paths(store, paths: Iterable[str | os.PathLike], report: ImportReport, *,
               describe_unchanged: bool = True, scanned: Look | None = None,
               new: set[Path] | None = None) -> list[tuple[Path, str | None, object]]:
    """What an import of `paths` will do with each file: (path, format, problem), where
    problem is a FileResult for a file found unchanged (not opened), (status, reason) for
    one that cannot be imported, None for one to import. Files left alone by their stat
    get their line in `report` here. `scanned`: see `import_paths`. `new`: gets the paths
    of the files to import that have no import record at all."""
    found, stamps = _found(store, paths, report, scanned)
    return plan_found(store, found, stamps, describe_unchanged, new)


def _found(store, paths: Iterable[str | os.PathLike], report: ImportReport,
           scanned: Look | None) -> tuple[list, dict]:
    """The files under `paths` (as `files.expand_paths` finds them, or `scanned`) and the
    store's records' stamps."""
    if scanned is None:
        found = expand_paths(paths, report)
        stamps = store.imports.stamps() if found else {}
    else:
        found = scanned.found
        for name, status, reason in scanned.problems:
            report.files.append(FileResult(name, status=status, error=reason))
        stamps = scanned.stamps if scanned.stamps is not None else \
            store.imports.stamps() if found else {}
    return found, stamps


def plan_found(store, found: list, stamps: dict, describe_unchanged: bool = True,
               new: set[Path] | None = None) -> list[tuple[Path, str | None, object]]:
    """`plan_paths` of files found (files.Found), in their order."""
    planned: list[tuple[Path, str | None, object]] = []
    unchanged: list[tuple[FileResult, str]] = []
    for item in found:
        known = stamp_of(stamps, item.key)
        if known is not None:
            fmt, stamp = known
            if is_unchanged(fmt, stamp, item.st):
                # stat says nothing changed: the file is not opened
                result = FileResult(item.name, format=fmt, status="unchanged",
                                    lines=stamp[6] if type(stamp[6]) is int else 0)
                unchanged.append((result, item.key))
                planned.append((item.name, fmt, result))
            else:
                planned.append((item.path, fmt, None))
            continue
        path = item.path
        try:
            fmt = detect_format(path)
            planned.append((path, fmt, None))
            if new is not None and not any(f"{known}:{item.key}" in stamps for known in FORMATS):
                new.add(path)
        except NotALog as reason:
            planned.append((path, None, (reason.status, str(reason))))
        except OSError as error:
            planned.append((path, None, ("unreadable", f"cannot read: {error.strerror or error}")))
    if describe_unchanged and unchanged:
        sessions = store.imports.record_sessions()
        _describe_unchanged(store, [(result, sessions_of(sessions.get(f"{result.format}:{key}")))
                                    for result, key in unchanged])
    return _codex_parents_first(planned)


def link_lineage(store) -> int:
    """Attach sub-agents and forks to the sessions they came from, now that these may be in
    the store (see core.history.lineage); a failure here never fails the import. Read
    first: the store is written (a transaction of its own) only when something is to be
    linked, as it is not after most imports of appended lines."""
    from core.history.lineage import link_sessions, links_due

    try:
        with store.reading():
            if not links_due(store):
                return 0
        with store.transaction():
            return link_sessions(store)
    except store.errors:
        return 0


def _describe_unchanged(store, unchanged: list[tuple[FileResult, list[str]]]) -> None:
    """The sessions of unchanged files, for the report (one query for all)."""
    if not unchanged:
        return
    totals = store.imports.session_summaries(sorted({uid for _r, uids in unchanged for uid in uids}))
    for result, uids in unchanged:
        for uid in uids:
            found = totals.get(uid)
            if found is not None:
                name, source, entries, branches = found
                result.sessions.append(SessionResult(uid=uid, name=name, source=source,
                                                     created=False, entries_total=entries,
                                                     branches_total=branches))


def import_file(store, path: Path, fmt: str | None = None, *,
                progress: ProgressCallback | None = None, index: int = 0,
                count: int = 1, budget: float | None = None,
                enough: Callable[[int | None], bool] | None = None,
                first_commit: float | None = None) -> FileResult:
    """Import one file, or the part of it that is new since the last import.

    Goes on from the file's record (see state.py): a file that grew is read from where
    the last import stopped, an interrupted import goes on where it was cut off, and a
    torn last line is left until it is whole. Commits about every `budget` seconds so
    that other writers (agents, the app) get the store in between. Live follow calls
    this on every change of a file.

    `enough(offset)`: asked at each of the read's commits (about every `budget` seconds,
    with the offset its record now holds; None for a format read again from its start,
    which is only ever stopped whole); once True the file is read no further, its result
    (status "stopped") counts what was committed, and its record says where the next
    import goes on: a file read in parts ends up in the store as one read whole.
    `first_commit`: the read's first transaction ends after this long (then every
    `budget` seconds)."""
    path = Path(path)
    result = FileResult(str(path), format=fmt)
    if fmt is None:
        try:
            fmt = detect_format(path)
        except NotALog as reason:
            result.status, result.error = reason.status, str(reason)
            return result
        except OSError as error:
            result.status, result.error = "unreadable", f"cannot read: {error.strerror or error}"
            return result
        result.format = fmt
    size = file_size(path)
    ticker = ProgressTicker(progress, str(path), index, count, size)
    module = _module(fmt)
    resumable = getattr(module, "RESUMABLE", False)
    if enough is not None and not resumable:
        # (read again from its start after a stop: a part is only worth it when it is all)
        enough = _only_stop(enough)
    if enough is not None and fmt in DATABASES:
        ticker.callback = _stopping_at(ticker.callback, enough)   # (one transaction)
    ticker(0, force=True)
    key = record_key(path, fmt)
    try:
        if fmt in DATABASES:
            check_path(path)
            _import_database(store, path, key, fmt, module, result, ticker)
            ticker(size, force=True)
            return result
        with open_unless_held(path) as handle:
            fd = handle.fileno()
            st = os.fstat(fd)
            state = _recorded(store, key, fmt)
            if state is not None and not _sessions_exist(store, state):
                state = None             # its sessions were deleted: import it anew
            decided = plan(state, st, fd)
            if decided.action == UNCHANGED:
                result.status, result.lines = "unchanged", state.lines
                _describe_unchanged(store, [(result, state.sessions)])
                ticker(size, force=True)
                return result
            if decided.action == RESUME and not resumable:
                decided = Plan(FROM_START, why="this format is read from the start")
            if decided.action == FROM_START or state is None:
                # (the aliases stay: they name entries the store holds, whatever the file)
                state = FileState(format=fmt, aliases=state.aliases if state else None)
            state.head_len = min(HEAD_BYTES, st.st_size)
            state.head = head_hash(fd, state.head_len)

            def save(current: FileState) -> None:
                first = store.sessions.id_by_uid(current.sessions[0])
                if first is not None:
                    store.imports.record_source(
                        key=key, path=str(path), external_session_id=first, fmt=fmt,
                        size=current.size, mtime=current.mtime_ns / 1e9, state=current.to_dict())

            aliasing = ALIASES.set(state.aliases)
            with store.transaction(), _reset_after(ALIASES, aliasing):
                if resumable:
                    resume = None
                    if decided.action == RESUME:
                        resume = {**(decided.reader or {}), "incomplete": not state.complete}
                        result.first_line = decided.line
                    pacer = Pacer(store, state, fd, save,
                                  budget=COMMIT_EVERY if budget is None else budget,
                                  first=first_commit)
                    pacer.enough = enough
                    offset, line, reader = module.import_file(
                        store, path, result, ticker, start=(decided.offset, decided.line),
                        resume=resume, pacer=pacer)
                else:
                    pacer = Pacer(store, state, fd, save,
                                  budget=COMMIT_EVERY if budget is None else budget,
                                  first=first_commit)
                    pacer.enough = enough
                    pacing = PACING.set(pacer)
                    try:
                        module.import_file(store, path, result, ticker)
                    finally:
                        PACING.reset(pacing)
                    offset, line, reader = st.st_size, result.lines, None
                if result.status == "imported" and result.sessions:
                    state.offset, state.line, state.reader = offset, line, reader
                    state.tail = tail_hash(fd, offset) if offset else ""
                    state.complete = True
                    state.lines = max(result.lines, line)
                    for session in result.sessions:
                        if session.uid not in state.sessions:
                            state.sessions.append(session.uid)
                    # stat from before the read, with the size read: if the file changed
                    # meanwhile (or ends in a torn line), the next import sees that it
                    # differs and reads on from `offset`
                    state.stamp(st)
                    state.size = offset
                    save(state)
    except HeldFile as error:   # (named in a record, a link to it made since)
        result.status, result.error = error.status, str(error)
        result.sessions.clear()
    except OSError as error:
        result.status, result.error = "failed", f"cannot read: {error.strerror or error}"
        result.sessions.clear()
    except StoreUnreachable:
        raise   # (not this file's fault: the import stops, see import_paths)
    except ImportStopped as stopped:
        # at a commit (Pacer), or rolled back to the last one: its record says where the
        # next read goes on; what the result counts is what was committed
        result.status = "stopped"
        result.error = "stopped part-way: the next import goes on from its last save"
        if not stopped.args:
            result.sessions.clear()   # (a database's one transaction, rolled back whole)
        return result
    except ArborError as error:
        result.status, result.error = "failed", str(error)
        result.sessions.clear()
    except (sqlite3.Error, *store.database_errors) as error:   # (a LangGraph file is SQLite too)
        result.status, result.error = "failed", f"database error: {error}"
        result.sessions.clear()
    except MemoryError:
        result.status, result.error = "failed", "out of memory while reading this file"
        result.sessions.clear()
    except Exception as error:  # noqa: BLE001 - one bad file must not stop the others
        result.status = "failed"
        result.error = f"unexpected {type(error).__name__}: {error}"
        result.sessions.clear()
    ticker(size, force=True)
    return result


def _stopping_at(callback, enough: Callable[[int | None], bool]):
    """A progress callback that stops a read (ImportStopped) once `enough` says so."""
    def tick(update) -> None:
        if callback is not None:
            callback(update)
        if update.done < update.total and enough(update.done):
            raise ImportStopped
    return tick


def _only_stop(enough: Callable[[int | None], bool]) -> Callable[[int | None], bool]:
    def stopped(_offset: int | None) -> bool:
        return enough(None)
    return stopped


@contextlib.contextmanager
def _reset_after(variable, token):
    try:
        yield
    finally:
        variable.reset(token)


def _import_database(store, path: Path, key: str, fmt: str, module, result: FileResult,
                     ticker: ProgressTicker) -> None:
    """An agent's database (LangGraph's, opencode's): never read with plain file I/O (it may
    be live); what changed is asked through SQLite (the importer's `fingerprint`), and it is
    read whole, in one transaction."""
    st = path.stat()
    head = module.fingerprint(path)
    state = _recorded(store, key, fmt)
    if state is not None and state.complete and state.same_file(st) and state.head == head \
            and _sessions_exist(store, state):
        result.status, result.lines = "unchanged", state.lines
        _describe_unchanged(store, [(result, state.sessions)])
        return
    with store.transaction():
        module.import_file(store, path, result, ticker)
        if result.status == "imported" and result.sessions:
            state = FileState(format=fmt, head=head, complete=True, lines=result.lines,
                              sessions=[session.uid for session in result.sessions])
            state.stamp(st)
            first = store.sessions.by_uid(state.sessions[0])
            store.imports.record_source(key=key, path=str(path), external_session_id=first.id,
                                       fmt=fmt, size=st.st_size, mtime=st.st_mtime,
                                       state=state.to_dict())


def _recorded(store, key: str, fmt: str) -> FileState | None:
    row = store.imports.source(key)
    return FileState.from_dict(row[4], fmt) if row else None


def _sessions_exist(store, state: FileState) -> bool:
    return bool(state.sessions) and all(
        store.sessions.id_by_uid(uid) is not None for uid in state.sessions)


def _module(fmt: str):
    from core.agents import registry

    agent = registry.get(fmt)
    if agent is None or agent.importer is None:  # pragma: no cover
        raise ArborError(f"unknown format {fmt}")
    return agent.importer_module()


def _codex_parents_first(planned):
    """Codex forks become branches of their parent's session, so a parent file is imported
    before the files that name it."""
    # (files already found unchanged are not read again, not even their first line)
    codex = [(i, item) for i, item in enumerate(planned)
             if item[1] == CODEX and not isinstance(item[2], FileResult)]
    if len(codex) < 2:
        return planned
    from core.agents.codex.importer import read_meta

    ids: dict[str, int] = {}
    parent_of: dict[int, str] = {}
    for i, (path, _fmt, _p) in codex:
        meta = read_meta(path)
        if meta is None:
            continue
        if meta.id:
            ids.setdefault(meta.id, i)
        if meta.parent_id:
            parent_of[i] = meta.parent_id
    order: list[int] = []
    placed: set[int] = set()

    def place(i: int, depth: int = 0) -> None:
        if i in placed or depth > 64:
            return
        parent = parent_of.get(i)
        if parent is not None and parent in ids and ids[parent] != i:
            place(ids[parent], depth + 1)
        placed.add(i)
        order.append(i)

    for i, _item in codex:
        place(i)
    codex_slots = [i for i, _ in codex]
    out = list(planned)
    for slot, i in zip(codex_slots, order):
        out[slot] = planned[i]
    return out
