"""opencode's database (`~/.local/share/opencode/opencode.db`, opencode 1.x).

Facts: docs/agents/opencode.md. One SQLite database (WAL, shared by every running
opencode) holds every project's sessions: `session`, `message` and `part` rows whose `data`
is JSON. It is opened read-only through SQLite and read whole in one snapshot. Each
session row becomes one session (its `directory` the project, its `title` the name); its
messages, in id order (ids sort by creation), are one chain of entries:

* A user message: its text parts (a `synthetic` one, such as the "Continue if you have
  next steps" after a compaction, too), files as text; other parts kept beside it.
* An assistant message holds every step of one turn loop, each closed by a `step-finish`
  part: each step is an assistant message entry (its text, `reasoning` as thinking, its
  `tool` parts as tool calls), then a tool result entry per tool part (its `output`, or
  its `error`). The step's `step-finish` tokens and cost are that response's usage
  (`input` excludes the cached tokens, `cache.read` is cache read).
* A compaction (a user message with a `compaction` part, then an assistant message with
  `summary: true`): a `compaction` entry holding the summary (what opencode sends from
  there on, with the synthetic "Continue" message), and the summary request's usage as a
  `model_request` entry.
* A message opencode is still writing (an assistant message without `time.completed`) is
  read once it is complete: entries are never changed after they are written, and
  nothing after it is read before it.
* A `task` tool part's `state.metadata.sessionId` names the sub-agent's session (a session
  row with `parent_id`): a session of kind `subagent` under that call.
* A fork (`--fork`, `/fork`) copies every message with new ids and the original times, and
  nothing points back: a session whose first messages have the times and roles of an
  older session's is a `fork` under the last message they share.
* Usage keys are the message's creation time, the step's place and its tokens: a fork's
  copies count in each session and once in any total.

A session file of `opencode export` (`{"info": session, "messages": [{"info": message,
"parts": [part]}]}`, told by its `.json` name; arbor's writer writes the same on one line)
is read as the same rows, one session.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.usage.tokens import MODEL_REQUEST
from core.importing.base import FileResult, ProgressTicker, stored_time, title_from_text
from core.importing.nodes import Nodes, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "opencode"
EXTRA = "opencode"
_SESSION_COLUMNS = ("id", "project_id", "parent_id", "slug", "directory", "title", "version",
                    "cost", "tokens_input", "tokens_output", "tokens_reasoning",
                    "tokens_cache_read", "tokens_cache_write", "revert", "agent", "model",
                    "time_created", "time_updated", "time_compacting", "time_archived")


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection (the database is live: never read with plain file I/O)."""
    from core.store.held_files import check_path

    check_path(path)
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM message LIMIT 1").fetchall()
    except sqlite3.Error:
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)
    return conn


def fingerprint(path: Path) -> str:
    """What changes when opencode writes: rows and their newest update, per table (an
    export file changes with its size and time, which the driver compares)."""
    if is_export(path):
        return "export"
    try:
        conn = open_readonly(path)
    except (sqlite3.Error, OSError):
        return ""
    try:
        rows = [conn.execute(f"SELECT COUNT(*), MAX(time_updated) FROM {table}").fetchone()
                for table in ("session", "message", "part")]
        return json.dumps(rows)
    except sqlite3.Error:
        return ""
    finally:
        conn.close()


def message_count(path: Path, session_id: str) -> int:
    """How many messages of a session opencode's database holds (0 when it cannot say)."""
    try:
        conn = open_readonly(path)
    except (sqlite3.Error, OSError):
        return 0
    try:
        return conn.execute("SELECT COUNT(*) FROM message WHERE session_id = ?",
                            (session_id,)).fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _time(ms: Any) -> str | None:
    return stored_time(ms) if isinstance(ms, (int, float)) and ms > 0 else None


def _json(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return None


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


class _Session:
    """One session's messages read into nodes (see the module doc)."""

    def __init__(self, row: dict[str, Any], result: FileResult):
        self.row = row
        self.result = result
        self.nodes = Nodes()
        self.head: str | None = None
        self.model = ""
        self.first_prompt = ""
        self.signature: list[tuple[Any, str]] = []     # (time created, role) per message
        self.message_ends: list[str] = []             # the last entry of each message
        self.last_tokens = 0

    def add(self, entry_id: str, kind: str, data: dict[str, Any], when: Any) -> None:
        self.head = self.nodes.add(entry_id, self.head, kind, data, _time(when))

    def message(self, mid: str, info: dict[str, Any], parts: list[tuple[str, dict[str, Any]]]) -> bool:
        """Read one message; False when it is not complete yet (nothing after it is read)."""
        role = info.get("role")
        created = (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
        if role == "assistant" and not (isinstance(info.get("time"), dict)
                                        and info["time"].get("completed")):
            return False
        rest = {k: v for k, v in info.items() if k not in ("role", "tokens", "cost", "id",
                                                           "sessionID")}
        if role == "user":
            self.user(mid, rest, parts, created)
        elif role == "assistant":
            self.assistant(mid, info, rest, parts, created)
        else:
            self.add(mid, f"{FORMAT}:message", {EXTRA: {"info": info, "parts": [p for _i, p in parts]}},
                     created)
        self.signature.append((created, str(role)))
        self.message_ends.append(self.head or mid)
        return True

    def user(self, mid: str, info: dict[str, Any], parts: list[tuple[str, dict[str, Any]]],
             created: Any) -> None:
        content: list[dict[str, Any]] = []
        kept: list[dict[str, Any]] = []
        compaction = None
        for _pid, part in parts:
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
                extra = {k: v for k, v in part.items() if k not in ("type", "text")}
                if extra:
                    content[-1][EXTRA] = extra
            elif kind == "compaction":
                compaction = part
            else:
                kept.append(part)
        if compaction is not None and not content:
            self.add(mid, f"{FORMAT}:compaction-request",
                     {EXTRA: {"info": info, "part": compaction, "parts": kept}}, created)
            return
        text = "".join(b["text"] for b in content)
        synthetic = all(isinstance(b.get(EXTRA), dict) and b[EXTRA].get("synthetic")
                        for b in content) if content else False
        if text.strip() and not synthetic and not self.first_prompt:
            self.first_prompt = text
        message: dict[str, Any] = {"role": "user", "content": content}
        if isinstance(created, (int, float)):
            message["timestamp"] = int(created)
        extra: dict[str, Any] = {"info": info}
        if kept:
            extra["parts"] = kept
        self.add(mid, MESSAGE, {"message": message, EXTRA: extra}, created)

    def assistant(self, mid: str, info: dict[str, Any], rest: dict[str, Any],
                  parts: list[tuple[str, dict[str, Any]]], created: Any) -> None:
        model = info.get("modelID")
        provider = info.get("providerID")
        if isinstance(model, str) and model:
            self.model = model
        summary = info.get("summary") is True or info.get("mode") == "compaction"
        steps: list[list[tuple[str, dict[str, Any]]]] = [[]]
        for pid, part in parts:
            steps[-1].append((pid, part))
            if part.get("type") == "step-finish":
                steps.append([])
        if not steps[-1]:
            steps.pop()
        for n, step in enumerate(steps):
            entry_id = mid if n == 0 else step[0][0]
            finish = next((p for _pid, p in step if p.get("type") == "step-finish"), None)
            usage = _usage(finish) if finish is not None else None
            key = f"{FORMAT}:{created}:{n}:{json.dumps(finish.get('tokens'), sort_keys=True)}" \
                if finish is not None else ""
            if summary:
                self.compaction(entry_id, rest, step, usage, key, model, provider, created)
                continue
            self.step(entry_id, rest if n == 0 else None, step, usage, key, model, provider,
                      created)

    def step(self, entry_id: str, info: dict[str, Any] | None, step, usage, key: str,
             model: Any, provider: Any, created: Any) -> None:
        content: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        kept: list[dict[str, Any]] = []
        for _pid, part in step:
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
            elif kind == "reasoning" and isinstance(part.get("text"), str):
                content.append({"type": "thinking", "thinking": part["text"]})
            elif kind == "tool" and isinstance(part.get("state"), dict):
                state = part["state"]
                args = state.get("input")
                content.append({"type": "toolCall", "id": str(part.get("callID") or ""),
                                "name": str(part.get("tool") or ""),
                                "arguments": args if isinstance(args, dict) else {"value": args}})
                tools.append(part)
            elif kind not in ("step-start",):
                kept.append(part)
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": "opencode"}
        if isinstance(model, str) and model:
            message["model"] = model
        if isinstance(provider, str) and provider:
            message["provider"] = provider
        if usage is not None:
            message["usage"] = usage
            message["responseId"] = key
            self.last_tokens = usage["input"] + usage["cacheRead"] + usage["cacheWrite"]
        if isinstance(created, (int, float)):
            message["timestamp"] = int(created)
        extra: dict[str, Any] = {}
        if info:
            extra["info"] = info
        if kept:
            extra["parts"] = kept
        self.add(entry_id, MESSAGE, {"message": message, **({EXTRA: extra} if extra else {})},
                 created)
        call_entry = self.head
        for part in tools:
            state = part["state"]
            error = state.get("status") == "error"
            output = state.get("error") if error else state.get("output")
            when = (state.get("time") or {}).get("end") if isinstance(state.get("time"), dict) \
                else None
            result: dict[str, Any] = {
                "role": "toolResult", "toolCallId": str(part.get("callID") or ""),
                "toolName": str(part.get("tool") or ""),
                "content": [{"type": "text", "text": output if isinstance(output, str)
                             else json.dumps(output, ensure_ascii=False)}],
                "isError": error}
            if isinstance(when, (int, float)):
                result["timestamp"] = int(when)
            side = {k: v for k, v in state.items() if k not in ("input", "output", "error")}
            side.update({k: v for k, v in part.items() if k not in ("type", "tool", "callID",
                                                                     "state")})
            self.add(f"{part.get('id') or entry_id}:result:{part.get('callID')}", MESSAGE,
                     {"message": result, EXTRA: side}, when or created)
            child = (state.get("metadata") or {}).get("sessionId") \
                if isinstance(state.get("metadata"), dict) else None
            if part.get("tool") == "task" and isinstance(child, str) and child:
                self.nodes.spawns.append((child, call_entry))

    def compaction(self, entry_id: str, info: dict[str, Any], step, usage, key: str,
                   model: Any, provider: Any, created: Any) -> None:
        if usage is not None:
            self.add(f"{entry_id}:request", MODEL_REQUEST, {"request": {
                "model": model if isinstance(model, str) else "",
                "provider": provider if isinstance(provider, str) else "",
                "usage": usage, "responseId": key}}, created)
        text = "".join(p["text"] for _pid, p in step
                       if p.get("type") == "text" and isinstance(p.get("text"), str))
        self.add(entry_id, COMPACTION, {"summary": text, "firstKeptEntryId": None,
                                        "tokensBefore": self.last_tokens,
                                        EXTRA: {"info": info}}, created)


def _usage(finish: dict[str, Any]) -> dict[str, Any]:
    tokens = finish.get("tokens") if isinstance(finish.get("tokens"), dict) else {}
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}

    def count(value: Any) -> int:
        return value if type(value) is int and value > 0 else 0

    usage: dict[str, Any] = {"input": count(tokens.get("input")),
                             "output": count(tokens.get("output")),
                             "cacheRead": count(cache.get("read")),
                             "cacheWrite": count(cache.get("write")),
                             "reasoning": count(tokens.get("reasoning"))}
    usage["output"] = max(usage["output"], usage["reasoning"])
    cost = finish.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        usage["cost"] = {"total": float(cost)}
    return usage


def is_export(path: Path) -> bool:
    """A session as `opencode export` writes it (and arbor's writer, on one line), rather
    than the database: told by its name."""
    return path.suffix.lower() == ".json"


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    if is_export(path):
        _import_export(store, path, result, ticker)
        return
    try:
        conn = open_readonly(path)
    except (sqlite3.Error, OSError) as error:
        result.status, result.error = "failed", f"cannot open the opencode database ({error})"
        return
    try:
        _import(store, conn, path, result, ticker)
    except sqlite3.Error as error:
        result.status, result.error = "failed", f"cannot read the opencode database ({error})"
    finally:
        conn.close()


def _import(store, conn: sqlite3.Connection, path: Path, result: FileResult,
            ticker: ProgressTicker) -> None:
    conn.execute("BEGIN")     # (one snapshot of a live database)
    have = set(_columns(conn, "session"))
    wanted = [c for c in _SESSION_COLUMNS if c in have]
    sessions = [dict(zip(wanted, row)) for row in conn.execute(
        f"SELECT {', '.join(wanted)} FROM session ORDER BY time_created, id")]
    ticker.total = conn.execute("SELECT COUNT(*) FROM part").fetchone()[0] or 1
    done = 0
    read: list[_Session] = []
    for row in sessions:
        session = _Session(row, result)
        parts: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for pid, mid, data in conn.execute(
                "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id",
                (row["id"],)):
            value = _json(data)
            if isinstance(value, dict):
                value.setdefault("id", pid)
                parts.setdefault(mid, []).append((pid, value))
            else:
                result.skip(None, f"part {pid}: its data is not a JSON object (left out)")
            done += 1
        for mid, data in conn.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY id", (row["id"],)):
            info = _json(data)
            if not isinstance(info, dict):
                result.skip(None, f"message {mid}: its data is not a JSON object (left out)")
                continue
            if not session.message(mid, info, parts.get(mid, [])):
                break
            result.lines += 1
        ticker(done)
        read.append(session)
    conn.execute("COMMIT")
    if not sessions:
        result.status = "not-a-log"
        result.error = "an opencode database without sessions"
        return
    for session in read:
        _write(store, path, result, ticker, session, read)


def _import_export(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    """One session from an export file: `{"info": session, "messages": [{"info": message,
    "parts": [part]}]}`, read as the same rows the database holds."""
    from core.store.held_files import open_unless_held

    try:
        with open_unless_held(path) as handle:
            document = json.loads(handle.read())
    except ValueError as error:
        result.status, result.error = "failed", f"not an opencode export: {error}"
        return
    info = document.get("info") if isinstance(document, dict) else None
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("id"), str) or \
            not isinstance(messages, list):
        result.status, result.error = "not-a-log", "a JSON file that is not an opencode export"
        return
    times = info.get("time") if isinstance(info.get("time"), dict) else {}
    tokens = info.get("tokens") if isinstance(info.get("tokens"), dict) else {}
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    row = {"id": info["id"], "project_id": info.get("projectID"),
           "parent_id": info.get("parentID"), "slug": info.get("slug"),
           "directory": info.get("directory"), "title": info.get("title"),
           "version": info.get("version"), "cost": info.get("cost"),
           "tokens_input": tokens.get("input"), "tokens_output": tokens.get("output"),
           "tokens_reasoning": tokens.get("reasoning"), "tokens_cache_read": cache.get("read"),
           "tokens_cache_write": cache.get("write"), "agent": info.get("agent"),
           "model": info.get("model"), "time_created": times.get("created"),
           "time_updated": times.get("updated")}
    session = _Session(row, result)
    ticker.total = len(messages) or 1
    for n, item in enumerate(messages, 1):
        message = item.get("info") if isinstance(item, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("id"), str):
            result.skip(None, f"message {n}: not an opencode message (left out)")
            continue
        parts = []
        for part in item.get("parts") or ():
            if isinstance(part, dict) and isinstance(part.get("id"), str):
                parts.append((part["id"], {k: v for k, v in part.items()
                                           if k not in ("sessionID", "messageID")}))
            else:
                result.skip(None, f"message {message['id']}: a part that is not an opencode "
                                  "part (left out)")
        if not session.message(message["id"], message, parts):
            break
        result.lines += 1
        ticker(n)
    _write(store, path, result, ticker, session, [session])


def _fork_of(session: _Session, earlier: list[_Session]) -> tuple[str, str] | None:
    """(source session id, the source's entry the fork left it at) for a session whose first
    messages have an older session's times and roles (opencode's fork copies them)."""
    mine = session.signature
    best: tuple[int, _Session] | None = None
    for other in earlier:
        if other is session or other.row.get("parent_id"):
            continue
        shared = 0
        for a, b in zip(mine, other.signature):
            if a != b or a[0] is None:
                break
            shared += 1
        if shared and shared < len(mine) and (best is None or shared > best[0]):
            best = (shared, other)
    if best is None:
        return None
    return str(best[1].row["id"]), best[1].message_ends[best[0] - 1]


def _write(store, path: Path, result: FileResult, ticker: ProgressTicker, session: _Session,
           every: list[_Session]) -> None:
    row = session.row
    uid = str(row["id"])
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path),
                                "cwd": row.get("directory") or "", "sessionId": uid,
                                "model": session.model,
                                "session": {k: _json(v) if k in ("revert", "model") and
                                            isinstance(v, str) else v for k, v in row.items()}}
    kind, parent, spawn = "session", None, None
    if row.get("parent_id"):
        kind, parent, spawn = "subagent", str(row["parent_id"]), f"key:{uid}"
    else:
        earlier = [s for s in every if s is not session and
                   (s.row.get("time_created") or 0, s.row["id"]) <
                   (row.get("time_created") or 0, row["id"])]
        fork = _fork_of(session, earlier)
        if fork is not None:
            kind, parent, spawn = "fork", fork[0], f"entry:{fork[1]}"
    name = title_from_text(row.get("title") or session.first_prompt or uid)
    write_session(store, result, ticker, session.nodes, uid=uid, name=name, source=FORMAT,
                  cwd=str(row.get("directory") or ""), metadata=metadata, kind=kind,
                  parent_session=parent, spawn_ref=spawn, created_at=_time(row.get("time_created")),
                  fallback=_time(row.get("time_updated")))
