"""What Claude Code's bookkeeping lines say, in a few words each.

Beside the conversation, Claude Code writes lines of its own into a transcript: how long a
turn took, each prompt's snapshot of the files it may rewind, hooks that ran, API errors
and retries, queued prompts, titles, the permission mode... (see the community schema in
../shared/fixtures/claude_code/). The importer keeps each as it was written, as an entry
of type `claude:<type>`. Shown raw, every turn of a real session carries a line or two of
JSON; here each gets a name ("system · turn duration") and one line of what it says
("worked for 1m 44s"). Anything not recognised falls back to its JSON, less the fields
every line repeats (ids, parent, session, cwd, version...).

Returns plain strings: the caller makes them safe (tui.render.safe_text) like any other text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.model.entries import content_text

from .formatting import count

PREFIX = "claude:"

_NAMES = {"system": "system", "attachment": "attachment", "progress": "progress",
          "file-history-snapshot": "file snapshot", "queue-operation": "queue",
          "summary": "summary", "last-prompt": "last prompt", "ai-title": "title (AI)",
          "agent-name": "agent name", "permission-mode": "permission mode",
          "pr-link": "pull request", "agent-setting": "agent", "bridge-session": "remote session",
          "worktree-state": "worktree"}

# Fields of the line itself rather than of what it says: left out of the JSON fallback.
_BOOKKEEPING = frozenset({"type", "uuid", "parentUuid", "logicalParentUuid", "sessionId",
                          "timestamp", "isSidechain", "userType", "cwd", "version", "gitBranch",
                          "slug", "entrypoint", "isMeta", "level", "agentId", "teamName",
                          "toolUseID", "parentToolUseID", "messageId", "leafUuid"})

_COMMAND_TAG = re.compile(r"</?(?:command-name|command-args|command-contents|local-command-stdout"
                          r"|local-command-stderr|local-command-caveat)>")
_DROPPED_TAG = re.compile(r"<command-message>.*?</command-message>", re.DOTALL)
_SPACES = re.compile(r"\s+")


def is_claude_line(entry_type: str) -> bool:
    return entry_type.startswith(PREFIX)


def describe(entry_type: str, data: Any) -> tuple[str, str]:
    """(name, what it says) of a `claude:<type>` entry."""
    return name_of(entry_type, data), says(entry_type, data)


def name_of(entry_type: str, data: Any) -> str:
    """"system · turn duration": the line's type, and its subtype where it has one."""
    kind = _kind(entry_type)
    data = data if isinstance(data, dict) else {}
    name = _NAMES.get(kind, kind.replace("-", " "))
    sub = _subtype(kind, data)
    return f"{name} · {sub.replace('_', ' ')}" if sub else name


def says(entry_type: str, data: Any) -> str:
    """"worked for 1m 44s": what the line says, or the JSON of what its name does not."""
    kind = _kind(entry_type)
    data = data if isinstance(data, dict) else {}
    try:
        said = _SAYS.get(kind, _generic)(data)
    except (TypeError, ValueError, AttributeError, KeyError):
        said = ""
    return said or _leftover_json(kind, data)


def _kind(entry_type: str) -> str:
    return entry_type[len(PREFIX):] if entry_type.startswith(PREFIX) else entry_type


def duration(ms: Any) -> str:
    """1234 -> "1.2 s", 104326 -> "1m 44s"; "" for what is not a duration."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms >= 0 or ms > 1e13:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def _subtype(kind: str, data: dict) -> str:
    if kind == "system":
        value = data.get("subtype")
    elif kind == "attachment":
        value = data.get("attachment", {}).get("type") if isinstance(data.get("attachment"), dict) \
            else None
    elif kind == "progress":
        value = data.get("data", {}).get("type") if isinstance(data.get("data"), dict) else None
    elif kind == "queue-operation":
        value = data.get("operation")
    else:
        value = None
    return value[:40] if isinstance(value, str) else ""


def _text(value: Any) -> str:
    """Text of a string or of content blocks, Claude Code's command tags taken out, one line."""
    if not isinstance(value, str):
        value = content_text(value) if isinstance(value, list) else ""
    value = _COMMAND_TAG.sub(" ", _DROPPED_TAG.sub("", value[:4000]))
    return _SPACES.sub(" ", value).strip()


def _first_text(data: dict, *keys: str) -> str:
    for key in keys:
        found = _text(data.get(key))
        if found:
            return found
    return ""


def _joined(*parts: str) -> str:
    return " · ".join(part for part in parts if part)


def _count(number: Any, singular: str, plural: str | None = None, then: str = "") -> str:
    """"3 hooks" + `then`; "" when `number` is not a count."""
    if isinstance(number, bool) or not isinstance(number, int):
        return ""
    return count(number, singular, plural) + then


def _names(values: Any, most: int = 3) -> str:
    names = [str(v) for v in values if isinstance(v, (str, int, float))] \
        if isinstance(values, (list, tuple, dict)) else []
    shown = ", ".join(names[:most])
    return shown + (f" (+{len(names) - most})" if len(names) > most else "")


def _generic(data: dict) -> str:
    return _first_text(data, "content", "message", "summary", "description", "prompt")


def _system(data: dict) -> str:
    sub = data.get("subtype")
    if sub == "turn_duration":
        took = duration(data.get("durationMs"))
        return _joined(f"worked for {took}" if took else "",
                       _count(data.get("messageCount"), "message"))
    if sub == "api_error":
        attempt, most = data.get("retryAttempt"), data.get("maxRetries")
        cause = data.get("cause")
        error = data.get("error")
        if not isinstance(cause, (str, dict)) and isinstance(error, dict):
            cause = error.get("cause")
        if isinstance(cause, dict):
            cause = cause.get("code") or cause.get("message")
        retry = ""
        if isinstance(attempt, int) and not isinstance(attempt, bool):
            retry = f"retry {attempt}" + (f" of {most}" if isinstance(most, int) else "")
            wait = duration(data.get("retryInMs"))
            retry += f" in {wait}" if wait else ""
        return _joined(_text(cause) if isinstance(cause, str) else "", retry,
                       _first_text(data, "content"))
    if sub == "stop_hook_summary":
        errors = data.get("hookErrors")
        return _joined(_count(data.get("hookCount"), "hook", then=" ran"),
                       _count(len(errors), "error") if isinstance(errors, list) and errors else "",
                       "stopped the turn" if data.get("preventedContinuation") else "",
                       _first_text(data, "stopReason"))
    if sub in ("compact_boundary", "microcompact_boundary"):
        meta = data.get("compactMetadata") or data.get("microcompactMetadata") or {}
        meta = meta if isinstance(meta, dict) else {}
        return _joined(_first_text(data, "content"), _text(meta.get("trigger")),
                       _count(meta.get("preTokens"), "token", then=" before"),
                       _count(meta.get("tokensSaved"), "token", then=" saved"))
    return _joined(_first_text(data, "content"), _text(data.get("url")))


def _attachment(data: dict) -> str:
    inner = data.get("attachment")
    if not isinstance(inner, dict):
        return ""
    kind = str(inner.get("type", ""))
    if kind.startswith("hook_"):
        code = inner.get("exitCode")
        return _joined(_first_text(inner, "hookName", "hookEvent"),
                       _first_text(inner, "content", "message", "stderr", "stdout", "decision",
                                   "command"),
                       f"exit {code}" if isinstance(code, int) and code else "",
                       duration(inner.get("durationMs")))
    if kind in ("todo_reminder", "task_reminder"):
        return _count(inner.get("itemCount"), "item")
    if kind == "budget_usd" and isinstance(inner.get("used"), (int, float)):
        total = inner.get("total")
        return f"${inner['used']:.2f}" + (f" of ${total:.2f}" if isinstance(total, (int, float))
                                          else "")
    if kind == "max_turns_reached":
        return _joined(_count(inner.get("turnCount"), "turn"),
                       f"at most {inner['maxTurns']}" if isinstance(inner.get("maxTurns"), int)
                       else "")
    if kind == "task_status":
        return _joined(_first_text(inner, "description", "taskId"), _text(inner.get("status")))
    if kind == "goal_status":
        state = "failed" if inner.get("failed") else "met" if inner.get("met") else "not met"
        return _joined(state, _first_text(inner, "condition", "reason"))
    if kind == "invoked_skills":
        skills = inner.get("skills")
        return _names([s.get("name") if isinstance(s, dict) else s for s in skills]
                      if isinstance(skills, list) else [])
    if kind == "command_permissions":
        return _names(inner.get("allowedTools"))
    if kind in ("deferred_tools_delta", "mcp_instructions_delta", "agent_listing_delta"):
        added = _names(inner.get("addedNames", inner.get("addedTypes")))
        removed = _names(inner.get("removedNames", inner.get("removedTypes")))
        return _joined(f"+ {added}" if added else "", f"− {removed}" if removed else "")
    if kind == "skill_listing":
        return _count(inner.get("skillCount"), "skill")
    if kind == "relevant_memories":
        memories = inner.get("memories")
        return _count(len(memories), "memory", "memories") if isinstance(memories, list) else ""
    return _first_text(inner, "displayPath", "filename", "path", "planFilePath", "prompt",
                       "content", "newDate", "style", "agentType", "reminderType")


def _progress(data: dict) -> str:
    inner = data.get("data")
    if not isinstance(inner, dict):
        return ""
    return _joined(_first_text(inner, "hookName", "toolName", "agentId"),
                   _first_text(inner, "message", "output", "command", "query", "status"))


def _snapshot(data: dict) -> str:
    snapshot = data.get("snapshot")
    files = snapshot.get("trackedFileBackups") if isinstance(snapshot, dict) else None
    files = files if isinstance(files, dict) else {}
    shown = f"{_count(len(files), 'file')}: {_names(files)}" if files else "no files tracked"
    return ("updated · " if data.get("isSnapshotUpdate") else "") + shown


def _pr(data: dict) -> str:
    number = data.get("prNumber")
    return _joined(f"#{number}" if isinstance(number, int) else "",
                   _first_text(data, "prRepository"), _first_text(data, "prUrl"))


def _worktree(data: dict) -> str:
    state = data.get("worktreeSession")
    return _first_text(state, "worktreePath", "worktreeBranch", "worktreeName") \
        if isinstance(state, dict) else ""


_SAYS = {
    "system": _system, "attachment": _attachment, "progress": _progress,
    "file-history-snapshot": _snapshot, "queue-operation": lambda d: _first_text(d, "content"),
    "last-prompt": lambda d: _first_text(d, "lastPrompt"),
    "ai-title": lambda d: _first_text(d, "aiTitle"),
    "agent-name": lambda d: _first_text(d, "agentName"),
    "permission-mode": lambda d: _first_text(d, "permissionMode"),
    "agent-setting": lambda d: _first_text(d, "agentSetting"),
    "bridge-session": lambda d: _first_text(d, "bridgeSessionId"),
    "pr-link": _pr, "worktree-state": _worktree,
}


_INNER = {"attachment": "attachment", "progress": "data"}


def _leftover_json(kind: str, data: dict) -> str:
    """The JSON of what the name does not already say: the line less its bookkeeping and its
    subtype (for an attachment or a progress line, the payload less its type)."""
    inner = data.get(_INNER.get(kind, ""))
    if isinstance(inner, dict):
        rest = {key: value for key, value in inner.items() if key != "type"}
    else:
        rest = {key: value for key, value in data.items()
                if key not in _BOOKKEEPING and key not in ("subtype", "operation")}
    if not rest:
        return ""
    try:
        return json.dumps(rest, ensure_ascii=False, default=str)[:2000]
    except (TypeError, ValueError):
        return repr(rest)[:2000]
