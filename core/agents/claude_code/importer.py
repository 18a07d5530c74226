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

import re
from array import array
from pathlib import Path

from core.model.entries import COMPACTION, MESSAGE, SESSION_INFO, block_type, content_text
from core.importing.base import (
    READ_BUFFER, SHAPE_ERRORS, Clockwork, FileResult, LineError, ProgressTicker, RawLine,
    file_mtime, iter_lines, nested_too_deeply, odd_shape, parse_line, short_hash, title_from_text)
from core.util.fastjson import common_decoder
from . import looks_like  # noqa: F401 - where it was
from core.importing.session import INLINE_BELOW, SessionTarget, StoredIds, first_text_title
from core.importing.state import Pacer
from core.importing.tree import sync_branches, sync_new_branches
from .convert import learn_tools, convert_block, convert_message, convert_usage  # noqa: F401
from .snapshot import Resumable, short_key
from .sidechains import SPAWN_TOOLS, Sidechain, spawn_calls, subagent_meta  # noqa: F401

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

FORMAT = "claude_code"

META, PROMPT, USER_OTHER, ASSISTANT, BOUNDARY, OTHER = range(6)
UNREAD = -2   # a stored node's parent or newest child, not read from the store yet
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_LINE_SKIP = frozenset({"type", "uuid", "timestamp", "message"})


# Fields that are the same on nearly every line of a file: kept once, in the session's
# metadata ("lineDefaults"), and on a line only when its value differs.
_MISSING = object()
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


class _Import(Resumable):
    """One file, one pass. See the module doc for the rules."""

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

    # Nodes of stored entries, made on demand (a resumed read): their effective parent
    # and newest child are read from the store when first needed.
    def _node_for(self, entry_id: str | None, sidechains: bool = True) -> int:
        """The node of an entry: one made by this read, or a stored entry's; -1 if none.
        `sidechains`: look in the sub-agents written inline too (for a sidechain line)."""
        if entry_id is None:
            return -1
        node = self.index.get(entry_id)
        if node is not None:
            return node
        seq = self.stored.get(entry_id) if self.stored is not None else None
        if seq is None and self.stored is not None and sidechains:
            # a resumed read: the sub-agents written inline so far keep their own entries
            for owner, side in enumerate(self.sidechains):
                seq = self._target_for(owner, switch=False).known.get(entry_id)
                if seq is not None:
                    return self._stored_node(entry_id, seq, owner)
        return -1 if seq is None else self._stored_node(entry_id, seq)

    def _stored_node(self, entry_id: str, seq: int, owner: int = -1) -> int:
        node = self._new_node(entry_id, OTHER, owner >= 0, -1, owner)
        self.eff[node] = UNREAD
        self.fwd[node] = UNREAD
        self.seq[node] = seq
        self.index[entry_id] = node
        self.by_seq[seq] = node
        return node

    def _stored_by_seq(self, seq: int) -> int:
        node = self.by_seq.get(seq)
        if node is None:
            entry_id, _parent = self.store.entries.link(seq)
            node = self._node_for(entry_id)
        return node

    def _newest_child(self, node: int) -> int:
        """A stored node's newest child (the tip walk goes on through it), from the store."""
        child = self.store.entries.newest_child(self.seq[node])
        self.fwd[node] = nxt = -1 if child is None else self._stored_by_seq(child)
        return nxt

    def _is_ancestor(self, node: int, start: int) -> bool:
        current = self._parent_node(start)
        steps = 0
        while current >= 0 and steps < 10_000_000:
            if current == node:
                return True
            current = self._parent_node(current)
            steps += 1
        return False

    def _parent_node(self, node: int) -> int:
        e = self.eff[node]
        if e == UNREAD:
            _id, parent_seq = self.store.entries.link(self.seq[node])
            self.eff[node] = e = -1 if parent_seq is None else self._stored_by_seq(parent_seq)
        return e

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

    def _task_calls(self, message: Any) -> None:
        """The Task/Agent calls of a main-thread reply, for the sidechains written inline
        after them (`_new_sidechain`)."""
        for block in spawn_calls(message):
            given = block.get("input") if isinstance(block.get("input"), dict) else {}
            prompt, what = given.get("prompt"), given.get("description")
            kind = given.get("subagent_type")
            self.task_calls.append([block["id"], short_key(prompt.strip()) if
                                    isinstance(prompt, str) else "",
                                    what if isinstance(what, str) else "",
                                    kind if isinstance(kind, str) else ""])

    def _new_sidechain(self, d: dict[str, Any], uuid: str, number: int, ts) -> int:
        """A sub-agent written inline starts at this line: its session, and the Task call
        that started it (the one whose prompt its first line repeats, else the oldest not
        matched yet)."""
        agent = d.get("agentId")
        agent = agent if isinstance(agent, str) else ""
        for owner, known in enumerate(self.sidechains):
            if known.root == uuid or (agent and known.agent == agent):
                return owner               # (read again after a resume, or its second root)
        message = d.get("message")
        prompt = content_text(message.get("content")).strip() if isinstance(message, dict) else ""
        key = short_key(prompt) if prompt else None
        calls = self.task_calls
        found = next((i for i, call in enumerate(calls) if key and call[1] == key), None)
        if found is None and calls:
            found = 0
        call = calls.pop(found) if found is not None else None
        side = Sidechain(root=uuid, line=number, agent=agent,
                          call=call[0] if call else "", description=call[2] if call else "",
                          agent_type=call[3] if call else "", prompt=prompt[:400], started=ts)
        self.sidechains.append(side)
        return len(self.sidechains) - 1

    def _sidechain_at(self, number: int) -> int:
        """The sub-agent being written where this line stands (the last one started before
        it): a sidechain line whose parent is missing belongs to it."""
        best = 0
        for owner, side in enumerate(self.sidechains):
            if side.line <= number:
                best = owner
        return best

    def _target_for(self, owner: int, *, switch: bool = True) -> SessionTarget:
        """The session a node's entry goes to: the file's own (-1) or a sub-agent's written
        inline. One entry writer writes at a time (each gives seqs from where the store
        is): the other is flushed, and this one goes on after its rows."""
        main = self.target or self._ensure_target()
        if owner < 0:
            target = main
        else:
            side = self.sidechains[owner]
            target = side.target
            if target is None:
                if switch and self.writing is not None:
                    self.writing.writer.flush()
                    self.writing = None
                target = side.target = self._side_target(side, main)
        if switch and target is not self.writing:
            if self.writing is not None:
                self.writing.writer.flush()
                target.writer.after_others()
            self.writing = target
        return target

    def _side_target(self, side: "Sidechain", main: SessionTarget) -> SessionTarget:
        metadata: dict[str, Any] = {"format": FORMAT, "path": str(self.path), "inline": True,
                                    "rootUuid": side.root, "lineDefaults": self.defaults}
        for key, value in (("toolUseId", side.call), ("description", side.description),
                           ("agentType", side.agent_type), ("agentId", side.agent)):
            if value:
                metadata[key] = value
        spawn_ref = f"key:claude:{side.call}" if side.call else \
            f"key:claude-agent:{side.agent}" if side.agent else None
        resuming = self.stored is not None
        return SessionTarget(
            self.store, uid=side.uid(main.uid), name=side.name(), source=FORMAT, cwd=self.cwd,
            metadata=metadata, created_at=side.started or self.clock.first or self.fallback,
            kind="subagent", parent_session=main.uid, spawn_ref=spawn_ref, remember_new=False,
            ids_on_demand=resuming,
            background=not resuming or self.ticker.total - self.start_offset >= INLINE_BELOW)

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

    # ----------------------------------------------------------------- the tree
    def _tip(self, node: int) -> int:
        fwd = self.fwd
        nxt = fwd[node]
        if nxt == UNREAD:
            nxt = self._newest_child(node)
        if nxt < 0:
            return node
        trail = []
        last = node
        while nxt >= 0:
            trail.append(last)
            last = nxt
            nxt = fwd[last]
            if nxt == UNREAD:
                nxt = self._newest_child(last)
        for item in trail[:-1]:
            fwd[item] = last
        return last

    def _new_node(self, entry_id: str, kind: int, side: bool, e: int, owner: int = -1) -> int:
        node = len(self.kind)
        self.owner.append(owner)
        self.ids.append(entry_id)
        self.kind.append(kind)
        self.side.append(1 if side else 0)
        self.eff.append(e)
        self.seq.append(0)
        self.prompt_child.append(0)
        self.offsets.append(-1)
        self.fwd.append(-1)
        if e >= 0:
            self.fwd[e] = node
        return node

    def _chain_meta(self, e: int, start: tuple[int, int] | None = None) -> int:
        first = self.pending_meta[0]
        start = start or (first[3], first[1] - 1)
        for d, number, ts, offset in self.pending_meta:
            entry_id = f"L{number}"
            node = self._new_node(entry_id, META, False, e)
            self._queue(node, entry_id, d, number, ts, start)
            e = node
        self.pending_meta.clear()
        return e

    def _emit(self, entry_id: str, k: int, side: bool, p: int, d, number: int, ts,
              offset: int, owner: int = -1) -> int:
        if p < 0:
            e = -1
        else:
            if k == PROMPT and (self.prompt_child[p] or (
                    self.prompt_parents and short_key(self.ids[p]) in self.prompt_parents)):
                e = p                      # a rewind: a real branch
            else:
                e = self._tip(p)           # a continuation: collapse false forks
            if k == PROMPT:
                self.prompt_child[p] = 1
        # where a new read must start to place this node the same way: its own line, or
        # the first of the metadata lines chained before it
        start = (offset, number - 1)
        if self.pending_meta and owner < 0:
            # (lines without a uuid stay with the main thread: a sub-agent's lines wait)
            first = self.pending_meta[0]
            start = (first[3], first[1] - 1)
            e = self._chain_meta(e, start)
        node = self._new_node(entry_id, k, side, e, owner)
        self._queue(node, entry_id, d, number, ts, start)
        if owner < 0:
            self.last_node = node
            if not side:
                self.last_main = node
        return node

    # ------------------------------------------------------------------ writing
    def _queue(self, node: int, entry_id: str, d: dict[str, Any], number: int, ts,
               start: tuple[int, int]) -> None:
        self._write_held(d)
        self.held = (node, entry_id, d, number, ts)
        self.held_at = start

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
        if _UUID_RE.match(stem):
            return stem, "session", None
        return f"{FORMAT}-{short_hash(str(self.path.resolve()))}", "session", None

    def _write_held(self, next_d: dict[str, Any] | None) -> None:
        held = self.held
        if held is None:
            return
        self.held = None
        node, entry_id, d, number, timestamp = held
        target = self._target_for(self.owner[node])
        e = self.eff[node]
        parent_seq = self.seq[e] if e >= 0 else None
        known = target.known.get(entry_id)
        k = self.kind[node]
        message = d.get("message")
        counted = False
        if k == ASSISTANT and isinstance(message, dict):
            msgid = message.get("id") or d.get("requestId")
            if isinstance(msgid, str):
                following = None
                if next_d is not None and next_d.get("type") == "assistant":
                    nm = next_d.get("message")
                    following = (nm.get("id") if isinstance(nm, dict) else None) or \
                        next_d.get("requestId")
                if following != msgid and msgid not in self.counted and not (
                        self.counted_before and short_key(msgid) in self.counted_before):
                    self.counted[msgid] = None
                    counted = True
            else:
                counted = True
        if known is not None:
            self.seq[node] = known
            if k == ASSISTANT:
                learn_tools(message, self.tool_names)
                self._spawns(message, known, target, record=False)
            return
        summary = None
        if k == BOUNDARY and next_d is not None and next_d.get("isCompactSummary") and \
                next_d.get("parentUuid") == d.get("uuid"):
            nm = next_d.get("message")
            summary = content_text(nm.get("content")) if isinstance(nm, dict) else None
        # (the store reads each response's usage from the entry: core/store/usage/rows.py)
        try:
            entry_type, payload, usage = self._convert(d, node, k, timestamp, counted, summary)
        except SHAPE_ERRORS as error:
            self.result.skip(number, odd_shape(error))
            t = d.get("type")
            entry_type, payload, usage = f"claude:{t if isinstance(t, str) else 'unknown'}", \
                dict(d), None
        seq, written = target.add(entry_id, parent_seq, entry_type, payload, timestamp)
        self.seq[node] = seq
        if written:
            if k == ASSISTANT:
                self._spawns(message, seq, target)
            elif k == USER_OTHER and d.get("toolUseResult") is not None:
                self._spawned_agent(d, message, target)

    def _spawns(self, message: Any, seq: int, target: SessionTarget, record: bool = True) -> None:
        """Agent/Task tool calls in this reply: spawn points for the sub-agents they start."""
        for block in spawn_calls(message):
            self.spawn_calls[block["id"]] = seq
            if record:
                target.spawn(f"claude:{block['id']}", seq)

    def _spawned_agent(self, d: dict[str, Any], message: Any, target: SessionTarget) -> None:
        """A tool result that names the sub-agent it ran (`toolUseResult.agentId`): a spawn
        point for sub-agent files without a meta.json naming their tool call."""
        used = d.get("toolUseResult")
        agent = used.get("agentId") if isinstance(used, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(agent, str) or not agent or not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call = block.get("tool_use_id")
                seq = self.spawn_calls.get(call) if isinstance(call, str) else None
                if seq is None and isinstance(call, str):
                    point = self.store.sessions.spawn_point(f"claude:{call}", target.uid)
                    seq = point[1] if point is not None and point[0] == target.id else None
                if seq is not None:
                    target.spawn(f"claude-agent:{agent}", seq)
                return

    def _extra(self, d: dict[str, Any]) -> dict[str, Any]:
        """The line's fields that the entry does not hold elsewhere: less type, uuid,
        timestamp and message, and less those kept once for the file (lineDefaults)."""
        extra = dict(d)
        pop = extra.pop
        for key in _LINE_SKIP:
            pop(key, None)
        if self.defaults:
            get = extra.get
            for key, value in self.defaults.items():
                if get(key, _MISSING) == value:
                    del extra[key]
        return extra

    def _convert(self, d, node, k, timestamp, counted, summary):
        t = d.get("type")
        message = d.get("message")
        if (t == "user" or t == "assistant") and isinstance(message, dict):
            pimsg, usage = convert_message(message, t, timestamp, self.tool_names, counted)
            if d.get("isCompactSummary"):
                pimsg["kind"] = "compaction_summary"
            return MESSAGE, {"message": pimsg, "claude": self._extra(d)}, usage
        if k == BOUNDARY:
            meta = d.get("compactMetadata") if isinstance(d.get("compactMetadata"), dict) else {}
            kept = None
            segment = meta.get("preservedSegment")
            if isinstance(segment, dict) and isinstance(segment.get("headUuid"), str):
                head = self.index.get(segment["headUuid"])
                if head is not None and self._is_ancestor(head, node):
                    kept = segment["headUuid"]
            data = {"summary": summary or str(d.get("content") or ""), "firstKeptEntryId": kept,
                    "tokensBefore": meta.get("preTokens", 0), "claude": self._extra(d)}
            if meta.get("trigger"):
                data["trigger"] = meta["trigger"]
            return COMPACTION, data, None
        if t == "custom-title" and isinstance(d.get("customTitle"), str):
            return SESSION_INFO, {"name": d["customTitle"], "claude": self._extra(d)}, None
        return f"claude:{t if isinstance(t, str) else 'unknown'}", dict(d), None

    # ------------------------------------------------------------------- finish
    def finish(self) -> None:
        result = self.result
        target = self.target
        if target is None:
            if not result.skipped:
                result.status, result.error = "not-a-log", "no Claude Code lines in this file"
            else:
                result.status, result.error = "failed", "no line of this file could be read"
            return
        for each in self._targets():
            each.flush()
        name = self.titles.get("custom-title") or self.titles.get("ai-title") or \
            self.titles.get("summary") or self.titles.get("description") or \
            title_from_text(self.first_prompt or self.side_prompt) or self.path.stem
        metadata = {"cwd": self.cwd, "model": self.model, "sessionId": self.session_id,
                    "version": self.version, "gitBranch": self.git_branch,
                    "agentId": self.agent_id, "danglingParents": self.dangling,
                    "lineDefaults": self.defaults}
        target.update_metadata(metadata)
        target.set_cwd(self.cwd)
        store = self.store
        if self.forked_from is not None and not self.first_side and \
                self.forked_from[0] != target.uid:
            store.sessions.set_lineage(target.id, kind="fork", parent_ref=self.forked_from[0],
                              spawn_ref=f"entry:{self.forked_from[1]}")

        def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
            title = first_text_title(store, path_, 40)
            first = store.entries.get(path_[0]) if path_ else None
            side = bool(first and isinstance(first.data.get("claude"), dict)
                        and first.data["claude"].get("isSidechain"))
            if fork is None:
                if side:
                    return f"sidechain: {title}" if title else "sidechain"
                return "main" if not store.branches.heads(target.id) else (title or "root")
            return title or "branch"

        # the current branch: the one holding the main thread's last line (see the module doc)
        newest = self.seq[self.newest_main[1]] if self.newest_main[1] >= 0 else None
        self._sync(target, name_for, newest)
        result.sessions.append(target.finish(name=name))
        for side in self.sidechains:
            if side.target is not None:
                self._finish_sidechain(side)

    def _targets(self) -> list[SessionTarget]:
        return [t for t in [self.target, *(side.target for side in self.sidechains)]
                if t is not None]

    def _sync(self, target: SessionTarget, name_for, newest: int | None = None) -> None:
        store = self.store
        if self.stored is not None and store.branches.heads(target.id):
            # a grown file: only the entries this read added are looked at
            sync = sync_new_branches(store, target.id, target.writer.written_rows(),
                                     key_prefix=f"{FORMAT}:{target.uid}", name_for=name_for,
                                     newest_leaf=newest)
        else:
            sync = sync_branches(store, target.id, key_prefix=f"{FORMAT}:{target.uid}",
                                 name_for=name_for, tree=target.writer.written_rows(),
                                 newest_leaf=newest)
        target.result.branches_added = sync.added

    def _finish_sidechain(self, side: "Sidechain") -> None:
        """A sub-agent written inline: its session's branches and name, as a sub-agent's own
        file gets them."""
        target = side.target
        store = self.store
        target.set_cwd(self.cwd)

        def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
            title = first_text_title(store, path_, 40)
            if fork is None:
                return "main" if not store.branches.heads(target.id) else (title or "root")
            return title or "branch"

        self._sync(target, name_for)
        self.result.sessions.append(target.finish(name=side.name()))





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
