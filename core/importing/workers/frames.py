"""Messages between an import and its worker processes: a length, then a pickle.

Pickle, because both ends are this program (the frames never leave the pipes between
them) and the answers are the importers' own `FileResult` objects."""

from __future__ import annotations

import pickle
import struct

_LENGTH = struct.Struct(">Q")


def write_frame(stream, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_frame(stream):
    """The next value; raises EOFError when the other end has closed the pipe."""
    head = _read(stream, _LENGTH.size)
    return pickle.loads(_read(stream, _LENGTH.unpack(head)[0]))


def _read(stream, size: int) -> bytes:
    parts = []
    while size:
        part = stream.read(size)
        if not part:
            raise EOFError("the other end closed the pipe")
        parts.append(part)
        size -= len(part)
    return b"".join(parts)
