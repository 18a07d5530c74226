"""Following running agents: the store kept in step with the logs it imported from.

What is followed: the agents' usual folders (`importers.discover()`, recursively) and the
folder of every file the store imported (recursively when it is a small tree such as a
Claude Code project with its sessions' `subagents/` folders, else that folder alone). A
log file that changes there (a line appended, a file created) is imported at once through
the importers' own incremental import (`import_paths`): it reads a file from the offset
its import record holds, leaves a torn last line for the next time, reads a truncated or
rewritten file again from the start, and never writes an entry twice. That is also why a
follower may be killed at any moment and started again: the record only moves forward in
the same transaction as the entries it describes.

When following starts, the files that have an import record are checked once (one
`stat` each, nothing opened unless it changed) and what they gained while nobody was
following is imported. Files never imported are left alone until they change.

The watcher is watchfiles (the Rust `notify` crate: inotify on Linux, FSEvents on macOS,
ReadDirectoryChangesW on Windows), imported when following starts, never before. Where
the kernel's notifications cannot be had (inotify watches used up, a file system without
them, watchfiles missing) a `StatPoller` looks instead: every half second one `stat` per
log file, compared by size, mtime in nanoseconds and inode (watchfiles' own polling
compares whole-second mtimes and misses a second line written in the same second).
`ARBOR_FOLLOW_POLL=1` asks for polling (network file systems: inotify does not see
another machine's writes). Nothing is read while nothing changes.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from core.agents import registry as _registry
from core.model.errors import ArborError, StoreUnreachable
from .files import DATABASE_SUFFIXES, LOG_SUFFIX

# A folder the store imported from (not an agent's own folder) is watched with its
# sub-folders when it has at most this many; a bigger tree (a home folder) only itself.
SMALL_TREE_DIRS = 64
DEBOUNCE_MS = 150         # at most this long between a change and its import
STEP_MS = 40              # ... or this long after the last change of a burst
POLL_DELAY_MS = 500       # polling: the interval between two stat passes
ROOTS_EVERY = 5.0         # seconds between checks for folders to follow newly imported
AWAIT_EVERY = 0.5         # seconds between looks for an agent's folder that did not exist yet
RETRY_FIRST = 1.0         # seconds before a failed import pass is tried again ...
RETRY_MOST = 30.0         # ... doubling up to this while it keeps failing
RETRY_MOST_UNREACHABLE = 5.0   # ... or this while the store's server does not answer


@dataclass(frozen=True)
class Root:
    path: Path
    recursive: bool


@dataclass
class FollowStats:
    """What the follower did so far (for `arbor watch`, the status line and tests)."""

    mode: str = "starting"          # "notify" | "polling" | "stopped"
    roots: int = 0
    imports: int = 0                # import passes that wrote something
    entries: int = 0
    sessions: set[str] = field(default_factory=set)
    last_error: str | None = None
    failures: int = 0               # import passes that failed (each is tried again)
    # while the store's server does not answer: the sentence that says so (None when it
    # answers); `outages` counts the times it stopped answering
    unreachable: str | None = None
    outages: int = 0


def poll_wanted() -> bool:
    value = os.environ.get("ARBOR_FOLLOW_POLL", "")
    return value.lower() not in ("", "0", "false", "no")


class Follower:
    """Watches the followed folders and imports what changes; see the module doc.

    `run(stop)` blocks until `stop` is set (run it in a thread); `on_import(report)` is
    called (in that thread) after each import that wrote something."""

    def __init__(self, store, *, places: Iterable[str | os.PathLike] = (),
                 discover: bool = True, home: Path | None = None,
                 on_import: Callable[[object], None] | None = None,
                 poll: bool | None = None, debounce_ms: int = DEBOUNCE_MS,
                 step_ms: int = STEP_MS, poll_delay_ms: int = POLL_DELAY_MS):
        self.store = store
        self.places = [Path(p).expanduser() for p in places]
        self.discover = discover
        self.home = home
        self.on_import = on_import
        self.poll = poll_wanted() if poll is None else poll
        self.debounce_ms, self.step_ms, self.poll_delay_ms = debounce_ms, step_ms, poll_delay_ms
        self.stats = FollowStats()
        self._own = _store_files(store)
        self._catch_up_now = threading.Event()
        # files of a pass that failed (a busy store, a full disk): tried again at _retry_at,
        # since the agent may write nothing more to them to wake the watcher
        self._retry_files: set[Path] = set()
        self._retry_at: float | None = None
        self._retry_delay = RETRY_FIRST
        # the agents' folders that did not exist when following began (an agent installed
        # while the app is open): looked for every AWAIT_EVERY seconds; see `_arrived`
        self._awaited: list[Path] | None = None
        self._arrivals: list[Path] = []
        self._began = time.time()

    # ------------------------------------------------------------------ what
    def followed_files(self) -> dict[Path, str]:
        """The files the store imported from, with their format."""
        return {Path(path): fmt for path, fmt in self.store.imports.source_paths() if path}

    def _roots_or(self, known: list[Root]) -> list[Root]:
        """`roots()`, or `known` while the store cannot say (its server does not answer:
        the folders followed so far go on being followed, and what changes there is
        imported once it answers)."""
        try:
            return self.roots()
        except ArborError as error:
            self._failed([], str(error), error)
            return known

    def roots(self) -> list[Root]:
        """The folders to watch: the agents' own (recursively) and those imported from."""
        from . import discover as agent_places

        deep: list[Path] = []
        if self.discover:
            deep.extend(agent_places(self.home) if self.home is not None else agent_places())
        deep.extend(p for p in self.places if p.is_dir())
        deep = _outermost(deep)
        shallow: list[Path] = []
        for path in sorted({f.parent for f in self.followed_files()}):
            if any(_inside(path, d) for d in deep) or not path.is_dir():
                continue
            if _small_tree(path):
                deep.append(path)
            else:
                shallow.append(path)
        deep = _outermost(deep)
        shallow = [p for p in shallow if not any(_inside(p, d) for d in deep)]
        return [Root(p, True) for p in deep] + [Root(p, False) for p in shallow]

    def relevant(self, paths: Iterable[str | os.PathLike]) -> list[Path]:
        """Of changed paths, the log files to import: JSONL logs, and a LangGraph database
        the store imported whose file or -wal changed; never the store itself."""
        known_db: set[Path] | None = None
        out: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw)
            name = path.name
            if path in self._own:
                continue
            if not name.endswith(LOG_SUFFIX) and os.path.isdir(path):
                # a new folder (a project's): the watcher may have seen it only after the
                # agent wrote its first file there
                out.update(dict.fromkeys(self.new_logs(path)))
                continue
            if name.endswith(LOG_SUFFIX) or _registry.follows(name):
                if _agents_own(path):
                    out[path] = None
                continue
            base = path
            if name.endswith("-wal"):
                base = path.with_name(name[:-4])
            if base.name.endswith(DATABASE_SUFFIXES) and base not in self._own:
                if known_db is None:
                    known_db = {p for p, fmt in self.followed_files().items()
                                if fmt in _databases()}
                if base in known_db:
                    out[base] = None
        return list(out)

    # ----------------------------------------------------------------- import
    def catch_up(self):
        """Import what the files with an import record gained while nobody followed them.
        Decided from one `stat` per file against its record (the importers' own `plan`):
        a file that did not change is not opened, and the importer is not even called."""
        return self._import(self.changed_files())

    def changed_files(self) -> list[Path]:
        """The followed files whose stat differs from their import record (or whose record
        is incomplete): what a catch-up imports."""
        from .state import UNCHANGED, FileState, plan

        out: list[Path] = []
        for key, text in self.store.imports.records().items():
            fmt, _sep, name = key.partition(":")
            if not name:
                continue
            try:
                st = os.stat(name)
            except OSError:
                continue                  # gone: nothing to import
            state = FileState.from_json(text, fmt)
            if state is None or plan(state, st).action != UNCHANGED:
                path = Path(name)
                if path not in self._own:
                    out.append(path)
        return out

    def new_logs(self, folder: Path) -> list[Path]:
        """The agents' logs in a folder (and below) written since following began: what a
        watcher would have seen, had it watched the folder from its start. Older files
        are left alone, as everywhere (see the module doc)."""
        from .files import scan

        return [found.path for found in scan([folder], lambda *_problem: None)
                if found.st.st_mtime >= self._began - 1 and found.path not in self._own]

    def _arrived(self) -> list[Path]:
        """The agents' folders that did not exist when following began and do now. What
        is in them was written since, while nobody watched it: it is imported once the
        watchers include them (`_watch`), so that nothing written in between is missed."""
        if not self.discover:
            return []
        if self._awaited is None:
            from .files import agent_places

            places = agent_places(self.home) if self.home is not None else agent_places()
            self._awaited = [place for place, _rule in places if not place.is_dir()]
            return []
        arrived = [place for place in self._awaited if place.is_dir()]
        if arrived:
            self._awaited = [place for place in self._awaited if place not in arrived]
            self._arrivals.extend(arrived)
        return arrived

    def request_catch_up(self) -> None:
        """Check every followed file soon, in the following thread (for example after an
        agent ran in the foreground: its appends were seen as they came, this is a check)."""
        self._catch_up_now.set()

    def handle(self, changed: Iterable[str | os.PathLike]):
        files = self.relevant(changed)
        return self._import(files) if files else None

    def _import(self, files: list[Path]):
        from . import import_paths

        existing = [p for p in files if p.exists()]
        if not existing:
            return None
        if self.stats.unreachable is not None and not self.retry_due():
            self._retry_files.update(existing)   # (imported when the next try finds it back)
            return None
        try:
            report = import_paths(self.store, existing)
        except ArborError as error:
            self._failed(existing, str(error), error)
            return None
        except Exception as error:  # noqa: BLE001 - a follower must outlive one bad pass
            self._failed(existing, f"{type(error).__name__}: {error}")
            return None
        self._answered()
        self._retry_files.difference_update(existing)
        # a file the pass could not import (its own transaction found the store busy, the
        # file could not be read): tried again like a pass that failed whole
        failed = [item for item in report.files if item.status == "failed"]
        if failed:
            self._failed([Path(item.path) for item in failed], failed[0].error or "failed")
        elif not self._retry_files:
            self._retry_at, self._retry_delay = None, RETRY_FIRST
        if report.entries_added or report.sessions_added or report.branches_added:
            self.stats.imports += 1
            self.stats.entries += report.entries_added
            for item in report.files:
                self.stats.sessions.update(s.uid for s in item.sessions
                                           if s.entries_added or s.created)
            if self.on_import is not None:
                self.on_import(report)
        return report

    def _failed(self, files: list[Path], problem: str, error: BaseException | None = None
                ) -> None:
        self.stats.last_error = problem
        self.stats.failures += 1
        most = RETRY_MOST
        if isinstance(error, StoreUnreachable):
            if self.stats.unreachable is None:
                self.stats.outages += 1
                self._retry_delay = RETRY_FIRST
            self.stats.unreachable = problem
            most = RETRY_MOST_UNREACHABLE
        self._retry_files.update(files)
        if self._retry_at is None or files:
            self._retry_at = time.monotonic() + self._retry_delay
        self._retry_delay = min(self._retry_delay * 2, most)

    def _answered(self) -> None:
        """The store answered: an outage (if there was one) is over."""
        self.stats.unreachable = None

    def retry_due(self) -> bool:
        return self._retry_at is not None and time.monotonic() >= self._retry_at

    def retry(self):
        """Import again what a failed pass left, and whatever else changed meanwhile."""
        self._retry_files = {p for p in self._retry_files if p.exists()}
        try:
            changed = self.changed_files()
        except ArborError as error:
            self._retry_at = None
            self._failed([], str(error), error)
            return None
        self._retry_at = None
        self._answered()
        files = list(dict.fromkeys([*self._retry_files, *changed]))
        if not files:
            self._retry_delay = RETRY_FIRST
        return self._import(files)

    # -------------------------------------------------------------------- run
    def run(self, stop: threading.Event) -> None:
        """Catch up, then import every change until `stop` is set. A store that cannot be
        reached (its server gone) stops nothing: the folders known are followed on, and
        what changed is imported once it answers again (tried every few seconds)."""
        try:
            self._arrived()               # (notes which agents' folders do not exist yet)
            self._catch_up_or_retry()
            roots: list[Root] = []
            while not stop.is_set():
                roots = self._roots_or(roots)
                self.stats.roots = len(roots)
                if not roots:
                    self.stats.mode = "idle"
                    waited = 0.0
                    wait = AWAIT_EVERY if self._retry_at is None else min(AWAIT_EVERY, RETRY_FIRST)
                    while waited < ROOTS_EVERY and not stop.wait(wait):
                        waited += wait
                        if self.retry_due():
                            self.retry()
                        if self._arrived():
                            break
                    continue
                self._watch(roots, stop)
        finally:
            self.stats.mode = "stopped"

    def _catch_up_or_retry(self) -> None:
        try:
            self.catch_up()
        except ArborError as error:   # (changed_files: the store did not answer)
            self._failed([], str(error), error)

    def _watch(self, roots: list[Root], stop: threading.Event) -> None:
        """Watch these roots until `stop`, or until the roots to follow change."""
        changes: queue.Queue = queue.Queue()
        done = threading.Event()
        watchers = self._start(roots, changes, done)
        if not watchers:
            stop.wait(ROOTS_EVERY)
            return
        # What changed between the last check and the moment the watchers saw the files
        # (a polling watcher takes its first look in its own time): checked once more.
        if self.stats.mode == "polling":
            stop.wait(self.poll_delay_ms / 1000 * 2)
        if self._arrivals:
            arrivals, self._arrivals = self._arrivals, []
            self._import([log for folder in arrivals for log in self.new_logs(folder)])
        self._catch_up_or_retry()
        next_roots_check = time.monotonic() + ROOTS_EVERY
        next_await_check = time.monotonic() + AWAIT_EVERY
        try:
            while not stop.is_set():
                try:
                    batch = changes.get(timeout=0.25)
                except queue.Empty:
                    batch = None
                if isinstance(batch, BaseException):
                    self.stats.last_error = f"watcher: {batch}"
                    return
                if batch:
                    more = set(batch)
                    while True:           # whatever else is queued, in the same pass
                        try:
                            extra = changes.get_nowait()
                        except queue.Empty:
                            break
                        if isinstance(extra, BaseException):
                            continue
                        more |= set(extra)
                    report = self.handle(more)
                    if report is not None and report.sessions_added:
                        next_roots_check = 0.0        # a new file: perhaps a new folder
                if self._catch_up_now.is_set():
                    self._catch_up_now.clear()
                    self._catch_up_or_retry()
                if self.retry_due():
                    self.retry()
                if time.monotonic() >= next_await_check:
                    next_await_check = time.monotonic() + AWAIT_EVERY
                    if self._arrived():
                        return                 # watch it too, from now on
                if time.monotonic() >= next_roots_check and self.stats.unreachable is None:
                    next_roots_check = time.monotonic() + ROOTS_EVERY
                    if self._roots_or(roots) != roots:
                        return
        finally:
            done.set()
            for thread in watchers:
                thread.join(timeout=2)

    def _start(self, roots: list[Root], changes: queue.Queue,
               done: threading.Event) -> list[threading.Thread]:
        """One watching thread per kind of root (recursive or not); each puts batches of
        changed paths on `changes`. Falls back to polling where notifications fail."""
        threads = []
        for recursive in (True, False):
            paths = [str(r.path) for r in roots if r.recursive == recursive]
            if not paths:
                continue
            notifier = self._notifier(paths, recursive)
            if notifier is None:
                continue
            thread = threading.Thread(target=self._pump, args=(notifier, changes, done),
                                      name=f"arbor-follow-{'deep' if recursive else 'flat'}",
                                      daemon=True)
            thread.start()
            threads.append(thread)
        return threads

    def _notifier(self, paths: list[str], recursive: bool):
        existing = [p for p in paths if os.path.exists(p)]
        if not existing:
            return None
        if not self.poll:
            try:
                from watchfiles._rust_notify import RustNotify

                notifier = RustNotify(existing, False, False, self.poll_delay_ms, recursive, True)
            except ImportError as error:
                self.stats.last_error = f"watchfiles cannot be loaded ({error}); polling"
            except (OSError, RuntimeError) as error:
                # out of inotify watches, or a file system without notifications
                self.stats.last_error = f"file system notifications unavailable ({error}); polling"
            else:
                self.stats.mode = "notify"
                return notifier
        self.stats.mode = "polling"
        return StatPoller([Path(p) for p in existing], recursive, self.poll_delay_ms,
                          self._is_log)

    def _is_log(self, name: str) -> bool:
        return name.endswith(LOG_SUFFIX) or name.endswith(DATABASE_SUFFIXES) or \
            name.endswith(tuple(s + "-wal" for s in DATABASE_SUFFIXES)) or _registry.follows(name)

    def _pump(self, notifier, changes: queue.Queue, done: threading.Event) -> None:
        try:
            with notifier:
                while not done.is_set():
                    result = notifier.watch(self.debounce_ms, self.step_ms, 500, done)
                    if result == "stop":
                        return
                    if isinstance(result, set) and result:
                        # (event kind 3 is "deleted": nothing to import)
                        paths = [path for kind, path in result if kind != 3]
                        if paths:
                            changes.put(paths)
        except Exception as error:  # noqa: BLE001 - told to the follower, which restarts
            changes.put(error)


class StatPoller:
    """Polling where notifications cannot be had: every `delay_ms`, one `stat` per log
    file under the roots (the roots' folders listed, nothing read), compared by size,
    mtime in nanoseconds and inode. Same interface as watchfiles' RustNotify."""

    def __init__(self, roots: list[Path], recursive: bool, delay_ms: int,
                 wanted: Callable[[str], bool]):
        self.roots, self.recursive, self.delay = roots, recursive, delay_ms / 1000
        self.wanted = wanted
        self.seen = self.snapshot()

    def snapshot(self) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        for root in self.roots:
            folders = os.walk(root) if self.recursive else [(str(root), (), _names(root))]
            for folder, _dirs, names in folders:
                for name in names:
                    if not self.wanted(name):
                        continue
                    path = os.path.join(folder, name)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    out[path] = (st.st_size, st.st_mtime_ns, st.st_ino)
        return out

    def watch(self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event):
        waited = 0.0
        while True:
            if stop_event is not None and stop_event.is_set():
                return "stop"
            now = self.snapshot()
            changed = {(2 if path in self.seen else 1, path) for path, sig in now.items()
                       if self.seen.get(path) != sig}
            self.seen = now
            if changed:
                return changed
            if timeout_ms and waited * 1000 >= timeout_ms:
                return "timeout"
            if stop_event is not None:
                stop_event.wait(self.delay)
            else:
                time.sleep(self.delay)
            waited += self.delay

    def __enter__(self) -> "StatPoller":
        return self

    def __exit__(self, *exc) -> None:
        return None


def _names(folder: Path) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(folder) if entry.is_file()]
    except OSError:
        return []


# ---------------------------------------------------------------------- helpers
def _store_files(store) -> set[Path]:
    """The store's own files, never to be imported (none for a PostgreSQL store)."""
    path = getattr(store, "path", None)
    if not isinstance(path, (str, os.PathLike)) or not path:
        return set()
    base = Path(path)
    names = [base] + [base.with_name(base.name + suffix) for suffix in ("-wal", "-shm", "-journal")]
    out = set(names)
    try:
        resolved = base.resolve()
        out |= {resolved} | {resolved.with_name(resolved.name + s) for s in ("-wal", "-shm", "-journal")}
    except OSError:
        pass
    return out


def _databases() -> frozenset[str]:
    """The formats whose logs are databases (LangGraph's, opencode's)."""
    from .unchanged import DATABASES

    return DATABASES


def _agents_own(path: Path) -> bool:
    """Inside an agent's folder, only that agent's own files (a Codex rollout, not another
    tool's JSONL); anywhere else any log."""
    try:
        from .files import agent_rule
    except ImportError:
        return True
    rule = agent_rule(path.parent)
    return rule is None or bool(rule(path.name))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _outermost(folders: list[Path]) -> list[Path]:
    out: list[Path] = []
    for folder in sorted(set(folders), key=lambda p: len(p.parts)):
        if not any(_inside(folder, kept) for kept in out):
            out.append(folder)
    return out


def _small_tree(folder: Path, limit: int = SMALL_TREE_DIRS) -> bool:
    """Whether a folder has at most `limit` sub-folders (counted without following links)."""
    seen = 0
    try:
        for _root, dirs, _files in os.walk(folder):
            seen += len(dirs)
            if seen > limit:
                return False
    except OSError:
        return False
    return True
