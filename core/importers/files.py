"""Which files an import looks at, and which it leaves alone without reading them.

SQLite's locks are POSIX locks: closing any descriptor of a database file drops every lock
this process holds on it, and then another process may delete a WAL that is still in use.
So a file that may be a SQLite database (an arbor store, its `-wal`, `-shm` or `-journal`)
is never opened here with plain file I/O:

* everything is first looked at with `stat` only: what is not a regular file (a named
  pipe, which would block the reader forever, a socket, a device, a symbolic link that
  loops or points nowhere) gets one line in the report and is not opened;
* `-wal`, `-shm` and `-journal` files are SQLite's own and are never read (named directly,
  they get a line in the report);
* a file whose name ends in `.jsonl` is a log, read as one; any other file is asked about
  through SQLite itself (`core.sqlite_probe`), and read as a log only when SQLite says
  it is not a database;
* in the agents' own folders (`~/.claude/projects`, `~/.codex/sessions`,
  `~/.pi/agent/sessions`, or where `CLAUDE_CONFIG_DIR`, `CODEX_HOME` and
  `PI_CODING_AGENT_DIR` put them) only what the agent writes there is considered, so other
  tools' files kept beside them (claude-code-log's `claude-code-log-cache.db`) are left alone.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .base import FileResult, ImportReport, path_key

LOG_SUFFIX = ".jsonl"
DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
FOLDER_SUFFIXES = (LOG_SUFFIX, *DATABASE_SUFFIXES)
SQLITE_SIDE_FILES = {"-wal": "write-ahead log", "-shm": "shared-memory index",
                     "-journal": "rollback journal"}


def _any_jsonl(name: str) -> bool:
    return name.endswith(LOG_SUFFIX)


def _codex_rollout(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(LOG_SUFFIX)


# The folders agents write their logs to: the environment variable that moves the agent's
# folder, its default place in the home folder, the logs' folder inside it, and which of
# the files there are the agent's own.
AGENT_FOLDERS: tuple[tuple[str, tuple[str, ...], str, Callable[[str], bool]], ...] = (
    ("CLAUDE_CONFIG_DIR", (".claude",), "projects", _any_jsonl),
    ("CODEX_HOME", (".codex",), "sessions", _codex_rollout),
    ("PI_CODING_AGENT_DIR", (".pi", "agent"), "sessions", _any_jsonl),
)


def agent_places(home: Path | None = None, env: Mapping[str, str] | None = None
                 ) -> list[tuple[Path, Callable[[str], bool]]]:
    """Where each agent writes its logs (the folder its environment variable names, else its
    default in the home folder), with its rule for file names."""
    env = os.environ if env is None else env
    home = Path(home) if home is not None else Path.home()
    out = []
    for variable, default, logs, rule in AGENT_FOLDERS:
        value = (env.get(variable) or "").strip()
        base = Path(value).expanduser() if value else home.joinpath(*default)
        out.append((base / logs, rule))
    return out


def discover(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The places agents write their logs (see `agent_places`), those that exist."""
    return [place for place, _rule in agent_places(home, env) if place.is_dir()]


def agent_rule(folder: Path, places: list[tuple[Path, Callable[[str], bool]]] | None = None
               ) -> Callable[[str], bool] | None:
    """For a folder that is (or lies inside) an agent's log folder, which file names are
    the agent's own; None for any other folder. An agent's folder is known by its default
    name (`.claude/projects`, ... anywhere in the path) or as one of `places` (by default
    `agent_places()`, which honours the agents' environment variables)."""
    parts = folder.parts
    for _variable, default, logs, rule in AGENT_FOLDERS:
        tail = (*default, logs)
        n = len(tail)
        for start in range(len(parts) - n + 1):
            if parts[start:start + n] == tail:
                return rule
    for place, rule in agent_places() if places is None else places:
        if folder == place or place in folder.parents:
            return rule
    return None


def side_file_of(name: str) -> str | None:
    """What SQLite file this is (a -wal, -shm or -journal), by name; None for others."""
    for suffix, what in SQLITE_SIDE_FILES.items():
        if name.endswith(suffix):
            return f"SQLite's {what} ({suffix}) of {name[:-len(suffix)] or 'a database'}"
    return None


def not_a_file(path: Path) -> tuple[str, str] | None:
    """(status, reason) for a path that must not be opened, judged by `stat` alone; None
    for a regular file (symbolic links are followed)."""
    try:
        info = os.stat(path)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "unreadable", "a symbolic link that loops (it points back to itself)"
        if error.errno == errno.ENOENT and os.path.islink(path):
            return "unreadable", f"a symbolic link to nothing ({os.readlink(path)})"
        if error.errno == errno.ENOENT:
            return "failed", "no such file or folder"
        return "unreadable", f"cannot read: {error.strerror or error}"
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "skipped", "a named pipe (FIFO), not a file: not read (it would wait for a writer)"
    if stat.S_ISSOCK(mode):
        return "skipped", "a socket, not a file: not read"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "skipped", "a device, not a file: not read"
    if stat.S_ISDIR(mode):
        return "skipped", "a folder"
    return "skipped", "not a regular file: not read"


def expand_paths(paths: Iterable[str | os.PathLike], report: ImportReport) -> list[Path]:
    """Files given directly, and log files found (recursively) in folders given. What is
    left alone gets its line in `report` (see the module doc)."""
    out: list[Path] = []
    seen: set[str] = set()
    places = agent_places()

    def add(path: Path) -> None:
        problem = not_a_file(path)
        if problem is None:
            side = side_file_of(path.name)
            if side is not None:
                problem = "skipped", f"{side}: never read by arbor"
        key = path_key(path)
        if key in seen:
            return
        seen.add(key)
        if problem is not None:
            report.files.append(FileResult(str(path), status=problem[0], error=problem[1]))
        else:
            out.append(path)

    for given in paths:
        path = Path(given).expanduser()
        if os.path.isdir(path):
            found: list[Path] = []

            def onerror(error: OSError, folder: Path = path) -> None:
                report.files.append(FileResult(str(error.filename or folder), status="unreadable",
                                               error=f"cannot read this folder: {error.strerror or error}"))

            for root, dirs, files in os.walk(path, onerror=onerror):
                dirs.sort()
                rule = agent_rule(Path(root), places)
                for name in sorted(files):
                    if rule(name) if rule is not None else name.endswith(FOLDER_SUFFIXES):
                        found.append(Path(root) / name)
            for item in found:
                add(item)
        elif os.path.lexists(path):
            add(path)
        else:
            report.files.append(FileResult(str(path), status="failed", error="no such file or folder"))
    return out
