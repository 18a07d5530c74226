"""Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`).

The tree is `uuid`/`parentUuid`, but many nodes with several children are not real
branches. One pass over the file, each line parsed once; memory is a few small fields per
line (arrays and one uuid -> node dict), never the lines themselves:

* Lines are taken in file order. A line whose parent comes later in the file waits for it
  (only its offset is kept; it is read again when the parent arrives). Lines still
  waiting at the end hang below a cycle or a parent that never came: the first of them is
  made a root (reported with its line number), which releases the rest.
* A *real fork* is a user prompt (typed text, not a tool result, not meta, not a compact
  summary) whose declared parent already has another user prompt as a child: a rewind,
  which writes a new prompt with the same parent as the one it replaces. It is attached
  to its declared parent, and so starts a branch.
* Anything else is a *continuation*: it is attached to the newest node written below its
  declared parent (the "tip"), not to the parent itself. That collapses the false forks:
  lines of one reply that share `message.id`, parallel tool calls whose results each
  point at their own tool_use line, progress and attachment lines, the "[Request
  interrupted]" line after a tool result.
* Lines without a uuid (summary, custom-title, file-history-snapshot, queue-operation,
  unknown types) are chained just before the next node, so they never make branches;
  `custom-title` becomes a `session_info` entry, the others are kept raw.
* `system/compact_boundary` becomes a `compaction` entry attached to its
  `logicalParentUuid`; its summary is the following `isCompactSummary` message; with a
  preserved segment, `firstKeptEntryId` is the segment's head. When the logical parent
  comes later in the file (the preserved tail was re-parented below the summary), the
  boundary is attached to the newest preserved message written before it.
* Entries are written one line behind the reader, so each can look at the next line:
  usage is counted once per request (on the last line of a `message.id` run, and never
  twice for one id), and a boundary gets its summary.

Entry ids are the uuids (`L<line>` for lines without one), so a second import adds only
new lines. Older Claude Code versions (1.0.x) wrote a sub-agent's lines (`isSidechain:
true`, their own uuid chain from a root whose parent is null, the Task prompt as its first
user line) into the main file: each such chain is a session of kind `subagent` of its own,
nested under the `Task` call whose prompt its first line repeats (else the oldest Task call
not matched yet), as a newer sub-agent's file is; the main session keeps the conversation.
A sidechain line whose parent never comes joins the sub-agent being written where it
stands in the file. The current branch is the one holding the main thread's last line in
the file, never a root made of a line whose parent is missing. A sub-agent's own file (`<session>/subagents/agent-<id>.jsonl`) is a session of kind
`subagent`, attached (core.history.lineage) under the tool call that spawned it: its
`agent-<id>.meta.json` names that call (`toolUseId`), and the parent records each
`Agent`/`Task` tool call (and the `agentId` its result names) as a spawn point. A session
written by `--fork-session` (lines with `forkedFrom`) is a `fork` under its source.
Fields that are the same on every line (cwd, sessionId, version, gitBranch, ...) are kept
once in the session's metadata (`lineDefaults`) and on a line only when they differ.
"""

from __future__ import annotations

from array import array
from pathlib import Path

from core.model.entries import block_type, content_text
from core.importing.base import (
    READ_BUFFER, SHAPE_ERRORS, Clockwork, FileResult, LineError, ProgressTicker, RawLine,
    file_mtime, iter_lines, nested_too_deeply, odd_shape, parse_line, short_hash, title_from_text)
from core.util.fastjson import common_decoder
from . import looks_like  # noqa: F401 - where it was
from core.importing.session import INLINE_BELOW, SessionTarget, StoredIds
from core.importing.state import Pacer
from .convert import learn_tools, convert_block, convert_message, convert_usage  # noqa: F401
from .finishing import _Finishing
from .inline_agents import _InlineAgents
from .nodes import (  # noqa: F401 - the kinds, where they were
    ASSISTANT, BOUNDARY, FORMAT, META, OTHER, PROMPT, UNREAD, USER_OTHER, _Nodes)
from .snapshot import Resumable, short_key  # noqa: F401
from .sidechains import SPAWN_TOOLS, Sidechain, spawn_calls, subagent_meta  # noqa: F401
from .write_behind import _WriteBehind

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

# A session's file is named by its uuid: 8-4-4-4-12 hexadecimal digits (told without a
# regular expression: compiling one is a tenth of the work of an import of a few lines)
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_UUID_DASHES = (8, 13, 18, 23)


def _is_uuid(text: str) -> bool:
    """Whether `text` is a uuid as `^[0-9a-fA-F]{8}-…-[0-9a-fA-F]{12}$` matches it (a last
    newline too, as `$` lets through)."""
    if text.endswith("\n"):
        text = text[:-1]
    return len(text) == 36 and all(
        (char == "-") if index in _UUID_DASHES else (char in _HEX_DIGITS)
        for index, char in enumerate(text))


# Fields that are the same on nearly every line of a file: kept once, in the session's
# metadata ("lineDefaults"), and on a line only when its value differs.
_DEFAULT_KEYS = ("cwd", "sessionId", "version", "gitBranch", "userType", "isSidechain", "slug")


def _kind(d: dict[str, Any]) -> int:
    t = d.get("type")
    if t == "assistant":
        return ASSISTANT
    if t == "user":
        if d.get("isMeta") or d.get("isCompactSummary") or d.get("isVisibleInTranscriptOnly"):
            return USER_OTHER
        message = d.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return PROMPT
        if isinstance(content, list):
            kinds = {block_type(b) for b in content if isinstance(b, dict)}
            if "tool_result" in kinds:
                return USER_OTHER
            if kinds & {"text", "image", "document"}:
                return PROMPT
        return USER_OTHER
    if t == "system" and d.get("subtype") == "compact_boundary":
        return BOUNDARY
    return OTHER


class _Import(_Nodes, _WriteBehind, _InlineAgents, _Finishing, Resumable):
    """One file, one pass. See the module doc for the rules; the parts: `nodes.py` the
    tree of nodes, `write_behind.py` writing each entry one line behind the reader,
    `inline_agents.py` sub-agents written inline, `finishing.py` the sessions at the end,
    `snapshot.py` what a read records to go on from."""

    def __init__(self, store, path: Path, result: FileResult, ticker: ProgressTicker, *,
                 start: tuple[int, int] = (0, 0), resume: dict[str, Any] | None = None,
                 pacer: Pacer | None = None):
        self.store, self.path, self.result, self.ticker = store, path, result, ticker
        self.start_offset, self.start_line = start
        self.pacer = pacer
        self.consumed = self.start_offset      # the file is in the store up to here
        self.consumed_line = self.start_line   # lines before `consumed`
        self.read_upto = 0                     # a resumed read: lines before this were read
        self.stored: StoredIds | None = None        # a resumed read: stored entry id -> seq
        self.by_seq: dict[int, int] = {}            # seq -> node, for stored entries
        # a resumed read: the record's short_keys of the uuids with a prompt child and of the
        # counted message ids, in order (for the next record) and as sets (for asking)
        self.parent_keys: list[str] = []
        self.prompt_parents: set[str] = set()
        self.counted_keys: list[str] = []
        self.counted_before: set[str] = set()
        self.fallback = file_mtime(path)
        self.clock = Clockwork(self.fallback)
        # per node (in emission order): a few small fields
        # (arrays, not lists or dicts: about 30 bytes a line, so memory stays small)
        self.kind = bytearray()
        self.side = bytearray()
        self.eff = array("q")                  # node -> its effective parent node, or -1
        self.seq = array("q")                  # node -> its entry's seq
        self.prompt_child = bytearray()        # node already has a user prompt as a child
        self.offsets = array("q")              # node -> byte offset of its line (duplicate uuids)
        self.fwd = array("q")                  # node -> newest node written below it, or -1
        self.index: dict[str, int] = {}        # uuid -> node
        self.ids: list[str] = []               # node -> its entry id
        self.waiting: dict[str, list[tuple[int, int]]] = {}   # parent uuid -> (offset, line)
        self.pending_meta: list[tuple[dict[str, Any], int, Any, int]] = []   # (d, line, ts, offset)
        self.held: tuple[int, str, dict[str, Any], int, Any] | None = None
        self.held_at = (0, 0)   # where a new read must start to get the held line right
        self.counted: dict[str, None] = {}     # message ids whose usage was counted, in order
        self.prompts: list[tuple[str, str]] = []   # (declared parent uuid, prompt entry id)
        self.tool_names: dict[str, str] = {}
        self.last_main = -1
        self.last_node = -1
        self.target: SessionTarget | None = None
        self.reread = None
        self.dangling = 0
        # facts for the session
        self.titles: dict[str, str] = {}
        self.first_prompt = ""
        self.side_prompt = ""
        self.session_id = ""
        self.cwd = ""
        self.model = ""
        self.version = ""
        self.git_branch = ""
        self.agent_id = ""
        self.first_side: bool | None = None
        self.spawn_calls: dict[str, int] = {}   # Agent/Task tool call id -> its entry's seq
        # sub-agents written inline (see the module doc): one Sidechain each, the node ->
        # owner (-1: the file's own session, else the sidechain's index), the main thread's
        # Task calls not matched to a sidechain yet, and the target last written to
        self.owner = array("q")
        self.sidechains: list[Sidechain] = []
        self.task_calls: list[list[str]] = []    # [call id, prompt key, description, type]
        self.writing: SessionTarget | None = None
        self.newest_main = (-1, -1)              # (line, node) of the main thread's last line
        self.forked_from: tuple[str, str] | None = None  # (source session, newest copied uuid)
        self.defaults: dict[str, Any] | None = None
        self.facts_done = False
        if resume is not None:
            self._restore(resume)

    # ------------------------------------------------------------------ reading
    def run(self) -> None:
        result = self.result
        ticker = self.ticker
        handle_line = self.handle
        pacer = self.pacer
        # (orjson's decoder for a big read; for a few lines, the standard library's: fastjson)
        loads_common = common_decoder(ticker.total - self.start_offset)
        with open(self.path, "rb", buffering=READ_BUFFER) as handle:
            handle.seek(self.start_offset)
            number = self.start_line
            for raw in iter_lines(handle, self.start_offset, self.start_line + 1):
                number = raw.number
                if not number & 2047:
                    ticker(raw.offset)
                data = raw.data
                try:
                    d = loads_common(data)     # the common case, without the checks below
                    if type(d) is not dict or nested_too_deeply(data, d):
                        raise ValueError
                except Exception:  # noqa: BLE001 - parse_line says what is wrong
                    try:
                        d = parse_line(raw)
                    except LineError as error:
                        if raw.complete:
                            result.skip(number, str(error))
                            self.consumed, self.consumed_line = raw.end, number
                        else:
                            # a torn last line: left for the next read, when it is whole
                            result.skip(number, str(error))
                        continue
                handle_line(d, number, raw.offset, data)
                self.consumed, self.consumed_line = raw.end, number
                if pacer is not None and pacer.due():
                    self._commit_point(number)
            result.lines = number
            # Lines still waiting hang below a cycle, or below a uuid seen only nested.
            while self.waiting:
                offset, number, parent = min(
                    (item[0], item[1], key) for key, items in self.waiting.items() for item in items)
                items = self.waiting[parent]
                items.remove((offset, number))
                if not items:
                    del self.waiting[parent]
                d, data = self._reread(offset, number)
                if d is None:
                    continue
                self.result.skip(number, f"parent cycle or missing parent {parent}: entry "
                                 f"{d.get('uuid')} was made a root (kept, not dropped)")
                self.handle(d, number, offset, data, force_root=True)
        if self.pending_meta:
            self._chain_meta(self._tip(self.last_node) if self.last_node >= 0 else -1)
        self._write_held(None)
        if self.reread is not None:
            self.reread.close()

    # ------------------------------------------------------------- resuming
    # (snapshot, _restore, _safe_point, _commit_point: snapshot.Resumable)


    def _line_at(self, offset: int) -> bytes:
        if self.reread is None:
            self.reread = open(self.path, "rb")
        self.reread.seek(offset)
        return self.reread.readline().rstrip(b"\r\n")

    def _reread(self, offset: int, number: int):
        data = self._line_at(offset)
        try:
            return parse_line(RawLine(number, offset, data, True)), data
        except LineError:
            return None, data

    def handle(self, d: dict[str, Any], number: int, offset: int, data: bytes, *,
               force_root: bool = False) -> None:
        emitted = self._handle_one(d, number, offset, data, force_root)
        if emitted is not None and self.waiting and emitted in self.waiting:
            self._release(emitted)

    def _release(self, emitted: str) -> None:
        """Handle the lines that waited for `emitted`, and those that waited for them."""
        stack = []
        released = self.waiting.pop(emitted)
        for offset_, number_ in reversed(released):
            d_, data_ = self._reread(offset_, number_)
            if d_ is not None:
                stack.append((d_, number_, offset_, data_, False))
        while stack:
            d, number, offset, data, force_root = stack.pop()
            emitted = self._handle_one(d, number, offset, data, force_root)
            if emitted is not None:
                released = self.waiting.pop(emitted, None)
                if released:
                    for offset_, number_ in reversed(released):
                        d_, data_ = self._reread(offset_, number_)
                        if d_ is not None:
                            stack.append((d_, number_, offset_, data_, False))

    def _handle_one(self, d, number, offset, data, force_root) -> str | None:
        get = d.get
        ts = self.clock.take(get("timestamp"))
        uuid = get("uuid")
        t = get("type")
        if not isinstance(uuid, str) or not uuid:
            if offset < self.read_upto:
                known = self._node_for(f"L{number}")
                if known >= 0 and (self.fwd[known] >= 0 or (
                        self.fwd[known] == UNREAD and self._newest_child(known) >= 0)):
                    # read again after a resume, and the node it was chained before is
                    # written too: nothing to do (without that node, it is chained again)
                    return None
            if t == "summary" and isinstance(get("summary"), str):
                self.titles.setdefault("summary", title_from_text(d["summary"]))
            elif t == "custom-title" and isinstance(get("customTitle"), str):
                self.titles["custom-title"] = title_from_text(d["customTitle"])
            elif t == "ai-title" and isinstance(get("aiTitle", get("title")), str):
                self.titles["ai-title"] = title_from_text(get("aiTitle", get("title")))
            self.pending_meta.append((d, number, ts, offset))
            if len(self.pending_meta) >= 1000:
                self._chain_meta(self._tip(self.last_node) if self.last_node >= 0 else -1)
            return None
        entry_id = uuid
        side = bool(get("isSidechain"))
        if uuid in self.index or (self.stored is not None and self._node_for(uuid, side) >= 0):
            known_at = self.offsets[self._node_for(uuid)]
            if known_at < 0 and offset < self.read_upto:
                return None   # read again after a resume: already in the store
            if known_at >= 0 and self._line_at(known_at) == data:
                self.result.duplicates += 1
                return None
            entry_id = f"{uuid}~L{number}"
            self.result.skip(number, f"duplicate uuid {uuid} (first kept as it was); this line "
                             f"kept as entry {entry_id}")
        try:
            k = _kind(d)
        except SHAPE_ERRORS as error:
            self.result.skip(number, odd_shape(error))
            k = OTHER
        parent = get("parentUuid")
        preserved = None
        if k == BOUNDARY:
            logical = get("logicalParentUuid")
            if isinstance(logical, str) and logical:
                parent = logical
            meta = get("compactMetadata")
            kept = meta.get("preservedMessages") if isinstance(meta, dict) else None
            preserved = kept.get("uuids") if isinstance(kept, dict) else None
        if not isinstance(parent, str) or not parent or force_root:
            p = -1
        elif parent == uuid:
            self.result.skip(number, f"entry {uuid} is its own parent: made a root")
            p = -1
        else:
            p = self._node_for(parent, side)
            if p < 0:
                if k == BOUNDARY:
                    p = self._boundary_fallback(preserved)
                elif entry_id == uuid:
                    self.waiting.setdefault(parent, []).append((offset, number))
                    return None
                else:
                    self.dangling += 1
        inline = side and not (side if self.first_side is None else self.first_side)
        try:
            self._facts(d, k, side, parent, get, inline)
        except SHAPE_ERRORS as error:
            self.result.skip(number, odd_shape(error, "imported; the session's facts (name, "
                                                      "model, folder) not read from it"))
        owner = -1
        if inline:
            if p >= 0 and self.owner[p] >= 0:
                owner = self.owner[p]
            else:
                # a sub-agent's root (its parent is null), or a line whose parent is missing
                # or in the main thread: a root of the sub-agent it belongs to
                declared_root = not isinstance(parent, str) or not parent
                owner = self._new_sidechain(d, uuid, number, ts) if declared_root or \
                    not self.sidechains else self._sidechain_at(number)
                p = -1
        elif p >= 0 and self.owner[p] >= 0:
            p = self.last_main          # a main line below a sub-agent's: the main thread
        elif k == ASSISTANT and not side and self.first_side is False:
            self._task_calls(get("message"))
        node = self._emit(entry_id, k, side, p, d, number, ts, offset, owner)
        if owner < 0 and not force_root and number > self.newest_main[0]:
            self.newest_main = (number, node)
        self.offsets[node] = offset
        if entry_id == uuid:
            self.index[uuid] = node
        if k == PROMPT and p >= 0:
            self.prompts.append((parent, entry_id))
        return uuid

    def _facts(self, d, k, side, parent, get, inline=False) -> None:
        if self.first_side is None:
            self.first_side = side
        if self.defaults is None:
            self.defaults = {key: d[key] for key in _DEFAULT_KEYS if key in d}
        if not self.facts_done:
            if not self.session_id and isinstance(get("sessionId"), str):
                self.session_id = d["sessionId"]
            if not self.cwd and isinstance(get("cwd"), str):
                self.cwd = d["cwd"]
            if not self.git_branch and isinstance(get("gitBranch"), str):
                self.git_branch = d["gitBranch"]
            if not self.agent_id and isinstance(get("agentId"), str):
                self.agent_id = d["agentId"]
            self.facts_done = bool(self.session_id and self.cwd and self.git_branch)
        forked = get("forkedFrom")
        if forked is not None and isinstance(forked, dict) and \
                isinstance(forked.get("sessionId"), str) and isinstance(forked.get("messageUuid"), str):
            self.forked_from = (forked["sessionId"], forked["messageUuid"])
        version = get("version")
        if version is not None and version != self.version and isinstance(version, str):
            self.version = version
        if k == ASSISTANT and not inline:
            message = get("message")
            if isinstance(message, dict):
                model = message.get("model")
                if isinstance(model, str) and model != "<synthetic>":
                    self.model = model
        elif k == PROMPT and not inline and not self.first_prompt and not (side and self.side_prompt):
            message = get("message")
            if isinstance(message, dict):
                text = content_text(message.get("content"))
                if text.strip() and not text.lstrip().startswith("<"):
                    if side:
                        self.side_prompt = text     # a sub-agent's task: a name of last resort
                    else:
                        self.first_prompt = text


    def _boundary_fallback(self, preserved) -> int:
        """A compact boundary whose logical parent is not written yet (a preserved tail
        re-parented below the summary): the newest preserved message already written,
        else the previous main-thread node."""
        if isinstance(preserved, list):
            for uuid in reversed(preserved):
                if isinstance(uuid, str):
                    node = self._node_for(uuid)
                    if node >= 0:
                        return node
        return self.last_main


    def _ensure_target(self, uid: str | None = None, resuming: bool = False) -> SessionTarget:
        if self.target is None:
            found, kind, parent = self._identity()
            uid = uid or found
            metadata: dict[str, Any] = {"format": FORMAT, "path": str(self.path)}
            spawn_ref = None
            if kind == "subagent":
                spawn = subagent_meta(self.path)
                metadata.update(spawn)
                if isinstance(spawn.get("description"), str):
                    self.titles["description"] = title_from_text(spawn["description"])
                call = spawn.get("toolUseId")
                spawn_ref = f"key:claude:{call}" if call else f"key:claude-agent:{self.agent_id}"
            self.target = SessionTarget(
                self.store, uid=uid, name=self.path.stem, source=FORMAT, cwd=self.cwd,
                metadata=metadata, created_at=self.clock.first or self.fallback, kind=kind,
                parent_session=parent, spawn_ref=spawn_ref, remember_new=False,
                ids_on_demand=resuming,
                background=not resuming or self.ticker.total - self.start_offset >= INLINE_BELOW)
        return self.target

    def _identity(self) -> tuple[str, str, str | None]:
        stem = self.path.stem
        if self.first_side and self.agent_id:
            sid = self.session_id or short_hash(str(self.path.resolve()))
            return f"{sid}:agent-{self.agent_id}", "subagent", self.session_id or None
        if _is_uuid(stem):
            return stem, "session", None
        return f"{FORMAT}-{short_hash(str(self.path.resolve()))}", "session", None


RESUMABLE = True   # a read can go on from a recorded offset (see state.py)


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker, *,
                start: tuple[int, int] = (0, 0), resume: dict[str, Any] | None = None,
                pacer: Pacer | None = None) -> tuple[int, int, dict[str, Any]]:
    """Import one file (from `start` = (offset, lines before it), with the snapshot a
    previous read left, when resuming). Returns where the file is in the store up to:
    (offset, lines before it, snapshot for the next read)."""
    job = _Import(store, path, result, ticker, start=start, resume=resume, pacer=pacer)
    job.run()
    job.finish()
    return job.consumed, job.consumed_line, job.snapshot()
