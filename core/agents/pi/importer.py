"""pi sessions (`~/.pi/agent/sessions/**.jsonl`), versions 1 to 3.

A header line (`type: session`), then entries. Version 3 (and 2) entries carry
`id`/`parentId` and form a tree; the leaf is the last entry written. Version 1 entries
have no ids: as pi's own migration does, they are read as one linear branch (each entry's
parent is the previous one) and get deterministic ids (`L<line>`), so a second import
finds them. pi's entry types are arbor's native types, so entries are stored as they are
(everything but type/id/parentId/timestamp is the entry's data, unknown fields included);
`label` entries also go into the label log; v2's `hookMessage` role reads as `custom`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.model.entries import COMPACTION, LABEL, MESSAGE
from core.importing.base import (
    Clockwork, FileResult, ProgressTicker, RawLine, file_mtime, object_lines, parse_line,
    short_hash, title_from_text)
from core.importing.session import SessionTarget, first_text_title
from core.importing.tree import processing_order, sync_branches

FORMAT = "pi"
NO_ENTRY, NEXT_ENTRY = -1, -2
_BASE_KEYS = ("type", "id", "parentId", "timestamp")
SHADOW_KEY = "arbor:shadowed"
# pi's v1 -> v2 migration (run when pi opens an old file, which it rewrites in place) gives
# every line an id and replaces a compaction's firstKeptEntryIndex with firstKeptEntryId:
# the entries a v1 import stored are recognised in the rewritten file (session.py) with
# that key left out of the comparison, and the ids that entries name are the store's.
REWRITTEN_KEYS = ("firstKeptEntryIndex",)
_REFERENCES = ("firstKeptEntryId", "targetId", "fromId")


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    header: dict[str, Any] | None = None
    ids: list[str] = []
    parent_ids: list[str | None] = []
    offsets: list[int] = []
    linenos: list[int] = []
    index: dict[str, int] = {}
    fallback = file_mtime(path)
    clock = Clockwork(fallback)
    title = ""
    first_user = ""
    model = ""
    previous: str | None = None
    # pi's v1 -> v2 migration resolves a compaction's firstKeptEntryIndex as an index into
    # the file's parsed lines, the session header at index 0: each slot is the entry index
    # of that line, NO_ENTRY (the header, another session line) or NEXT_ENTRY (a line arbor
    # does not keep as an entry; pi keeps from it, which is keeping from the next entry).
    slots: list[int] = []
    with open(path, "rb") as handle:
        for raw, d in object_lines(handle, result, ticker):
            t = d.get("type")
            if t == "session" and header is None and not ids:
                header = d
                slots.append(NO_ENTRY)
                clock.take(d.get("timestamp"))
                continue
            if not slots:
                slots.append(NO_ENTRY)  # the header line was lost: its index is still 0
            if not isinstance(t, str) or not t:
                slots.append(NEXT_ENTRY)
                result.skip(raw.number, "no entry type")
                continue
            slots.append(NO_ENTRY if t == "session" else len(ids))
            clock.take(d.get("timestamp"))
            entry_id = d.get("id")
            if isinstance(entry_id, str) and entry_id:
                parent = d.get("parentId") if "parentId" in d else previous
                if not isinstance(parent, str) or not parent:
                    parent = None
            else:
                entry_id = f"L{raw.number}"
                parent = previous
            if entry_id in index:
                result.skip(raw.number, f"duplicate entry id {entry_id} (first at line "
                            f"{linenos[index[entry_id]]}); kept as entry {entry_id}~L{raw.number}")
                entry_id = f"{entry_id}~L{raw.number}"
            index[entry_id] = len(ids)
            ids.append(entry_id)
            parent_ids.append(parent)
            offsets.append(raw.offset)
            linenos.append(raw.number)
            previous = entry_id
            if t == "session_info" and isinstance(d.get("name"), str) and d["name"].strip():
                title = title_from_text(d["name"])
            elif t == "model_change" and isinstance(d.get("modelId"), str):
                model = d["modelId"]
            elif t == "message" and isinstance(d.get("message"), dict):
                message = d["message"]
                if message.get("role") == "user" and not first_user:
                    from core.model.entries import content_text

                    first_user = content_text(message.get("content"))
                elif message.get("role") == "assistant" and isinstance(message.get("model"), str):
                    model = message["model"]
    if header is None and not ids:
        result.status = "failed" if result.skipped else "not-a-log"
        result.error = "no pi entries in this file"
        return
    header = header or {}
    version = header.get("version", 1) if isinstance(header.get("version"), int) else 1
    count = len(ids)
    parents: list[int | None] = []
    dangling = 0
    for i, parent in enumerate(parent_ids):
        j = index.get(parent) if parent is not None else None
        if parent is not None and (j is None or j == i):
            dangling += 1
            j = None
        parents.append(j)
    order: list[int] = []
    broken = processing_order(parents, order.append)
    for i in broken:
        result.skip(linenos[i], f"parent cycle: entry {ids[i]} was made a root (kept, not dropped)")
        parents[i] = None

    uid = header.get("id") if isinstance(header.get("id"), str) and header.get("id") else \
        f"{FORMAT}-{short_hash(str(path.resolve()))}"
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else ""
    exported = header.get("arbor") if isinstance(header.get("arbor"), dict) else {}
    # A file written by arbor's export keeps the session's name (it may have been renamed).
    name = (title_from_text(exported["name"]) if isinstance(exported.get("name"), str)
            and exported["name"].strip() else "") or title or title_from_text(first_user) or path.stem
    metadata = {"format": FORMAT, "path": str(path), "cwd": cwd, "version": version,
                "sessionId": header.get("id"), "model": model or header.get("modelId", ""),
                "header": header}
    if header.get("parentSession"):
        metadata["parentSession"] = header["parentSession"]
    if dangling:
        metadata["danglingParents"] = dangling
    created_at = clock.first or fallback
    # A header naming a parent session file: a fork (pi's /fork, arbor's resume) or a new
    # session started from another; it is listed under that session (core.history.lineage), at
    # the deepest entry it copied from it.
    # (A file written by arbor's export says what kind of session it was.)
    forked = isinstance(header.get("parentSession"), str) and bool(header["parentSession"])
    kind = exported.get("kind") if isinstance(exported.get("kind"), str) and \
        exported.get("kind") else ("fork" if forked else "session")
    target = SessionTarget(store, uid=uid, name=name, source=FORMAT, cwd=cwd, metadata=metadata,
                           created_at=created_at, kind=kind,
                           parent_session=header["parentSession"] if forked else None,
                           spawn_ref="shared" if forked and kind == "fork" else None,
                           rewritten_keys=REWRITTEN_KEYS)
    seq_of: list[int] = [0] * count
    labels: list[tuple[int, Any, Any, Any]] = []
    ticker.phase = "writing"
    clock = Clockwork(created_at)
    with open(path, "rb") as handle:
        position = 0
        for n, i in enumerate(order):
            if n % 2048 == 0:
                ticker(offsets[i])
            if offsets[i] != position:
                handle.seek(offsets[i])
            data = handle.readline()
            position = offsets[i] + len(data)
            p = parents[i]
            parent_seq = seq_of[p] if p is not None else None
            if target.has(ids[i]):
                seq_of[i] = target.known[ids[i]]
                continue
            d = parse_line(RawLine(linenos[i], offsets[i], data.rstrip(b"\r\n"), True))
            timestamp = clock.take(d.get("timestamp"))
            entry_type = d["type"]
            payload = {k: v for k, v in d.items() if k not in _BASE_KEYS}
            shadowed = payload.pop(SHADOW_KEY, None)
            if isinstance(shadowed, dict):
                # Written by arbor's pi export: data fields that share a base field's name.
                payload.update(shadowed)
            if version < 3 and entry_type == MESSAGE:
                message = payload.get("message")
                if isinstance(message, dict) and message.get("role") == "hookMessage":
                    payload["message"] = dict(message, role="custom")
            if entry_type == COMPACTION:
                _check_kept(payload, i, ids, index, parents, slots, linenos[i], result)
            if target.aliases:
                # ids the store knows under other names (a file pi rewrote: session.py)
                for key in _REFERENCES:
                    named = payload.get(key)
                    if isinstance(named, str) and named in target.aliases:
                        payload[key] = target.aliases[named]
            seq, written = target.add(ids[i], parent_seq, entry_type, payload, timestamp)
            seq_of[i] = seq
            if written and entry_type == LABEL:
                labels.append((seq, payload.get("targetId"), payload.get("label"), timestamp))
    target.flush()
    for seq, target_id, label, timestamp in labels:
        target_seq = target.seq_of(target_id) if isinstance(target_id, str) else None
        if target_seq is None:
            result.skip(None, f"label entry {seq} targets an unknown entry {target_id!r} "
                        "(entry kept, label not applied)")
            continue
        store.annotations.add_label(target.id, label if isinstance(label, str) else None,
                        target_seq=target_seq, entry_seq=seq, created_at=timestamp)

    # whether the session has a branch yet: asked once, then known (each new branch is
    # named here just before it is made; asking the store for every root of a file of many
    # roots read all its branches each time)
    named = [bool(store.branches.heads(target.id))]

    def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
        first = not named[0]
        named[0] = True
        if fork is None:
            return "main" if first else (first_text_title(store, path_, 40) or "root")
        return first_text_title(store, path_, 40) or "branch"

    target.flush()
    sync = sync_branches(store, target.id, key_prefix=f"{FORMAT}:{uid}", name_for=name_for)
    target.result.branches_added = sync.added
    result.sessions.append(target.finish(name=name))


def _check_kept(payload: dict[str, Any], i: int, ids: list[str], index: dict[str, int],
                parents: list[int | None], slots: list[int], line: int, result: FileResult) -> None:
    """A compaction's first kept entry, as pi resolves it: a v1 `firstKeptEntryIndex`
    becomes the id of that line's entry; a kept id that is not an entry before the
    compaction on its path (or not an id at all) keeps nothing before it, as in pi, and
    is reported; what the log said stays beside it (`arbor:firstKeptEntryId`)."""
    if "firstKeptEntryIndex" in payload and "firstKeptEntryId" not in payload:
        kept_index = _kept_by_index(payload.get("firstKeptEntryIndex"), slots)
        # (the header, or a line not before the compaction: pi finds no entry id there)
        payload["firstKeptEntryId"] = ids[kept_index] if kept_index is not None and \
            _is_ancestor(kept_index, i, parents) else None
        return
    kept = payload.get("firstKeptEntryId")
    if kept is None or kept == "":
        return
    if isinstance(kept, str) and kept in index and _is_ancestor(index[kept], i, parents):
        return
    what = f"entry {kept}, which is not before it on its path" if isinstance(kept, str) \
        else f"a {type(kept).__name__}, not an entry id"
    result.skip(line, f"compaction {ids[i]} keeps {what}: imported keeping nothing before it, "
                "as pi does")
    payload["arbor:firstKeptEntryId"] = kept
    payload["firstKeptEntryId"] = None


def _is_ancestor(j: int, i: int, parents: list[int | None]) -> bool:
    """Whether entry j lies on the path from the root to entry i, before it."""
    current = parents[i]
    steps = 0
    while current is not None and steps <= len(parents):
        if current == j:
            return True
        current = parents[current]
        steps += 1
    return False


def _kept_by_index(kept: Any, slots: list[int]) -> int | None:
    """The entry a v1 `firstKeptEntryIndex` names (see `slots` in import_file), or None."""
    if type(kept) is not int or not 0 <= kept < len(slots):
        return None
    for slot in slots[kept:]:
        if slot != NEXT_ENTRY:
            return slot if slot >= 0 else None
    return None
