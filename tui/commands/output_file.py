"""Where `arbor export -o PATH` writes, and how, by what PATH is.

- `-` is standard output (handled by the caller: `is_stdout`).
- A regular file, or nothing yet: the export goes to a temporary file beside it, flushed to
  disk, which then replaces it in one rename, so a reader sees the old file or the whole new
  one. The new file gets the old one's permissions (a new name: 0666 less the umask, as the
  shell's `>` gives).
- A symbolic link is written through: the file it points to is written (as above), the link
  stays a link.
- Anything else that is not a folder (a character or block device, a FIFO, a Unix socket)
  is written to in place and never replaced: renaming over `/dev/null` would leave a
  regular file where every program expects the device. The export is first made in full
  in an anonymous temporary file, so a failing export writes nothing there, and a FIFO's
  reader is not kept waiting while it is made; then it is copied (a socket is connected to).
- A folder is refused with one sentence.
"""

from __future__ import annotations

import io
import os
import shutil
import socket
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable, TextIO, TypeVar

from core.model.errors import ArborError

T = TypeVar("T")
STDOUT = "-"
CHUNK = 1 << 16


def is_stdout(given: str | None) -> bool:
    return given is None or given == STDOUT


def _text(raw: BinaryIO) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def resolve(target: Path) -> tuple[Path, os.stat_result | None]:
    """The path that is written (symbolic links followed, a dangling one to the name it
    points at) and what is there now (None: nothing)."""
    real = Path(os.path.realpath(target))
    try:
        return real, os.stat(real)
    except FileNotFoundError:
        return real, None
    except OSError as error:
        raise ArborError(f"cannot write {target}: {_why(error)}") from error


def write(target: Path, produce: Callable[[TextIO], T]) -> T:
    """Write what `produce(out)` writes to `target`, as the module doc says; returns what
    `produce` returns. Raises ArborError (with the reason) when it cannot be written."""
    try:
        return _write(target, produce)
    except BrokenPipeError:
        raise      # a FIFO's reader went away: as on a pipe, not an error
    except OSError as error:
        raise ArborError(f"cannot write {target}: {_why(error)}") from error


def _write(target: Path, produce: Callable[[TextIO], T]) -> T:
    real, info = resolve(target)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise ArborError(f"{target} is a folder; give the name of a file to write")
    if info is None or stat.S_ISREG(info.st_mode):
        try:
            return _replace(target, real, info, produce)
        except _NoRoomBeside:
            if info is None:
                raise
            # a file we may write in a folder we may not (a file in /etc, a shared
            # folder): write the file itself, as the shell's `>` would
            return _in_place(target, real, info, produce)
    return _in_place(target, real, info, produce)


class _NoRoomBeside(ArborError):
    """No temporary file can be made in the target's folder."""


def _replace(target: Path, real: Path, info: os.stat_result | None,
             produce: Callable[[TextIO], T]) -> T:
    try:
        handle, temp = tempfile.mkstemp(prefix=".arbor-export-", dir=real.parent)
    except OSError as error:
        raise _NoRoomBeside(f"cannot write {target}: {_why(error)}") from error
    try:
        with _text(os.fdopen(handle, "wb")) as out:
            result = produce(out)
            out.flush()
            os.fsync(out.fileno())
        if info is not None:
            os.chmod(temp, stat.S_IMODE(info.st_mode))
            if os.geteuid() == 0 and (info.st_uid, info.st_gid) != (0, 0):
                os.chown(temp, info.st_uid, info.st_gid)   # root keeps the owner's file theirs
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, real)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    return result


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _in_place(target: Path, real: Path, info: os.stat_result,
              produce: Callable[[TextIO], T]) -> T:
    with tempfile.TemporaryFile() as spool:
        out = _text(spool)
        result = produce(out)
        out.flush()
        spool.seek(0)
        if stat.S_ISSOCK(info.st_mode):
            _to_socket(target, real, spool)
        else:
            _to_file(target, real, info, spool)
        out.detach()
    return result


def _to_file(target: Path, real: Path, info: os.stat_result, spool: BinaryIO) -> None:
    # O_NOCTTY: a terminal device must not become this process's controlling terminal.
    # No O_CREAT: the path was there a moment ago; if it is gone, say so, create nothing.
    # O_TRUNC only for a regular file (a writable file in a folder arbor may not write in).
    flags = os.O_WRONLY | os.O_NOCTTY | (os.O_TRUNC if stat.S_ISREG(info.st_mode) else 0)
    try:
        fd = os.open(real, flags)
    except OSError as error:
        raise ArborError(f"cannot write {target}: {_why(error)}") from error
    with os.fdopen(fd, "wb", buffering=0) as device:
        now = os.fstat(fd)
        if stat.S_ISREG(now.st_mode) and not stat.S_ISREG(info.st_mode):
            raise ArborError(f"{target} changed while the export was made; nothing was written")
        shutil.copyfileobj(spool, device, CHUNK)


def _to_socket(target: Path, real: Path, spool: BinaryIO) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(str(real))
        except OSError as error:
            raise ArborError(f"cannot write to the socket {target}: {_why(error)}") from error
        while chunk := spool.read(CHUNK):
            conn.sendall(chunk)
        conn.shutdown(socket.SHUT_WR)
