"""The store's first import in a process of its own (first_run.py says when a store is to
have one): `arbor` starts it before its first frame, so that the app's process only draws
and reads the store while the other core loads the importers and reads the logs.

The child is `python -c "... first_run.process.main()"` (this very `core`), on the same
store: SQLite's WAL and the import's short commits let the app read while it writes (and
PostgreSQL is a server). What passes between them:

- the app -> the child, on its stdin: one JSON line first (the store's location, kept off
  the command line since a PostgreSQL URL may hold a password, and the home folder), then
  `drawn` once the app has drawn rows (priority.py: the child yields to the app from its
  first commit until then) and `stop` to stop. Its stdin closing (the app quit, or was
  killed) stops it too, as SIGINT and SIGTERM do: always at the file's last commit, so
  nothing read is lost and the next start goes on from there (each file's import record
  says how far it got).
- the child -> the app, on its stdout: JSON lines. `{"started": [places]}` once it is known
  to import something, `{"moved": [sessions done, sessions in all, bytes done, bytes in all, seconds left or
  null]}` (a sub-agent's file is no session, and the time left is its lanes': see
  run_progress.py) as
  it reads (at most every RunProgress.interval, and when a file is done), and last
  `{"ended": ...}` with the report's words, how many files it left, or an error sentence.

`FirstRunProcess` is the app's side: it starts the child, reads its lines in a thread and
keeps what they say (a `run` whose `snapshot()` the status line reads, and the end).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from ..run_progress import TimeLeft

# Once asked to stop, the child is given this long to reach its commit before SIGTERM,
# then as long again before SIGKILL (a commit is about core.importing.COMMIT_EVERY).
STOP_GRACE = 5.0


# ====================================================================== the child
def main() -> int:
    import signal

    stop = threading.Event()
    out = _Lines(sys.stdout, stop)
    try:
        _load()   # (while `arbor` makes the store, when it started this early)
    except Exception:  # noqa: BLE001 - said as a sentence by _import, which loads them again
        pass
    line = sys.stdin.readline()
    if not line:
        return 0   # cancelled before it was told its store (`cancel`: not due after all)
    try:
        settings = json.loads(line)
    except ValueError:
        settings = None
    if not isinstance(settings, dict) or not isinstance(settings.get("store"), str):
        out.send({"ended": {"error": "the first import was started without its store"}})
        return 2
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    from .priority import Yielding

    yielding = Yielding()   # (the app's priority until the first rows are in: priority.py)
    threading.Thread(target=_listen, args=(sys.stdin, stop, yielding.drawn), daemon=True,
                     name="arbor-first-import-stdin").start()
    try:
        ended = _import(settings, stop, out, on_first_commit=yielding.committed)
    except Exception as failure:  # noqa: BLE001 - said as a sentence, never a traceback
        ended = {"error": _sentence(failure)}
    out.send({"ended": ended})
    return 0


def _load() -> None:
    """The modules the import needs, loaded before the child waits for its store: an early
    start (`FirstRunProcess.early`) has them loaded by the time `arbor` has made it."""
    import core.store.location  # noqa: F401
    from core import open_store  # noqa: F401
    from .. import driver, files  # noqa: F401


def _listen(stream, stop: threading.Event, drawn=None) -> None:
    """`stop` on a line of it, or the app gone (its end): stop at the next commit; `drawn`
    (the app has drawn rows): `drawn()`."""
    try:
        for line in stream:
            said = line.strip()
            if said == "stop":
                break
            if said == "drawn" and drawn is not None:
                drawn()
    except (OSError, ValueError):
        pass
    stop.set()


class _Lines:
    """JSON lines to the app; once it cannot hear them (a broken pipe), the import stops."""

    def __init__(self, stream, stop: threading.Event):
        self.stream = stream
        self.stop = stop
        self.lock = threading.Lock()

    def send(self, message: dict) -> None:
        with self.lock:
            try:
                self.stream.write(json.dumps(message) + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                self.stop.set()


def _import(settings: dict, stop: threading.Event, out: _Lines, on_first_commit=None) -> dict:
    from core import open_store
    from core.store.location import store_location
    from .. import first_run
    from ..files import discover
    from ..run_progress import RunProgress

    home = settings.get("home")
    store = open_store(store_location(settings["store"]), create=False)
    try:
        if stop.is_set() or not first_run.pending(store):
            return {}
        places = discover(Path(home) if home else None)
        if not places:
            return {}
        out.send({"started": [str(place) for place in places]})
        first_run.begin(store)
        if on_first_commit is not None:
            from .priority import after_first_commit

            after_first_commit(store, on_first_commit)

        def moved(run: RunProgress) -> None:
            files, count, done, total, left = run.snapshot()
            out.send({"moved": [files, count, done, total,
                                None if left is None else round(left, 1)]})

        from ..driver import import_paths

        report = import_paths(store, places, newest_first=True, stop=stop,
                              run=RunProgress(moved), describe_unchanged=False,
                              price_later=True)
        if not report.stopped:
            first_run.finish(store)
        return {"stopped": report.stopped, "summary": report.summary()}
    finally:
        store.close()


def _sentence(failure: BaseException) -> str:
    text = str(failure).strip()
    return f"{type(failure).__name__}: {text}" if text else type(failure).__name__


# ====================================================================== the app's side
class RemoteRun:
    """What the child last said of its progress, as RunProgress.snapshot() gives it: the
    time left it said, less the time since (a child that does not say it: estimated here,
    from when the lines came)."""

    def __init__(self, clock=time.monotonic):
        self._figures = (0, 0, 0, 0)
        self._left = TimeLeft(clock)
        self._clock = clock
        self._said: tuple[float | None, float] | None = None   # (seconds left, when)

    def update(self, files: int, count: int, done: int, total: int,
               *left: float | None) -> None:
        self._figures = (files, count, done, total)
        self._left.note(done, total)
        if left:
            said = left[0]
            self._said = (float(said) if isinstance(said, (int, float)) else None,
                          self._clock())

    @property
    def files_total(self) -> int:
        return self._figures[1]

    def snapshot(self) -> tuple[int, int, int, int, float | None]:
        files, count, done, total = self._figures
        if self._said is not None:
            said, when = self._said
            left = None if said is None else max(0.0, said - (self._clock() - when))
        else:
            left = self._left.seconds(done, total)
        return files, count, min(done, total), total, left


def folder_holding_core() -> Path:
    """Put first on the child's path (a checkout that is not installed still imports itself):
    not `core/` itself, whose packages (`mcp`, `store`, ...) would shadow libraries of the
    same names."""
    return Path(__file__).resolve().parents[3]


class FirstRunProcess:
    """The child, seen from the app. `listener(kind)` is called (in the reading thread)
    with "started", "moved" or "ended" as its lines come; `started`/`ended` are Events."""

    def __init__(self, location: str, home: Path | None = None, listener=None):
        self.location = location
        self.home = home
        self.listener = listener
        self.run = RemoteRun()
        self.started = threading.Event()
        self.ended = threading.Event()
        self.stopping = False
        self.places: list[Path] = []
        self.report: dict | None = None   # {"stopped": n, "summary": words} once ended so
        self.error: str | None = None
        self.process = None
        self.told = False   # its store (tell_store)
        self.said_drawn = False   # (tell_drawn)
        self.thread = threading.Thread(target=self._read, name="arbor-first-import",
                                       daemon=True)

    @classmethod
    def early(cls, location, home: Path | None = None) -> FirstRunProcess | None:
        """The first import's process, started before its store is opened, when where it
        is says it will be a new store (`locate`), else None. Told its store by `tell_store`
        once `arbor` has made it, or `cancel`led if that store is not to have one after
        all (another process made and filled it meanwhile, or it could not be made)."""
        where = cls.locate(location)
        if where is None:
            return None
        child = cls(where, home)
        child.start(tell=False)
        return child

    @staticmethod
    def locate(location) -> str | None:
        """Where a first import can start before its store is opened (the store's path as
        the child opens it): a SQLite file not made yet, since a new store is always to
        have one. None for a store that is there already (whether it is to have one is
        asked once it is open: first_import.due) or on a server."""
        if not isinstance(location, os.PathLike):
            return None   # (a core.store.location.PostgresURL)
        path = os.fspath(location)
        return None if os.path.lexists(path) else path

    def start(self, tell: bool = True) -> None:
        """The child, started now; `tell`: told its store now (else by `tell_store()`)."""
        import subprocess
        import tempfile

        root = str(folder_holding_core())
        code = (f"import sys; sys.path.insert(0, {root!r}); "
                "from core.importing.first_run.process import main; sys.exit(main())")
        self._errors = tempfile.TemporaryFile()   # (its last words, if it dies unspoken)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._errors, start_new_session=True,   # a Ctrl-C is the app's to handle
                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        except OSError as error:
            self._could_not(error)
            return
        self.thread.start()
        if tell:
            self.tell_store()

    def tell_store(self) -> None:
        """Tell the child its store (made by now) and home: it imports from here on."""
        process = self.process
        if process is None or process.poll() is not None or self.told:
            return
        self.told = True
        self._send(json.dumps({"store": self.location,
                               "home": str(self.home) if self.home is not None else None}))

    def tell_drawn(self) -> None:
        """Tell the child the app has drawn rows (once): it yields no more (priority.py)."""
        process = self.process
        if process is None or not self.told or self.said_drawn or process.poll() is not None:
            return
        self.said_drawn = True
        self._send("drawn")

    def cancel(self) -> None:
        """A child started `early` that is not to import after all: it ends without
        opening the store (its stdin closes before it was told one)."""
        self.stopping = True
        self._close_stdin()

    def _send(self, line: str) -> None:
        try:
            self.process.stdin.write(line.encode() + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):
            pass   # (it ended: its reading thread says how)

    def _close_stdin(self) -> None:
        if self.process is None:
            return
        try:
            self.process.stdin.close()
        except (OSError, ValueError):
            pass

    def _could_not(self, error: OSError) -> None:
        self.error = f"the first import could not start: {error.strerror or error}"
        self.ended.set()
        self._tell("ended")

    def _read(self) -> None:
        process = self.process
        try:
            for raw in process.stdout:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if "started" in message:
                    self.places = [Path(p) for p in message["started"]]
                    self.started.set()
                    self._tell("started")
                elif "moved" in message:
                    self.run.update(*message["moved"])
                    self._tell("moved")
                elif "ended" in message:
                    ended = message["ended"] or {}
                    self.error = ended.get("error")
                    if "stopped" in ended:
                        self.report = ended
        except (OSError, ValueError):
            pass
        process.wait()
        if self.error is None and self.report is None and process.returncode not in (0, None):
            self.error = self._last_words(process.returncode)
        self.ended.set()
        self._tell("ended")

    def _last_words(self, code: int) -> str:
        try:
            self._errors.seek(0)
            lines = [line.strip() for line in
                     self._errors.read().decode("utf-8", "replace").splitlines() if line.strip()]
        except OSError:
            lines = []
        why = lines[-1] if lines else f"exit status {code}"
        return f"the import's process ended early ({why[:200]})"

    def _tell(self, kind: str) -> None:
        if self.listener is not None:
            self.listener(kind)

    def ask_to_stop(self) -> None:
        """Stop at the file's last commit (without waiting)."""
        self.stopping = True
        process = self.process
        if process is None or process.poll() is not None:
            return
        if not self.told:
            self.cancel()   # (not told its store yet: "stop" would be taken for it)
            return
        self._send("stop")

    def stop(self, timeout: float = STOP_GRACE) -> None:
        """Stop at the file's last commit and wait for it (SIGTERM, then SIGKILL, if it
        does not end within `timeout` s each)."""
        self.ask_to_stop()
        process = self.process
        if process is None:
            return
        self._close_stdin()
        for signal_it in (process.terminate, process.kill):
            try:
                process.wait(timeout)
                break
            except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired
                signal_it()
        else:
            process.wait()
        if self.thread.is_alive():
            self.thread.join(timeout)

    @property
    def running(self) -> bool:
        return self.started.is_set() and not self.ended.is_set()


def store_location_text(store) -> str:
    """The store's location as the child opens it (`store_location` reads it back)."""
    path = store.path
    url = getattr(path, "url", None)
    return url if isinstance(url, str) else os.fspath(path)


def launch(store, home: Path | None = None) -> FirstRunProcess:
    """The first import's process, started now (for a store `first_import.pending` says is
    to have one)."""
    child = FirstRunProcess(store_location_text(store), home)
    child.start()
    return child
