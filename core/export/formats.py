"""Export one session: pi JSONL (v3), a Markdown transcript of a branch, or JSON of everything.

* pi: a `session` header (version 3, id = the session's uid) and every entry in the order
  it was written (parents first), each as pi's `{type, id, parentId, timestamp, ...}` line;
  the current branch's head is written last, because pi's current leaf is its last entry.
  Re-importing the file gives the same tree. Data fields that would collide with the four
  base fields (raw lines of other formats carry their own `type`/`timestamp`) are written
  under `arbor:shadowed` and restored by the pi importer.
* markdown: the root-to-head path of one branch (the current one by default), readable:
  roles, times, text, tool calls and results, compaction and branch-summary markers, labels.
* json: the whole session: session, branches, checkpoints, label log, every entry.

Entries are read page by page, so a large session is never held in memory at once.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, TextIO

from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM, CUSTOM_MESSAGE, LABEL, MESSAGE, MODEL_CHANGE, SESSION_INFO,
    THINKING_LEVEL_CHANGE, Entry, content_text)
from core.model.errors import AmbiguousId, NotFound
from core.history.outcomes import (
    CONTENT_ROLES, NO_SUMMARY, empty_words, marked, reply_outcome, shell_outcome)

FORMATS = ("pi", "markdown", "json")
BASE_KEYS = ("type", "id", "parentId", "timestamp")
SHADOW_KEY = "arbor:shadowed"
PAGE = 2000
TOOL_OUTPUT_LIMIT = 4000


# ----------------------------------------------------------------- resolving names
def resolve_session(store, ref: str):
    """A session by uid, unique uid prefix, or exact (unique) name."""
    ref = ref.strip()
    if not ref:
        raise NotFound("no session given")
    found = store.sessions.by_uid(ref)
    if found is not None:
        return found
    matches = store.sessions.find(uid_prefix=ref)
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise AmbiguousId(f"{ref!r} matches {len(matches)} sessions: "
                          + ", ".join(m.uid for m in matches[:5]) + ("…" if len(matches) > 5 else ""))
    named = [s for s in store.sessions.list(include_archived=True) if s.name == ref]
    if len(named) == 1:
        return store.sessions.get(named[0].id)
    if len(named) > 1:
        raise AmbiguousId(f"{len(named)} sessions are named {ref!r}; give a uid: "
                          + ", ".join(s.uid for s in named[:5]))
    folded = [s for s in store.sessions.list(include_archived=True)
              if s.name.casefold() == ref.casefold()]
    if len(folded) == 1:
        return store.sessions.get(folded[0].id)
    raise NotFound(f"no session with uid, uid prefix or name {ref!r}")


def resolve_branch(store, session, ref: str | None = None):
    """A branch of the session: its id, name, or key; the current branch when None."""
    branches = store.branches.of_session(session.id, newest_first=False)
    if not branches:
        raise NotFound(f"session {session.uid} has no branches")
    if ref is None or ref == "":
        current = [b for b in branches if b.is_current]
        return current[0] if current else branches[-1]
    for branch in branches:
        if str(branch.id) == ref or branch.langgraph_session_id == ref:
            return branch
    named = [b for b in branches if b.name == ref]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise AmbiguousId(f"{len(named)} branches are named {ref!r}; give its id: "
                          + ", ".join(str(b.id) for b in named))
    raise NotFound(f"session {session.uid} has no branch {ref!r} (branches: "
                   + ", ".join(f"{b.id} {b.name!r}" for b in branches[:10]) + ")")


def _entries(store, external_session_id: int) -> Iterator[Entry]:
    after = 0
    while True:
        page = store.entries.of_session(external_session_id, after_seq=after, limit=PAGE)
        if not page:
            return
        yield from page
        after = page[-1].seq


def _stamp(text: str | None) -> str | None:
    if isinstance(text, str) and text.endswith("+00:00"):
        return text[:-6] + "Z"
    return text


def _iso(moment) -> str | None:
    if moment is None:
        return None
    return _stamp(moment.isoformat(timespec="milliseconds"))


# ---------------------------------------------------------------------------- pi
def pi_line(entry: Entry) -> dict[str, Any]:
    line: dict[str, Any] = {"type": entry.type, "id": entry.id, "parentId": entry.parent_id,
                            "timestamp": _stamp(entry.timestamp)}
    shadowed = {}
    for key, value in entry.data.items():
        if key in BASE_KEYS:
            shadowed[key] = value
        else:
            line[key] = value
    if shadowed:
        line[SHADOW_KEY] = shadowed
    return line


def export_pi(store, session, out: TextIO) -> int:
    """Write the session as pi JSONL v3; returns the number of lines."""
    header: dict[str, Any] = {"type": "session", "version": 3, "id": session.uid,
                              "timestamp": _iso(session.created_at), "cwd": session.cwd or ""}
    if session.parent_session:
        header["parentSession"] = session.parent_session
    meta = session.metadata or {}
    original = meta.get("header") if isinstance(meta.get("header"), dict) else {}
    for key, value in original.items():
        header.setdefault(key, value)
    header["arbor"] = {"source": session.source, "name": session.session_name,
                       "kind": session.kind}
    out.write(_dumps(header) + "\n")
    lines = 1
    current = store.branches.current(session.id)
    last_seq = None
    if current is not None and current.head_seq is not None and not store.entries.children(current.head_seq):
        last_seq = current.head_seq
    held = None
    for entry in _entries(store, session.id):
        if entry.seq == last_seq:
            held = entry
            continue
        out.write(_dumps(pi_line(entry)) + "\n")
        lines += 1
    if held is not None:
        out.write(_dumps(pi_line(held)) + "\n")
        lines += 1
    return lines


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


# ------------------------------------------------------------------------- json
def export_json(store, session, out: TextIO) -> int:
    """Write the whole session as one JSON document; returns the number of entries."""
    branches = store.branches.of_session(session.id, newest_first=False)
    document_head = {
        "format": "arbor-session", "version": 1,
        "session": {"uid": session.uid, "name": session.session_name, "source": session.source,
                    "kind": session.kind, "cwd": session.cwd, "parent_session": session.parent_session,
                    "created_at": _iso(session.created_at), "updated_at": _iso(session.updated_at),
                    "is_active": session.is_active, "metadata": session.metadata,
                    "message_count": session.message_count},
        "branches": [{"id": b.id, "name": b.name, "key": b.langgraph_session_id,
                      "is_current": b.is_current, "head": b.head_id, "fork": b.fork_id,
                      "parent_branch": b.parent_session_id,
                      "branch_point_checkpoint": b.branch_point_checkpoint_id,
                      "created_at": _iso(b.created_at), "session_state": b.session_state,
                      "metadata": b.metadata, "message_count": b.message_count,
                      "reflog": [{"old_head": o, "new_head": n, "reason": r, "at": a}
                                 for o, n, r, a in store.branches.reflog(b.id)]}
                     for b in branches],
        "checkpoints": [{"id": c.id, "name": c.checkpoint_name, "branch": c.internal_session_id,
                         "entry": c.entry_id, "is_auto": c.is_auto,
                         "created_at": _iso(c.created_at), "session_state": c.session_state,
                         "metadata": c.metadata, "tool_invocations": c.tool_invocations}
                        for c in reversed(store.annotations.checkpoints_of_session(session.id))],
        "labels": store.annotations.label_log(session.id),
        "usage": store.usage.of_session(session.id),
    }
    text = json.dumps(document_head, ensure_ascii=False, indent=1, default=str)
    out.write(text[:-2] + ',\n "entries": [')
    count = 0
    for entry in _entries(store, session.id):
        line = {"seq": entry.seq, "depth": entry.depth, **pi_line(entry)}
        out.write(("\n  " if count == 0 else ",\n  ") + _dumps(line))
        count += 1
    out.write("\n ]\n}\n")
    return count


# --------------------------------------------------------------------- markdown
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _safe(text: Any) -> str:
    """Text for a Markdown file that may be printed to a terminal: control characters,
    ESC sequences and bidi overrides are made visible instead of acting."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", str(text))


def _fence(text: str, lang: str = "") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _clip(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _when(entry: Entry) -> str:
    return entry.timestamp[:19].replace("T", " ") if entry.timestamp else ""


def _blocks_md(content: Any) -> list[str]:
    if isinstance(content, str):
        return [_safe(content)] if content.strip() else []
    if not isinstance(content, list):
        return [_safe(content_text(content))] if content else []
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(_safe(block))
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            if str(block.get("text", "")).strip():
                parts.append(_safe(block.get("text", "")))
        elif kind == "thinking":
            thought = str(block.get("thinking", ""))
            if thought.strip():
                parts.append("> *thinking:* " + _safe(thought).replace("\n", "\n> "))
            elif block.get("redacted"):
                parts.append("> *thinking (redacted)*")
        elif kind in ("toolCall", "tool_use", "function_call"):
            args = block.get("arguments", block.get("input", {}))
            body = json.dumps(args, ensure_ascii=False, indent=2, default=str) \
                if not isinstance(args, str) else args
            parts.append(f"**Tool call** `{_safe(block.get('name', ''))}`\n\n"
                         + _fence(_safe(_clip(body)), "json"))
        elif kind == "toolResult":
            text = content_text(block.get("content"))
            parts.append(f"**Tool result** `{_safe(block.get('toolName', ''))}`"
                         + (" (error)" if block.get("isError") else "") + "\n\n"
                         + _fence(_safe(_clip(text))))
        elif kind == "image":
            parts.append(f"*[image {_safe(block.get('mimeType', ''))}]*")
        else:
            parts.append(_fence(_safe(_clip(json.dumps(block, ensure_ascii=False, default=str))),
                                "json"))
    return parts


_ROLE_TITLES = {"user": "User", "assistant": "Assistant", "toolResult": "Tool result",
                "system": "System", "developer": "Developer", "bashExecution": "Shell",
                "custom": "Extension", "branchSummary": "Branch summary",
                "compactionSummary": "Compaction summary"}


def markdown_entry(entry: Entry, label: str | None = None) -> str:
    when = _when(entry)
    tag = f" 🏷 `{_safe(label)}`" if label else ""
    if entry.type == MESSAGE and entry.message is not None:
        message = entry.message
        role = str(message.get("role", "?"))
        title = _ROLE_TITLES.get(role, _safe(role))
        extra = ""
        if role == "assistant" and message.get("model"):
            extra = f" · {_safe(message['model'])}"
        if role == "toolResult":
            extra = f" · `{_safe(message.get('toolName', ''))}`" + \
                (" · error" if message.get("isError") else "")
            text = content_text(message.get("content"))
            body = _fence(_safe(_clip(text)))
        elif role == "bashExecution":
            body = _fence(_safe(f"$ {message.get('command', '')}\n{_clip(str(message.get('output', '')))}"))
            ended = shell_outcome(message)
            if ended:
                body += f"\n\n*{_safe(' · '.join(ended))}*"
        elif role in ("branchSummary", "compactionSummary"):
            body = _safe(message.get("summary", "")) or f"*{NO_SUMMARY}*"
        elif role not in CONTENT_ROLES:     # a role of unknown shape: its fields
            fields = {key: value for key, value in message.items() if key != "role"}
            body = _fence(_safe(_clip(json.dumps(fields, ensure_ascii=False, default=str))), "json")
        else:
            body = "\n\n".join(_blocks_md(message.get("content")))
            outcome = reply_outcome(message)
            if outcome is not None:
                body += ("\n\n" if body else "") + f"*{_safe(marked(outcome))}*"
            body = body or f"*{empty_words(message)}*"
        return f"### {title}{extra} — {when}{tag}\n\n{body}\n"
    if entry.type == COMPACTION:
        kept = entry.data.get("firstKeptEntryId")
        head = f"### ⟲ Compaction — {when}{tag}\n\n"
        note = f"*Earlier context summarised ({entry.data.get('tokensBefore', 0)} tokens before)" + \
            (f"; kept from entry `{_safe(kept)}`" if kept else "") + ".*\n\n"
        return head + note + "> " + _safe(entry.data.get("summary", "")).replace("\n", "\n> ") + "\n"
    if entry.type == BRANCH_SUMMARY:
        return (f"### ⑂ Branch summary — {when}{tag}\n\n> "
                + _safe(entry.data.get("summary", "")).replace("\n", "\n> ") + "\n")
    if entry.type == CUSTOM_MESSAGE:
        text = entry.data.get("content", (entry.data.get("message") or {}).get("content", ""))
        return f"### Extension message — {when}{tag}\n\n" + "\n\n".join(_blocks_md(text)) + "\n"
    if entry.type == MODEL_CHANGE:
        return f"*— model: {_safe(entry.data.get('provider', ''))}/{_safe(entry.data.get('modelId', ''))} ({when})*\n"
    if entry.type == THINKING_LEVEL_CHANGE:
        return f"*— thinking level: {_safe(entry.data.get('thinkingLevel', ''))} ({when})*\n"
    if entry.type == SESSION_INFO:
        return f"*— session name: {_safe(entry.data.get('name', ''))} ({when})*\n"
    if entry.type == LABEL:
        label_text = entry.data.get("label")
        return (f"*— label {'`' + _safe(label_text) + '`' if label_text else 'cleared'} on entry "
                f"`{_safe(entry.data.get('targetId', ''))}` ({when})*\n")
    if entry.type == CUSTOM:
        return (f"*— extension data `{_safe(entry.data.get('customType', ''))}` ({when})*\n")
    body = json.dumps(entry.data, ensure_ascii=False, default=str)
    return (f"<details><summary>raw entry <code>{_safe(entry.type)}</code> — {when}</summary>\n\n"
            + _fence(_safe(_clip(body, 2000)), "json") + "\n\n</details>\n")


def export_markdown(store, session, branch, out: TextIO) -> int:
    """Write a readable transcript of one branch (None: the session has none); returns the
    number of entries shown."""
    labels = store.annotations.entry_labels(session.id)
    meta = session.metadata or {}
    out.write(f"# {_safe(session.session_name or session.uid)}\n\n")
    facts = [f"- Session: `{_safe(session.uid)}` ({_safe(session.source)})"]
    if meta.get("path"):
        facts.append(f"- Imported from: `{_safe(meta['path'])}`")
    if session.cwd:
        facts.append(f"- Working directory: `{_safe(session.cwd)}`")
    if branch is None:  # a session with no entries yet (a log of a header alone)
        out.write("\n".join(facts) + "\n\n---\n\n*(this session has no messages)*\n")
        return 0
    facts.append(f"- Branch: {_safe(branch.name or branch.id)}"
                 + (" (current)" if branch.is_current else "")
                 + f" · {branch.message_count} messages")
    if branch.fork_id:
        facts.append(f"- Forked at entry `{_safe(branch.fork_id)}`")
    out.write("\n".join(facts) + "\n\n---\n\n")
    shown = 0
    depth = 0
    if branch.head_seq is None:
        out.write("*(this branch is empty)*\n")
        return 0
    total = store.paths.length(branch.head_seq)
    while depth < total:
        for entry in store.paths.entries(branch.head_seq, depth, depth + PAGE):
            out.write(markdown_entry(entry, labels.get(entry.seq)) + "\n")
            shown += 1
        depth += PAGE
    return shown


def export_session(store, session_ref: str, fmt: str, out: TextIO, *, branch: str | None = None) -> int:
    session = resolve_session(store, session_ref)
    if fmt == "pi":
        return export_pi(store, session, out)
    if fmt == "json":
        return export_json(store, session, out)
    if fmt == "markdown":
        if branch is None and not store.branches.of_session(session.id):
            return export_markdown(store, session, None, out)
        return export_markdown(store, session, resolve_branch(store, session, branch), out)
    raise ValueError(f"unknown export format {fmt!r} (pi, markdown, json)")
