"""`o` / `arbor resume` for GitHub Copilot CLI: a branch as a new Copilot session, carried on
with `copilot --resume=<new id>` from the project folder.

Copilot keeps a session as an append-only event log,
`<$COPILOT_HOME or ~/.copilot>/session-state/<uuid>/events.jsonl`, and `--resume=<uuid>`
rebuilds the conversation from that file alone: the events are read by its native runtime
(`events_jsonl_scan`), and nothing signs them or indexes them elsewhere (its
`session-store.db` is a search index it fills as it goes; `workspace.yaml` is written
beside the log, and a log without one resumes too). Checked with the real Copilot CLI
1.0.102: a log written under a new uuid, with new event ids and no row anywhere else, is
resumed with exactly its conversation (docs/agents/copilot-cli.md,
tests/test_resume_copilot.py).

arbor writes the path from the root to the branch's head (or the entry chosen) as a new
session folder: `session.start` (the new id, the working folder, the model), then the
events of each entry as Copilot writes them, each with a new id and its `parentId` the
event before it: `user.message` (for Copilot's own messages, what it sent the model,
`transformedContent`, kept), `assistant.message` (its text, `reasoningText`, and its
`toolRequests`), `tool.execution_start` and `tool.execution_complete` for each result (an
error where it failed). Copilot's own `system.message` events on the path are kept; its
usage records, turn markers, resumes and shutdowns are not (this session has made no
request yet). A compaction is Copilot's: `session.compaction_start` and an applied
`session.compaction_complete` with the summary (Copilot's own fields kept); Copilot then
sends the summary and what was said after the compaction started, so a compaction that
keeps entries (a background one of Copilot's, or one made in arbor) starts just before
the first entry it keeps.
A tool call left without a result gets a failed `tool.execution_complete` ("The tool call
was interrupted"), so that the model is never sent a call without its result.
`workspace.yaml` names the session after the branch (`BranchToWrite.title`).

Where the branch ends where Copilot's own log ends, nothing is written: Copilot resumes its
own session.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import COMPACTION, MESSAGE, Entry, content_text
from core.agents.native import (
    BranchToWrite, ResumeError, as_text, entry_stamp, env_dir, home, own_end, stamp, write_new_file)
from . import LOG_NAME
from .importer import EXTRA, FORMAT

EXECUTABLE = "copilot"
VERSION = "1.0.102"                # the Copilot CLI whose events these are
INTERRUPTED = "The tool call was interrupted before it finished."
_KEPT_RAW = frozenset({"system.message"})
_NOT_COPIED = frozenset({"interactionId", "turnId", "parentAgentTaskId", "apiCallId", "rte",
                         "usageRecord", "requestId", "serviceRequestId", "clientRequestId"})


def copilot_home(env: Mapping[str, str]) -> Path:
    return env_dir(env, "COPILOT_HOME") or home(env) / ".copilot"


def sessions_folder(job: BranchToWrite) -> Path:
    return copilot_home(job.env) / "session-state"


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, f"--resume={session_id}"]


class _Events:
    """The events of the path, in order (see the module doc)."""

    def __init__(self, job: BranchToWrite, session_id: str):
        self.job = job
        self.session_id = session_id
        self.own = job.session.source == FORMAT
        self.parent: str | None = None
        self.open_calls: dict[str, str] = {}      # call id -> tool name, until its result
        self.attempts: dict[str, str] = {}        # compaction entry id -> its attempt id
        self.model = ""

    def event(self, kind: str, data: dict[str, Any], when: str) -> dict[str, Any]:
        eid = self.job.ids.uuid4()
        out = {"type": kind, "data": data, "id": eid, "timestamp": when, "parentId": self.parent}
        self.parent = eid
        return out

    def kept(self, entry: Entry) -> dict[str, Any]:
        kept = entry.data.get(EXTRA) if self.own else None
        return {k: v for k, v in kept.items() if k not in _NOT_COPIED} \
            if isinstance(kept, dict) else {}

    def start(self) -> dict[str, Any]:
        header = self.job.metadata.get("start") if self.own else None
        header = header if isinstance(header, dict) else {}
        version = header.get("copilotVersion") if isinstance(header.get("copilotVersion"), str) \
            else VERSION
        self.model = self._model(header)
        data: dict[str, Any] = {"sessionId": self.session_id, "version": 1,
                                "producer": "copilot-agent", "copilotVersion": version,
                                "startTime": stamp(self.job.now)}
        if self.model:
            data["selectedModel"] = self.model
        data["context"] = {"cwd": self.job.cwd}
        if self.job.provenance:      # a branch handed over from another agent: where it came from
            data["handoff"] = self.job.provenance
        return self.event("session.start", data, stamp(self.job.now))

    def _model(self, header: dict[str, Any]) -> str:
        model = header.get("selectedModel")
        if isinstance(model, str) and model:
            return model
        for entry in self.job.path():
            message = entry.message or {}
            if message.get("role") == "assistant" and isinstance(message.get("model"), str):
                return message["model"]
        return ""

    def all(self) -> Iterator[dict[str, Any]]:
        yield self.start()
        path = list(self.job.path())
        # a compaction that keeps entries starts where the first of them is (Copilot goes
        # on from the summary, then what was said after the compaction started)
        starts: dict[str, Entry] = {}
        at = {entry.id: n for n, entry in enumerate(path)}
        for n, entry in enumerate(path):
            kept = entry.data.get("firstKeptEntryId") if entry.type == COMPACTION else None
            if isinstance(kept, str) and at.get(kept, n) < n:
                starts[kept] = entry
        for entry in path:
            when = entry_stamp(entry.timestamp, self.job.now)
            if entry.id in starts:
                yield from self.interrupted(when)
                yield self.compaction_start(starts[entry.id], when)
            if entry.type == COMPACTION:
                yield from self.interrupted(when)
                if entry.id not in self.attempts:
                    yield self.compaction_start(entry, when)
                yield self.compaction_complete(entry, when)
                continue
            if self.own and entry.type.startswith(f"{FORMAT}:") and \
                    entry.type[len(FORMAT) + 1:] in _KEPT_RAW:
                kept = entry.data.get(EXTRA) if isinstance(entry.data.get(EXTRA), dict) else {}
                data = kept.get("data")
                if isinstance(data, dict):
                    yield self.event(str(kept.get("type")), dict(data), when)
                continue
            if entry.type != MESSAGE or not entry.message:
                continue
            message = entry.message
            role = message.get("role")
            if role == "assistant":
                yield from self.interrupted(when)
                yield self.assistant(entry, message, when)
            elif role == "toolResult":
                yield from self.result(entry, message, when)
            else:
                yield from self.interrupted(when)
                yield self.user(entry, message, when)
        yield from self.interrupted(stamp(self.job.now))

    def user(self, entry: Entry, message: dict[str, Any], when: str) -> dict[str, Any]:
        content = message.get("content")
        text = content_text(content) if message.get("role") == "user" else as_text(message)
        data = {"content": text, **self.kept(entry)}
        data["messageId"] = self.job.ids.uuid4()
        return self.event("user.message", data, when)

    def assistant(self, entry: Entry, message: dict[str, Any], when: str) -> dict[str, Any]:
        kept = self.kept(entry)
        requests_kept = kept.pop("toolRequests", None)
        requests_kept = requests_kept if isinstance(requests_kept, list) else []
        texts, thinking, requests = [], [], []
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "thinking":
                thinking.append(str(block.get("thinking", "")))
            elif kind == "toolCall":
                call = str(block.get("id") or "")
                name = str(block.get("name") or "")
                request: dict[str, Any] = {"toolCallId": call, "name": name,
                                           "arguments": block.get("arguments") or {},
                                           "type": "function"}
                n = len(requests)
                if n < len(requests_kept) and isinstance(requests_kept[n], dict):
                    request.update({k: v for k, v in requests_kept[n].items() if k not in request})
                requests.append(request)
                self.open_calls[call] = name
        data: dict[str, Any] = {"messageId": self.job.ids.uuid4(), **kept,
                                "content": "\n\n".join(texts), "toolRequests": requests}
        model = message.get("model") or self.model
        if isinstance(model, str) and model:
            data["model"] = model
        if thinking:
            data["reasoningText"] = "\n\n".join(thinking)
        return self.event("assistant.message", data, when)

    def result(self, entry: Entry, message: dict[str, Any], when: str) -> Iterator[dict[str, Any]]:
        call = str(message.get("toolCallId") or "")
        name = self.open_calls.pop(call, None)
        if name is None:         # (a result without its call on the branch: its text)
            yield self.user(entry, {"role": "user", "content": content_text(message.get("content"))},
                            when)
            return
        kept = self.kept(entry)
        start = kept.pop("start", None)
        start = dict(start) if isinstance(start, dict) else {}
        start = {k: v for k, v in start.items() if k not in _NOT_COPIED}
        start.update(toolCallId=call)
        start.setdefault("toolName", name or str(message.get("toolName") or ""))
        start.setdefault("arguments", {})
        yield self.event("tool.execution_start", start, when)
        text = content_text(message.get("content"))
        failed = bool(message.get("isError"))
        rest = kept.pop("result", None)
        kept.pop("error", None)
        data: dict[str, Any] = {"toolCallId": call, **kept, "success": not failed}
        if failed:
            data["error"] = {"message": text}
        else:
            data["result"] = {**(rest if isinstance(rest, dict) else {}), "content": text}
        yield self.event("tool.execution_complete", data, when)

    def interrupted(self, when: str) -> Iterator[dict[str, Any]]:
        """Results for the calls left without one (see the module doc)."""
        calls, self.open_calls = self.open_calls, {}
        for call, name in calls.items():
            yield self.event("tool.execution_start", {"toolCallId": call, "toolName": name,
                                                      "arguments": {}}, when)
            yield self.event("tool.execution_complete", {
                "toolCallId": call, "success": False, "error": {"message": INTERRUPTED}}, when)

    def _compaction_data(self, entry: Entry) -> dict[str, Any]:
        kept = entry.data.get(EXTRA) if self.own else None
        return kept if isinstance(kept, dict) and kept.get("success") is True else {}

    def compaction_start(self, entry: Entry, when: str) -> dict[str, Any]:
        kept = self._compaction_data(entry)
        start = kept.get("start") if isinstance(kept.get("start"), dict) else {}
        attempt = kept.get("compactionAttemptId") if isinstance(
            kept.get("compactionAttemptId"), str) else self.job.ids.uuid4()
        self.attempts[entry.id] = attempt
        return self.event("session.compaction_start",
                          {**start, "compactionAttemptId": attempt}, when)

    def compaction_complete(self, entry: Entry, when: str) -> dict[str, Any]:
        """Copilot's applied compaction: from here on it sends the summary, then what was
        said after the compaction started (`compaction_start`)."""
        kept = self._compaction_data(entry)
        data = {k: v for k, v in kept.items() if k not in (
            "start", "modelEvents", "checkpointPath", "checkpointNumber")}
        data.update(success=True, outcome="applied", compactionAttemptId=self.attempts[entry.id],
                    summaryContent=str(entry.data.get("summary") or ""))
        return self.event("session.compaction_complete", data, when)


def workspace_yaml(job: BranchToWrite, session_id: str) -> str:
    now = stamp(job.now)
    # JSON strings are YAML's double-quoted scalars
    fields = [("id", session_id), ("cwd", job.cwd), ("client_name", "github/cli"),
              ("name", job.title)]
    lines = [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields]
    lines += ["user_named: true", "summary_count: 0", "fork_count: 0",
              f"created_at: {now}", f"updated_at: {now}"]
    return "\n".join(lines) + "\n"


def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = job.ids.uuid4()
    return sessions_folder(job) / session_id / LOG_NAME, session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    write_new_file(target, _Events(job, session_id).all())
    yaml = target.parent / "workspace.yaml"
    try:
        with open(yaml, "x", encoding="utf-8") as out:
            out.write(workspace_yaml(job, session_id))
    except OSError:
        pass          # (Copilot resumes a log without one: its name only is lost)


def adds_nothing(line: Any) -> bool:
    """Events Copilot writes as it resumes or quits without carrying the conversation on."""
    return isinstance(line, dict) and line.get("type") in (
        "session.resume", "session.shutdown", "session.model_change", "session.info")


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("a Copilot CLI sub-agent runs inside its parent's session and cannot "
                          "be carried on on its own; open its parent session and press o there")
    if own_end(job, FORMAT, _own_entry) is not None:
        plan.native_id = session_id
        plan.summary = (f"The branch ends where Copilot CLI's session {session_id} ends: Copilot "
                        "resumes it (nothing to write)")
        plan.argv = command(session_id)
        return
    new_session(plan, job, sessions_folder(job), sys.modules[__name__],
                lambda target, new_id: write(job, target, new_id))
    plan.argv = command(plan.native_id)


def _own_entry(entry_id: str) -> bool:
    """Whether an entry is one of Copilot's events (not one made in arbor): event ids are
    uuids (a compaction's request `<uuid>#request`, an odd line `L<n>`)."""
    head = entry_id.split("#", 1)[0]
    return len(head) == 36 and head.count("-") == 4
