"""A generator of real-shaped Claude Code trees, for benchmarks (not tests).

    .venv/bin/python bench/claude_tree.py DIR [--mb 100] [--seed 1]
    .venv/bin/python bench/claude_tree.py DIR --files 3000 --mb 60      # many small files
    .venv/bin/python bench/claude_tree.py --append FILE --lines 10      # grow a session

It writes `DIR/.claude/projects/<project>/<session>.jsonl` (and sub-agent files under
`<session>/subagents/agent-<id>.jsonl`), so that `HOME=DIR arbor import --discover`,
`CLAUDE_CONFIG_DIR=DIR/.claude ccusage` and `claude-code-log --projects-dir
DIR/.claude/projects` all read the same files. The same seed and size give the same bytes.

What it makes, and why (the shapes are those of Claude Code 2.0/2.1 transcripts, see the
community schema in the fixtures and the notes in fixtures/SOURCES.md):

* Files. About 1.6 files per MB (160 for 100 MB, sub-agent files included), over several
  projects (one per 20 files, at least 4; project folders are named as Claude Code names them, the cwd with
  "/" as "-"). One session, "the active one", holds 31% of all bytes and is written last
  (newest); it is the file that grows (`--append`). The other sessions' sizes are
  log-normal (median about a third of the mean, a few of several MB). One session in 8 has a
  sub-agent file (`isSidechain: true`, `agentId`, often another model).
* Lines. Every line carries the envelope real lines carry (parentUuid, isSidechain,
  userType, cwd, sessionId, version, gitBranch, slug, uuid, timestamp). A turn is: a
  file-history-snapshot, the user's prompt (0.1-2 KB of text), then 1-6 model requests;
  each request is written as one line per content block (thinking with a base64
  signature, text, each tool_use), all sharing `message.id` and `requestId` and carrying
  the request's usage (with cache_creation and service_tier); each tool call gets
  hook_progress lines (about 40% of all lines are progress, as the schema measured) and a
  tool result line whose `toolUseResult` repeats the output as Claude Code does (Bash
  stdout, Read's file content with line numbers, Edit's original file and patch), 0.5-30
  KB, log-normal. A turn ends with a system turn_duration line. Now and then: a rewind (a
  new prompt under an earlier reply), an API error line, a summary or custom-title line,
  a compaction (compact_boundary + isCompactSummary), a parallel pair of tool calls.
* Ids. uuids from the seeded generator, unique per file; `msg_01…`, `req_011C…` and
  `toolu_01…` ids of Anthropic's shape (base62, random), unique per request and per call,
  so no two files share a message id.
* Models and versions: opus/sonnet/haiku of 2025 (one main model per session, haiku for
  some sub-agents, a `<synthetic>` line now and then); CLI versions 2.0.x to 2.1.x.
* Text: words from a Zipf-distributed vocabulary of 20,000 (English words, code
  identifiers, paths), code-like file contents, some non-ASCII (the "→" of Read results,
  accented words, emoji), so the search index sees a real vocabulary.

`describe(DIR)` (printed by the CLI) gives what was made: files, lines, bytes, the size of
the active session, line sizes by type (median and 99th percentile).
"""

from __future__ import annotations

import argparse
import base64
import math
import os
import random
import string
import sys
import time
import uuid as uuidlib
from pathlib import Path

try:
    import orjson

    def _dumps(value) -> bytes:
        return orjson.dumps(value)
except ImportError:  # pragma: no cover - the repo's venv has orjson
    import json

    def _dumps(value) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

FILES_PER_MB = 1.6
ACTIVE_SHARE = 0.31
MODELS = ("claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805",
          "claude-sonnet-4-20250514")
SUBAGENT_MODELS = ("claude-haiku-4-5-20251001", "claude-sonnet-4-5-20250929")
VERSIONS = ("2.0.14", "2.0.37", "2.0.55", "2.1.3", "2.1.42", "2.1.97", "2.1.121")
TOOLS = (("Bash", 0.34), ("Read", 0.26), ("Edit", 0.14), ("Grep", 0.1), ("Glob", 0.06),
         ("Write", 0.04), ("TodoWrite", 0.04), ("WebFetch", 0.02))
BASE62 = string.digits + string.ascii_letters
ENGLISH = ("the a to of and in is it that for on with as this be we not are at by or from "
           "but have an they which one you were all their there can has more if will so "
           "about when what would up out them some into only could other then its also "
           "after first new because any these two how most where over between should need "
           "file test build error function value return import module config path line "
           "change check run failing passes fix update add remove case list type string "
           "number result call handler cache index query table row column store session "
           "branch commit merge review parse write read open close lock timeout retry").split()
ACCENTED = ("café", "naïve", "résumé", "Zürich", "façade", "über", "señal", "déjà", "→", "✓",
            "…", "—", "🙂", "🚀", "日本語", "данные")


class Corpus:
    """Text made fast: random slices of a long Zipf-distributed word stream."""

    def __init__(self, rng: random.Random, words: int = 20_000, length: int = 3_000_000):
        vocab = list(ENGLISH)
        while len(vocab) < words:
            kind = rng.random()
            stem = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
            if kind < 0.55:
                vocab.append(stem)
            elif kind < 0.75:
                vocab.append(stem + "_" + rng.choice(ENGLISH))
            elif kind < 0.88:
                vocab.append(stem.capitalize() + rng.choice(ENGLISH).capitalize())
            elif kind < 0.97:
                vocab.append(f"src/{stem}/{rng.choice(ENGLISH)}.py")
            else:
                vocab.append(rng.choice(ACCENTED))
        weights = [1 / (rank + 1) for rank in range(len(vocab))]
        stream = rng.choices(vocab, weights=weights, k=length // 6)
        for i in range(0, len(stream), 13):
            stream[i] = stream[i] + rng.choice((".", ",", "", "", ":", "\n"))
        self.text = " ".join(stream)
        code_lines = []
        for _ in range(6000):
            indent = "    " * rng.choice((0, 1, 1, 2, 2, 3))
            a, b, c = rng.choices(vocab[:4000], k=3)
            shape = rng.random()
            if shape < 0.3:
                code_lines.append(f"{indent}{a} = {b}({c})")
            elif shape < 0.5:
                code_lines.append(f"{indent}if {a} is not None and {b}:")
            elif shape < 0.65:
                code_lines.append(f"{indent}return {a}.{b}({c}, timeout=30)")
            elif shape < 0.75:
                code_lines.append(f"{indent}def {a}(self, {b}: str) -> int:")
            elif shape < 0.85:
                code_lines.append(f'{indent}# {a} {b} {c} before the {rng.choice(ENGLISH)}')
            else:
                code_lines.append(f'{indent}log.info("{a} %s", {b})')
        self.code = code_lines
        self.rng = rng

    def words(self, chars: int) -> str:
        text = self.text
        start = self.rng.randrange(0, len(text) - chars - 64)
        start = text.find(" ", start) + 1
        return text[start:start + chars].strip()

    def code_block(self, lines: int) -> list[str]:
        start = self.rng.randrange(0, len(self.code) - lines - 1)
        return self.code[start:start + lines]


def _base62(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(BASE62, k=n))


def _lognormal(rng: random.Random, median: float, sigma: float, low: float, high: float) -> int:
    return int(min(high, max(low, rng.lognormvariate(math.log(median), sigma))))


class SessionWriter:
    """Writes one session file, line by line, keeping what the next line needs."""

    def __init__(self, out, rng: random.Random, corpus: Corpus, *, session_id: str, cwd: str,
                 model: str, version: str, start: float, branch: str, slug: str,
                 agent_id: str | None = None):
        self.out, self.rng, self.corpus = out, rng, corpus
        self.session_id, self.model = session_id, model
        self.agent_id = agent_id
        self.clock = start
        self.env = {"isSidechain": agent_id is not None, "userType": "external", "cwd": cwd,
                    "sessionId": session_id, "version": version, "gitBranch": branch,
                    "slug": slug}
        if agent_id is not None:
            self.env["agentId"] = agent_id
        self.parent: str | None = None
        self.replies: list[str] = []       # assistant line uuids that ended a turn (rewinds)
        self.bytes = 0
        self.lines = 0
        self.sizes: dict[str, list[int]] = {}

    # -------------------------------------------------------------- primitives
    def uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def stamp(self, seconds: float) -> str:
        self.clock += seconds
        t = time.gmtime(self.clock)
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{int(self.clock * 1000) % 1000:03d}Z"

    def emit(self, line: dict, kind: str) -> None:
        data = _dumps(line) + b"\n"
        self.out.write(data)
        self.bytes += len(data)
        self.lines += 1
        self.sizes.setdefault(kind, []).append(len(data))

    def node(self, kind: str, body: dict, *, parent: str | None | bool = True,
             advance: bool = True, seconds: float = 1.0) -> str:
        uid = self.uuid()
        line = {"parentUuid": self.parent if parent is True else (parent or None), **self.env,
                **body, "uuid": uid, "timestamp": self.stamp(seconds)}
        self.emit(line, kind)
        if advance:
            self.parent = uid
        return uid

    # -------------------------------------------------------------------- turns
    def turn(self) -> None:
        rng, corpus = self.rng, self.corpus
        prompt_parent: str | None | bool = True
        if self.replies and rng.random() < 0.03:
            prompt_parent = rng.choice(self.replies[-12:])      # a rewind: a real branch
        if self.agent_id is None:
            message_id = self.uuid()
            backups = {f"src/{corpus.words(12).split()[0]}.py": {
                "backupFileName": f"{_base62(rng, 16)}@v{rng.randint(1, 9)}",
                "version": rng.randint(1, 9), "backupTime": self.stamp(0)}
                for _ in range(rng.choice((0, 0, 1, 2, 4)))}
            self.emit({"type": "file-history-snapshot", "messageId": message_id,
                       "snapshot": {"messageId": message_id, "trackedFileBackups": backups,
                                    "timestamp": self.stamp(0)},
                       "isSnapshotUpdate": False}, "file-history-snapshot")
        text = corpus.words(_lognormal(rng, 350, 1.0, 20, 6000))
        body = {"type": "user", "message": {"role": "user", "content": text}}
        if rng.random() < 0.5:
            body["message"]["content"] = [{"type": "text", "text": text}]
        body["thinkingMetadata"] = {"level": "high", "disabled": False, "triggers": []}
        body["permissionMode"] = rng.choice(("default", "acceptEdits", "plan"))
        self.node("prompt", body, parent=prompt_parent, seconds=rng.uniform(5, 600))
        for step in range(rng.choice((1, 2, 2, 3, 4, 6))):
            if self.request(last=step == 5):
                break
        self.node("system", {"type": "system", "subtype": "turn_duration",
                             "durationMs": rng.randint(2000, 400000), "isMeta": False},
                  advance=False, seconds=0.1)
        if rng.random() < 0.01:
            self.emit({"type": "summary", "summary": corpus.words(60), "leafUuid": self.parent},
                      "summary")
        if rng.random() < 0.004:
            self.compaction()

    def request(self, *, last: bool) -> bool:
        """One model request; True when it ended the turn (no tool calls)."""
        rng, corpus = self.rng, self.corpus
        message_id = "msg_01" + _base62(rng, 22)
        request_id = "req_011C" + _base62(rng, 20)
        model = self.model if rng.random() > 0.003 else "<synthetic>"
        if rng.random() < 0.003:
            self.node("system", {"type": "system", "subtype": "api_error", "level": "error",
                                 "content": "API Error: 529 Overloaded", "retryInMs": 2000,
                                 "retryAttempt": 1, "maxRetries": 10}, advance=False)
        usage = {"input_tokens": rng.randint(1, 40),
                 "cache_creation_input_tokens": rng.randint(0, 8000),
                 "cache_read_input_tokens": rng.randint(10_000, 160_000),
                 "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                    "ephemeral_1h_input_tokens": rng.randint(0, 8000)},
                 "output_tokens": rng.randint(20, 3000), "service_tier": "standard"}
        blocks: list[dict] = []
        if rng.random() < 0.7:
            thinking = corpus.words(_lognormal(rng, 700, 0.9, 40, 12000))
            signature = base64.b64encode(rng.randbytes(_lognormal(rng, 500, 0.5, 100, 3000)))
            blocks.append({"type": "thinking", "thinking": thinking,
                           "signature": signature.decode()})
        if rng.random() < 0.75 or last:
            blocks.append({"type": "text", "text": corpus.words(_lognormal(rng, 300, 1.1, 10, 8000))})
        calls = 0 if last or rng.random() < 0.22 else (2 if rng.random() < 0.12 else 1)
        names = [n for n, _ in TOOLS]
        weights = [w for _, w in TOOLS]
        tool_lines: list[tuple[str, str, str, dict]] = []
        for _ in range(calls):
            name = rng.choices(names, weights=weights)[0]
            blocks.append({"type": "tool_use", "id": "toolu_01" + _base62(rng, 22), "name": name,
                           "input": self.tool_input(name)})
        for index, block in enumerate(blocks):
            final = index == len(blocks) - 1
            message = {"model": model, "id": message_id, "type": "message", "role": "assistant",
                       "content": [block],
                       "stop_reason": ("tool_use" if calls else "end_turn") if final else None,
                       "stop_sequence": None, "usage": usage}
            uid = self.node("assistant", {"message": message, "requestId": request_id,
                                          "type": "assistant"},
                            seconds=rng.uniform(0.5, 20))
            if block["type"] == "tool_use":
                tool_lines.append((uid, block["id"], block["name"], block["input"]))
        if not tool_lines:
            self.replies.append(self.parent)
            return True
        for uid, tool_id, name, args in tool_lines:     # each result points at its own call
            for event in ("PreToolUse", "PostToolUse"):
                for _ in range(rng.choice((1, 1, 2, 3))):
                    self.node("progress", {
                        "type": "progress",
                        "data": {"type": "hook_progress", "hookEvent": event,
                                 "hookName": f"{event}:{name}",
                                 "command": f"$CLAUDE_PROJECT_DIR/.claude/hooks/{event.lower()}.sh"},
                        "parentToolUseID": tool_id, "toolUseID": tool_id},
                        parent=uid, advance=False, seconds=0.05)
            if name == "Bash" and rng.random() < 0.4:
                for seconds in range(rng.randint(1, 4)):
                    out = "\n".join(corpus.words(60) for _ in range(rng.randint(1, 5)))
                    self.node("progress", {
                        "type": "progress",
                        "data": {"type": "bash_progress", "output": out, "fullOutput": out,
                                 "elapsedTimeSeconds": seconds + 1,
                                 "totalLines": out.count("\n") + 1},
                        "parentToolUseID": tool_id, "toolUseID": tool_id},
                        parent=uid, advance=False, seconds=1)
            self.tool_result(uid, tool_id, name, args)
        return False

    def tool_input(self, name: str) -> dict:
        rng, corpus = self.rng, self.corpus
        path = f"{self.env['cwd']}/src/{corpus.words(10).split()[0].strip('.,:/')}.py"
        if name == "Bash":
            return {"command": f"cd {self.env['cwd']} && {corpus.words(40)}",
                    "description": corpus.words(30)}
        if name in ("Read", "Write"):
            args = {"file_path": path}
            if name == "Write":
                args["content"] = "\n".join(corpus.code_block(rng.randint(10, 120)))
            return args
        if name == "Edit":
            return {"file_path": path, "old_string": "\n".join(corpus.code_block(3)),
                    "new_string": "\n".join(corpus.code_block(4))}
        if name in ("Grep", "Glob"):
            return {"pattern": corpus.words(12), "path": self.env["cwd"]}
        if name == "TodoWrite":
            return {"todos": [{"content": corpus.words(40), "status": rng.choice(
                ("pending", "in_progress", "completed")), "activeForm": corpus.words(30)}
                for _ in range(rng.randint(2, 7))]}
        return {"url": f"https://example.com/{corpus.words(8).split()[0]}", "prompt": corpus.words(80)}

    def tool_result(self, call_uuid: str, tool_id: str, name: str, args: dict) -> None:
        rng, corpus = self.rng, self.corpus
        size = _lognormal(rng, 1400, 1.15, 250, 12500)     # the output; the line is ~2x
        is_error = rng.random() < 0.04
        if name == "Read":
            count = max(3, size // 38)
            code = corpus.code_block(min(count, len(corpus.code) - 2))
            numbered = "\n".join(f"{i + 1:>6}→{line}" for i, line in enumerate(code))
            content = numbered
            extra = {"type": "text", "file": {"filePath": args.get("file_path", ""),
                                              "content": "\n".join(code), "numLines": len(code),
                                              "startLine": 1, "totalLines": len(code)}}
        elif name == "Edit":
            original = "\n".join(corpus.code_block(max(5, size // 38)))
            content = f"The file {args.get('file_path')} has been updated. Here's the result:\n" \
                      + corpus.words(min(size, 1500))
            extra = {"filePath": args.get("file_path", ""), "oldString": args.get("old_string"),
                     "newString": args.get("new_string"), "originalFile": original,
                     "structuredPatch": [{"oldStart": 10, "oldLines": 3, "newStart": 10,
                                          "newLines": 4, "lines": corpus.code_block(7)}],
                     "userModified": False, "replaceAll": False}
        elif name == "TodoWrite":
            content = "Todos have been modified successfully."
            extra = {"oldTodos": [], "newTodos": args.get("todos", [])}
        else:
            stdout = "\n".join(corpus.words(rng.randint(40, 140)) for _ in range(max(1, size // 90)))
            content = stdout
            extra = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
        if is_error:
            content = f"<tool_use_error>{corpus.words(120)}</tool_use_error>"
            extra = f"Error: {content}"
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        self.node("tool-result", {"type": "user", "message": {"role": "user", "content": [block]},
                                  "toolUseResult": extra, "sourceToolAssistantUUID": call_uuid},
                  seconds=rng.uniform(0.2, 30))

    def compaction(self) -> None:
        logical = self.parent
        boundary = self.node("system", {
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "isMeta": False, "level": "info", "logicalParentUuid": logical,
            "compactMetadata": {"trigger": "auto", "preTokens": self.rng.randint(150_000, 190_000)}},
            parent=False)
        self.node("prompt", {"type": "user", "isCompactSummary": True,
                             "isVisibleInTranscriptOnly": True,
                             "message": {"role": "user", "content":
                                         "This session is being continued from a previous "
                                         "conversation that ran out of context. "
                                         + self.corpus.words(3000)}}, parent=boundary)


def _project_dir(cwd: str) -> str:
    return cwd.replace("/", "-").replace(".", "-")


def generate(root: str | os.PathLike, *, mb: float = 100, files: int | None = None,
             seed: int = 1, active_share: float = ACTIVE_SHARE) -> dict:
    """Write a tree of about `mb` megabytes under root/.claude/projects; returns facts."""
    rng = random.Random(seed)
    corpus = Corpus(random.Random(seed * 7919 + 1))
    total = int(mb * 1024 * 1024)
    # `files` counts sub-agent files too: one session in 8 has one
    wanted = files if files is not None else max(4, round(mb * FILES_PER_MB))
    count = max(1, round(wanted * 8 / 9))
    active_bytes = int(total * active_share) if count > 1 else total
    rest = total - active_bytes
    # log-normal sizes for the other sessions, scaled so they add up to the rest
    raw = [rng.lognormvariate(0, 1.1) for _ in range(count - 1)]
    scale = rest / sum(raw) if raw else 0
    sizes = [max(2048, int(r * scale)) for r in raw] + [active_bytes]
    projects = []
    for i in range(max(4, count // 20)):
        name = rng.choice(ENGLISH) + "-" + "".join(rng.choices(string.ascii_lowercase, k=5))
        projects.append(f"/home/dev/{rng.choice(('src', 'work', 'code'))}/{name}")
    base = root_path = Path(root) / ".claude" / "projects"
    base.mkdir(parents=True, exist_ok=True)
    start = 1_735_689_600.0   # 2025-01-01
    span = 300 * 86400.0
    made = {"files": 0, "lines": 0, "bytes": 0, "subagent_files": 0, "sizes": {}}
    for index, target in enumerate(sizes):
        active = index == len(sizes) - 1
        cwd = projects[0] if active else rng.choice(projects)
        session_id = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        folder = base / _project_dir(cwd)
        folder.mkdir(exist_ok=True)
        when = start + span * (index / len(sizes))
        model = MODELS[0] if active else rng.choice(MODELS)
        version = VERSIONS[min(len(VERSIONS) - 1, int(len(VERSIONS) * index / len(sizes)))]
        slug = "-".join(rng.choices(ENGLISH, k=3))
        path = folder / f"{session_id}.jsonl"
        with open(path, "wb") as out:
            writer = SessionWriter(out, random.Random(rng.getrandbits(64)), corpus,
                                   session_id=session_id, cwd=cwd, model=model, version=version,
                                   start=when, branch=rng.choice(("main", "main", "dev", "fix")),
                                   slug=slug)
            sub_share = 0.2 if (not active and index % 8 == 3) else 0.0
            while writer.bytes < target * (1 - sub_share):
                writer.turn()
        _merge(made, writer)
        if sub_share:
            agent_id = _base62(rng, 8).lower()
            sub = folder / session_id / "subagents" / f"agent-{agent_id}.jsonl"
            sub.parent.mkdir(parents=True, exist_ok=True)
            with open(sub, "wb") as out:
                agent = SessionWriter(out, random.Random(rng.getrandbits(64)), corpus,
                                      session_id=session_id, cwd=cwd,
                                      model=rng.choice(SUBAGENT_MODELS), version=version,
                                      start=when + 30, branch="main", slug=slug,
                                      agent_id=agent_id)
                while agent.bytes < target * sub_share:
                    agent.turn()
            _merge(made, agent)
            made["subagent_files"] += 1
        if active:
            made["active"] = str(path)
            made["active_bytes"] = path.stat().st_size
    made["projects"] = len({p.parent for p in root_path.rglob("*.jsonl")})
    return made


def generate_file(path: str | os.PathLike, lines: int, *, seed: int = 1) -> dict:
    """One session file of exactly `lines` lines (the same shapes as a tree's sessions)."""
    rng = random.Random(seed)
    corpus = Corpus(random.Random(seed * 7919 + 1))

    class Cut:
        """Keeps whole turns until `lines` lines are written, then drops the rest."""

        def __init__(self, out):
            self.out, self.left = out, lines

        def write(self, data: bytes) -> None:
            if self.left > 0:
                self.out.write(data)
                self.left -= 1

    path = Path(path)
    with open(path, "wb") as out:
        cut = Cut(out)
        writer = SessionWriter(cut, rng, corpus, session_id=str(uuidlib.UUID(
            int=rng.getrandbits(128), version=4)), cwd="/home/dev/src/big", model=MODELS[0],
            version=VERSIONS[-1], start=1_750_000_000.0, branch="main", slug="big-long-session")
        while cut.left > 0:
            writer.turn()
    return {"lines": lines, "bytes": path.stat().st_size}


def _merge(made: dict, writer: SessionWriter) -> None:
    made["files"] += 1
    made["lines"] += writer.lines
    made["bytes"] += writer.bytes
    for kind, sizes in writer.sizes.items():
        made["sizes"].setdefault(kind, []).extend(sizes)


def append_lines(path: str | os.PathLike, lines: int, *, seed: int = 99) -> int:
    """Grow a session as Claude Code would: whole turns, cut to `lines` lines, each
    attached to the file's last line. Returns the bytes added.

    The lines' ids come from `seed` and the file's size: the same file grown the same way
    gets the same lines, and growing it again (a benchmark run again on a tree it keeps)
    never writes an id the file already holds. (With `seed` alone, every run of
    bench_import.py appended the ids of the run before, and measured the import of
    duplicate uuids instead of the import of new lines.)"""
    import json

    path = Path(path)
    size = path.stat().st_size
    with open(path, "rb") as handle:
        handle.seek(max(0, size - 256 * 1024))
        tail = [line for line in handle.read().splitlines() if line.strip()]
    last = None
    for raw in reversed(tail):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("uuid") and value.get("sessionId"):
            last = value
            break
    if last is None:
        raise ValueError(f"{path}: no line to continue from")
    rng = random.Random(f"{seed}:{size}")

    class Buffer:
        def __init__(self):
            self.chunks: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.chunks.append(data)

    buffer = Buffer()
    stamp = time.mktime(time.strptime(last["timestamp"][:19], "%Y-%m-%dT%H:%M:%S"))
    writer = SessionWriter(buffer, rng, Corpus(random.Random(f"{seed}:{size}")),
                           session_id=last["sessionId"], cwd=last.get("cwd", "/"),
                           model=MODELS[0], version=last.get("version", VERSIONS[-1]),
                           start=stamp + 60, branch=last.get("gitBranch", "main"),
                           slug=last.get("slug", "x"))
    writer.parent = last["uuid"]
    while writer.lines < lines:
        writer.turn()
    data = b"".join(buffer.chunks[:lines])
    with open(path, "ab") as out:
        out.write(data)
    return len(data)


def describe(made: dict) -> str:
    rows = [f"{made['files']} files ({made['subagent_files']} sub-agent) in {made['projects']} "
            f"projects, {made['lines']:,} lines, {made['bytes'] / 1048576:.1f} MB; active session "
            f"{made.get('active_bytes', 0) / 1048576:.1f} MB",
            f"{'line type':<22}{'share':>7}{'median B':>10}{'p99 B':>9}{'max B':>9}"]
    total = made["lines"] or 1
    for kind, sizes in sorted(made["sizes"].items(), key=lambda kv: -len(kv[1])):
        sizes = sorted(sizes)
        rows.append(f"{kind:<22}{len(sizes) / total:>7.1%}{sizes[len(sizes) // 2]:>10,}"
                    f"{sizes[min(len(sizes) - 1, int(len(sizes) * 0.99))]:>9,}{sizes[-1]:>9,}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", help="the folder to write (HOME-like)")
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--files", type=int, help="number of sessions (default 1.6 per MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--append", metavar="FILE", help="grow this session instead")
    parser.add_argument("--lines", type=int, default=10, help="lines to --append")
    args = parser.parse_args(argv)
    if args.append:
        added = append_lines(args.append, args.lines, seed=args.seed)
        print(f"{args.lines} lines, {added:,} bytes appended to {args.append}")
        return 0
    if not args.root:
        parser.error("give the folder to write, or --append FILE")
    started = time.perf_counter()
    made = generate(args.root, mb=args.mb, files=args.files, seed=args.seed)
    print(describe(made))
    print(f"written in {time.perf_counter() - started:.1f} s under {args.root}/.claude/projects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
