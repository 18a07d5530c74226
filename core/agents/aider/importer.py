"""Aider's chat history (`.aider.chat.history.md` in the project, Aider 0.86).

Facts: docs/agents/aider.md. Aider appends Markdown for people, which its own
`--restore-chat-history` reads back (`aider.utils.split_chat_history_markdown`): a line
`# aider chat started at <local time>` opens a run, `#### ` lines are the user's message,
`> ` lines Aider's own output, any other line the model's answer. There are no ids and no
times but the run's: an entry is named by its first line (`L<n>-<hash of the text>`, so a
history deleted and begun again is not taken for the old one), and every entry of a run
has the run's time. What arbor makes of it, one linear session per file:

* a run's header (Aider's command line, version, `Model:` line …): an `aider:run` entry
  (the model names the run's answers);
* `#### ` lines: a user message;
* the model's answer: an assistant message, whole once a line of another kind follows
  (Aider writes it in one piece, then its output); its SEARCH/REPLACE blocks are also tool
  calls (`edit`: path, search, replace), and `> Applied edit to <path>` (or a failure
  naming the path) their results;
* `> Tokens: N sent, [C cache write,] [H cache hit,] M received.` the answer's usage
  (`Cost: $x message, $y session.` kept beside it, Aider's own figure);
* other `> ` lines: one `aider:output` entry each (a line is whole once written, so a
  history being written is never read half).

* the weak model's summary of a long history is not in this file: Aider sends it in
  place of the history ("I spoke to you previously about a number of things. …"), and a
  run started with `--llm-history-file FILE` (its command line is in the run's header)
  logs each request there. A request that carries a summary is matched, in order, to the
  `#### ` message it sends: a `compaction` entry (the summary) goes before that message.
  (Aider 0.86 only keeps a summary made as a run starts with `--restore-chat-history`:
  one made after an edit is dropped, as the edit's "I committed …" pair changes the history
  it summarised, so the next request is sent whole.)

Not in the file, so not read: summaries of a run without `--llm-history-file`, and the
weak model's commit messages (in git).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE
from core.importing.base import FileResult, ProgressTicker, file_mtime, short_hash, title_from_text
from core.importing.nodes import Nodes, write_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "aider"
RESUMABLE = False
RUN = "# aider chat started at "
_TOKENS = re.compile(r"^Tokens: ([\d.]+k?) sent(?:, ([\d.]+k?) cache write)?"
                     r"(?:, ([\d.]+k?) cache hit)?, ([\d.]+k?) received\.\s*(.*)$")
_COST = re.compile(r"Cost: \$([\d.]+) message, \$([\d.]+) session\.")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+) with (\S+) edit format")
_EDIT_RESULT = re.compile(r"^(Applied edit to|Did not apply edit to|Failed to apply edit to) (.+?)\s*$")
_SEARCH = re.compile(r"^<{5,9} SEARCH\s*$")
SUMMARY_PREFIX = "I spoke to you previously about a number of things."
_LLM_FILE = re.compile(r"(?:^|\s)--llm-history-file(?:=|\s+)(\S+)")
_LLM_LIMIT = 64 << 20
_DIVIDER = re.compile(r"^={5,9}\s*$")
_REPLACE = re.compile(r"^>{5,9} REPLACE\s*$")


def tokens(text: str) -> int:
    """A count as Aider writes it: `900`, `2.3k`, `23k`."""
    if text.endswith("k"):
        return int(round(float(text[:-1]) * 1000))
    return int(float(text))


def edits_of(text: str) -> list[dict[str, str]]:
    """The SEARCH/REPLACE blocks of an answer: path (the line before the block or its
    fence), search and replace text."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        j = i - 1
        while j >= 0 and (not lines[j].strip() or lines[j].lstrip().startswith("```")):
            j -= 1
        path = lines[j].strip().strip("`*:") if j >= 0 else ""
        search, replace, k, part = [], [], i + 1, "search"
        while k < len(lines) and not _REPLACE.match(lines[k]):
            if part == "search" and _DIVIDER.match(lines[k]):
                part = "replace"
            else:
                (search if part == "search" else replace).append(lines[k])
            k += 1
        out.append({"path": path, "search": "\n".join(search), "replace": "\n".join(replace)})
        i = k + 1
    return out


class _Read:
    def __init__(self, uid: str):
        self.uid = uid
        self.nodes = Nodes()
        self.head: str | None = None
        self.kind: str | None = None       # the block being read: run | user | answer
        self.block: list[str] = []
        self.start = 0
        self.time: datetime | None = None
        self.model = ""
        self.provider = ""
        self.edit_format = ""
        self.first_prompt = ""
        self.runs = 0
        self.answer: str | None = None     # the last answer's entry (for its usage)
        self.open_edits: dict[str, list[str]] = {}   # path -> its calls without a result
        self.folder: Path | None = None
        self.requests: list[tuple[str, str]] = []    # this run's (last user text, summary)
        self.llm_file = ""

    def line(self, text: str, number: int) -> None:
        if text.startswith(RUN):
            self.close()
            self.runs += 1
            self.time = _local(text[len(RUN):].strip())
            self.kind, self.block, self.start = "run", [text], number
            self.answer = None
            return
        if text.startswith("> "):
            said = text[2:].rstrip()
            if self.kind == "run":
                self.block.append(said)
                match = _MODEL.match(said)
                if match:
                    name, self.edit_format = match.group(1), match.group(2)
                    self.provider, _, model = name.rpartition("/")
                    self.model = model or name
                return
            self.close()
            self.output(said, number)
            return
        if text.startswith("#### "):
            if self.kind != "user":
                self.close()
                self.kind, self.block, self.start = "user", [], number
            self.block.append(text[5:].rstrip())
            return
        if self.kind == "run" and not text.strip():
            return              # (the blank line after the run's first line)
        if self.kind in ("run", "user"):
            self.close()
        if self.kind is None:
            if not text.strip():
                return          # (blank lines between blocks)
            self.kind, self.block, self.start = "answer", [], number
        self.block.append(text)

    def close(self, *, usage: tuple[dict[str, int], str] | None = None) -> None:
        kind, block, self.kind, self.block = self.kind, self.block, None, []
        if kind is None:
            return
        stamp = self.time.isoformat() if self.time is not None else None
        if kind == "run":
            data = {"started": block[0][len(RUN):].strip(), "output": block[1:],
                    "model": self.model, "provider": self.provider,
                    "editFormat": self.edit_format}
            self.head = self.nodes.add(self._id(block), self.head, "aider:run", data, stamp,
                                       self.start)
            self.requests_of(block)
            return
        text = "\n".join(block).strip("\n")
        if not text.strip():
            return
        if kind == "user":
            if not self.first_prompt and not text.startswith("/"):
                self.first_prompt = text
            message = {"role": "user", "content": [{"type": "text", "text": text}]}
            summary = self.summary_before(text)
            if summary is not None:
                # (no `tokensBefore`: the summary's request is not logged)
                data = {"summary": summary, "firstKeptEntryId": None,
                        "aider": {"llmHistoryFile": self.llm_file}}
                self.head = self.nodes.add(f"{self._id(block)}:summary", self.head, COMPACTION,
                                           data, stamp, self.start)
            self.head = self.nodes.add(self._id(block), self.head, MESSAGE,
                                       {"message": _timed(message, stamp)}, stamp, self.start)
            return
        entry_id = self._id(block)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for n, edit in enumerate(edits_of(text)):
            call_id = f"{entry_id}:edit:{n}"
            content.append({"type": "toolCall", "id": call_id, "name": "edit", "arguments": edit})
            self.open_edits.setdefault(edit["path"], []).append(call_id)
        message: dict[str, Any] = {"role": "assistant", "content": content, "api": "aider"}
        if self.model:
            message["model"] = self.model
            if self.provider:
                message["provider"] = self.provider
        data: dict[str, Any] = {"message": _timed(message, stamp)}
        if usage is not None:
            figures, said = usage
            message["usage"] = figures
            message["responseId"] = f"{FORMAT}:{self.uid}:L{self.start}"
            data["aider"] = {"tokens": said}
            cost = _COST.search(said)
            if cost:
                data["aider"]["cost"] = {"message": float(cost.group(1)),
                                         "session": float(cost.group(2))}
        self.head = self.answer = self.nodes.add(entry_id, self.head, MESSAGE, data, stamp,
                                                 self.start)

    def output(self, said: str, number: int) -> None:
        stamp = self.time.isoformat() if self.time is not None else None
        result = _EDIT_RESULT.match(said)
        if result and self.open_edits.get(result.group(2)):
            call_id = self.open_edits[result.group(2)].pop(0)
            message = {"role": "toolResult", "toolCallId": call_id, "toolName": "edit",
                       "content": [{"type": "text", "text": said}],
                       "isError": not said.startswith("Applied")}
            self.head = self.nodes.add(f"L{number}-{short_hash(said, 8)}", self.head, MESSAGE,
                                       {"message": _timed(message, stamp)}, stamp, number)
            return
        self.head = self.nodes.add(f"L{number}-{short_hash(said, 8)}", self.head,
                                   "aider:output", {"text": said}, stamp, number)

    def requests_of(self, header: list[str]) -> None:
        """This run's requests, from the `--llm-history-file` its command line names."""
        self.requests, self.llm_file = [], ""
        named = next((m.group(1) for m in map(_LLM_FILE.search, header) if m), None)
        if named is None or self.folder is None:
            return
        path = Path(named).expanduser()
        path = path if path.is_absolute() else self.folder / path
        self.llm_file = str(path)
        self.requests = llm_requests(path, self.time)

    def summary_before(self, text: str) -> str | None:
        """The summary sent in place of the history with this message, if any (the
        requests are taken in order; those of no `#### ` message, a reflection, are
        passed over)."""
        for n, (sent, summary) in enumerate(self.requests):
            if sent.startswith(text):
                del self.requests[:n + 1]
                return summary or None
        return None

    def _id(self, block: list[str]) -> str:
        return f"L{self.start}-{short_hash(chr(10).join(block), 8)}"


def llm_requests(path: Path, since: datetime | None) -> list[tuple[str, str]]:
    """The requests of an `--llm-history-file` made at or after `since` (a run's start), as
    (the last user message, the summary it carries or ""): see the module doc."""
    try:
        if not path.is_file() or path.stat().st_size > _LLM_LIMIT:
            return []
        lines = path.read_text("utf-8", "replace").split("\n")
    except OSError:
        return []
    out: list[tuple[str, str]] = []
    messages: list[list[str]] | None = None
    role = ""
    for line in lines + ["LLM RESPONSE"]:
        if line.startswith(("TO LLM ", "LLM RESPONSE")):
            if messages is not None:
                texts = [("\n".join(m[1:])) for m in messages if m and m[0] == "USER"]
                summary = next((t for t in texts if t.startswith(SUMMARY_PREFIX)), "")
                if texts:
                    out.append((texts[-1], summary))
            messages = None
            if line.startswith("TO LLM "):
                when = _local(line[len("TO LLM "):].strip().replace("T", " "))
                if since is None or when is None or when >= since:
                    messages, role = [], ""
            continue
        if messages is None:
            continue
        if line == "-------":
            role = ""
            continue
        said_role, _, said = line.partition(" ")
        if not said_role.isupper():
            continue
        if said_role != role:
            messages.append([said_role])
            role = said_role
        messages[-1].append(said)
    return out


def _timed(message: dict[str, Any], stamp: str | None) -> dict[str, Any]:
    if stamp is not None:
        message["timestamp"] = int(datetime.fromisoformat(stamp).timestamp() * 1000)
    return message


def _local(text: str) -> datetime | None:
    """`2026-12-06 22:39:38`, Aider's local time, as an aware time."""
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").astimezone()
    except ValueError:
        return None


def _usage(match: re.Match) -> dict[str, int]:
    sent, write, hit, received = (tokens(g) if g else 0 for g in match.group(1, 2, 3, 4))
    return {"input": max(0, sent - write - hit), "output": received, "cacheRead": hit,
            "cacheWrite": write}


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    project = path.resolve().parent
    uid = f"{FORMAT}-{short_hash(str(project))}"
    read = _Read(uid)
    read.folder = project
    with open(path, "rb") as handle:
        data = handle.read()
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    # (the last piece has no newline: a line still being written, read next time)
    complete, tail = lines[:-1], lines[-1]
    for number, line in enumerate(complete, 1):
        result.lines = number
        line = line.rstrip("\r")
        if line.startswith("> ") and read.kind == "answer":
            match = _TOKENS.match(line[2:].rstrip())
            if match:
                read.close(usage=(_usage(match), line[2:].rstrip()))
                continue
        read.line(line, number)
    if tail:
        result.lines = len(complete) + 1
    # (an answer is whole once another kind of line follows; a run's header once its
    # first prompt does: what is still open at the end is read next time)
    if read.kind == "user":
        read.close()
    if not read.nodes and not read.runs:
        result.status = "not-a-log"
        result.error = "no Aider chat history in this file"
        return
    name = title_from_text(read.first_prompt) or project.name
    metadata: dict[str, Any] = {"format": FORMAT, "path": str(path), "cwd": str(project),
                                "model": read.model, "runs": read.runs}
    write_session(store, result, ticker, read.nodes, uid=uid, name=f"{project.name}: {name}"
                  if name != project.name else name, source=FORMAT, cwd=str(project),
                  metadata=metadata, fallback=file_mtime(path))
