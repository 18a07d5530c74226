"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61 and later).

Facts: docs/agents/gemini-cli.md. A file is appended to, never rewritten, and holds four
kinds of lines: a header (`sessionId`, `projectHash`, `startTime`, `kind`; a resume adds
another), a message record (`id`, `type`: user | gemini | info | error …), `{"$set": …}`
(metadata; `$set.messages` replaces the whole history) and `{"$rewindTo": id}`. What arbor
makes of them, read whole each time (so a record written again under its id is one
entry):

* A `user` record is a user message; its `functionResponse` parts are tool results.
* A `gemini` record is an assistant message (its `thoughts` as thinking, its `tokens` as
  the response's usage, keyed by the record's id), then one entry per `toolCalls` item
  (the call) and one per result the call carries. The record is first written with its
  text and again, under the same id, with its tool calls: the second adds the calls.
  The `user` record that sends the results back to the model is the same results: it
  adds an entry only for what is not already there.
* `$set.messages` after a resume repeats the history: nothing is added. After a
  compression it holds a `<state_snapshot>` summary, the model's acknowledgement, and
  the kept tail under new ids: a `compaction` entry (the summary; the first kept entry
  found by its content), and the new ids are read as the entries they copy.
* `$rewindTo` moves the head back before that message: what follows is a new branch.
* `/chat save TAG` writes an `info` record ("Conversation checkpoint saved with tag:
  TAG.") and `checkpoint-TAG.json` beside `chats/`: the record becomes a `label` entry
  tagging the message the history ended on (the checkpoint). `/chat resume TAG` (and any
  reload of a saved history) appends the saved history again as new records, starting
  with Gemini CLI's `<session_context>` turn, then a `$set.messages` of them: those
  records are matched, from the root, onto the entries they repeat (text by text, tool
  calls and their results by call id), so what follows
  branches from the checkpoint and what was said after it stays as its own branch.
* Other record types (info, error) and lines of an unknown shape are kept raw
  (`gemini:<type>`), in their place.
* A sub-agent's session (`chats/<parent session id>/<id>.jsonl`, `kind: subagent`) is a
  session of kind `subagent` under the `invoke_agent` call whose `agentId` names it.
* The project folder is the one `.project_root` beside `chats/` names (or the header's
  `directories`).

Not read: `checkpoint-<tag>.json` itself (the same history without ids, not tied to a
session, overwritten by the next save of that tag) and `logs.json`.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.model.entries import COMPACTION, LABEL, MESSAGE
from core.importing.base import (
    SHAPE_ERRORS, FileResult, ProgressTicker, epoch_ms, file_mtime, object_lines, odd_shape,
    short_hash, title_from_text)
from core.importing.nodes import Nodes, write_session
from .parts import (
    blocks_of, calls_of, gemini_usage, responses_of, text_of, tool_call, tool_result)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "gemini"
RESUMABLE = False
CONTEXT_PREFIX = "<session_context>"
_RECORD_KEYS = ("id", "timestamp", "type", "content", "thoughts", "toolCalls")
_CALL_KEYS = ("id", "name", "args", "result")
_SAVED = re.compile(r"^Conversation checkpoint saved with tag: (.+?)\.?$", re.S)


class _Read:
    """One file read front to back: the entry tree it holds (see the module doc)."""

    def __init__(self, result: FileResult):
        self.result = result
        self.nodes = Nodes()
        self.head: str | None = None
        self.first_of: dict[str, str] = {}     # record id -> its first entry
        self.last_of: dict[str, str] = {}      # record id -> its last entry
        self.calls: dict[str, str] = {}        # call id -> the record id that made it
        self.call_names: dict[str, str] = {}
        self.answered: dict[str, str] = {}     # call id -> its result's entry
        self.headers: list[dict[str, Any]] = []
        self.meta: dict[str, Any] = {}
        self.rewinds: list[str] = []
        self.first_prompt = ""
        self.model = ""
        self.last_prompt_tokens = 0
        self.replaying = False                 # a saved history is being loaded again

    # ------------------------------------------------------------------ lines
    def take(self, d: dict[str, Any], line: int) -> None:
        if "$rewindTo" in d:
            self.rewind(d["$rewindTo"], line)
        elif "$set" in d:
            values = d["$set"]
            if not isinstance(values, dict):
                raise TypeError("$set is not an object")
            for key, value in values.items():
                if key == "messages":
                    self.set_messages(value, line)
                else:
                    self.meta[key] = value
        elif "sessionId" in d and "type" not in d and "id" not in d:
            self.headers.append(d)
        elif isinstance(d.get("id"), str) and isinstance(d.get("type"), str):
            self.record(d, line)
        else:
            self.raw(d, line, "line")

    def raw(self, d: dict[str, Any], line: int, kind: str) -> None:
        """A line or record kept as it was, in its place on the branch."""
        entry_id = d["id"] if isinstance(d.get("id"), str) and d["id"] else f"L{line}"
        self.head = self.nodes.add(entry_id, self.head, f"gemini:{kind}", dict(d),
                                   d.get("timestamp"), line)

    def rewind(self, record_id: Any, line: int) -> None:
        first = self.first_of.get(record_id) if isinstance(record_id, str) else None
        if first is None:
            self.result.skip(line, f"$rewindTo names no message of this file ({record_id!r}): "
                                   "the branch goes on where it was")
            return
        self.rewinds.append(record_id)
        self.head = self.nodes.parent_of(first)

    # ---------------------------------------------------------------- records
    def record(self, d: dict[str, Any], line: int) -> None:
        rid = d["id"]
        if rid in self.first_of:
            self.again(d, line)
            return
        kind = d["type"]
        if kind in ("user", "gemini") and self.replay(d):
            return
        self.replaying = False
        if kind == "user":
            self.user(d, line)
        elif kind == "gemini":
            self.gemini(d, line)
        elif kind == "info" and isinstance(d.get("content"), str) and \
                _SAVED.match(d["content"].strip()) and self.head is not None:
            self.saved(d, _SAVED.match(d["content"].strip()).group(1), line)
        else:
            self.raw(d, line, kind)
            self.first_of[rid] = self.last_of[rid] = self.head

    def saved(self, d: dict[str, Any], tag: str, line: int) -> None:
        """`/chat save TAG`: a label entry tagging the message the history ended on."""
        data = {"targetId": self.head, "label": tag, "gemini": dict(d)}
        self.head = self.nodes.add(d["id"], self.head, LABEL, data, d.get("timestamp"), line)
        self.first_of[d["id"]] = self.last_of[d["id"]] = self.head

    # ----------------------------------------------------- a saved history again
    def replay(self, d: dict[str, Any]) -> bool:
        """Whether the record repeats an entry of a history loaded again (`/chat resume`):
        then its id names that entry and the head moves there (see the module doc)."""
        rid, content = d["id"], d.get("content")
        if self.head is None:
            return False
        responses, calls = responses_of(content), calls_of(content)
        if d["type"] == "user" and responses:
            if not self.replaying or text_of(content).strip():
                return False
            first = position = self._answers(self.head, responses)
        elif calls and d["type"] != "gemini":
            return False
        elif d["type"] == "user":
            texts = [p["text"].strip() for p in content if isinstance(p, dict) and
                     isinstance(p.get("text"), str)] if isinstance(content, list) else \
                [content.strip()] if isinstance(content, str) else []
            if texts and texts[0].startswith(CONTEXT_PREFIX):
                position = self._context_root()
                texts = texts[1:]
            elif self.replaying:
                position = self.head
            else:
                return False
            first = position
            for text in texts:
                position = self._child(position, "user", text)
                if position is None:
                    return False
        elif self.replaying:
            first = position = self._child(self.head, "assistant", text_of(content).strip())
            if position is not None and calls:
                position = self._calls(position, calls)
        else:
            return False
        if position is None:
            return False
        self.replaying = True
        self.first_of[rid], self.last_of[rid] = first, position
        self.head = position
        return True

    def _calls(self, position: str, calls: list[dict[str, Any]]) -> str | None:
        """The entries of the repeated tool calls, one below the other from `position`
        (an answer's calls follow it in order), or None where one is not there."""
        for call in calls:
            cid = str(call.get("id") or "")
            owner = self.calls.get(cid)
            entry = f"{owner}:call:{cid}"
            if owner is None or entry not in self.nodes or self.nodes.parent_of(entry) != position:
                return None
            position = entry
        return position

    def _answers(self, position: str, responses: list[dict[str, Any]]) -> str | None:
        """The result entries the repeated `functionResponse` parts are, in order below
        `position` (the calls they answer), or None where one is not there."""
        for response in responses:
            entry = self.answered.get(str(response.get("id") or ""))
            if entry is None or self.nodes.parent_of(entry) != position:
                return None
            position = entry
        return position

    def _context_root(self) -> str | None:
        for i, parent in enumerate(self.nodes.parents):
            if parent is None and (self.nodes.data[i].get("gemini") or {}).get("context"):
                return self.nodes.ids[i]
        return None

    def _child(self, parent: str | None, role: str, text: str) -> str | None:
        """The message below `parent` (through label and kept-raw entries) that says
        `text` as `role`, or None."""
        if parent is None:
            return None
        below = [parent]
        while below:
            node = below.pop(0)
            for i, p in enumerate(self.nodes.parents):
                if p != node:
                    continue
                if self.nodes.types[i] != MESSAGE:
                    below.append(self.nodes.ids[i])
                    continue
                message = self.nodes.data[i].get("message") or {}
                if message.get("role") == role and \
                        text_of(message.get("content")).strip() == text:
                    return self.nodes.ids[i]
        return None

    def user(self, d: dict[str, Any], line: int) -> None:
        rid = d["id"]
        content = d.get("content")
        extra = {k: v for k, v in d.items() if k not in _RECORD_KEYS}
        start = len(self.nodes)
        blocks = blocks_of(content)
        if blocks:
            text = text_of(content)
            message = {"role": "user", "content": blocks}
            ms = epoch_ms(d.get("timestamp"))
            if ms is not None:
                message["timestamp"] = ms
            data: dict[str, Any] = {"message": message, "gemini": {"id": rid, **extra}}
            if text.startswith(CONTEXT_PREFIX):
                data["gemini"]["context"] = True     # Gemini CLI's own first turn
            elif text.strip() and not self.first_prompt:
                self.first_prompt = text
            self.head = self.nodes.add(rid, self.head, MESSAGE, data, d.get("timestamp"), line)
        self.results(rid, responses_of(content), d.get("timestamp"), line, extra)
        # (only results already read: the record is those)
        self.first_of[rid] = self.nodes.ids[start] if len(self.nodes) > start else self.head
        self.last_of[rid] = self.head

    def gemini(self, d: dict[str, Any], line: int) -> None:
        rid = d["id"]
        content = d.get("content")
        blocks: list[dict[str, Any]] = []
        thoughts = d.get("thoughts")
        if isinstance(thoughts, list):
            for thought in thoughts:
                if isinstance(thought, dict):
                    subject, text = thought.get("subject"), thought.get("description")
                    said = "\n\n".join(str(t) for t in (subject, text) if t)
                    if said:
                        blocks.append({"type": "thinking", "thinking": said})
        blocks.extend(blocks_of(content))
        message: dict[str, Any] = {"role": "assistant", "content": blocks, "api": "gemini",
                                   "provider": "google", "responseId": f"{FORMAT}:{rid}"}
        model = d.get("model")
        if isinstance(model, str) and model:
            message["model"] = self.model = model
        tokens = d.get("tokens")
        if isinstance(tokens, dict):
            message["usage"] = gemini_usage(tokens.get("input"), tokens.get("output"),
                                            tokens.get("cached"), tokens.get("thoughts"),
                                            tokens.get("tool"))
            if type(tokens.get("input")) is int:
                self.last_prompt_tokens = tokens["input"]
        ms = epoch_ms(d.get("timestamp"))
        if ms is not None:
            message["timestamp"] = ms
        extra = {k: v for k, v in d.items() if k not in _RECORD_KEYS}
        data = {"message": message, "gemini": {"id": rid, **extra}}
        self.head = self.nodes.add(rid, self.head, MESSAGE, data, d.get("timestamp"), line)
        self.first_of[rid] = self.last_of[rid] = self.head
        # (a record of a `$set` list holds its calls as parts, not as `toolCalls`)
        calls = d.get("toolCalls") if isinstance(d.get("toolCalls"), list) else [
            {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}
            for c in calls_of(content)]
        self.tool_calls(rid, calls, d.get("timestamp"), line)

    def again(self, d: dict[str, Any], line: int) -> None:
        """A record written again under its id: what it adds (its tool calls)."""
        rid = d["id"]
        if d.get("type") != "gemini" or not isinstance(d.get("toolCalls"), list):
            return
        tail = self.last_of[rid]
        went_on = self.head if self.head != tail else None
        self.head = tail
        self.tool_calls(rid, d["toolCalls"], d.get("timestamp"), line)
        self.last_of[rid] = self.head
        if went_on is not None:    # (the history went on meanwhile: it stays the branch)
            self.head = went_on

    def tool_calls(self, rid: str, calls: list[Any], timestamp: Any, line: int) -> None:
        made: list[dict[str, Any]] = []
        for call in calls:
            if not isinstance(call, dict):
                continue
            cid = str(call.get("id") or f"{rid}#{len(made)}")
            if cid in self.calls:
                continue
            self.calls[cid] = rid
            self.call_names[cid] = str(call.get("name") or "")
            message = {"role": "assistant", "content": [tool_call(cid, call.get("name"),
                                                                   call.get("args"))],
                       "api": "gemini", "provider": "google"}
            if self.model:
                message["model"] = self.model
            ms = epoch_ms(timestamp)
            if ms is not None:
                message["timestamp"] = ms
            rest = {k: v for k, v in call.items() if k not in _CALL_KEYS}
            entry = self.nodes.add(f"{rid}:call:{cid}", self.head, MESSAGE,
                                   {"message": message, "gemini": rest}, timestamp, line)
            self.head = entry
            agent = call.get("agentId")
            if isinstance(agent, str) and agent:
                self.nodes.spawns.append((agent, entry))
            made.append(call)
        for call in made:
            result = call.get("result")
            if isinstance(result, list):
                status = call.get("status")
                self.results(rid, responses_of(result), call.get("timestamp") or timestamp,
                             line, None, error=status not in (None, "success"))

    def results(self, rid: str, responses: list[dict[str, Any]], timestamp: Any, line: int,
                extra: dict[str, Any] | None, *, error: bool = False) -> None:
        for response in responses:
            cid = str(response.get("id") or "")
            if cid in self.answered:
                continue
            owner = self.calls.get(cid, rid)
            message = tool_result(cid, response.get("name") or self.call_names.get(cid),
                                  response.get("response"), is_error=error,
                                  timestamp_ms=epoch_ms(timestamp))
            data: dict[str, Any] = {"message": message}
            rest = {k: v for k, v in response.items() if k not in ("id", "name", "response")}
            if rest or extra:
                data["gemini"] = {**(extra or {}), **rest}
            self.head = self.answered[cid] = self.nodes.add(
                f"{owner}:result:{cid}", self.head, MESSAGE, data, timestamp, line)

    # ------------------------------------------------------------ $set.messages
    def set_messages(self, records: Any, line: int) -> None:
        if not isinstance(records, list):
            raise TypeError("$set.messages is not a list")
        self.replaying = False
        records = [r for r in records if isinstance(r, dict)]
        if self.head is None:
            for record in records:     # a new session's first history
                if isinstance(record.get("id"), str) and isinstance(record.get("type"), str):
                    self.record(record, line)
            return
        path = self.nodes.path_to(self.head)
        on_path = set(path)
        by_text: dict[tuple[str, str], list[str]] = {}
        for entry_id in path:
            data = self.nodes.get(entry_id) or {}
            message = data.get("message")
            if isinstance(message, dict) and message.get("role") in ("user", "assistant"):
                key = (message["role"], text_of(message.get("content")).strip())
                if key[1]:
                    by_text.setdefault(key, []).append(entry_id)
        found: list[str | None] = []
        for record in records:
            found.append(self._known(record, on_path, by_text))
        known = [i for i, f in enumerate(found) if f is not None]
        if len(known) == len(records):
            last = records[known[-1]].get("id") if known else None
            self.head = self.last_of.get(last, found[known[-1]]) if known else self.head
            return
        last_known = known[-1] if known else -1
        summarised = [i for i, f in enumerate(found) if f is None and i < last_known]
        if summarised:
            kept = [i for i in known if i > summarised[0]]
            first_kept = found[kept[0]] if kept else None
            summary = "\n\n".join(text_of(records[i].get("content")) for i in summarised
                                  if records[i].get("type") == "user")
            first_new = records[summarised[0]].get("id") or f"L{line}"
            data = {"summary": summary, "firstKeptEntryId": first_kept,
                    "tokensBefore": self.last_prompt_tokens,
                    "gemini": {"messages": [records[i] for i in summarised]}}
            self.head = self.nodes.add(f"compaction:{first_new}", self.head, COMPACTION, data,
                                       records[summarised[0]].get("timestamp"), line)
            for i in summarised:
                rid = records[i].get("id")
                if isinstance(rid, str):
                    self.first_of[rid] = self.last_of[rid] = self.head
        for i in known:     # the copies' new ids name the entries they copy
            rid = records[i].get("id")
            if isinstance(rid, str) and rid not in self.first_of:
                self.first_of[rid] = self.last_of[rid] = found[i]
        for i, f in enumerate(found):
            if f is None and i > last_known and isinstance(records[i].get("id"), str):
                self.record(records[i], line)

    def _known(self, record: dict[str, Any], on_path: set[str],
               by_text: dict[tuple[str, str], list[str]]) -> str | None:
        """The entry a record of a `$set.messages` list repeats, or None for a new one."""
        rid = record.get("id")
        if isinstance(rid, str) and rid in self.first_of:
            return self.first_of[rid]
        content = record.get("content")
        responses = responses_of(content)
        if responses and not blocks_of(content):
            answered = [self.answered.get(str(r.get("id") or "")) for r in responses]
            if all(answered):
                return answered[-1]
        role = {"user": "user", "gemini": "assistant"}.get(record.get("type"))
        text = text_of(content).strip()
        if role and text:
            matches = by_text.get((role, text))
            if matches:
                return matches.pop(0)
        return None


def project_root(path: Path, header: dict[str, Any]) -> str:
    """The session's project folder: `.project_root` in the project's folder of
    `~/.gemini/tmp` (the folder holding `chats/`), else the header's `directories`."""
    for folder in (path.parent.parent, path.parent.parent.parent):
        marker = folder / ".project_root"
        try:
            if marker.is_file() and marker.stat().st_size < 65536:
                text = marker.read_text("utf-8", "replace").strip()
                if text:
                    return text
        except OSError:
            continue
    directories = header.get("directories")
    if isinstance(directories, list) and directories and isinstance(directories[0], str):
        return directories[0]
    return ""


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    read = _Read(result)
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            try:
                read.take(d, raw.number)
            except SHAPE_ERRORS as error:
                result.skip(raw.number, odd_shape(error))
                read.raw(d, raw.number, "line")
    if not read.headers and not read.nodes:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no Gemini CLI records in this file"
        return
    header = read.headers[0] if read.headers else {}
    session_id = header.get("sessionId") if isinstance(header.get("sessionId"), str) else ""
    uid = session_id or f"{FORMAT}-{short_hash(str(path.resolve()))}"
    subagent = header.get("kind") == "subagent"
    cwd = project_root(path, header)
    summary = read.meta.get("summary")
    name = title_from_text(read.first_prompt) if read.first_prompt else ""
    if not subagent and isinstance(summary, str) and summary.strip() and \
            not summary.lstrip().startswith("{"):
        name = title_from_text(summary)
    name = name or path.stem
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": cwd,
                                "sessionId": session_id, "model": read.model,
                                "header": header, "kind": header.get("kind", "main")}
    if len(read.headers) > 1:
        metadata["resumes"] = len(read.headers) - 1
    if read.meta:
        metadata["set"] = {k: v for k, v in read.meta.items() if k != "lastUpdated"}
    if read.rewinds:
        metadata["rewinds"] = read.rewinds
    parent = path.parent.name if subagent else None
    write_session(store, result, ticker, read.nodes, uid=uid, name=name, source=FORMAT,
                  cwd=cwd, metadata=metadata, kind="subagent" if subagent else "session",
                  parent_session=parent, spawn_ref=f"key:{uid}" if subagent else None,
                  created_at=_stored(header.get("startTime")), fallback=file_mtime(path))


def _stored(value: Any):
    from core.importing.base import timestamp_of

    return timestamp_of(value)
