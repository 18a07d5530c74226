"""`o` / `arbor resume` for opencode: a branch as a new opencode session, loaded through
opencode's own `opencode import FILE` and carried on with `opencode --session <id>`, both
run from the project folder (docs/agents/opencode.md).

arbor never writes into opencode's live database. It writes the branch in the format of
`opencode export` (`{"info": session, "messages": [{"info": message, "parts": [...]}]}`)
to `<opencode data dir>/arbor/<session id>.json`, and the plan runs `opencode import`
before opencode itself (`ResumePlan.before`): opencode reads the file with its own schema
and inserts the session, its messages and parts (a second import of the same file adds
nothing: opencode inserts messages and parts only when their ids are new).

The session is written the way opencode's own fork (`--fork`, `/fork`) copies one: every
message and part under a new id, in order (opencode loads a session's messages by id),
with its original times and the fields opencode wrote (`opencode` in each entry), the
`parentID` of each answer re-pointed to the new id of its prompt. Each step of an
assistant turn is one assistant message (what the model is sent is the same); a tool
call's part holds its result (the `toolResult` entry after it) as opencode's `tool` part
does, and a call left without one gets opencode's own aborted state ("Tool execution
aborted"), so the model is never sent a call without its result. A compaction is
opencode's: the user message with a `compaction` part (its `tail_start_id` naming the
first message a compaction made in arbor keeps) and the assistant's summary message;
opencode sends from there on only those, the kept messages and what follows. The session
is called after the branch (`BranchToWrite.title`).

Where the branch ends where opencode's own session ends, nothing is written: opencode
resumes its own session (`opencode --session <id>`).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from core.model.entries import COMPACTION, MESSAGE, Entry, content_text
from core.usage.tokens import MODEL_REQUEST
from core.agents.native import (
    BranchToWrite, ResumeError, as_text, env_dir, home, own_end, write_new_file)
from .importer import EXTRA, FORMAT

EXECUTABLE = "opencode"
VERSION = "1.18.33"          # the opencode whose export format this is (docs/agents/opencode.md)
ABORTED = "Tool execution aborted"      # (opencode's words for a call cut short)
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# fields of a tool part's state (the rest the importer kept beside a result is the part's)
_STATE = frozenset({"status", "title", "metadata", "time", "attachments", "raw"})


def data_dir(env: Mapping[str, str]) -> Path:
    """opencode's data folder: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`."""
    base = env_dir(env, "XDG_DATA_HOME") or home(env) / ".local" / "share"
    return base / "opencode"


def sessions_folder(job: BranchToWrite) -> Path:
    """Where arbor writes the files it has opencode import."""
    return data_dir(job.env) / "arbor"


def configured_model(env: Mapping[str, str], cwd: str) -> dict[str, str] | None:
    """The model opencode uses for a new prompt, as its configuration names it
    (`"model": "provider/model"`): `$OPENCODE_CONFIG`, the project's `opencode.json`, then
    the user's (`$XDG_CONFIG_HOME/opencode`); else the model it used last (its state's
    `model.json`). None when none names one (a file in JSON with comments is passed over)."""
    config = env_dir(env, "XDG_CONFIG_HOME") or home(env) / ".config"
    state = env_dir(env, "XDG_STATE_HOME") or home(env) / ".local" / "state"
    files = [env_dir(env, "OPENCODE_CONFIG")] if env.get("OPENCODE_CONFIG") else []
    files += [Path(cwd) / name for name in ("opencode.json", "opencode.jsonc")] if cwd else []
    files += [config / "opencode" / name for name in ("opencode.json", "opencode.jsonc",
                                                       "config.json")]
    for file in files:
        try:
            named = json.loads(file.read_text(encoding="utf-8")).get("model")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(named, str) and "/" in named:
            provider, model = named.split("/", 1)
            return {"providerID": provider, "modelID": model}
    try:
        recent = json.loads((state / "opencode" / "model.json").read_text(encoding="utf-8"))
        last = recent["recent"][0]
        if isinstance(last.get("providerID"), str) and isinstance(last.get("modelID"), str):
            return {"providerID": last["providerID"], "modelID": last["modelID"]}
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        pass
    return None


def database(env: Mapping[str, str]) -> Path:
    """opencode's database: `$OPENCODE_DB`, else `opencode.db` in its data folder."""
    return env_dir(env, "OPENCODE_DB") or data_dir(env) / "opencode.db"


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "--session", session_id]


def continued_in(job: BranchToWrite) -> Path:
    """Where opencode carries a session on: its database, not the file it imported."""
    return database(job.env)


def before(file: Path) -> list[list[str]]:
    """What runs before opencode, from the same folder: its own import of the file."""
    return [[EXECUTABLE, "import", str(file)]]


# -------------------------------------------------------------------------- ids
class _Ids:
    """opencode's ids: a prefix, 12 hex digits of (milliseconds × 4096 + a counter), the
    digits' complement for a session (newest first), then 14 random base-62 characters."""

    def __init__(self, job: BranchToWrite):
        self.millis = int(job.now.timestamp() * 1000)
        self.count = 0
        self.token = job.ids.token

    def _make(self, prefix: str, descending: bool = False) -> str:
        self.count += 1
        value = self.millis * 0x1000 + self.count
        if descending:
            value = ~value
        digits = f"{value & 0xFFFFFFFFFFFF:012x}"
        noise = bytes.fromhex(self.token(14))
        return f"{prefix}_{digits}{''.join(_BASE62[b % 62] for b in noise)}"

    def session(self) -> str:
        return self._make("ses", descending=True)

    def message(self) -> str:
        return self._make("msg")

    def part(self) -> str:
        return self._make("prt")


def new_session_id(job: BranchToWrite) -> str:
    return _Ids(job).session()


# ---------------------------------------------------------------------- messages
def _millis(entry: Entry, message: dict[str, Any] | None, fallback: int) -> int:
    stamp = (message or {}).get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and stamp > 0:
        return int(stamp)
    if entry.timestamp:
        try:
            return int(datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00"))
                       .timestamp() * 1000)
        except ValueError:
            pass
    return fallback


def _tokens(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}

    def count(key: str) -> int:
        value = usage.get(key)
        return value if type(value) is int and value > 0 else 0

    tokens = {"input": count("input"), "output": count("output"),
              "reasoning": count("reasoning"),
              "cache": {"read": count("cacheRead"), "write": count("cacheWrite")}}
    tokens["total"] = tokens["input"] + tokens["output"] + tokens["cache"]["read"] + \
        tokens["cache"]["write"]
    return tokens


def _cost(usage: Any) -> float:
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else cost
    return float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) else 0.0


class _Export:
    """The branch as opencode's export (see the module doc)."""

    def __init__(self, job: BranchToWrite, session_id: str):
        self.job = job
        self.session_id = session_id
        self.own = job.session.source == FORMAT
        self.ids = _Ids(job)
        self.now = int(job.now.timestamp() * 1000)
        self.messages: list[dict[str, Any]] = []
        self.new_ids: dict[str, str] = {}          # entry id -> its message's new id
        self.prompt: str | None = None             # the last user message's new id
        self.model = self._model()
        self.assistant: dict[str, Any] | None = None    # the message open for tool results
        self.open_calls: dict[str, dict[str, Any]] = {}
        self.request: dict[str, Any] | None = None      # a compaction's request, until it
        self.compacting: str | None = None              # the compaction's user message

    def _model(self) -> dict[str, str]:
        meta = self.job.metadata.get("session")
        model = meta.get("model") if self.own and isinstance(meta, dict) else None
        if isinstance(model, dict) and isinstance(model.get("id"), str):
            return {"providerID": str(model.get("providerID") or ""), "modelID": model["id"]}
        if not self.own:
            # another agent's branch: opencode carries a session on with the model of its
            # last prompt, which must be one of its own providers' (another agent's model
            # is refused: "Model not found"), so the model opencode is set to use
            configured = configured_model(self.job.env, self.job.cwd)
            if configured is not None:
                return configured
        for entry in self.job.path():
            message = entry.message or {}
            if message.get("role") == "assistant" and isinstance(message.get("model"), str):
                return {"providerID": str(message.get("provider") or ""),
                        "modelID": message["model"]}
        return {"providerID": "", "modelID": ""}

    # ---- writing messages
    def _message(self, info: dict[str, Any], entry_id: str) -> dict[str, Any]:
        mid = self.ids.message()
        info = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
        out = {"info": {**info, "id": mid, "sessionID": self.session_id}, "parts": []}
        self.messages.append(out)
        self.new_ids[entry_id] = mid
        return out

    def _part(self, message: dict[str, Any], part: dict[str, Any]) -> dict[str, Any]:
        part = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
        part.update(id=self.ids.part(), sessionID=self.session_id,
                    messageID=message["info"]["id"])
        message["parts"].append(part)
        return part

    def _kept(self, entry: Entry) -> dict[str, Any]:
        kept = entry.data.get(EXTRA) if self.own else None
        return kept if isinstance(kept, dict) else {}

    def user(self, entry: Entry, created: int) -> None:
        self.close()
        message = entry.message or {}
        kept = self._kept(entry)
        info = kept.get("info") if isinstance(kept.get("info"), dict) else {}
        info = {"role": "user", "time": {"created": created}, "agent": "build",
                "model": dict(self.model), **info}
        info["role"] = "user"
        out = self._message(info, entry.id)
        content = message.get("content")
        if message.get("role") != "user":
            content = as_text(message)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                extra = block.get(EXTRA) if self.own and isinstance(block.get(EXTRA), dict) else {}
                self._part(out, {"type": "text", "text": str(block.get("text", "")), **extra})
            elif block.get("type") == "image":
                self._part(out, {"type": "file", "mime": str(block.get("mimeType") or ""),
                                 "url": f"data:{block.get('mimeType') or ''};base64,"
                                        f"{block.get('data') or ''}"})
            else:
                self._part(out, {"type": "text", "text": json.dumps(block, ensure_ascii=False)})
        for part in kept.get("parts") or ():
            if isinstance(part, dict) and isinstance(part.get("type"), str):
                self._part(out, part)
        if not out["parts"]:
            self._part(out, {"type": "text", "text": ""})
        self.prompt = out["info"]["id"]

    def assistant_step(self, entry: Entry, created: int) -> None:
        self.close()
        message = entry.message or {}
        kept = self._kept(entry)
        info = dict(kept.get("info")) if isinstance(kept.get("info"), dict) else {}
        previous = self.assistant["info"] if self.assistant is not None else {}
        usage = message.get("usage")
        base = {"role": "assistant", "time": {"created": created, "completed": created},
                "mode": previous.get("mode", "build"), "agent": previous.get("agent", "build"),
                "path": previous.get("path") or {"cwd": self.job.cwd, "root": "/"},
                "modelID": str(message.get("model") or self.model["modelID"]),
                "providerID": str(message.get("provider") or self.model["providerID"])}
        info = {**base, **info, "role": "assistant", "parentID": self._parent()}
        info.setdefault("cost", _cost(usage))
        info.setdefault("tokens", _tokens(usage))
        if not isinstance((info.get("time") or {}).get("completed"), (int, float)):
            info["time"] = {**(info.get("time") or {}), "completed": created}
        out = self._message(info, entry.id)
        self._part(out, {"type": "step-start"})
        calls = False
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                self._part(out, {"type": "text", "text": str(block.get("text", "")),
                                 "time": {"start": created, "end": created}})
            elif kind == "thinking":
                self._part(out, {"type": "reasoning", "text": str(block.get("thinking", "")),
                                 "time": {"start": created, "end": created}})
            elif kind == "toolCall":
                args = block.get("arguments")
                call = str(block.get("id") or "")
                part = self._part(out, {"type": "tool", "tool": str(block.get("name") or ""),
                                        "callID": call, "state": {
                                            "status": "error",
                                            "input": args if isinstance(args, dict) else {"value": args},
                                            "error": ABORTED,
                                            "metadata": {"interrupted": True},
                                            "time": {"start": created, "end": created}}})
                self.open_calls[call] = part
                calls = True
        finish = [p for p in kept.get("parts") or () if isinstance(p, dict)
                  and p.get("type") == "step-finish"]
        others = [p for p in kept.get("parts") or () if isinstance(p, dict)
                  and isinstance(p.get("type"), str) and p.get("type") != "step-finish"]
        for part in others:
            self._part(out, part)
        if finish:
            self._part(out, finish[0])
        else:
            self._part(out, {"type": "step-finish", "reason": "tool-calls" if calls else "stop",
                             "cost": _cost(usage), "tokens": _tokens(usage)})
        info = out["info"]
        info.setdefault("finish", "tool-calls" if calls else "stop")
        self.assistant = out

    def result(self, entry: Entry, created: int) -> None:
        message = entry.message or {}
        call = str(message.get("toolCallId") or "")
        part = self.open_calls.pop(call, None)
        if part is None:        # (a result without its call on the branch: its text)
            self.user(entry, created)
            return
        kept = self._kept(entry)
        state = part["state"]
        text = content_text(message.get("content"))
        side = {k: v for k, v in kept.items() if k in _STATE and k != "status"}
        start = (side.get("time") or {}).get("start") if isinstance(side.get("time"), dict) \
            else None
        new = {"status": "error" if message.get("isError") else "completed",
               "input": state["input"]}
        if new["status"] == "completed":
            new.update(output=text, title=str(side.get("title") or ""),
                       metadata=side.get("metadata") if isinstance(side.get("metadata"), dict) else {},
                       time={"start": start if isinstance(start, (int, float)) else created,
                             "end": created})
            if isinstance(side.get("attachments"), list):
                new["attachments"] = side["attachments"]
        else:
            new.update(error=text, time={"start": start if isinstance(start, (int, float))
                                         else created, "end": created})
            if isinstance(side.get("metadata"), dict):
                new["metadata"] = side["metadata"]
        part["state"] = new
        for key, value in kept.items():          # the part's own fields
            if key not in _STATE and key not in ("id", "sessionID", "messageID", "input",
                                                 "output", "error"):
                part.setdefault(key, value)

    def close(self) -> None:
        """Calls of the last step left without a result keep opencode's aborted state."""
        self.open_calls = {}

    def _parent(self) -> str:
        if self.prompt is None:           # (a branch that starts with an answer)
            self.user_text("", self.now)
        return self.prompt or ""

    def user_text(self, text: str, created: int) -> None:
        info = {"role": "user", "time": {"created": created}, "agent": "build",
                "model": dict(self.model)}
        out = self._message(info, f"arbor:{len(self.messages)}")
        self._part(out, {"type": "text", "text": text})
        self.prompt = out["info"]["id"]

    def compaction_request(self, entry: Entry, created: int) -> None:
        self.close()
        kept = self._kept(entry)
        info = kept.get("info") if isinstance(kept.get("info"), dict) else {}
        info = {"role": "user", "time": {"created": created}, "agent": "build",
                "model": dict(self.model), **info}
        out = self._message(info, entry.id)
        for part in kept.get("parts") or ():
            if isinstance(part, dict) and isinstance(part.get("type"), str):
                self._part(out, part)
        part = kept.get("part") if isinstance(kept.get("part"), dict) else {"auto": True}
        part = {**part, "type": "compaction"}
        if part.get("tail_start_id"):
            part.pop("tail_start_id")       # (re-pointed only for compactions made in arbor)
        self._part(out, part)
        self.compacting = out["info"]["id"]
        self.prompt = out["info"]["id"]

    def compaction(self, entry: Entry, created: int) -> None:
        self.close()
        if self.compacting is None:          # a compaction made in arbor (or another agent)
            kept = self.job.kept_before(entry)
            first = next((self.new_ids[e.id] for e in kept if e.id in self.new_ids), None)
            out = self._message({"role": "user", "time": {"created": created},
                                 "agent": "build", "model": dict(self.model)}, f"{entry.id}:request")
            part: dict[str, Any] = {"type": "compaction", "auto": False}
            if first is not None:
                part["tail_start_id"] = first
            self._part(out, part)
            self.compacting = out["info"]["id"]
            self.prompt = self.compacting
        kept_info = self._kept(entry).get("info")
        info = dict(kept_info) if isinstance(kept_info, dict) else {}
        request = self.request or {}
        usage = request.get("usage")
        info = {"role": "assistant", "time": {"created": created, "completed": created},
                "mode": "compaction", "agent": "compaction",
                "path": {"cwd": self.job.cwd, "root": "/"},
                "modelID": str(request.get("model") or self.model["modelID"]),
                "providerID": str(request.get("provider") or self.model["providerID"]),
                "cost": _cost(usage), "tokens": _tokens(usage), "finish": "stop", **info,
                "summary": True, "parentID": self.compacting}
        out = self._message(info, entry.id)
        self._part(out, {"type": "step-start"})
        self._part(out, {"type": "text", "text": str(entry.data.get("summary") or "")})
        self._part(out, {"type": "step-finish", "reason": "stop", "cost": _cost(usage),
                         "tokens": _tokens(usage)})
        self.compacting = None
        self.request = None
        self.assistant = None

    # ---- the branch
    def build(self) -> list[dict[str, Any]]:
        fallback = self.now
        for entry in self.job.path():
            message = entry.message if entry.type == MESSAGE else None
            created = _millis(entry, message, fallback)
            fallback = created
            if entry.type == f"{FORMAT}:compaction-request":
                self.compaction_request(entry, created)
            elif entry.type == MODEL_REQUEST:
                request = entry.data.get("request")
                self.request = request if isinstance(request, dict) else None
            elif entry.type == COMPACTION:
                self.compaction(entry, created)
            elif message:
                role = message.get("role")
                if role == "assistant":
                    self.assistant_step(entry, created)
                elif role == "toolResult":
                    self.result(entry, created)
                else:
                    self.user(entry, created)
        self.close()
        return self.messages


def export(job: BranchToWrite, session_id: str) -> dict[str, Any]:
    """The branch as `opencode export` writes a session (see the module doc)."""
    messages = _Export(job, session_id).build()
    row = job.metadata.get("session") if job.session.source == FORMAT else None
    row = row if isinstance(row, dict) else {}
    now = int(job.now.timestamp() * 1000)
    created = messages[0]["info"]["time"]["created"] if messages else now
    info: dict[str, Any] = {
        "id": session_id, "slug": str(row.get("slug") or "arbor-branch"),
        "projectID": str(row.get("project_id") or "global"), "directory": job.cwd,
        "title": job.title, "version": str(row.get("version") or VERSION),
        "time": {"created": created, "updated": now}}
    if job.provenance:      # a branch handed over from another agent: where it came from
        info["handoff"] = job.provenance
    if isinstance(row.get("agent"), str):
        info["agent"] = row["agent"]
    if isinstance(row.get("model"), dict):
        info["model"] = row["model"]
    return {"info": info, "messages": messages}


# ------------------------------------------------------------------- the slot
def place(job: BranchToWrite) -> tuple[Path, str]:
    session_id = new_session_id(job)
    return sessions_folder(job) / f"{session_id}.json", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    # one line of JSON: opencode reads the whole file; arbor knows it by its first line
    write_new_file(target, [export(job, session_id)])


def adds_nothing(line: Any) -> bool:
    """opencode never writes to the file (it carries the session on in its database)."""
    return True


def carried_on(env: Mapping[str, str], session_id: str, file: Path) -> bool:
    """Whether opencode's database holds more messages of the session than the file arbor
    wrote for it (opencode carried it on): then it is another conversation. Asked through
    SQLite, read-only; False when there is no database or no such session yet."""
    from .importer import message_count

    found = database(env)
    if not found.is_file():
        return False
    try:
        written = len(json.loads(file.read_text(encoding="utf-8")).get("messages") or ())
    except (OSError, ValueError, AttributeError):
        return True
    count = message_count(found, session_id)
    return count > written


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    session = job.session
    meta = job.metadata
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else ""
    if session.kind == "subagent":
        raise ResumeError("an opencode sub-agent's session is carried on from its parent "
                          "session: open it and press o there")
    own_file = str(meta.get("path") or "").endswith(".db")
    if own_file and own_end(job, FORMAT, lambda entry_id: entry_id.startswith(("msg_", "prt_"))):
        plan.native_id = session_id
        plan.summary = (f"The branch ends where opencode's session {session_id} ends: opencode "
                        "resumes it (nothing to write)")
        plan.argv = command(session_id)
        plan.continued_in = database(env)
        return
    module = sys.modules[__name__]
    new_session(plan, job, sessions_folder(job), module,
                lambda target, new_id: write(job, target, new_id))
    if plan.reused and not plan.dry_run and carried_on(env, plan.native_id, plan.file):
        # opencode went on with the session written before: this branch is written anew
        from core.agents import reuse

        plan.file, plan.native_id = place(job)
        write(job, plan.file, plan.native_id)
        plan.reused = False
        reuse.remember(job, reuse.fingerprint(job, session.source, sessions_folder(job)),
                       reuse.Written(plan.file, plan.native_id))
        plan.summary = (f"Wrote the branch as a new opencode session {plan.native_id} titled "
                        f"\"{job.title}\" ({plan.file})")
    plan.before = before(plan.file)
    plan.continued_in = continued_in(job)
    plan.argv = command(plan.native_id)
