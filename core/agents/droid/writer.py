"""`o` / `arbor resume` for Factory droid: a branch as a new droid session, written the way
droid's own `--fork` writes one, then carried on with `droid --fork <new id>` from the
project folder (droid's `--resume`/`-s` fetch a session from Factory's servers; `--fork`
reads the local file: tests/test_agent_lab.py, tests/test_import_droid.py).

droid's fork is a new `~/.factory/sessions/<cwd, "/" as "-">/<new uuid>.jsonl`: a
`session_start` with the new id, `parent` (the session forked) and `forkedAtMessageId`
(the message it stops at), then copies of the records of the path, with their ids,
chained by `parentId`, each turn's `agent_turn_outcome` after it. arbor writes the same for
the path from the root to the branch's head (or the entry chosen): a record per message,
the tool results of one droid record together again, the fields droid wrote beside a
message kept, and the session called after the branch (`BranchToWrite.title`). A
compaction (droid's own format was never seen) is its summary as a user message, then what
it kept. A tool call left without a result at the end gets droid's "interrupted" answer so
that the model is never sent a call without its result. No `settings.json` is written:
droid's fork writes the tokens of its own requests there, and this session has made none.

Where the branch ends where droid's own file ends, nothing is written: droid forks its
own session (`droid --fork <id>`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import COMPACTION, MESSAGE, Entry
from core.agents.native import (
    BranchToWrite, ResumeError, as_text, branch_summary_text, entry_stamp, has_uuid, home, own_end,
    write_new_file)
from .importer import CONTEXT_PREFIX, FORMAT

EXECUTABLE = "droid"
INTERRUPTED = "Tool execution was interrupted"     # (droid's own words for it)
_RESULT = re.compile(r"^(.*):result:(.*)$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# fields the importer keeps beside a message that belong to the record, not the message
_NOT_INNER = frozenset({"context"})


def sessions_dir(env: Mapping[str, str]) -> Path:
    return home(env) / ".factory" / "sessions"


def project_dir(cwd: str, env: Mapping[str, str]) -> Path:
    """droid's folder for a working directory: the path with every "/" as "-"."""
    return sessions_dir(env) / cwd.replace("/", "-")


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "--fork", session_id]


# ------------------------------------------------------------------ blocks
def block_of(block: dict[str, Any], own: bool) -> dict[str, Any] | None:
    """An arbor content block as droid's (Anthropic-style); None for one to leave out."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "thinking":
        out = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if block.get("thinkingSignature"):
            out["signature"] = block["thinkingSignature"]
        return out
    if kind == "toolCall":
        return {"type": "tool_use", "id": str(block.get("id", "")),
                "name": str(block.get("name", "")), "input": block.get("arguments") or {}}
    if kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type":
                                            block.get("mimeType", ""),
                                            "data": block.get("data", "")}}
    if own:
        return dict(block)        # (a block droid wrote that arbor keeps as it was)
    text = json.dumps(block, ensure_ascii=False)
    return {"type": "text", "text": text}


def _blocks(content: Any, own: bool) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            converted = block_of(block, own)
            if converted is not None:
                out.append(converted)
    return out


def _result_block(message: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    blocks = _blocks(content, True)
    body: Any = blocks[0]["text"] if len(blocks) == 1 and blocks[0]["type"] == "text" else blocks
    if not blocks:
        body = ""
    return {"type": "tool_result", "tool_use_id": str(message.get("toolCallId", "")),
            "is_error": bool(message.get("isError")), "content": body, **kept}


# ----------------------------------------------------------------- records
class _Records:
    """The records of the path, in order (see the module doc)."""

    def __init__(self, job: BranchToWrite):
        self.job = job
        self.own = job.session.source == FORMAT
        meta = job.metadata
        records = meta.get("records") if self.own else None
        self.outcomes = {r.get("turnId"): r for r in records or ()
                         if isinstance(r, dict) and r.get("type") == "agent_turn_outcome"}
        self.parent: str | None = None
        self.turn: str | None = None
        self.last_id: str | None = None
        self.open_calls: dict[str, str] = {}       # tool_use id -> its name, until its result

    def new_id(self, entry_id: str) -> str:
        return entry_id if self.own and entry_id else self.job.ids.uuid4()

    def record(self, rid: str, message: dict[str, Any], stamp: str) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "id": rid}
        if self.parent is not None:
            out["parentId"] = self.parent
        out["timestamp"] = stamp
        out["message"] = message
        self.parent = self.last_id = rid
        return out

    def turn_ends(self) -> Iterator[dict[str, Any]]:
        if self.turn is not None and self.turn in self.outcomes:
            yield self.outcomes[self.turn]
        self.turn = None

    def user(self, rid: str, message: dict[str, Any], stamp: str, context: bool = False
             ) -> Iterator[dict[str, Any]]:
        yield from self.turn_ends()
        if not context:
            self.turn = rid
        yield self.record(rid, message, stamp)

    def all(self) -> Iterator[dict[str, Any]]:
        entries = [e for e in self.job.path()]
        start = 0
        for n, entry in enumerate(entries):
            if entry.type == COMPACTION:
                start = n
        group: list[Entry] = []        # the tool results of one droid record
        for n, entry in enumerate(entries[start:]):
            if entry.type == COMPACTION:
                yield from self.summary(entry)
                continue
            if entry.type != MESSAGE or not entry.message:
                continue
            message = entry.message
            if message.get("role") == "toolResult":
                group.append(entry)
                match = _RESULT.match(entry.id)
                if self.own and match:
                    continue            # (more of the same record follow)
                yield from self.results(group)
                group = []
                continue
            if group and self.own and message.get("role") == "user" and \
                    _RESULT.match(group[-1].id) and _RESULT.match(group[-1].id).group(1) == entry.id:
                yield from self.message(entry, group)      # (results and text: one record)
                group = []
                continue
            if group:
                yield from self.results(group)
                group = []
            yield from self.message(entry)
        if group:
            yield from self.results(group)
        yield from self.interrupted()

    def summary(self, entry: Entry) -> Iterator[dict[str, Any]]:
        """A compaction: its summary as a user message, then the entries it kept."""
        text = branch_summary_text(entry.data.get("summary", ""))
        stamp = entry_stamp(entry.timestamp, self.job.now)
        yield from self.user(self.job.ids.uuid4(), {"role": "user", "content": [
            {"type": "text", "text": text}]}, stamp)
        for kept in self.job.kept_before(entry):
            if kept.type == MESSAGE and kept.message:
                if kept.message.get("role") == "toolResult":
                    yield from self.results([kept])
                else:
                    yield from self.message(kept)

    def extras(self, entry: Entry) -> dict[str, Any]:
        kept = entry.data.get(FORMAT) if self.own else None
        return dict(kept) if isinstance(kept, dict) else {}

    def message(self, entry: Entry, results: list[Entry] = ()) -> Iterator[dict[str, Any]]:
        message = entry.message or {}
        role = message.get("role")
        stamp = entry_stamp(entry.timestamp, self.job.now)
        extras = self.extras(entry)
        inner = {k: v for k, v in extras.items() if k not in _NOT_INNER}
        rid = self.new_id(entry.id)
        if role == "assistant":
            yield from self.interrupted()
            content = _blocks(message.get("content"), self.own)
            for block in content:
                if block.get("type") == "tool_use":
                    self.open_calls[block["id"]] = block["name"]
            out: dict[str, Any] = {"role": "assistant", "content": content}
            response = message.get("responseId")
            if isinstance(response, str) and response and not response.startswith(f"{FORMAT}:"):
                out["openaiMessageId"] = response
            model = inner.pop("modelId", None) or message.get("model")
            if isinstance(model, str) and model:
                out["modelId"] = model
            out.update(inner)
            yield self.record(rid, out, stamp)
            return
        blocks = []
        for result in results:
            blocks.append(_result_block(result.message or {}, self.extras(result)))
            self.open_calls.pop(str((result.message or {}).get("toolCallId", "")), None)
        yield from self.interrupted()
        if role == "user":
            content = blocks + _blocks(message.get("content"), self.own)
        else:       # (a message of a kind droid has no role for: its text)
            content = [{"type": "text", "text": as_text(message)}]
        out = {"role": "user", "content": content, **inner}
        context = self.own and (extras.get("context") is True or entry.id.startswith(CONTEXT_PREFIX))
        yield from self.user(rid, out, stamp, context=context)

    def results(self, group: list[Entry]) -> Iterator[dict[str, Any]]:
        if not group:
            return
        blocks = []
        for entry in group:
            message = entry.message or {}
            blocks.append(_result_block(message, self.extras(entry)))
            self.open_calls.pop(str(message.get("toolCallId", "")), None)
        last = group[-1]
        match = _RESULT.match(last.id)
        rid = self.new_id(match.group(1) if match and self.own else last.id)
        yield self.record(rid, {"role": "user", "content": blocks},
                          entry_stamp(last.timestamp, self.job.now))

    def interrupted(self) -> Iterator[dict[str, Any]]:
        """Results for the calls left without one (see the module doc)."""
        if not self.open_calls:
            return
        blocks = [{"type": "tool_result", "tool_use_id": call, "is_error": True,
                   "content": INTERRUPTED} for call in self.open_calls]
        self.open_calls = {}
        yield self.record(self.job.ids.uuid4(), {"role": "user", "content": blocks},
                          entry_stamp(None, self.job.now))


def records(job: BranchToWrite, session_id: str) -> Iterator[dict[str, Any]]:
    header = job.metadata.get("header") if job.session.source == FORMAT else None
    header = header if isinstance(header, dict) else {}
    start: dict[str, Any] = {"type": "session_start", "id": session_id, "title": job.title,
                             "owner": header.get("owner", "unknown"), "version": 2,
                             "cwd": job.cwd}
    if isinstance(header.get("hostId"), str):
        start["hostId"] = header["hostId"]
    start["isSessionTitleManuallySet"] = True
    if job.provenance:      # a branch handed over from another agent: where it came from
        start["handoff"] = job.provenance
    body = _Records(job)
    lines = list(body.all())
    source = job.metadata.get("sessionId") if job.session.source == FORMAT else None
    if isinstance(source, str) and source:
        start["parent"] = source
        if body.last_id is not None:
            start["forkedAtMessageId"] = body.last_id
    yield start
    yield from lines


def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = job.ids.uuid4()
    return project_dir(job.cwd, job.env) / f"{session_id}.jsonl", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    write_new_file(target, records(job, session_id))


def adds_nothing(line: Any) -> bool:
    """droid forks a session rather than appending to it: anything appended is new."""
    return False


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("a droid sub-agent's session cannot be carried on on its own; "
                          "open its parent session and press o there")
    if own_end(job, FORMAT, has_uuid) is not None:
        plan.native_id = session_id
        plan.summary = (f"The branch ends where droid's session {session_id} ends: droid forks "
                        "it and goes on (nothing to write)")
        plan.argv = command(session_id)
        return
    import sys

    new_session(plan, job, project_dir(plan.cwd, env), sys.modules[__name__],
                lambda target, new_id: write(job, target, new_id), forked_from=session_id)
    plan.argv = command(plan.native_id)
