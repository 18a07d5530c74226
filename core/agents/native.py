"""What every agent's native writer shares: the branch being written, new ids, time stamps,
JSON lines, and writing a new file without ever touching an existing one.

A native file is written to a temporary file in the same folder and then linked to its
final name (`os.link` fails when the name exists), so a reader never sees half a file and
no existing file, the agent's own or another, is ever replaced.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from core.model.entries import Entry, content_text
from core.model.errors import ArborError
from core.util.fastjson import dumps_utf8

PAGE = 2000


class ResumeError(ArborError):
    """A branch that cannot be handed to its agent, with the reason in one sentence."""


@dataclass
class Ids:
    """Where new ids come from (tests give fixed ones)."""

    uuid4: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    uuid7: Callable[[datetime], str] = field(default=lambda now: uuid7(now))
    token: Callable[[int], str] = field(default=lambda n: secrets.token_hex(n))


def uuid7(now: datetime) -> str:
    """A version 7 UUID (time ordered), as pi and Codex make session ids."""
    millis = int(now.timestamp() * 1000) & ((1 << 48) - 1)
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (millis << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64 \
        | (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(token_hex: str, length: int) -> str:
    """`length` base-62 characters from random hex (for ids such as Claude's `msg_01…`)."""
    number = int(token_hex, 16)
    out = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        out.append(_BASE62[digit])
    return "".join(out)


def stamp(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and `Z`, as JavaScript's toISOString() writes."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{moment.astimezone(timezone.utc).microsecond // 1000:03d}Z"


def entry_stamp(text: str | None, fallback: datetime) -> str:
    """An entry's stored time in the `Z` form agents write; `fallback` when it has none."""
    if isinstance(text, str) and text:
        if text.endswith("+00:00"):
            return text[:-6] + "Z"
        return text
    return stamp(fallback)


def home(env: Mapping[str, str]) -> Path:
    """The user's home folder as the agents see it ($HOME of the environment given)."""
    value = (env.get("HOME") or "").strip()
    return Path(value) if value else Path.home()


def expand(path: str, env: Mapping[str, str] | None = None) -> str:
    """A recorded path with a leading `~` made absolute."""
    if path == "~" or path.startswith("~/"):
        return str((home(env) if env is not None else Path.home()) / path[2:])
    return path


def env_dir(env: Mapping[str, str], name: str) -> Path | None:
    """A folder named by an environment variable (`~` expanded), or None when unset."""
    value = (env.get(name) or "").strip()
    if not value:
        return None
    if value == "~" or value.startswith("~/"):
        return home(env) / value[2:]
    return Path(value)


# ------------------------------------------------------------------ titles
TITLE_LIMIT = 120
# C0 and C1 controls, DEL, and the bidirectional overrides and isolates (text that reads
# one way and is stored another): none belongs in a title an agent's picker prints.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str) -> str:
    """Text for a title: controls out, every run of white space one space."""
    return " ".join(_UNPRINTABLE.sub(" ", str(text)).split())


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ------------------------------------------------------ text for other agents
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"


def branch_summary_text(summary: Any) -> str:
    """A branch summary as a user message's text (the words pi sends to its model)."""
    return f"{BRANCH_PREFIX}{summary}{BRANCH_SUFFIX}"


def as_text(message: dict[str, Any]) -> str:
    """The text of a pi-only message (a shell run, a summary, an extension's message) for an
    agent that has no such role: what pi itself sends its model for it."""
    if message.get("role") == "bashExecution":
        return f"Ran `{message.get('command', '')}`\n```\n{message.get('output', '')}\n```"
    if message.get("summary"):
        return branch_summary_text(message["summary"])
    return content_text(message.get("content"))


# ---------------------------------------------------------- the agent's own end
_HAS_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def has_uuid(entry_id: str) -> bool:
    """An entry id built from one of the agent's record ids, when those are uuids (droid's,
    Gemini CLI's, Copilot CLI's); arbor's own entries have 8 hex digits."""
    return _HAS_UUID.search(entry_id) is not None


def own_end(job: "BranchToWrite", fmt: str, own_entry: Callable[[str], bool]) -> str | None:
    """The agent's own id of the session when the branch ends where the agent's own session
    ends (then the agent resumes its own session and nothing is written), else None.

    That is: the session is the agent's (`fmt`) with its id, the branch's head is the
    session's newest entry, and that entry is one of the agent's own records (`own_entry`
    of its id). The last test matters: an entry made in arbor at the end of a branch (a
    compaction, `c`) is the session's newest entry, yet the agent's file does not hold it."""
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.source != fmt or not session_id:
        return None
    _low, high, _count = job.store.entries.span(session.id)
    if job.head_seq != high or not own_entry(job.head().id):
        return None
    return session_id


# ----------------------------------------------------------------- the branch
@dataclass
class BranchToWrite:
    """One branch of one session, up to `head_seq`, as the writers read it."""

    store: Any
    session: Any          # ExternalSession
    branch: Any           # InternalSession
    head_seq: int
    cwd: str
    env: Mapping[str, str]
    now: datetime
    ids: Ids
    # where a hand-off came from (core.handoff): written in the target's own metadata
    provenance: dict[str, Any] | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        return self.session.metadata or {}

    @property
    def name(self) -> str:
        return self.session.session_name or self.session.uid

    @property
    def title(self) -> str:
        """What the written session is called in the agent's picker: the session's name and
        the branch by its label (else its name), with the entry it stops at when that is
        not the branch's head: "Flaky parser test · retry with a fake clock", "… · main,
        up to 3f2a9c1e". One line, without control characters, at most TITLE_LIMIT long."""
        branch = self.branch
        what = self.store.annotations.branch_labels(self.session.id).get(branch.id) or branch.name or \
            ("main" if branch.parent_session_id is None else f"branch {branch.id}")
        if self.head_seq != branch.head_seq:
            entry = self.labels().get(self.head_seq) or self.head().id[:8]
            what = f"{what}, up to {entry}"
        name = one_line(self.name)
        what = one_line(what)
        return clip(name if what == name else f"{name} · {what}", TITLE_LIMIT)

    def path(self) -> Iterator[Entry]:
        """The entries from the root to the head, read a page at a time."""
        total = self.store.paths.length(self.head_seq)
        depth = 0
        while depth < total:
            yield from self.store.paths.entries(self.head_seq, depth, depth + PAGE)
            depth += PAGE

    def kept_before(self, compaction: Entry) -> list[Entry]:
        """The entries a compaction on the path keeps: from its `firstKeptEntryId` up to it."""
        kept_id = compaction.data.get("firstKeptEntryId")
        kept = self.store.entries.find(self.session.id, kept_id) if isinstance(kept_id, str) else None
        if kept is None or kept.depth >= compaction.depth:
            return []
        return self.store.paths.entries(compaction.seq, kept.depth, compaction.depth)

    def head(self) -> Entry:
        entry = self.store.entries.get(self.head_seq)
        if entry is None:
            raise ResumeError(f"entry {self.head_seq} does not exist")
        return entry

    def labels(self) -> dict[int, str]:
        """The current label of each labelled entry of the session (seq -> label)."""
        return self.store.annotations.entry_labels(self.session.id)


# ---------------------------------------------------------------- new files
def write_new_file(target: Path, lines: Iterable[dict[str, Any]]) -> int:
    """Write JSON lines to `target`, which must not exist; returns the number of lines.

    The folder is created if needed. The lines go to a temporary file beside the target,
    which is flushed to disk and then linked to the target name: the target appears
    whole or not at all, and an existing file is never replaced (FileExistsError).
    """
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ResumeError(f"cannot create {folder}: {error.strerror or error}") from error
    if target.exists():
        raise ResumeError(f"{target} already exists; arbor never writes over a file")
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".arbor-tmp",
                                        dir=folder)
    except OSError as error:
        raise ResumeError(f"cannot write in {folder}: {error.strerror or error}") from error
    count = 0
    try:
        with os.fdopen(handle, "wb") as out:
            for line in lines:
                # compact, non-ASCII as is (as the agents' JSON.stringify writes); text UTF-8
                # cannot hold (a lone surrogate) escaped, as JSON.stringify does
                out.write(dumps_utf8(line) + b"\n")
                count += 1
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, 0o600)
        try:
            os.link(temp, target)
        except FileExistsError as error:
            raise ResumeError(f"{target} already exists; arbor never writes over a file") from error
        except OSError:
            # A file system without hard links: rename, after one more look (the window
            # between the look and the rename is the only one left).
            if target.exists():
                raise ResumeError(f"{target} already exists; arbor never writes over a file")
            os.rename(temp, target)
            temp = ""
    finally:
        if temp:
            try:
                os.unlink(temp)
            except OSError:
                pass
    return count


def json_lines(path: Path, start: int | None = None, limit: int = 1 << 20) -> list[Any] | None:
    """The JSON lines of a file from byte `start` (a line's start) to its end, or, without
    `start`, in its last `limit` bytes (a line cut by the limit left out). None when the file
    cannot be read, has more than `limit` bytes after `start`, ends in a torn line (the agent
    is writing) or holds a line that is not JSON."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            begin = max(0, size - limit) if start is None else start
            if size - begin > limit:
                return None
            handle.seek(begin)
            data = handle.read()
    except OSError:
        return None
    if data and not data.endswith(b"\n"):
        return None
    rows = data.split(b"\n")[:-1]
    if start is None and begin:
        rows = rows[1:]
    try:
        return [json.loads(row) for row in rows if row.strip()]
    except ValueError:
        return None


def own_file(job: "BranchToWrite") -> Path | None:
    """The session's own file, when it is still there (the path it was imported from)."""
    path = job.metadata.get("path")
    return Path(path) if isinstance(path, str) and path and os.path.isfile(path) else None


def labelled_in_arbor(job: "BranchToWrite") -> bool:
    """Whether an entry of the session was labelled (or unlabelled) in arbor, not in the
    agent's file: resuming the file as it is would lose that."""
    return any(row["target_entry"] is not None and row["label_entry"] is None
               for row in job.store.annotations.label_log(job.session.id))


def local_time(moment: datetime) -> time.struct_time:
    """The moment in the local time zone (Codex names its folders and files in local time)."""
    return time.localtime(moment.timestamp())
