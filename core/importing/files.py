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
* nor is any file, whatever its name, that is (by device and inode: a symbolic or hard
  link) a store this process has open or one of its `-wal`, `-shm` and `-journal`
  (`core.store.held_files`): closing it would drop the store's locks;
* a file whose name ends in `.jsonl` is a log, read as one; any other file is asked about
  through SQLite itself (`core.store.sqlite_probe`), and read as a log only when SQLite says
  it is not a database;
* in the agents' own folders (`~/.claude/projects`, `~/.codex/sessions`,
  `~/.pi/agent/sessions`, or where `CLAUDE_CONFIG_DIR`, `CODEX_HOME` and
  `PI_CODING_AGENT_DIR` put them) only what the agent writes there is considered, so other
  tools' files kept beside them (claude-code-log's `claude-code-log-cache.db`) are left alone.
"""

from __future__ import annotations

import errno
import functools
import operator
import os
import stat
from pathlib import Path

from core.agents import registry as _registry

TYPE_CHECKING = False  # `typing` costs 5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Callable, Iterable, Mapping

    from .base import ImportReport

LOG_SUFFIX = ".jsonl"
DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
FOLDER_SUFFIXES = (LOG_SUFFIX, *DATABASE_SUFFIXES)
SQLITE_SIDE_FILES = {"-wal": "write-ahead log", "-shm": "shared-memory index",
                     "-journal": "rollback journal"}


# The folders agents write their logs to: the environment variable that moves the agent's
# folder, its default place in the home folder, the logs' folder inside it, and which of
# the files there are the agent's own (each agent's `Place`s: core/agents/registry.py).
AGENT_FOLDERS: "tuple[tuple[str, tuple[str, ...], str, Callable[[str], bool]], ...]" = \
    _registry.place_table()


def agent_places(home: Path | None = None, env: Mapping[str, str] | None = None
                 ) -> list[tuple[Path, Callable[[str], bool]]]:
    """Where each agent writes its logs (the folder its environment variable names, else its
    default in the home folder), with its rule for file names."""
    return _registry.places(home, env)


def discover(home: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The places agents write their logs (see `agent_places`), those that exist."""
    return [place for place, _rule in agent_places(home, env) if place.is_dir()]


# Each agent's logs folder by its default name (`.claude/projects`, ...), with its rule.
_TAILS = tuple((((*default, logs) if logs else default), rule)
               for _variable, default, logs, rule in AGENT_FOLDERS)


def agent_rule(folder: Path | str, places: list[tuple[Path, Callable[[str], bool]]] | None = None
               ) -> Callable[[str], bool] | None:
    """For a folder that is (or lies inside) an agent's log folder, which file names are
    the agent's own; None for any other folder. An agent's folder is known by its default
    name (`.claude/projects`, ... anywhere in the path) or as one of `places` (by default
    `agent_places()`, which honours the agents' environment variables)."""
    text = str(Path(folder))
    index = _tail_index(text)
    if index is not None:
        return _TAILS[index][1]
    places = agent_places() if places is None else places
    index = _place_index(text, places)
    return None if index is None else places[index][1]


def _tail_index(text: str) -> int | None:
    """The index in `_TAILS` of the first default name found anywhere in the path."""
    if not any(tail[0] in text for tail, _rule in _TAILS):
        return None       # the common case, without splitting the path
    parts = tuple(part for part in text.split(os.sep) if part)
    for index, (tail, _rule) in enumerate(_TAILS):
        n = len(tail)
        for start in range(len(parts) - n + 1):
            if parts[start:start + n] == tail:
                return index
    return None


def _place_index(text: str, places: list[tuple[Path, Callable[[str], bool]]]) -> int | None:
    """The index of the first of `places` that is the folder or holds it."""
    for index, (place, _rule) in enumerate(places):
        shown = str(place)
        if text == shown or text.startswith(os.path.join(shown, "")):
            return index
    return None


def side_file_of(name: str) -> str | None:
    """What SQLite file this is (a -wal, -shm or -journal), by name; None for others."""
    for suffix, what in SQLITE_SIDE_FILES.items():
        if name.endswith(suffix):
            return f"SQLite's {what} ({suffix}) of {name[:-len(suffix)] or 'a database'}"
    return None


def not_a_file(path: Path | str, st: os.stat_result | None = None) -> tuple[str, str] | None:
    """(status, reason) for a path that must not be opened, judged by `stat` alone (`st`,
    when the caller has it); None for a regular file (symbolic links are followed)."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError as error:
            return _stat_problem(path, error)
    mode = st.st_mode
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


def _stat_problem(path: Path | str, error: OSError) -> tuple[str, str]:
    if error.errno == errno.ELOOP:
        return "unreadable", "a symbolic link that loops (it points back to itself)"
    if error.errno == errno.ENOENT and os.path.islink(path):
        return "unreadable", f"a symbolic link to nothing ({os.readlink(path)})"
    if error.errno == errno.ENOENT:
        return "failed", "no such file or folder"
    return "unreadable", f"cannot read: {error.strerror or error}"


class Found:
    """A file to look at: its path as given or found, what `stat` said of it (one call,
    reused to decide whether it changed), and the key it is known by in the store (its
    resolved path, `path_key`)."""

    __slots__ = ("name", "st", "key", "_path")

    def __init__(self, name: str, st: os.stat_result, key: str, path: Path | None = None):
        self.name, self.st, self.key, self._path = name, st, key, path

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.name)
        return self._path

    def __fspath__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Found({self.name!r})"


def expand_paths(paths: Iterable[str | os.PathLike], report: ImportReport) -> list[Found]:
    """Files given directly, and log files found (recursively) in folders given, each
    looked at with one `stat`. What is left alone gets its line in `report` (see the
    module doc)."""
    def problem(name: str, status: str, reason: str) -> None:
        from .base import FileResult

        report.files.append(FileResult(name, status=status, error=reason))

    return scan(paths, problem)


def scan(paths: Iterable[str | os.PathLike],
         problem: Callable[[str, str, str], None]) -> list[Found]:
    """`expand_paths`, telling `problem(path, status, reason)` of each path left alone."""
    from core.store.held_files import held_files, left_alone

    out: list[Found] = []
    seen: set[str] = set()
    places = agent_places()
    held = held_files()   # {(device, inode): (suffix, what)}

    def add(name: str, st: os.stat_result | None, key: str, error: OSError | None = None) -> None:
        if key in seen:
            return
        seen.add(key)
        found = _stat_problem(name, error) if error is not None else not_a_file(name, st)
        if found is None:
            side = side_file_of(os.path.basename(name))
            if side is not None:
                found = "skipped", f"{side}: never read by arbor"
            elif held and (st.st_dev, st.st_ino) in held:
                suffix, what = held[st.st_dev, st.st_ino]
                found = "skipped", left_alone(what, store_itself=not suffix)
        if found is not None:
            problem(name, *found)
        else:
            out.append(Found(name, st, key))

    for given in paths:
        path = Path(given).expanduser()
        if os.path.isdir(path):
            def onerror(error: OSError, folder: Path = path) -> None:
                problem(str(error.filename or folder), "unreadable",
                        f"cannot read this folder: {error.strerror or error}")

            for real, entries in _walk(str(path), onerror, places):
                for entry in entries:
                    name = entry.path
                    try:
                        st = entry.stat()
                    except OSError as error:
                        add(name, None, path_key(name), error)
                        continue
                    if entry.is_symlink() or real is None:
                        add(name, st, path_key(name))
                    elif stat.S_ISREG(st.st_mode) and not entry.name.endswith(_SIDE_SUFFIXES) \
                            and (st.st_dev, st.st_ino) not in held:
                        # the common case, without the calls above
                        key = real + entry.name
                        if key not in seen:
                            seen.add(key)
                            out.append(Found(name, st, key))
                    else:
                        add(name, st, real + entry.name)
        elif os.path.lexists(path):
            name = str(path)
            try:
                st = os.stat(name)
            except OSError as error:
                add(name, None, path_key(path), error)
                continue
            add(name, st, path_key(path))
        else:
            problem(str(path), "failed", "no such file or folder")
    return out


_SIDE_SUFFIXES = tuple(SQLITE_SIDE_FILES)
_by_name = operator.attrgetter("name")


def _walk(top: str, onerror: Callable[[OSError], None],
          places: list[tuple[Path, Callable[[str], bool]]]):
    """For each folder under `top` (folders before their contents, in sorted order, as
    `os.walk` gives them; links to folders are not followed): its resolved path with a
    trailing separator (None when it cannot be told without resolving each file) and the
    DirEntry of the files in it an import considers (only the agent's own files in an
    agent's folder, see `agent_rule`; a folder's rule is worked out from its parent's).

    Only `top` is resolved (`real_folder`): a subfolder, never a link here, is its
    parent's resolved path and its name (one lstat a folder fewer: 800 in a tree of
    3,000 logs)."""
    top = str(Path(top))
    real_top = None if ".." in top.split(os.sep) else \
        os.path.join(real_folder(os.path.abspath(top)), "")
    shown = [str(where) for where, _rule in places]
    stack = [(top, _tail_index(top), _place_index(top, places), real_top)]
    while stack:
        folder, tail, place, real = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=_by_name)
        except OSError as error:
            onerror(error)
            continue
        rule = _TAILS[tail][1] if tail is not None else \
            places[place][1] if place is not None else None
        subfolders = []
        files = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not entry.is_symlink():
                    path, sub_tail, sub_place = _subfolder(entry, tail, place, shown)
                    subfolders.append((path, sub_tail, sub_place,
                                       None if real is None else f"{real}{entry.name}{os.sep}"))
                continue
            name = entry.name
            if rule(name) if rule is not None else \
                    (name.endswith(FOLDER_SUFFIXES) or _registry.follows(name)):
                files.append(entry)
        if files:
            yield real, files
        stack.extend(reversed(subfolders))


def _subfolder(entry: os.DirEntry, tail: int | None, place: int | None,
               shown: list[str]) -> tuple[str, int | None, int | None]:
    """(path, tail index, place index) of a subfolder, from its parent's (`agent_rule`'s
    answer for it): a default name can only be completed by the subfolder's own name, and
    a place (`shown`: the places as text) can only be the subfolder itself (those holding
    it hold its parent)."""
    path, name = entry.path, entry.name
    if any(end[-1] == name for end, _rule in _TAILS[:tail]):
        found = _tail_index(path)
        if found is not None and (tail is None or found < tail):
            tail = found
    for index, where in enumerate(shown[:place]):
        if where == path:
            place = index
            break
    return path, tail, place


def path_key(path: Path) -> str:
    """The file's path with every symbolic link resolved (what identifies it in the store).

    The folder part is resolved once per folder (a tree of 3,000 logs has a few dozen
    folders); the file itself costs one lstat, and is resolved whole if it is a link."""
    try:
        given = os.fspath(path)
        if ".." in given.split(os.sep):      # ".." after a link is not lexical: resolve it all
            return str(Path(given).resolve())
        text = os.path.abspath(given)
        folder, name = os.path.split(text)
        if not name or os.path.islink(text):
            return str(Path(text).resolve())
        return os.path.join(real_folder(folder), name)
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python < 3.13)
        return str(Path(path).absolute())


def record_key(path: Path, fmt: str) -> str:
    """The key of a file's import record in the store: its format and `path_key`."""
    return f"{fmt}:{path_key(path)}"


@functools.lru_cache(maxsize=4096)
def real_folder(folder: str) -> str:
    """A folder's real path: its parent's real path and its own name, unless it is itself
    a link (one lstat a folder, where resolving it whole costs one a path component)."""
    parent, name = os.path.split(folder)
    if not name or parent == folder or os.path.islink(folder):
        return str(Path(folder).resolve())
    return os.path.join(real_folder(parent), name)
