"""Claude Code: a branch as a new transcript, as Claude Code's own fork writes one.

Learned from Claude Code 2.1 and its Agent SDK (`forkSession`, `getSessionMessages`, the
resume loader): a transcript is `<config dir>/projects/<project folder>/<session uuid>.jsonl`,
the config dir `$CLAUDE_CONFIG_DIR` or `~/.claude`, the project folder the working
directory with every character outside [A-Za-z0-9] as '-' (a UTF-16 pair as two; past 200
characters cut and followed by '-' and a hash). On resume the loader takes the newest leaf
and walks `parentUuid` back to a root; a `compact_boundary` has no parent, so the chain
stops there; `preservedSegment` re-links the messages a compaction kept after its summary;
an assistant line whose tool calls all lack a result is dropped.

So the new file holds, in path order, one line per user/assistant entry of the branch,
chained by fresh uuids (`parentUuid` the previous line), each with `sessionId` the new
uuid, `cwd`, `version`, `userType`, `gitBranch`, `isSidechain: false`, its own
`timestamp`, assistant messages with a `msg_…` id, and `forkedFrom` naming the line it was
copied from (as `forkSession` marks them). A tool call whose result is not on the path gets
the result Claude Code itself writes for an interrupted call, right after it, so the call
survives the loader. A compaction is a `compact_boundary` (no parent, `logicalParentUuid`
the line before, `compactMetadata` with a `preservedSegment` when it keeps messages) and
its `isCompactSummary` user message. A `custom-title` line (what Claude Code's `/rename`
writes, and what its picker lists the session by) ends the file: the session's name and the
branch's label or name (`BranchToWrite.title`).
Command: `claude --resume <uuid>`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry, content_text)
from core.agents.native import (
    BranchToWrite, as_text, base62, branch_summary_text, entry_stamp, env_dir, home, json_lines,
    own_file, write_new_file)

NAME = "claude"
EXECUTABLE = "claude"
FOLDER_LIMIT = 200
INTERRUPTED = "[Request interrupted by user for tool use]"
SUMMARY_PREFACE = ("This session is being continued from a previous conversation that ran out "
                   "of context. The summary below covers the earlier portion of the conversation.")
KEPT_NOTE = "Recent messages are preserved verbatim."
# Fields a fork clears (Claude Code's forkSession does the same) or that belong to one line.
_DROPPED = frozenset({"parentUuid", "logicalParentUuid", "isSidechain", "sessionId", "uuid",
                      "timestamp", "teamName", "agentName", "agentId", "sessionKind", "slug",
                      "sourceToolAssistantUUID", "summarizedTurnPromptUuids",
                      "droppedPromptUuids", "sentAsUuid", "rowsAheadOfPutBack",
                      "turnAttributionKey", "forkedFrom", "compactMetadata",
                      "forkedFromEntry"})
_DEFAULT_KEYS = ("cwd", "sessionId", "version", "gitBranch", "userType", "isSidechain", "slug")
_STOP_REASONS = {"stop": "end_turn", "toolUse": "tool_use", "length": "max_tokens",
                 "error": "end_turn", "aborted": "end_turn"}
_MESSAGE_SKIP = frozenset({"usageCountedOnAnotherLine", "toolResultExtra", "id"})


def config_dir(env: Mapping[str, str]) -> Path:
    return env_dir(env, "CLAUDE_CONFIG_DIR") or home(env) / ".claude"


def _js_hash_base36(text: str) -> str:
    """Claude Code's hash of a long folder name: a 32-bit string hash over UTF-16 code
    units, its absolute value in base 36."""
    value = 0
    for unit in _utf16_units(text):
        value = ((value << 5) - value + unit) & 0xFFFFFFFF
    if value & 0x80000000:
        value -= 1 << 32
    value = abs(value)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
        if not value:
            return out


def _utf16_units(text: str) -> Iterator[int]:
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            yield 0xD800 + (code >> 10)
            yield 0xDC00 + (code & 0x3FF)
        else:
            yield code


def project_folder(cwd: str, env: Mapping[str, str]) -> str:
    """The folder name Claude Code keeps a working directory's transcripts in."""
    named = (env.get("CLAUDE_CODE_PROJECT_DIR_NAME") or "").strip()
    if env.get("CLAUDE_CONFIG_DIR") and named and len(named) <= 64 and \
            all(c.isascii() and (c.isalnum() or c in "_-") for c in named):
        return named
    safe = "".join(char if char.isascii() and char.isalnum() else
                   "--" if ord(char) > 0xFFFF else "-" for char in cwd)
    if len(safe) <= FOLDER_LIMIT:
        return safe
    return f"{safe[:FOLDER_LIMIT]}-{_js_hash_base36(cwd)}"


def transcript_dir(cwd: str, env: Mapping[str, str]) -> Path:
    return config_dir(env) / "projects" / project_folder(cwd, env)


# ------------------------------------------------------------- content, back
def _image(block: dict[str, Any]) -> dict[str, Any]:
    if "data" in block:
        return {"type": "image", "source": {"type": "base64",
                                            "media_type": block.get("mimeType", "image/png"),
                                            "data": block.get("data", "")}}
    if block.get("url"):
        return {"type": "image", "source": {"type": "url", "url": block["url"]}}
    return block


def _result_block(call_id: str, content: Any, is_error: bool,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result",
                             "content": _blocks(content) if isinstance(content, list) else
                             ("" if content is None else content)}
    if is_error:
        block["is_error"] = True
    for key, value in (extra or {}).items():
        block.setdefault(key, value)
    return block


def _blocks(content: Any) -> Any:
    """pi-shaped content blocks as Claude API blocks (the importer's conversion, reversed).
    Thinking without a signature (written by another agent or by hand) is left out: the API
    refuses an unsigned thinking block."""
    if not isinstance(content, list):
        return content if isinstance(content, str) else content_text(content)
    out: list[Any] = []
    for block in content:
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "thinking":
            if block.get("redacted"):
                out.append({"type": "redacted_thinking", "data": block.get("data") or ""})
            elif block.get("thinkingSignature"):
                out.append({"type": "thinking", "thinking": block.get("thinking", ""),
                            "signature": block["thinkingSignature"]})
        elif kind in ("toolCall", "tool_call"):
            arguments = block.get("arguments", block.get("input", {}))
            out.append({"type": block.get("claudeType") or "tool_use", "id": block.get("id", ""),
                        "name": block.get("name", ""),
                        "input": arguments if isinstance(arguments, dict) else {"input": arguments}})
        elif kind == "image":
            out.append(_image(block))
        elif kind == "toolResult":
            out.append(_result_block(str(block.get("toolCallId", "")), block.get("content"),
                                     bool(block.get("isError"))))
        else:
            out.append(block)
    return out


def tool_calls(message: dict[str, Any] | None) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [str(b.get("id", "")) for b in content if isinstance(b, dict)
            and b.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use")]


def tool_results(message: dict[str, Any] | None) -> list[str]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [str(b.get("tool_use_id", "")) for b in content if isinstance(b, dict)
            and b.get("type") == "tool_result"]


# ------------------------------------------------------------------ the lines
class _Lines:
    """The transcript's lines for one branch, one entry at a time (see the module doc)."""

    def __init__(self, job: BranchToWrite, session_id: str):
        self.job = job
        self.session_id = session_id
        meta = job.metadata
        self.defaults = {k: v for k, v in (meta.get("lineDefaults") or {}).items()
                         if k in _DEFAULT_KEYS}
        self.source_session = str(self.defaults.get("sessionId") or meta.get("sessionId")
                                  or job.session.uid)
        self.version = str(meta.get("version") or self.defaults.get("version") or "")
        self.git_branch = meta.get("gitBranch") or self.defaults.get("gitBranch")
        self.model = meta.get("model") or ""
        self.previous: str | None = None      # uuid of the line written last
        self.uuids: dict[str, str] = {}       # entry id -> the uuid of its line
        self.message_ids: dict[str, str] = {}  # old message id -> new one
        self.pending: list[str] = []          # tool calls still without a result
        self.last_message_id: str | None = None

    def new_uuid(self) -> str:
        return self.job.ids.uuid4()

    def message_id(self, old: Any, key: str) -> str:
        if isinstance(old, str) and old.startswith("msg_"):
            return old
        key = old if isinstance(old, str) and old else key
        found = self.message_ids.get(key)
        if found is None:
            found = self.message_ids[key] = "msg_01" + base62(self.job.ids.token(20), 22)
        return found

    # --------------------------------------------------------------- a line
    def base(self, entry: Entry | None, kind: str) -> dict[str, Any]:
        """The fields every message line starts with, in Claude Code's order."""
        extra = _claude(entry)
        line: dict[str, Any] = {"parentUuid": self.previous, "isSidechain": False}
        line["userType"] = extra.get("userType", self.defaults.get("userType", "external"))
        line["cwd"] = extra.get("cwd", self.defaults.get("cwd") or self.job.cwd)
        line["sessionId"] = self.session_id
        line["version"] = extra.get("version", self.version)
        git_branch = extra.get("gitBranch", self.git_branch)
        if git_branch:
            line["gitBranch"] = git_branch
        line["type"] = kind
        return line

    def finish(self, line: dict[str, Any], entry: Entry | None, uuid: str | None = None) -> dict[str, Any]:
        extra = _claude(entry)
        uuid = uuid or self.new_uuid()
        line["uuid"] = uuid
        line["timestamp"] = entry_stamp(entry.timestamp if entry else None, self.job.now)
        for key, value in extra.items():
            if key not in _DROPPED and key not in line:
                line[key] = value
        if entry is not None and extra and (not entry.id.startswith("L") or
                                            "forkedFromEntry" in extra):
            original = str(extra.get("forkedFromEntry") or entry.id.split("~", 1)[0])
            line["forkedFrom"] = {"sessionId": extra.get("sessionId", self.source_session),
                                  "messageUuid": original}
        if entry is not None:
            self.uuids[entry.id] = uuid
        self.previous = uuid
        return line

    def message_line(self, entry: Entry, message: dict[str, Any], uuid: str | None = None) -> dict[str, Any]:
        role = message.get("role")
        rest = message.get("claude") if isinstance(message.get("claude"), dict) else {}
        if role == "assistant":
            line = self.base(entry, "assistant")
            out: dict[str, Any] = {
                "id": self.message_id(rest.get("id") or message.get("responseId"), entry.id),
                "type": "message", "role": "assistant",
                "model": message.get("model") or self.model or "unknown",
                "content": _blocks(message.get("content"))}
            for key, value in rest.items():
                if key not in _MESSAGE_SKIP and key not in out:
                    out[key] = value
            out.setdefault("stop_reason", _STOP_REASONS.get(message.get("stopReason"), None))
            out.setdefault("stop_sequence", None)
            out.setdefault("usage", {"input_tokens": 0, "output_tokens": 0,
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 0})
            line["message"] = out
        elif role == "toolResult":
            line = self.base(entry, "user")
            line["message"] = {"role": "user", "content": [_result_block(
                str(message.get("toolCallId", "")), message.get("content"),
                bool(message.get("isError")), rest.get("toolResultExtra"))]}
        elif role == "user":
            line = self.base(entry, "user")
            out = {"role": "user", "content": _blocks(message.get("content"))}
            for key, value in rest.items():
                if key not in _MESSAGE_SKIP and key not in out:
                    out[key] = value
            line["message"] = out
        else:
            # pi roles Claude has no word for (bash runs, extension messages, summaries)
            line = self.base(entry, "user")
            line["message"] = {"role": "user", "content": as_text(message)}
        return self.finish(line, entry, uuid)

    def text_line(self, entry: Entry | None, text: str, **fields: Any) -> dict[str, Any]:
        line = self.base(entry, "user")
        line["message"] = {"role": "user", "content": text}
        line.update(fields)
        return self.finish(line, entry)

    # ------------------------------------------------------- tool pairing
    def close_calls(self) -> Iterator[dict[str, Any]]:
        """The result Claude Code writes for a call that was interrupted before it ran."""
        if not self.pending:
            return
        calls, self.pending = self.pending, []
        line = self.base(None, "user")
        line["message"] = {"role": "user", "content": [
            {"type": "tool_result", "content": INTERRUPTED, "is_error": True, "tool_use_id": call}
            for call in calls]}
        line["toolUseResult"] = f"Error: {INTERRUPTED}"
        yield self.finish(line, None)

    def track(self, line: dict[str, Any]) -> None:
        message = line.get("message")
        if line.get("type") == "assistant":
            self.pending.extend(tool_calls(message))
            self.last_message_id = message.get("id") if isinstance(message, dict) else None
        elif line.get("type") == "user":
            answered = set(tool_results(message))
            if answered:
                self.pending = [call for call in self.pending if call not in answered]

    def emit(self, line: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield line
        self.track(line)

    # ------------------------------------------------------------ the file
    def lines(self) -> Iterator[dict[str, Any]]:
        entries = self.job.path()
        entry = next(entries, None)
        while entry is not None:
            following = next(entries, None)
            if entry.type == COMPACTION:
                summary_entry = following if _is_compact_summary(following) else None
                yield from self.compaction(entry, summary_entry)
                if summary_entry is not None:
                    following = next(entries, None)
            elif entry.type == MESSAGE and entry.message is not None:
                yield from self.message(entry, entry.message)
            elif entry.type == BRANCH_SUMMARY:
                yield from self.message(entry, {"role": "user", "content": branch_summary_text(
                    entry.data.get("summary", ""))})
            elif entry.type == CUSTOM_MESSAGE:
                content = entry.data.get("content", (entry.data.get("message") or {}).get("content"))
                yield from self.message(entry, {"role": "user", "content": content
                                                if content is not None else ""})
            entry = following
        yield from self.close_calls()
        yield {"type": "custom-title", "customTitle": self.job.title,
               "sessionId": self.session_id}

    def message(self, entry: Entry, message: dict[str, Any], uuid: str | None = None
                ) -> Iterator[dict[str, Any]]:
        role = message.get("role")
        if role == "assistant":
            rest = message.get("claude") if isinstance(message.get("claude"), dict) else {}
            same_reply = self.message_id(rest.get("id") or message.get("responseId"),
                                         entry.id) == self.last_message_id
            if not same_reply:      # the calls of an earlier reply stay unanswered
                yield from self.close_calls()
        else:
            answers = _answered(message)
            if not answers or any(call not in self.pending for call in answers):
                # a line that carries no result (or a result whose call is not open)
                yield from self.close_calls()
        yield from self.emit(self.message_line(entry, message, uuid))

    def compaction(self, entry: Entry, summary_entry: Entry | None) -> Iterator[dict[str, Any]]:
        yield from self.close_calls()
        summary_uuid = self.new_uuid()
        extra = _claude(entry)
        metadata: dict[str, Any] = {"trigger": entry.data.get("trigger") or
                                    (extra.get("compactMetadata") or {}).get("trigger") or "manual",
                                    "preTokens": entry.data.get("tokensBefore") or 0}
        kept = entry.data.get("firstKeptEntryId")
        kept_uuid = self.uuids.get(kept) if isinstance(kept, str) else None
        if kept_uuid and self.previous:
            metadata["preservedSegment"] = {"headUuid": kept_uuid, "anchorUuid": summary_uuid,
                                            "tailUuid": self.previous}
        line = self.base(entry, "system")
        line["parentUuid"] = None
        line["logicalParentUuid"] = self.previous
        line.update({"subtype": "compact_boundary", "content": "Conversation compacted",
                     "isMeta": False, "level": "info", "compactMetadata": metadata})
        boundary = self.finish(line, entry)
        yield boundary
        if summary_entry is not None:
            yield from self.emit(self.message_line(summary_entry, summary_entry.message, summary_uuid))
            return
        text = f"{SUMMARY_PREFACE}\n\n{entry.data.get('summary', '')}"
        if kept_uuid:
            text += f"\n\n{KEPT_NOTE}"
        line = self.base(None, "user")
        line["message"] = {"role": "user", "content": text}
        line["isVisibleInTranscriptOnly"] = True
        line["isCompactSummary"] = True
        summary = self.finish(line, None, summary_uuid)
        summary["timestamp"] = entry_stamp(entry.timestamp, self.job.now)
        yield summary


def _claude(entry: Entry | None) -> dict[str, Any]:
    if entry is None:
        return {}
    extra = entry.data.get("claude")
    return extra if isinstance(extra, dict) else {}


def _answered(message: dict[str, Any]) -> list[str]:
    """The tool calls a pi-shaped message answers."""
    if message.get("role") == "toolResult":
        return [str(message.get("toolCallId", ""))]
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [str(b.get("toolCallId", "")) for b in content
            if isinstance(b, dict) and b.get("type") == "toolResult"]


def _is_compact_summary(entry: Entry | None) -> bool:
    return entry is not None and entry.type == MESSAGE and entry.message is not None and \
        bool(_claude(entry).get("isCompactSummary"))


# ------------------------------------------------------------------ writing
def folder_cwd(cwd: str) -> str:
    """The directory as Claude Code sees it when started there (symbolic links resolved)."""
    return os.path.realpath(cwd) if cwd and os.path.isdir(cwd) else cwd


def place(job: BranchToWrite) -> tuple[Path, str]:
    """Where the new transcript goes and its session uuid (nothing is written)."""
    session_id = job.ids.uuid4()
    return transcript_dir(folder_cwd(job.cwd), job.env) / f"{session_id}.jsonl", session_id


def write(job: BranchToWrite, target: Path, session_id: str) -> None:
    """Write the branch as a new Claude Code transcript at `target` (from `place`)."""
    write_new_file(target, _Lines(job, session_id).lines())


_LINE_ENTRY = re.compile(r"^L\d+$")   # an entry made from a line without a uuid


def own_transcript(job: BranchToWrite) -> str | None:
    """The session's own id, when `claude --resume <id>` lands exactly on the branch: its
    transcript is where Claude Code looks for it (the project folder of the directory), the
    branch's last message is the file's last line with a uuid (the newest leaf, which Claude
    Code resumes), and only Claude Code's bookkeeping follows it. Asked only of a session
    arbor wrote (reuse.written_by_arbor): opened again from the session the app shows on
    return, it is resumed itself, not copied."""
    path = own_file(job)
    session_id = str(job.metadata.get("sessionId") or job.session.uid)
    if path is None or path.name != f"{session_id}.jsonl" or \
            path.parent != transcript_dir(folder_cwd(job.cwd), job.env):
        return None
    entry = job.head()
    if job.store.entries.children(entry.seq):
        return None
    while _LINE_ENTRY.match(entry.id) and entry.parent_seq is not None:
        entry = job.store.entries.get(entry.parent_seq)       # a title, a mode line, …
        if entry is None:
            return None
    lines = json_lines(path)
    if not lines:
        return None
    for line in reversed(lines):
        if isinstance(line, dict) and "uuid" in line and not line.get("isSidechain"):
            return session_id if line["uuid"] == entry.id else None
        if not adds_nothing(line):
            return None
    return None


def adds_nothing(line: Any) -> bool:
    """Whether a line Claude Code appended leaves the conversation where it was: its
    bookkeeping (`mode` and `permission-mode` on every start and quit, `last-prompt`,
    titles, file snapshots) has no `uuid`; every message and attachment has one."""
    return isinstance(line, dict) and "uuid" not in line and "parentUuid" not in line


def command(session_id: str) -> list[str]:
    return [EXECUTABLE, "--resume", session_id]


def prepare(plan, job: BranchToWrite, env: Mapping[str, str], new_session) -> None:
    """`o` / `arbor resume` (see core.agents.resume): Claude Code's own transcript where the
    branch ends where it ends, else the branch as a new transcript; `claude --resume <id>`
    from the folder the transcript's project is named after."""
    import sys

    from core.agents import reuse

    plan.cwd = folder_cwd(plan.cwd)
    own_id = own_transcript(job) if reuse.written_by_arbor(job) else None
    if own_id is not None:
        plan.native_id = own_id
        plan.summary = f"The branch ends where Claude Code's session {own_id} ends: nothing to write"
    else:
        new_session(plan, job, transcript_dir(plan.cwd, env), sys.modules[__name__],
                    lambda target, new_id: write(job, target, new_id))
    plan.argv = command(plan.native_id)
