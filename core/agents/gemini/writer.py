"""`o` / `arbor resume` for Gemini CLI: a branch as a new Gemini CLI session file, loaded by
`gemini --resume <session id>` from the project folder.

Gemini CLI keeps a project's sessions in `~/.gemini/tmp/<project>/chats/` (`$GEMINI_CLI_HOME`
moves the home folder), `<project>` a short name `~/.gemini/projects.json` gives the project
folder, each such folder marked by a `.project_root` file holding the path. arbor never
changes those files: it writes into the folder `projects.json` names for the project, else
the one whose `.project_root` names it, else a new folder named as Gemini CLI names one (the
folder's name in lower case, every run of other characters one "-", "-1", "-2", … after it
when taken) with its `.project_root` — the folder Gemini CLI itself adopts for the project
when it starts there, registering it in `projects.json` on its own
(`ProjectRegistry.findExistingSlugForPath`).

The session file is `chats/session-<UTC minute>-<first 8 of the id>.jsonl`, written as Gemini
CLI's `ChatRecordingService` writes one: a header (`sessionId`, `projectHash` = sha256 of
the project path, `startTime`, `lastUpdated`, `kind: main`), then a record per message of
the path: `user` records with Gemini `parts`, `gemini` records (the text, `thoughts`,
`tokens`, `model`) with their `toolCalls`, each carrying its `result` as Gemini CLI records
it (Gemini CLI turns them into the call and its response when it loads the session, so the
`functionResponse` user record it also writes is left out: the model sees each result
once). A compaction is what Gemini CLI writes after compressing: `$set.messages` with the
summary, the model's acknowledgement and what it kept. A call left without a result gets
Gemini CLI's cancelled result. The file ends with `$set.summary`: the session is listed
under the branch's title (`BranchToWrite.title`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import COMPACTION, MESSAGE, Entry
from core.agents.native import (
    BranchToWrite, ResumeError, as_text, entry_stamp, env_dir, has_uuid, home, own_end, stamp,
    write_new_file)
from .importer import FORMAT
from .parts import parts_of

EXECUTABLE = "gemini"
ACK = "Got it. Thanks for the additional context!"
CANCELLED = "[Operation Cancelled] Reason: the session was carried on from before this result"
MARKER = ".project_root"
_CALL = re.compile(r"^(.*):call:(.*)$")
_RESULT = re.compile(r"^(.*):result:(.*)$")
_QUIET_SET = frozenset({"lastUpdated", "sessionId", "summary", "directories"})


# ------------------------------------------------------------------ places
def gemini_dir(env: Mapping[str, str]) -> Path:
    return (env_dir(env, "GEMINI_CLI_HOME") or home(env)) / ".gemini"


def slugify(text: str) -> str:
    """Gemini CLI's short name for a folder (`ProjectRegistry.slugify`)."""
    slug = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", text.lower())).strip("-")
    return slug or "project"


def _owner(folder: Path) -> str | None:
    """The project a folder of Gemini CLI's belongs to (its `.project_root`), None if unmarked."""
    try:
        return (folder / MARKER).read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def project_folder(cwd: str, env: Mapping[str, str]) -> tuple[Path, bool]:
    """The project's folder in `~/.gemini/tmp`, and whether arbor must mark it (a new one):
    see the module doc. Nothing is written here."""
    gemini = gemini_dir(env)
    path = os.path.normpath(os.path.abspath(cwd))
    bases = (gemini / "tmp", gemini / "history")
    try:
        registry = json.loads((gemini / "projects.json").read_text("utf-8"))
    except (OSError, ValueError):
        registry = {}
    projects = registry.get("projects") if isinstance(registry, dict) else None
    projects = projects if isinstance(projects, dict) else {}
    slug = projects.get(path)
    if isinstance(slug, str) and slug and "/" not in slug and \
            all(_owner(base / slug) in (None, path) for base in bases):
        return bases[0] / slug, False
    for base in bases:
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if _owner(base / name) == path:
                return bases[0] / name, False
    taken = {v for v in projects.values() if isinstance(v, str)}
    stem = slugify(os.path.basename(path) or "project")
    counter = 0
    while True:
        candidate = stem if counter == 0 else f"{stem}-{counter}"
        counter += 1
        if candidate in taken:
            continue
        if any(_owner(base / candidate) not in (None, path) for base in bases):
            continue
        return bases[0] / candidate, _owner(bases[0] / candidate) is None


def mark(folder: Path, cwd: str) -> None:
    """A new `.project_root` naming the project (never over an existing file)."""
    path = os.path.normpath(os.path.abspath(cwd))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / MARKER, "x", encoding="utf-8") as handle:
            handle.write(path)
    except FileExistsError:
        if _owner(folder) != path:
            raise ResumeError(f"{folder} belongs to another project ({_owner(folder)}); "
                              "arbor never writes over a file") from None
    except OSError as error:
        raise ResumeError(f"cannot write in {folder}: {error.strerror or error}") from error


# ----------------------------------------------------------------- records
class _Records:
    """The records of a run of entries (see the module doc)."""

    def __init__(self, job: BranchToWrite):
        self.job = job
        self.own = job.session.source == FORMAT
        self.pending: dict[str, Any] | None = None      # a gemini record, until it is whole
        self.calls: dict[str, dict[str, Any]] = {}       # call id -> its toolCalls item
        self.context: dict[str, Any] | None = None        # Gemini CLI's own first turn
        self.written: dict[int, dict[str, Any]] = {}      # entry seq -> its record

    def kept(self, entry: Entry) -> dict[str, Any]:
        kept = entry.data.get(FORMAT) if self.own else None
        return dict(kept) if isinstance(kept, dict) else {}

    def record_id(self, entry: Entry, kept: dict[str, Any]) -> str:
        rid = kept.pop("id", None)
        return rid if self.own and isinstance(rid, str) and rid else self.job.ids.uuid4()

    def run(self, entries: list[Entry]) -> Iterator[dict[str, Any]]:
        for entry in entries:
            yield from self.take(entry)
        yield from self.flush()

    def take(self, entry: Entry) -> Iterator[dict[str, Any]]:
        if entry.type != MESSAGE:
            if self.own and entry.type.startswith(f"{FORMAT}:") and entry.type != f"{FORMAT}:line":
                yield from self.flush()
                yield dict(entry.data)      # (an info or error record, as Gemini CLI wrote it)
            return
        message = entry.message or {}
        role = message.get("role")
        if role == "toolResult":
            if self.result(entry):
                return
            yield from self.flush()
            yield self.user_record(entry, [_response_part(message, self.kept(entry))])
            return
        if role == "assistant":
            call = _CALL.match(entry.id) if self.own else None
            if call and self.pending is not None and self.pending["id"] == call.group(1):
                for block in message.get("content") or ():
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        self.add_call(block, self.kept(entry), entry)
                return
            yield from self.flush()
            self.pending = self.gemini_record(entry)
            return
        yield from self.flush()
        if role == "user":
            parts = parts_of(message.get("content"))
        else:       # (a message of a kind Gemini CLI has no record for: its text)
            parts = [{"text": as_text(message)}]
        yield self.user_record(entry, parts)

    def user_record(self, entry: Entry, parts: list[dict[str, Any]]) -> dict[str, Any]:
        kept = self.kept(entry)
        context = kept.pop("context", False) is True
        rid = self.record_id(entry, kept)
        record = {"id": rid, "timestamp": entry_stamp(entry.timestamp, self.job.now),
                  "type": "user", "content": parts, **kept}
        if context and self.context is None:
            self.context = record
        self.written[entry.seq] = record
        return record

    def gemini_record(self, entry: Entry) -> dict[str, Any]:
        message = entry.message or {}
        kept = self.kept(entry)
        rid = self.record_id(entry, kept)
        texts, thoughts = [], []
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "thinking":
                thoughts.append({"subject": "", "description": str(block.get("thinking", "")),
                                 "timestamp": entry_stamp(entry.timestamp, self.job.now)})
        record: dict[str, Any] = {"id": rid, "timestamp": entry_stamp(entry.timestamp, self.job.now),
                                  "type": "gemini", "content": "\n\n".join(texts),
                                  "thoughts": thoughts}
        if not self.own:
            usage = message.get("usage")
            if isinstance(usage, dict):
                record["tokens"] = _tokens(usage)
            if isinstance(message.get("model"), str) and message["model"]:
                record["model"] = message["model"]
        record.update(kept)
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                self.add_call(block, {}, entry, record)
        self.written[entry.seq] = record
        return record

    def add_call(self, block: dict[str, Any], kept: dict[str, Any], entry: Entry,
                 record: dict[str, Any] | None = None) -> None:
        record = record if record is not None else self.pending
        call = {"id": str(block.get("id", "")), "name": str(block.get("name", "")),
                "args": block.get("arguments") if isinstance(block.get("arguments"), dict) else {},
                **kept}
        call.setdefault("timestamp", entry_stamp(entry.timestamp, self.job.now))
        record.setdefault("toolCalls", []).append(call)
        self.calls[call["id"]] = call
        self.written[entry.seq] = record

    def result(self, entry: Entry) -> bool:
        """The result given to its call in the record being written; False when its call
        is not there."""
        message = entry.message or {}
        call = self.calls.get(str(message.get("toolCallId", "")))
        if call is None or self.pending is None or call not in self.pending.get("toolCalls", ()):
            return False
        kept = self.kept(entry)
        call.setdefault("result", []).append(_response_part(message, kept))
        call.setdefault("status", "error" if message.get("isError") else "success")
        self.written[entry.seq] = self.pending
        return True

    def flush(self) -> Iterator[dict[str, Any]]:
        record, self.pending = self.pending, None
        if record is None:
            return
        for call in record.get("toolCalls", ()):
            if "result" not in call:
                call["result"] = [{"functionResponse": {"id": call["id"], "name": call["name"],
                                                        "response": {"error": CANCELLED}}}]
                call["status"] = "cancelled"
        yield record

    def compaction(self, entry: Entry) -> dict[str, Any]:
        """`$set.messages` as Gemini CLI writes it after a compression."""
        kept = self.kept(entry)
        summary_records = kept.get("messages") if isinstance(kept.get("messages"), list) else None
        if not summary_records:
            moment = entry_stamp(entry.timestamp, self.job.now)
            summary_records = [
                {"id": self.job.ids.uuid4(), "timestamp": moment, "type": "user",
                 "content": [{"text": str(entry.data.get("summary") or "")}]},
                {"id": self.job.ids.uuid4(), "timestamp": moment, "type": "gemini",
                 "content": [{"text": ACK}]}]
        messages = [self.context] if self.context is not None else []
        messages.extend(summary_records)
        seen: set[int] = set()
        for kept_entry in self.job.kept_before(entry):
            record = self.written.get(kept_entry.seq)
            if record is not None and id(record) not in seen:
                seen.add(id(record))
                messages.append(record)
        return {"$set": {"messages": messages}}


def _response_part(message: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    from core.model.entries import content_text

    text = content_text(message.get("content"))
    response = {"id": str(message.get("toolCallId", "")), "name": str(message.get("toolName", "")),
                "response": {"error" if message.get("isError") else "output": text}}
    response.update({k: v for k, v in kept.items() if k not in ("id", "context")})
    return {"functionResponse": response}


def _tokens(usage: dict[str, Any]) -> dict[str, int]:
    """arbor's usage as Gemini CLI's `tokens` (input includes the cached part)."""
    def count(key: str) -> int:
        value = usage.get(key)
        return value if type(value) is int and value > 0 else 0

    read = count("cacheRead") + count("cacheWrite")
    thoughts = min(count("reasoning"), count("output"))
    out = {"input": count("input") + read, "output": count("output") - thoughts,
           "cached": read, "thoughts": thoughts, "tool": 0}
    out["total"] = out["input"] + out["output"] + out["thoughts"]
    return out


def records(job: BranchToWrite, session_id: str) -> Iterator[dict[str, Any]]:
    moment = stamp(job.now)
    header = {"sessionId": session_id,
              "projectHash": hashlib.sha256(os.path.normpath(os.path.abspath(job.cwd))
                                            .encode("utf-8")).hexdigest(),
              "startTime": moment, "lastUpdated": moment, "kind": "main"}
    if job.provenance:      # a branch handed over from another agent: where it came from
        header["handoff"] = job.provenance
    yield header
    body = _Records(job)
    run: list[Entry] = []
    for entry in job.path():
        if entry.type == COMPACTION:
            yield from body.run(run)
            run = []
            yield body.compaction(entry)
            continue
        run.append(entry)
    yield from body.run(run)
    yield {"$set": {"summary": job.title, "lastUpdated": moment}}


def file_name(job: BranchToWrite, session_id: str) -> str:
    return f"session-{stamp(job.now)[:16].replace(':', '-')}-{session_id[:8]}.jsonl"


def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = job.ids.uuid4()
    folder, _new = project_folder(job.cwd, job.env)
    return folder / "chats" / file_name(job, session_id), session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    folder, new = project_folder(job.cwd, job.env)
    if new:
        mark(folder, job.cwd)
    write_new_file(target, records(job, session_id))


def adds_nothing(line: Any) -> bool:
    """Whether a line Gemini CLI appended leaves the conversation where it was: a header
    (it opened the session again) or metadata."""
    if not isinstance(line, dict):
        return False
    if "sessionId" in line and "type" not in line and "id" not in line:
        return True
    values = line.get("$set")
    return isinstance(values, dict) and set(values) <= _QUIET_SET


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "--resume", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """A new session file for the branch (or the one written for it before); at the end of
    a session Gemini CLI wrote, that session is resumed as it is."""
    import sys

    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("a Gemini CLI sub-agent's session cannot be resumed on its own; "
                          "open its parent session and press o there")
    if own_end(job, FORMAT, has_uuid) is not None:
        plan.native_id = session_id
        plan.summary = (f"The branch ends where Gemini CLI's session {session_id} ends: "
                        "nothing to write")
        plan.argv = command(session_id)
        return
    folder, _new = project_folder(plan.cwd, env)
    new_session(plan, job, folder / "chats", sys.modules[__name__],
                lambda target, new_id: write(job, target, new_id))
    plan.argv = command(plan.native_id)
