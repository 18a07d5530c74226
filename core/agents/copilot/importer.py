"""GitHub Copilot CLI sessions (`~/.copilot/session-state/<uuid>/events.jsonl`, 1.0.x).

Facts: docs/agents/copilot-cli.md. The file is appended to, never rewritten (a resume
appends to it): one event a line, `{type, data, id, timestamp, parentId}`, each event's
`parentId` the event before it. What arbor makes of the events, read whole each time
(entry ids are the event ids, so a second read adds only what is new):

* `user.message`: a user message (`content`, what was typed; `transformedContent`, what
  was sent, kept beside it).
* `assistant.message`: an assistant message, its `reasoningText` as thinking and its
  `toolRequests` as tool calls; the `session.usage_record` with the same `apiCallId`
  (written just before it) is its usage, keyed by that id.
* `tool.execution_complete`: the call's result (an error where `success` is false), with
  its `tool.execution_start` kept beside it.
* `session.compaction_complete`: a `compaction` entry where it was applied (the summary
  Copilot goes on from; a compaction run in the background keeps what was said after it
  started), and the compaction's own request (`compactionTokensUsed`) as a
  `model_request` entry, so that its tokens count; one that was cancelled is only that
  request. The `model.*` events of a compaction's call are kept beside it.
* Sub-agents (a `task` call) run inline: their events carry `parentToolCallId` (their user
  message, `source: agent-<session>`, and system prompt follow `subagent.started`). Each is
  a session of kind `subagent` under its `task` call, its `subagent.*` events kept in its
  metadata; its result is the call's result in the parent.
* `session.start` is the session's metadata (with `workspace.yaml` beside the file);
  `assistant.turn_start`/`turn_end` and the usage records are structure; every other event
  (`system.message`, `session.resume`, `session.shutdown`, model changes, unknown types)
  is kept as it was, in its place (`copilot:<type>`).

`/fork` writes a new session folder whose events.jsonl copies the original's events (same
ids), then a `session.info` (infoType fork, "Forked from "…" (<original id>) as …"): the
session is a `fork` nested under the original, at the last entry they share. `/rewind`
rewrites events.jsonl without the turns it undid and appends a `session.info` (infoType
rewind) whose `parentId` is where it went back to: what follows is a branch from there,
and the undone turns, read before (by the live follow or an earlier import), stay in the
store as their own branch. A file first read after the rewind no longer holds them:
`~/.copilot/session-store.db`'s `turns` keeps their prompt and answer text, read (through
SQLite, read-only) into a branch from the rewind's point (`undone_turns`).

The tree follows `parentId` (an event naming an earlier one is a branch from there); an
event whose parent is not known (Copilot's compaction calls name ids it never wrote) or
belongs to another session of the file (a sub-agent's last event before the parent's next
one) goes on from the newest entry of its own session. A usage record no assistant message
names yet (the response still being written) waits for the next read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.usage.tokens import MODEL_REQUEST
from core.importing.base import (
    SHAPE_ERRORS, FileResult, ProgressTicker, file_mtime, object_lines, odd_shape,
    short_hash, timestamp_of, title_from_text)
from core.importing.nodes import Nodes, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "copilot"
RESUMABLE = False
EXTRA = "copilot"     # the key of what an event holds beside its message
SPAWN_TOOL = "task"
# events that only give the tree its shape (their data is on the entries around them)
_STRUCTURE = frozenset({"assistant.turn_start", "assistant.turn_end"})
# events of a sub-agent being set up, before its own events name its call
_SETUP = frozenset({"subagent.selected", "subagent.configured"})
_WORKSPACE_LIMIT = 1 << 20
_FORKED_FROM = re.compile(r'^Forked from .*?\(([0-9A-Fa-f-]{36})\)')


def usage_of(usage: dict[str, Any]) -> dict[str, int]:
    """A usage record's counts in arbor's shape: `inputTokens` is the whole prompt, the
    cache reads and writes it names included."""
    def count(key: str) -> int:
        value = usage.get(key)
        return value if type(value) is int and value > 0 else 0

    read, write, output = count("cacheReadTokens"), count("cacheWriteTokens"), count("outputTokens")
    return {"input": max(0, count("inputTokens") - read - write), "output": output,
            "cacheRead": read, "cacheWrite": write,
            "reasoning": min(count("reasoningTokens"), output)}


def _ms(stamp: Any) -> int | None:
    moment = timestamp_of(stamp)
    return int(moment.timestamp() * 1000) if moment is not None else None


class _Session:
    """One session of the file: the main one (`call` None) or a sub-agent's."""

    def __init__(self, call: str | None):
        self.call = call
        self.nodes = Nodes()
        self.head: str | None = None
        self.first_prompt = ""
        self.meta: dict[str, Any] = {}
        self.events: list[dict[str, Any]] = []      # subagent.* events (a sub-agent's)

    def add(self, entry_id: str, parent: str | None, kind: str, data: dict[str, Any],
            stamp: Any, line: int) -> str:
        self.head = self.nodes.add(entry_id, parent, kind, data, stamp, line)
        return self.head


class _Read:
    def __init__(self, result: FileResult):
        self.result = result
        self.main = _Session(None)
        self.subs: dict[str, _Session] = {}
        self.owner: dict[str, str | None] = {}      # event id -> its session (None: main)
        self.at: dict[str, str | None] = {}         # event id -> the entry standing there
        self.calls: dict[str, tuple[str | None, str, str, Any]] = {}   # id -> owner, entry, name, args
        self.starts: dict[str, dict[str, Any]] = {}    # tool.execution_start by call id
        self.usage: dict[str, dict[str, Any]] = {}     # usage records by apiCallId
        self.setting_up: list[str] = []             # sub-agents started, not yet prompted
        self.compactions: dict[str, tuple[str | None, int, dict[str, Any]]] = {}
        self.model_events: list[dict[str, Any]] = []
        self.start: dict[str, Any] = {}
        self.forked_from: str | None = None    # `/fork`: the original session's id
        self.rewinds: list[str] = []           # `/rewind`: the event each went back to
        self.prompts: list[str] = []           # what the main session's user messages say
        self.cwd = ""
        self.model = ""
        self.unclaimed = 0

    def session(self, owner: str | None) -> _Session:
        if owner is None:
            return self.main
        found = self.subs.get(owner)
        if found is None:
            found = self.subs[owner] = _Session(owner)
        return found

    # ---------------------------------------------------------------- ownership
    def owner_of(self, kind: str, data: dict[str, Any], parent: Any) -> str | None:
        call = data.get("parentToolCallId")
        if isinstance(call, str) and call:
            return call
        if kind.startswith("tool.execution_"):
            known = self.calls.get(str(data.get("toolCallId")))
            return known[0] if known is not None else None
        if kind == "user.message":
            source = data.get("source")
            if isinstance(source, str) and source.startswith("agent-") and self.setting_up:
                return self._prompted(data.get("content"))
            return None
        if kind in _SETUP or kind == "system.message" or \
                (kind == "session.model_change" and data.get("source") == "agent"):
            owner = self.owner.get(parent) if isinstance(parent, str) else None
            if owner is not None:
                return owner
            if kind != "system.message" and self.setting_up:
                return self.setting_up[0]
        return None

    def _prompted(self, content: Any) -> str:
        """The sub-agent being set up whose `task` prompt this is (else the first)."""
        chosen = self.setting_up[0]
        for call in self.setting_up:
            known = self.calls.get(call)
            args = known[3] if known is not None else None
            if isinstance(args, dict) and args.get("prompt") == content:
                chosen = call
                break
        self.setting_up.remove(chosen)
        return chosen

    def parent(self, parent: Any, owner: str | None) -> str | None:
        """The entry an event of `owner` goes on from (see the module doc)."""
        if isinstance(parent, str) and parent in self.at and self.owner.get(parent) == owner:
            return self.at[parent]
        return self.session(owner).head

    # -------------------------------------------------------------------- lines
    def take(self, d: dict[str, Any], line: int) -> None:
        kind, data, eid = d.get("type"), d.get("data"), d.get("id")
        if not isinstance(kind, str) or not isinstance(data, dict) or \
                not isinstance(eid, str) or not eid:
            raise TypeError("an event without a type, data or an id")
        pid = d.get("parentId")
        stamp = d.get("timestamp")
        if kind == "subagent.started":
            self.subagent_started(d, data, eid, pid)
            return
        owner = self.owner_of(kind, data, pid)
        session = self.session(owner)
        parent = self.parent(pid, owner)
        self.owner[eid] = owner
        if kind == "user.message":
            entry = self.user(session, d, data, parent, line)
        elif kind == "assistant.message":
            entry = self.assistant(session, owner, d, data, parent, line)
        elif kind == "tool.execution_start":
            self.starts[str(data.get("toolCallId"))] = data
            entry = parent
        elif kind == "tool.execution_complete":
            entry = self.tool_result(session, d, data, parent, line)
        elif kind == "session.usage_record":
            usage = data.get("usage")
            if isinstance(usage, dict) and isinstance(usage.get("apiCallId"), str):
                self.usage[usage["apiCallId"]] = usage
                entry = parent
            else:
                entry = self.raw(session, d, parent, line)
        elif kind == "session.compaction_start":
            attempt = str(data.get("compactionAttemptId") or eid)
            self.compactions[attempt] = (owner, len(session.nodes), data)
            entry = parent
        elif kind == "session.compaction_complete":
            entry = self.compaction(d, data, line)
        elif kind.startswith("model."):
            self.model_events.append(d)
            entry = parent
        elif kind in _SETUP or (kind == "session.model_change" and owner is not None
                                and data.get("source") == "agent" and not session.nodes):
            session.events.append(d)
            entry = parent
        elif kind in ("subagent.completed", "subagent.failed"):
            call = data.get("toolCallId")
            if isinstance(call, str) and call in self.subs:
                self.subs[call].events.append(d)
                self.owner[eid] = self.calls[call][0] if call in self.calls else None
                entry = self.parent(pid, self.owner[eid])
            else:
                entry = self.raw(session, d, parent, line)
        elif kind == "session.start" and not self.start:
            self.start = data
            context = data.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str):
                self.cwd = context["cwd"]
            if isinstance(data.get("selectedModel"), str):
                self.model = data["selectedModel"]
            entry = parent
        elif kind in _STRUCTURE:
            entry = parent
        else:
            entry = self.raw(session, d, parent, line)
            if kind == "session.info" and owner is None:
                self.info(data, pid)
        self.at[eid] = entry

    def info(self, data: dict[str, Any], pid: Any) -> None:
        """A fork's first own event names the original; a rewind's names where it went."""
        said = data.get("message") if isinstance(data.get("message"), str) else ""
        if data.get("infoType") == "fork":
            forked = _FORKED_FROM.match(said)
            if forked and self.forked_from is None:
                self.forked_from = forked.group(1)
        elif data.get("infoType") == "rewind" and isinstance(pid, str):
            self.rewinds.append(pid)

    def raw(self, session: _Session, d: dict[str, Any], parent: str | None, line: int) -> str:
        """An event kept as it was, in its place on the branch."""
        kept = {k: v for k, v in d.items() if k not in ("id", "parentId", "timestamp")}
        return session.add(d["id"], parent, f"{FORMAT}:{d['type']}", {EXTRA: kept},
                           d.get("timestamp"), line)

    def subagent_started(self, d: dict[str, Any], data: dict[str, Any], eid: str, pid: Any) -> None:
        call = data.get("toolCallId")
        known = self.calls.get(call) if isinstance(call, str) else None
        owner = known[0] if known is not None else None
        self.owner[eid] = owner
        self.at[eid] = self.parent(pid, owner)
        if not isinstance(call, str) or not call:
            self.at[eid] = self.raw(self.session(owner), d, self.at[eid], 0)
            return
        sub = self.session(call)
        sub.events.append(d)
        self.setting_up.append(call)
        # the sub-agent's setup events follow this one: they are the sub-agent's
        self.owner[eid] = call
        self.at[eid] = sub.head

    def user(self, session: _Session, d: dict[str, Any], data: dict[str, Any],
             parent: str | None, line: int) -> str:
        content = data.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}]
                                   if text else []}
        ms = _ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        if not session.first_prompt and text.strip():
            session.first_prompt = text
        if session is self.main:
            self.prompts.append(text)
        extra = {k: v for k, v in data.items() if k != "content"}
        return session.add(d["id"], parent, MESSAGE, {"message": message, EXTRA: extra},
                           d.get("timestamp"), line)

    def assistant(self, session: _Session, owner: str | None, d: dict[str, Any],
                  data: dict[str, Any], parent: str | None, line: int) -> str:
        content: list[dict[str, Any]] = []
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            content.append({"type": "thinking", "thinking": reasoning})
        text = data.get("content")
        if isinstance(text, str) and text:
            content.append({"type": "text", "text": text})
        requests = data.get("toolRequests")
        calls = []
        kept_requests = []
        for n, request in enumerate(requests if isinstance(requests, list) else ()):
            if not isinstance(request, dict):
                continue
            call_id = str(request.get("toolCallId") or f"{d['id']}#{n}")
            arguments = request.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    arguments = {"value": arguments}
            name = str(request.get("name") or "")
            content.append({"type": "toolCall", "id": call_id, "name": name,
                            "arguments": arguments if isinstance(arguments, dict)
                            else {"value": arguments}})
            calls.append((call_id, name, arguments))
            kept_requests.append({k: v for k, v in request.items()
                                  if k not in ("toolCallId", "name", "arguments")})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        model = data.get("model")
        if isinstance(model, str) and model:
            message["model"] = model
        elif self.model:
            message["model"] = self.model
        extra = {k: v for k, v in data.items()
                 if k not in ("content", "toolRequests", "model", "reasoningText")}
        if any(kept_requests):
            extra["toolRequests"] = kept_requests
        api_call = data.get("apiCallId")
        usage = self.usage.pop(api_call, None) if isinstance(api_call, str) else None
        if usage is not None:
            accounting = usage.get("accounting")
            key = accounting.get("usageId") if isinstance(accounting, dict) else None
            message["usage"] = usage_of(usage)
            message["responseId"] = f"{FORMAT}:{key if isinstance(key, str) and key else api_call}"
            extra["usageRecord"] = usage
        ms = _ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        entry = session.add(d["id"], parent, MESSAGE, {"message": message, EXTRA: extra},
                            d.get("timestamp"), line)
        for call_id, name, arguments in calls:
            self.calls[call_id] = (owner, entry, name, arguments)
        return entry

    def tool_result(self, session: _Session, d: dict[str, Any], data: dict[str, Any],
                    parent: str | None, line: int) -> str:
        call_id = str(data.get("toolCallId") or "")
        known = self.calls.get(call_id)
        result = data.get("result")
        body: Any = result.get("content") if isinstance(result, dict) else result
        error = data.get("error")
        if body is None and error is not None:
            body = error.get("message") if isinstance(error, dict) else error
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        message: dict[str, Any] = {
            "role": "toolResult", "toolCallId": call_id,
            "toolName": known[2] if known is not None else str(data.get("toolName") or ""),
            "content": [{"type": "text", "text": text}], "isError": data.get("success") is False}
        ms = _ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        extra = {k: v for k, v in data.items() if k not in ("toolCallId", "success")}
        if isinstance(result, dict):
            rest = {k: v for k, v in result.items() if k != "content"}
            if rest:
                extra["result"] = rest
            else:
                extra.pop("result", None)
        start = self.starts.pop(call_id, None)
        if start is not None:
            extra["start"] = {k: v for k, v in start.items() if k != "toolCallId"}
        return session.add(d["id"], parent, MESSAGE, {"message": message, EXTRA: extra},
                           d.get("timestamp"), line)

    def compaction(self, d: dict[str, Any], data: dict[str, Any], line: int) -> str | None:
        attempt = str(data.get("compactionAttemptId") or "")
        owner, at_start, start = self.compactions.pop(attempt, (None, None, {}))
        self.owner[d["id"]] = owner
        session = self.session(owner)
        parent = session.head
        extra = {k: v for k, v in data.items() if k != "summaryContent"}
        if start:
            extra["start"] = start
        if self.model_events:
            extra["modelEvents"], self.model_events = self.model_events, []
        used = data.get("compactionTokensUsed")
        applied = data.get("success") is True and isinstance(data.get("summaryContent"), str)
        if isinstance(used, dict):
            model = used.get("model") if isinstance(used.get("model"), str) else self.model
            request = {"model": model or "", "provider": "", "usage": usage_of(used),
                       "responseId": f"{FORMAT}:compaction:{attempt or d['id']}"}
            request_data: dict[str, Any] = {"request": request}
            if not applied:
                request_data[EXTRA] = {"type": d["type"], "data": extra}
            parent = session.add(f"{d['id']}#request" if applied else d["id"], parent,
                                 MODEL_REQUEST, request_data, d.get("timestamp"), line)
        if not applied:
            if not isinstance(used, dict):
                parent = self.raw(session, d, parent, line)
            return parent
        first_kept = None
        if at_start is not None:
            path = set(session.nodes.path_to(parent))
            for entry_id, kind, node in zip(session.nodes.ids[at_start:],
                                            session.nodes.types[at_start:],
                                            session.nodes.data[at_start:]):
                if kind == MESSAGE and entry_id in path and "message" in node:
                    first_kept = entry_id
                    break
        before = data.get("preCompactionTokens")
        return session.add(d["id"], parent, COMPACTION, {
            "summary": data["summaryContent"], "firstKeptEntryId": first_kept,
            "tokensBefore": before if type(before) is int else 0, EXTRA: extra},
            d.get("timestamp"), line)

    def spawns(self) -> None:
        """Each sub-agent's spawn point: its `task` call in the session that made it."""
        for call, sub in self.subs.items():
            known = self.calls.get(call)
            if known is not None and sub.nodes:
                self.session(known[0]).nodes.spawns.append((call, known[1]))


def workspace(folder: Path) -> dict[str, Any]:
    """`workspace.yaml` beside the events: flat `key: value` lines (a quoted value is
    unquoted); {} when there is none."""
    path = folder / "workspace.yaml"
    try:
        if not path.is_file() or path.stat().st_size > _WORKSPACE_LIMIT:
            return {}
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return {}
    out: dict[str, Any] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key or key != key.strip() or key.startswith("#"):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            try:
                value = json.loads(value)
            except ValueError:
                pass
        elif len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].replace("''", "'")
        elif value in ("true", "false"):
            value = value == "true"
        elif value.isdigit():
            value = int(value)
        out[key] = value
    return out


def undone_turns(store, read: "_Read", uid: str, path: Path) -> int:
    """The turns a `/rewind` took out of events.jsonl, from `session-store.db`'s `turns`
    (Copilot's index keeps them), as a branch from where the rewind went back to: only
    for a file with one rewind, and only when the store does not hold them already (read
    before the rewind, under their event ids). Returns how many turns were added."""
    if len(read.rewinds) != 1:
        return 0
    at = read.at.get(read.rewinds[0])
    database = path.parent.parent.parent / "session-store.db"
    if at is None or not database.is_file() or path.parent.parent.name != "session-state":
        return 0
    existing = store.sessions.by_uid(uid)
    if existing is not None and \
            set(store.entries.seqs(existing.id)) - set(read.main.nodes.ids):
        return 0           # (the store has entries the file lost: the undone turns)
    import sqlite3
    from contextlib import closing

    try:
        with closing(sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True,
                                     timeout=1)) as conn:
            rows = conn.execute("SELECT turn_index, user_message, assistant_response, "
                                "timestamp FROM turns WHERE session_id = ? ORDER BY "
                                "turn_index", (uid,)).fetchall()
    except sqlite3.Error:
        return 0
    said = list(read.prompts)
    head, added = at, 0
    newest, tail = read.main.nodes.newest, read.main.head
    for index, asked, answered, stamp in rows:
        if not isinstance(asked, str) or not asked:
            continue
        if asked in said:
            said.remove(asked)
            continue
        key = f"turn:{index}:{short_hash(asked, 8)}"
        kept = {EXTRA: {"from": "session-store.db turns", "turnIndex": index}}
        head = read.main.add(key, head, MESSAGE, {
            "message": {"role": "user", "content": [{"type": "text", "text": asked}]},
            **kept}, stamp, 0)
        if isinstance(answered, str) and answered:
            head = read.main.add(f"{key}:answer", head, MESSAGE, {
                "message": {"role": "assistant", "content": [{"type": "text", "text": answered}],
                            "api": "copilot"}, **kept}, stamp, 0)
        added += 1
    read.main.nodes.newest, read.main.head = newest, tail   # (it went on after the rewind)
    return added


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    read = _Read(result)
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            try:
                read.take(d, raw.number)
            except SHAPE_ERRORS as error:
                result.skip(raw.number, odd_shape(error))
                kept = {"type": "line", "data": d}
                read.main.add(f"L{raw.number}", read.main.head, f"{FORMAT}:line", {EXTRA: kept},
                              None, raw.number)
    if not read.start and not read.main.nodes:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no Copilot CLI events in this file"
        return
    read.spawns()
    folder = path.parent
    space = workspace(folder) if path.name == "events.jsonl" else {}
    session_id = read.start.get("sessionId") if isinstance(read.start.get("sessionId"), str) \
        else str(space.get("id") or "")
    uid = session_id or f"{FORMAT}-{short_hash(str(path.resolve()))}"
    cwd = read.cwd or (space.get("cwd") if isinstance(space.get("cwd"), str) else "")
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_id, "model": read.model,
                                "start": read.start}
    if space:
        metadata["workspace"] = space
    if read.model_events:
        metadata["modelEvents"] = read.model_events
    named = space.get("name") if isinstance(space.get("name"), str) else ""
    name = title_from_text(named or read.main.first_prompt) or folder.name
    mtime = file_mtime(path)
    if read.rewinds:
        metadata["rewinds"] = read.rewinds
        undone = undone_turns(store, read, uid, path)
        if undone:
            metadata["undoneTurnsFrom"] = "session-store.db"
    forked = read.forked_from if read.forked_from and read.forked_from != uid else None
    if forked:
        metadata["forkedFrom"] = forked
    write_session(store, result, ticker, read.main.nodes, uid=uid, name=name, source=FORMAT,
                  cwd=cwd, metadata=metadata, fallback=mtime,
                  kind="fork" if forked else "session", parent_session=forked,
                  spawn_ref="shared" if forked else None)
    for call, sub in read.subs.items():
        if not sub.nodes:
            continue      # (started, nothing written yet: read next time)
        known = read.calls.get(call)
        args = known[3] if known is not None and isinstance(known[3], dict) else {}
        parent_uid = uid if known is None or known[0] is None else f"{uid}:{known[0]}"
        description = str(args.get("description") or args.get("name") or "")
        agent_type = str(args.get("agent_type") or "")
        title = f"{description} ({agent_type})" if description and agent_type else \
            description or agent_type
        write_session(store, result, ticker, sub.nodes, uid=f"{uid}:{call}",
                      name=title_from_text(title or sub.first_prompt) or call, source=FORMAT,
                      cwd=cwd, kind="subagent", parent_session=parent_uid,
                      spawn_ref=f"key:{call}", fallback=mtime,
                      metadata={"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_id, "toolCallId": call,
                                "task": args, "events": sub.events, "model": read.model})
