"""Resuming the same unchanged branch again reuses the session arbor wrote for it.

Without this, every `arbor resume` (and every `--print`) of a branch wrote one more file, and
the agent's picker listed identical sessions. Each file arbor writes for a branch is recorded
in the session's metadata (`resumedAs`, at most KEEP records, the newest kept), under a
fingerprint of what was written: the agent, the branch's head, the title, the labels, the
working directory and the folder the agent keeps its sessions in. The record holds the file,
the agent's id for it, the file's size, mtime and inode, and a hash of its bytes.

A later resume with the same fingerprint runs the agent on that file instead of writing a
copy while the file still holds the same conversation: exactly as written, or as written
followed only by lines in which the agent recorded its own state without carrying the
conversation on (each agent writes some as it starts or quits: Claude Code its `mode` and
`permission-mode` lines, pi a `thinking_level_change`, Codex `thread_settings_applied`; each
agent module's `adds_nothing` tells them). Once the agent carried it on, it is another
conversation: a new file is written from the branch.

Recording is a small write to the store; where it fails (a read-only store, a busy one), the
file is still written and used, and only the next resume writes another.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .native import BranchToWrite, json_lines, stamp

KEY = "resumedAs"
KEEP = 8
VERSION = 1          # of the writers: a change in what they write makes old files unused


@dataclass(frozen=True)
class Written:
    path: Path
    native_id: str


def fingerprint(job: BranchToWrite, agent: str, folder: Path, extra: str = "") -> str:
    head = job.head()
    facts = [VERSION, agent, job.session.uid, head.id, job.head_seq, job.title,
             sorted(job.labels().items()), job.cwd, str(folder), extra]
    return hashlib.sha256(json.dumps(facts, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def _stamp_of(path: Path) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino]


def _digest(path: Path, size: int) -> str | None:
    """sha256 of the first `size` bytes of the file."""
    digest = hashlib.sha256()
    left = size
    try:
        with open(path, "rb") as handle:
            while left > 0:
                chunk = handle.read(min(left, 1 << 20))
                if not chunk:
                    return None
                digest.update(chunk)
                left -= len(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def find(job: BranchToWrite, key: str, adds_nothing: Callable[[Any], bool]) -> Written | None:
    """The file written before for this fingerprint, if it still holds what was written
    (see the module doc; `adds_nothing` is the agent's test for a line it appended)."""
    record = ((job.store.sessions.metadata(job.session.id).get(KEY) or {}).get(key))
    return still_holds(record, adds_nothing)


def still_holds(record: Any, adds_nothing: Callable[[Any], bool]) -> Written | None:
    """The file a record (`record_of`) names, if it still holds what was written."""
    if not isinstance(record, dict):
        return None
    path, native_id, then = record.get("path"), record.get("id"), record.get("stamp")
    if not isinstance(path, str) or not isinstance(native_id, str) or not isinstance(then, list) \
            or len(then) != 3:
        return None
    now = _stamp_of(Path(path))
    if now is None:
        return None
    if now != then:
        size, _mtime, inode = then
        if now[2] != inode or now[0] < size or _digest(Path(path), size) != record.get("sha256"):
            return None
        tail = json_lines(Path(path), start=size)
        if tail is None or not all(adds_nothing(line) for line in tail):
            return None
    return Written(Path(path), native_id)


def remember(job: BranchToWrite, key: str, written: Written) -> bool:
    """Record a file just written; False when the store could not take the record."""
    record = record_of(written, job.now)
    if record is None:
        return False
    store = job.store
    try:
        with store.transaction():
            metadata = store.sessions.metadata(job.session.id)
            records: dict[str, Any] = dict(metadata.get(KEY) or {})
            records[key] = record
            newest = sorted(records.items(), key=lambda item: str(item[1].get("at", "")))
            metadata[KEY] = dict(newest[-KEEP:])
            store.sessions.set_metadata(job.session.id, metadata)
    except store.errors:
        return False
    return True


def record_of(written: Written, now) -> dict[str, Any] | None:
    """What `still_holds` needs to know a file again: where it is, its id, its size, mtime
    and inode and a hash of its bytes (None: the file cannot be read)."""
    stamp_now = _stamp_of(written.path)
    if stamp_now is None:
        return None
    return {"path": str(written.path), "id": written.native_id, "stamp": stamp_now,
            "sha256": _digest(written.path, stamp_now[0]), "at": stamp(now)}


def written_by_arbor(job: BranchToWrite) -> bool:
    """Whether the session's own file is one arbor wrote for a branch of the session it was
    forked from (that session's records name it). Resuming such a session again (the one
    the app shows on return from the agent) carries on in that file rather than forking it
    again; the agents' own sessions are forked, never continued in place (Codex apart)."""
    path, parent_ref = job.metadata.get("path"), job.session.parent_session
    if not isinstance(path, str) or not parent_ref:
        return False
    store = job.store
    parent = store.sessions.by_uid(parent_ref)
    if parent is None:          # pi names the file it was forked from
        found = store.sessions.by_metadata(job.session.source, {"path": parent_ref},
                                           unset="mergedInto")
        parent = found[-1] if found else None
    records = ((parent.metadata or {}).get(KEY) or {}) if parent is not None else {}
    return any(isinstance(record, dict) and record.get("path") == path
               for record in records.values())
