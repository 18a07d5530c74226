"""`o` / `arbor resume` for Qwen Code: a branch as a new Qwen Code session, written the way
Qwen Code's own `--resume <id> --fork-session` writes one: a new file
`<runtime dir>/projects/<project>/chats/<new session id>.jsonl` holding the records of the
path from the root to the branch's head, with the same uuids, each under the new
`sessionId` and with `forkedFrom` naming the record it copies, chained by `parentUuid`.
Qwen Code takes the file's last record as the leaf, so it resumes exactly that branch:
`qwen --resume <id>` from the project folder.

A record is written back from its entry: the message as Gemini `parts`
(core/agents/gemini/parts.py), and the fields Qwen Code wrote beside it (kept under
`qwen`, and the session's `lineDefaults`). A compaction is the `chat_compression`
record Qwen Code wrote (its `compressedHistory` is what it sends from there on) or, for
one made in arbor, one built from its summary. Entries Qwen Code has no record for
(labels, arbor's own) are left out, and so are the records its fork leaves out (titles,
where the session came from); the chain goes on through them. A `custom_title` record
ends the file, as the fork writes one: the session is called after the branch
(`BranchToWrite.title`).

The runtime folder is `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else `~/.qwen`; the
project's folder name is its path with every character but ASCII letters and digits as
`-` (Qwen Code's `sanitizeCwd`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import COMPACTION, MESSAGE
from core.usage.tokens import MODEL_REQUEST
from core.agents.native import BranchToWrite, as_text, entry_stamp, env_dir, home, write_new_file
from core.agents.gemini.parts import parts_of
from .importer import EXTRA, FORMAT

NAME = "qwen"
EXECUTABLE = "qwen"
_ACK = "Got it. Thanks for the additional context!"
_SPLIT = re.compile(r"^(.*)#(\d+)$")
# records Qwen Code's fork leaves out (a fork is a new top-level session)
_NOT_COPIED = frozenset({"session_sources_snapshot", "parent_session", "session_source",
                         "turn_result", "custom_title"})


def runtime_dir(env: Mapping[str, str]) -> Path:
    return env_dir(env, "QWEN_RUNTIME_DIR") or env_dir(env, "QWEN_HOME") or home(env) / ".qwen"


def project_dir(cwd: str, env: Mapping[str, str]) -> Path:
    return runtime_dir(env) / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", cwd)


def records(job: BranchToWrite, session_id: str) -> Iterator[dict[str, Any]]:
    defaults = job.metadata.get("lineDefaults")
    defaults = dict(defaults) if isinstance(defaults, dict) else {}
    for key in ("agentId", "agentName", "isSidechain"):
        defaults.pop(key, None)
    defaults.update(sessionId=session_id, cwd=job.cwd)
    source = job.metadata.get("sessionId") if job.session.source == FORMAT else None
    parent: str | None = None
    held: dict[str, Any] | None = None     # a tool_result record, until its last result
    for entry in job.path():
        record = _record(entry, defaults, job)
        if record is None:
            continue
        split = _SPLIT.match(entry.id)
        if held is not None and split and split.group(1) == held["uuid"] and \
                record["type"] == "tool_result":
            held["message"]["parts"].extend(record["message"]["parts"])
            continue
        if held is not None:
            yield held
            held = None
        record["parentUuid"] = parent
        if isinstance(source, str) and source:
            record["forkedFrom"] = {"sessionId": source, "messageUuid": record["uuid"]}
        parent = record["uuid"]
        if record["type"] == "tool_result":
            held = record
        else:
            yield record
    if held is not None:
        yield held
    # the title, as Qwen Code's fork writes it (the latest custom_title names the session)
    yield {"uuid": job.ids.uuid4(), "parentUuid": parent, **defaults,
           "timestamp": entry_stamp(None, job.now), "type": "system", "subtype": "custom_title",
           "systemPayload": {"customTitle": job.title, "titleSource": "manual"}}


def _record(entry, defaults: dict[str, Any], job: BranchToWrite) -> dict[str, Any] | None:
    data = entry.data
    extra = data.get(EXTRA) if isinstance(data.get(EXTRA), dict) else {}
    extra = {k: v for k, v in extra.items() if k not in ("forkedFrom", "otherParts", "response")}
    base = {"uuid": entry.id, "parentUuid": None, **defaults,
            "timestamp": entry_stamp(entry.timestamp, job.now)}
    if entry.type == MESSAGE:
        message = entry.message or {}
        role = message.get("role")
        if role == "assistant":
            out = {**base, "type": "assistant", **extra,
                   "message": {"role": "model", "parts": parts_of(message.get("content"))}}
            if "model" not in out and isinstance(message.get("model"), str):
                out["model"] = message["model"]
            return out
        if role == "toolResult":
            response = (data.get(EXTRA) or {}).get("response") if isinstance(data.get(EXTRA), dict) else None
            part = {"functionResponse": {"id": message.get("toolCallId"),
                                         "name": message.get("toolName"),
                                         "response": {("error" if message.get("isError") else
                                                       "output"): as_text(message)},
                                         **(response if isinstance(response, dict) else {})}}
            out = {**base, "type": "tool_result", **extra,
                   "message": {"role": "user", "parts": [part]}}
            out.setdefault("toolCallResult", {
                "callId": message.get("toolCallId"),
                "status": "error" if message.get("isError") else "success"})
            return out
        text = as_text(message) if role not in ("user",) else None
        parts = parts_of(message.get("content")) if text is None else [{"text": text}]
        return {**base, "type": "user", **extra, "message": {"role": "user", "parts": parts}}
    if entry.type == COMPACTION:
        if extra.get("subtype") == "chat_compression":
            return {**base, "type": "system", **extra}
        summary = str(data.get("summary") or "")
        # what Qwen Code sends from here on: the summary, and the part the compaction kept
        kept = [content for kept_entry in job.kept_before(entry)
                for content in _contents(kept_entry, defaults, job)]
        return {**base, "type": "system", "subtype": "chat_compression", "systemPayload": {
            "info": {"originalTokenCount": data.get("tokensBefore") or 0,
                     "triggerReason": "manual"},
            "compressedHistory": [{"role": "user", "parts": [{"text": summary}]},
                                  {"role": "model", "parts": [{"text": _ACK}]}, *kept]}}
    if extra.get("subtype") in _NOT_COPIED:
        return None
    if entry.type == MODEL_REQUEST or (entry.type.startswith(f"{FORMAT}:") and
                                       entry.type != f"{FORMAT}:line"):
        return {**base, "type": "system", **extra}    # (a raw record keeps its own type)
    return None


def _contents(entry, defaults: dict[str, Any], job: BranchToWrite) -> list[dict[str, Any]]:
    """An entry as the Gemini contents Qwen Code sends (a message's record, without the rest)."""
    if entry.type != MESSAGE:
        return []
    record = _record(entry, defaults, job)
    return [record["message"]] if record is not None and "message" in record else []


def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = job.ids.uuid4()
    return project_dir(job.cwd, job.env) / "chats" / f"{session_id}.jsonl", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    write_new_file(target, records(job, session_id))


def adds_nothing(line: Any) -> bool:
    """Whether a record Qwen Code appended leaves the conversation where it was."""
    return isinstance(line, dict) and line.get("type") == "system" and \
        line.get("subtype") in ("ui_telemetry", "attribution_snapshot", "session_model",
                                "custom_title")


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "--resume", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """A new session file for the branch (or the one written for it before); Qwen Code's
    own sub-agent files are not sessions it resumes."""
    import sys

    from core.agents.native import ResumeError

    if job.session.kind == "subagent":
        raise ResumeError("a Qwen Code sub-agent's session cannot be resumed on its own; "
                          "open its parent session and press o there")
    new_session(plan, job, project_dir(plan.cwd, env) / "chats", sys.modules[__name__],
                lambda target, new_id: write(job, target, new_id))
    plan.argv = command(plan.native_id)
