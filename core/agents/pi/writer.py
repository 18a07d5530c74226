"""pi (`@mariozechner/pi-coding-agent`): a branch as a new pi session file, as pi's fork writes one.

pi's `SessionManager.createBranchedSession` (what `/fork` and the tree's "branch to new
session" use) writes a v3 file: a header `{type: session, version: 3, id, timestamp, cwd,
parentSession}` naming the file it came from, the entries of the path from the root to the
chosen leaf as they were (same ids), and then one `label` entry per label on that path,
chained after the last entry. pi's loader takes the last entry of a file as its leaf, so
the resumed session sits exactly on the branch. arbor writes the same, with one difference:
pi leaves the path's own `label` entries out, and so cuts the chain below every one of them
(the next entry's parent is missing, and pi's loader stops there, losing the history before
it). arbor keeps them, and writes label entries only for labels whose state at the end of
the path differs from arbor's (a label set or cleared in arbor, or by a label entry on
another branch). A `session_info` entry ends the file, as pi's `/name` writes one: the
session is called after the branch in pi's session list (`BranchToWrite.title`).

Where: `$PI_CODING_AGENT_SESSION_DIR` when set (pi uses it as the session folder itself),
else `<agent dir>/sessions/--<cwd without its leading '/', '/', '\\' and ':' as '-'>--/`,
where the agent dir is `$PI_CODING_AGENT_DIR` or `~/.pi/agent`. The name is
`<ISO time with ':' and '.' as '-'>_<uuid v7>.jsonl`. Command: `pi --session <file>`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import LABEL
from core.export.formats import pi_line
from core.agents.native import (
    BranchToWrite, env_dir, home, json_lines, labelled_in_arbor, own_file, stamp, write_new_file)

NAME = "pi"
EXECUTABLE = "pi"
VERSION = 3


def agent_dir(env: Mapping[str, str]) -> Path:
    return env_dir(env, "PI_CODING_AGENT_DIR") or home(env) / ".pi" / "agent"


def session_dir(cwd: str, env: Mapping[str, str]) -> Path:
    """The folder pi keeps a working directory's sessions in (pi's getDefaultSessionDir)."""
    own = env_dir(env, "PI_CODING_AGENT_SESSION_DIR")
    if own is not None:
        return own
    safe = "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"
    return agent_dir(env) / "sessions" / safe


def lines(job: BranchToWrite, session_id: str, parent_file: str | None) -> Iterator[dict[str, Any]]:
    header: dict[str, Any] = {"type": "session", "version": VERSION, "id": session_id,
                              "timestamp": stamp(job.now), "cwd": job.cwd}
    if parent_file:
        header["parentSession"] = parent_file
    if job.provenance:
        header["handoff"] = job.provenance
    yield header
    labels = job.labels()
    on_path: dict[str, str | None] = {}   # what the path's own label entries leave
    wanted: list[tuple[str, str | None]] = []
    ids: set[str] = set()
    last_id = None
    for entry in job.path():
        yield pi_line(entry)
        ids.add(entry.id)
        last_id = entry.id
        if entry.type == LABEL and isinstance(entry.data.get("targetId"), str):
            on_path[entry.data["targetId"]] = entry.data.get("label") or None
        else:
            wanted.append((entry.id, labels.get(entry.seq)))
    parent = last_id
    for target, label in wanted:
        if on_path.get(target) == label:
            continue
        label_id = job.ids.token(4)
        while label_id in ids:
            label_id = job.ids.token(4)
        ids.add(label_id)
        line: dict[str, Any] = {"type": LABEL, "id": label_id, "parentId": parent,
                                "timestamp": stamp(job.now), "targetId": target}
        if label:
            line["label"] = label
        yield line
        parent = label_id
    # the title, as pi's /name writes it (the latest session_info names the session)
    info_id = job.ids.token(4)
    while info_id in ids:
        info_id = job.ids.token(4)
    yield {"type": "session_info", "id": info_id, "parentId": parent,
           "timestamp": stamp(job.now), "name": job.title}


def place(job: BranchToWrite) -> tuple[Path, str]:
    """Where the new session goes and its id (nothing is written)."""
    session_id = job.ids.uuid7(job.now)
    name = stamp(job.now).replace(":", "-").replace(".", "-")
    return session_dir(job.cwd, job.env) / f"{name}_{session_id}.jsonl", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    """Write the branch as a new pi session at `target` (from `place`)."""
    parent = job.metadata.get("path")
    write_new_file(target, lines(job, session_id, parent if isinstance(parent, str) else None))


# entries that change pi's settings or names, not the conversation (pi writes a
# thinking_level_change as it opens a session)
_SETTINGS = frozenset({"thinking_level_change", "model_change", "session_info", "label"})


def adds_nothing(line: Any) -> bool:
    """Whether an entry pi appended leaves the conversation where it was."""
    return isinstance(line, dict) and line.get("type") in _SETTINGS


def own_session(job: BranchToWrite) -> Path | None:
    """The session's own file, when `pi --session <file>` lands exactly on the branch: pi
    takes the file's last entry as its leaf, and the last entries are the branch's head
    followed by nothing but settings and names chained after it (pi's own, or arbor's
    session_info). Labels changed in arbor are not in that file: then it is written anew.
    Asked only of a session arbor wrote (reuse.written_by_arbor)."""
    path = own_file(job)
    if path is None or job.store.entries.children(job.head_seq) or labelled_in_arbor(job):
        return None
    entry = job.head()
    while entry.type in _SETTINGS and entry.parent_seq is not None:
        entry = job.store.entries.get(entry.parent_seq)
        if entry is None:
            return None
    lines = json_lines(path)
    if not lines:
        return None
    child = None
    for line in reversed(lines):
        if not isinstance(line, dict) or (child is not None and child.get("parentId") != line.get("id")):
            return None
        if not adds_nothing(line):
            return path if line.get("id") == entry.id and line.get("type") != "session" else None
        child = line
    return None


def command(file: Path) -> list[str]:
    return [EXECUTABLE, "--session", str(file)]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """`o` / `arbor resume` (see core.agents.resume): pi's own file where the branch ends
    where it ends, else the branch as a new session file; `pi --session <file>`."""
    import sys

    from core.agents import reuse

    own = own_session(job) if reuse.written_by_arbor(job) else None
    if own is not None:
        plan.native_id = str(job.metadata.get("sessionId") or job.session.uid)
        plan.summary = f"The branch ends where pi's session file {own} ends: nothing to write"
    else:
        new_session(plan, job, session_dir(plan.cwd, env), sys.modules[__name__],
                    lambda target, new_id: write(job, target, new_id))
    plan.argv = command(own or plan.file)
