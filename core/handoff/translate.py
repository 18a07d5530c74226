"""A branch of one agent's session as entries another agent's writer can write.

The writers in core/agents write entries in the neutral (pi-shaped) form the importers
store. Entries another agent wrote carry that agent's own details (its tool names, its
bookkeeping lines, its signed reasoning, its line fields), which the target must not get as
they are. `translate` walks the branch once and yields new `Entry` objects, re-chained one
after the other, holding only what crosses (see docs/handoff.md for the table in words):

* user and assistant text, in order; consecutive assistant entries (one reply the source
  wrote as several lines or items) become one assistant message;
* tool calls under the target's own tool where there is one (tools.py), else generic, each
  followed by its result (a Claude Code message holding several results is split into one
  result message each); call ids made safe for the target's API;
* thinking: kept for pi (which sends another model's thinking as text) and for the agents
  on Gemini-shaped or OpenAI-shaped records (Qwen Code, Gemini CLI, Kimi CLI: a thought
  part, a think part), shown but not sent for Codex (a reasoning item without Codex's
  encrypted content would be refused), left out for Claude Code and droid, whose records
  are Anthropic messages (the API refuses thinking without Anthropic's signature);
  signatures and encrypted reasoning never cross;
* images as images; other attachments (documents, files) as a line naming them;
* compactions as compactions (each writer writes its own kind), the kept part re-pointed;
  a branch summary as a branch summary;
* left out: the source's own bookkeeping (model and thinking-level changes, labels, titles,
  Codex's turn contexts and token counts, Claude Code's meta lines, the environment context
  Codex sends as user messages, the context droid and Gemini CLI send before a prompt,
  slash-command echoes), server-side tool calls as a line of
  text (the target cannot run another vendor's hosted tool).

What crossed, what was summarised and what was left out is counted in a `Crossing`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from core.agents.native import branch_summary_text
from core.agents.registry import title as agent_title
from core.model.entries import (
    BRANCH_SUMMARY, COMPACTION, CUSTOM_MESSAGE, MESSAGE, Entry, content_text)
from . import tools

# the writers that write a branch summary themselves (pi's own entry; a user message)
_OWN_BRANCH_SUMMARIES = ("claude_code", "codex", "pi")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
# the targets that send a conversation as Anthropic messages: call ids as Anthropic takes
# them, and no thinking (Anthropic refuses thinking without its signature)
_ANTHROPIC = ("claude_code", "droid")
# their writers write text (and thinking): an image is named in a line
_TEXT_ONLY = ("kimi", "copilot")
ID_LIMIT = 64
# What Codex sends as user messages that is its own context, not the user's words.
_CODEX_CONTEXT = ("<environment_context", "<user_instructions", "<permissions", "# AGENTS.md",
                  "<INSTRUCTIONS", "<user_shell_command", "<turn_aborted")
_CLAUDE_COMMANDS = ("<command-name>", "<command-message>", "<local-command-stdout>",
                    "<local-command-caveat>", "<local-command-stderr>")
_ZERO_USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


@dataclass
class Crossing:
    """What a hand-off carried, as counts (shown to the user, and in tests)."""

    source: str
    target: str
    counts: Counter = field(default_factory=Counter)

    def add(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    def sentence(self) -> str:
        c = self.counts
        parts = [f"{c['messages']} messages"]
        if c["calls"]:
            mapped = c["calls_mapped"]
            parts.append(f"{c['calls']} tool calls ({mapped} as {agent_title(self.target)}'s "
                         f"own tools, {c['calls'] - mapped} generic)")
        if c["compactions"]:
            parts.append(f"{c['compactions']} compactions")
        if c["images"]:
            parts.append(f"{c['images']} images")
        left = []
        if c["thinking_left_out"]:
            left.append(f"{c['thinking_left_out']} thinking blocks")
        if c["bookkeeping_left_out"]:
            left.append(f"{c['bookkeeping_left_out']} of {agent_title(self.source)}'s "
                        "own bookkeeping entries")
        if c["context_left_out"]:
            left.append(f"{c['context_left_out']} context messages")
        out = ", ".join(parts)
        if left:
            out += "; left out: " + ", ".join(left)
        return out


def safe_call_id(call_id: Any, target: str) -> str:
    """A call id the target's API takes: Anthropic's ids are [A-Za-z0-9_-], at most 64."""
    text = str(call_id or "call")
    if target in _ANTHROPIC:
        text = _SAFE_ID.sub("_", text)
    return text[:ID_LIMIT]


class _Translator:
    def __init__(self, source: str, target: str, cwd: str, session_id: str):
        self.source = source
        self.target = target
        self.cwd = cwd
        self.session_id = session_id      # the source's own id, for provenance fields
        self.crossing = Crossing(source, target)
        self.names: dict[str, str] = {}   # call id -> the name the target got it under
        self.ids: dict[str, str] = {}     # entry id in the source -> id written
        self.previous: str | None = None
        self.pending: Entry | None = None  # an assistant message that may grow

    # ------------------------------------------------------------- entries out
    def _entry(self, source: Entry, data: dict[str, Any], *, kind: str = MESSAGE,
               suffix: str = "") -> Entry:
        new_id = source.id + suffix
        if self.target == "claude_code":
            # provenance (Claude Code's `forkedFrom` on each line: the source's session
            # and the entry the line was copied from)
            data = {**data, "claude": {"sessionId": self.session_id,
                                       "forkedFromEntry": source.id}}
        role = (data.get("message") or {}).get("role") if kind == MESSAGE else None
        entry = Entry(source.seq, new_id, source.external_session_id, None, kind,
                      source.timestamp, source.depth, 0, 0, role, data, self.previous)
        if not suffix:
            self.ids[source.id] = new_id
        self.previous = new_id
        return entry

    def flush(self) -> Iterator[Entry]:
        if self.pending is not None:
            entry, self.pending = self.pending, None
            yield entry

    # ------------------------------------------------------------------ blocks
    def _attachment(self, block: dict[str, Any]) -> dict[str, Any]:
        self.crossing.add("attachments")
        kind = block.get("type") or "attachment"
        source = block.get("source") if isinstance(block.get("source"), dict) else {}
        name = block.get("title") or block.get("filename") or block.get("file_id") or \
            source.get("media_type") or ""
        return {"type": "text", "text": f"[{kind} attached in {agent_title(self.source)}"
                                        f"{': ' + str(name) if name else ''}]"}

    def _image(self, block: dict[str, Any]) -> dict[str, Any] | None:
        if self.target in _TEXT_ONLY:
            return self._attachment(block)
        if block.get("data") or block.get("url"):
            self.crossing.add("images")
            out = {"type": "image"}
            for key in ("data", "mimeType", "url"):
                if block.get(key):
                    out[key] = block[key]
            out.setdefault("mimeType", "image/png") if "data" in out else None
            return out
        return self._attachment(block)

    def _content(self, content: Any) -> list[dict[str, Any]]:
        """User or result content: text and images; anything else named in a line."""
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        out: list[dict[str, Any]] = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, str):
                out.append({"type": "text", "text": block})
            elif not isinstance(block, dict):
                continue
            elif block.get("type") in ("text", "input_text", "output_text"):
                out.append({"type": "text", "text": str(block.get("text", ""))})
            elif block.get("type") in ("image", "input_image"):
                image = self._image(block if block.get("type") == "image" else
                                    {"url": block.get("image_url")})
                if image is not None:
                    out.append(image)
            else:
                out.append(self._attachment(block))
        return out

    def _thinking(self, block: dict[str, Any]) -> dict[str, Any] | None:
        text = block.get("thinking")
        if block.get("redacted") or not isinstance(text, str) or not text.strip():
            if block.get("redacted") or block.get("thinkingSignature"):
                self.crossing.add("thinking_left_out")
            return None
        if self.target in _ANTHROPIC:
            self.crossing.add("thinking_left_out")
            return None
        self.crossing.add("thinking")
        out = {"type": "thinking", "thinking": text}
        if self.target == "codex":
            out["display"] = "event"      # shown in Codex, not sent to its model
        return out

    def _call(self, block: dict[str, Any]) -> dict[str, Any]:
        name = str(block.get("name", ""))
        if block.get("claudeType") == "server_tool_use" or \
                (self.source == "codex" and name in ("web_search", "tool_search")):
            # a hosted tool of the source's vendor: the target cannot run it; said in text
            self.crossing.add("server_calls")
            return {"type": "text", "text": f"[{agent_title(self.source)} ran its "
                                            f"hosted tool {name}: {tools.arguments_text(block.get('arguments') or {})}]"}
        mapped = tools.map_call(self.source, self.target, name, block.get("arguments",
                                                                          block.get("input", {})),
                                self.cwd)
        call_id = safe_call_id(block.get("id"), self.target)
        self.names[call_id] = mapped.name
        self.crossing.add("calls")
        if mapped.kind is not None:
            self.crossing.add("calls_mapped")
        return {"type": "toolCall", "id": call_id, "name": mapped.name, "arguments": mapped.args}

    # ---------------------------------------------------------------- messages
    def _assistant(self, entry: Entry, message: dict[str, Any]) -> None:
        content = message.get("content")
        blocks: list[dict[str, Any]] = []
        for block in content if isinstance(content, list) else \
                [{"type": "text", "text": content_text(content)}]:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                if block.get("text"):
                    blocks.append({"type": "text", "text": str(block["text"])})
            elif kind == "thinking":
                thought = self._thinking(block)
                if thought is not None:
                    blocks.append(thought)
            elif kind in ("toolCall", "tool_call"):
                blocks.append(self._call(block))
            elif kind == "image":
                image = self._image(block)
                if image is not None:
                    blocks.append(image)
            elif kind is not None:
                # a server tool's result, a citation, … : as a line of text
                text = content_text([block]) or kind
                blocks.append({"type": "text", "text": f"[{kind}: {text}]"})
        if not blocks:
            return
        if self.pending is not None:
            pending_message = self.pending.data["message"]
            pending_message["content"].extend(blocks)
            if any(b.get("type") == "toolCall" for b in blocks):
                pending_message["stopReason"] = "toolUse"
            self.ids[entry.id] = self.pending.id
            return
        out: dict[str, Any] = {"role": "assistant", "content": blocks}
        model = message.get("model")
        stop = "toolUse" if any(b.get("type") == "toolCall" for b in blocks) else "stop"
        if self.target == "pi":
            # a complete pi assistant message; another api/provider than pi's model makes
            # pi send the thinking as text and drop what only the source's API understands
            out.update(api="handoff", provider=self.source, model=str(model or "unknown"),
                       usage=dict(_ZERO_USAGE), stopReason=stop,
                       timestamp=_millis(message, entry))
        else:
            out["stopReason"] = stop
            if model:
                out["model"] = model
        self.crossing.add("messages")
        self.pending = self._entry(entry, {"message": out})

    def _result(self, entry: Entry, message: dict[str, Any], suffix: str = "") -> Entry:
        call_id = safe_call_id(message.get("toolCallId"), self.target)
        out = {"role": "toolResult", "toolCallId": call_id,
               "toolName": self.names.get(call_id, str(message.get("toolName", ""))),
               "content": self._content(message.get("content")),
               "isError": bool(message.get("isError"))}
        if self.target == "pi":
            out["timestamp"] = _millis(message, entry)
        self.crossing.add("results")
        return self._entry(entry, {"message": out}, suffix=suffix)

    def _user(self, entry: Entry, message: dict[str, Any]) -> Iterator[Entry]:
        content = message.get("content")
        if self._is_context(entry, message):
            self.crossing.add("context_left_out")
            return
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "toolResult"] \
            if isinstance(content, list) else []
        for index, block in enumerate(results):
            yield self._result(entry, block, suffix=f"~r{index}" if index or len(results) > 1 or
                               len(results) != len(content) else "")
        rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "toolResult")] \
            if isinstance(content, list) else content
        if results and not rest:
            return
        blocks = self._content(rest)
        if not blocks:
            return
        out: dict[str, Any] = {"role": "user", "content": blocks if len(blocks) > 1 or
                               blocks[0].get("type") != "text" else blocks[0]["text"]}
        if self.target == "pi":
            out["timestamp"] = _millis(message, entry)
        self.crossing.add("messages")
        yield self._entry(entry, {"message": out}, suffix="~u" if results else "")

    def _is_context(self, entry: Entry, message: dict[str, Any]) -> bool:
        extra = entry.data.get("claude")
        if isinstance(extra, dict) and (extra.get("isMeta") or extra.get("isCompactSummary") or
                                        extra.get("isVisibleInTranscriptOnly")):
            return True
        if message.get("kind") == "compaction_summary":
            return True
        own = entry.data.get(self.source)
        if isinstance(own, dict) and own.get("context") is True:
            return True     # what the agent sends of its own (droid's reminders, Gemini's setup)
        text = content_text(message.get("content")).lstrip()
        if self.source == "codex" and text.startswith(_CODEX_CONTEXT):
            return True
        if self.source == "claude_code" and text.startswith(_CLAUDE_COMMANDS):
            return True
        return False

    # --------------------------------------------------------------- the walk
    def entry(self, entry: Entry) -> Iterator[Entry]:
        message = entry.message
        if entry.type == MESSAGE and message is not None:
            role = message.get("role")
            if role == "assistant":
                self._assistant(entry, message)     # held: the next entries may extend it
                return
            yield from self.flush()
            if role == "toolResult":
                yield self._result(entry, message)
            elif role == "user":
                yield from self._user(entry, message)
            elif role in ("developer", "system"):
                self.crossing.add("context_left_out")
            else:
                # pi's own roles (a shell run, a summary, an extension's message): the
                # writers turn them into text the target's model reads
                self.crossing.add("messages")
                yield self._entry(entry, {"message": dict(message)})
            return
        yield from self.flush()
        if entry.type == COMPACTION:
            yield self._compaction(entry)
        elif entry.type == BRANCH_SUMMARY:
            self.crossing.add("summaries")
            summary = str(entry.data.get("summary", ""))
            if self.target not in _OWN_BRANCH_SUMMARIES:
                # a writer without a branch summary of its own: the words pi sends
                yield self._entry(entry, {"message": {"role": "user",
                                                      "content": branch_summary_text(summary)}})
                return
            yield self._entry(entry, {"summary": summary, "fromId": entry.data.get("fromId")},
                              kind=BRANCH_SUMMARY)
        elif entry.type == CUSTOM_MESSAGE:
            content = entry.data.get("content", (entry.data.get("message") or {}).get("content"))
            self.crossing.add("messages")
            yield self._entry(entry, {"message": {"role": "user",
                                                  "content": content_text(content)}})
        else:
            self.crossing.add("bookkeeping_left_out")

    def _compaction(self, entry: Entry) -> Entry:
        data = entry.data
        summary = str(data.get("summary") or "")
        codex = data.get("codex") if isinstance(data.get("codex"), dict) else {}
        history = (codex.get("payload") or {}).get("replacement_history")
        if not summary and isinstance(history, list):
            # Codex's newer compactions keep the summary in the replacement history
            summary = "\n\n".join(content_text(item.get("content")) for item in history
                                  if isinstance(item, dict) and item.get("type") == "message")
        kept = data.get("firstKeptEntryId")
        out = {"summary": summary, "firstKeptEntryId": self.ids.get(kept) if isinstance(kept, str) else None,
               "tokensBefore": data.get("tokensBefore") or 0}
        self.crossing.add("compactions")
        return self._entry(entry, out, kind=COMPACTION)


def _millis(message: dict[str, Any], entry: Entry) -> int:
    value = message.get("timestamp")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    from core.importing.base import epoch_ms

    return epoch_ms(entry.timestamp) or 0


def translate(entries: Iterable[Entry], source: str, target: str, *, cwd: str = "",
              session_id: str = "", crossing: Crossing | None = None) -> Iterator[Entry]:
    """The branch's entries as the target's writer should get them (see the module doc).
    `crossing`, when given, is filled with the counts."""
    translator = _Translator(source, target, cwd, session_id)
    if crossing is not None:
        translator.crossing = crossing
    for entry in entries:
        yield from translator.entry(entry)
    yield from translator.flush()
