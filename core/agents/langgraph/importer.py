"""LangGraph `SqliteSaver` databases (`checkpoints` and `writes` tables).

The database is opened read-only (it may be in WAL mode and in use). Each thread (and
each sub-graph namespace of a thread) becomes one external session:

* The checkpoint tree (`parent_checkpoint_id`) becomes the entry tree: a checkpoint's
  `messages` channel is compared with its parent's; the messages it adds become message
  entries below the parent's last message. A fork (a checkpoint with several children,
  made by invoking at an old checkpoint or by `update_state`) thus becomes a fork of the
  entry tree, and each leaf checkpoint a branch. A leaf checkpoint that adds no message
  of its own gets a `custom` entry (`langgraph:checkpoint`) so it is still a branch;
  not a run's input checkpoint, a leaf only until the run's next checkpoint.
* Every checkpoint becomes an arbor checkpoint (a tag) on the entry its messages end at,
  with the checkpoint's other channel values as its `session_state` (the leaf's state is
  also its branch's state) and the checkpoint's metadata.
* Blobs are decoded without langgraph: msgpack with LangGraph's extension types read as
  plain data (module and class names are never imported, pickle is never loaded), or
  JSON with LangChain's `lc` constructor objects. LangChain messages are converted to
  pi's message shape; what does not map is kept under `langchain`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import reprlib
import sqlite3
from pathlib import Path
from typing import Any

from core.model.entries import CUSTOM, MESSAGE, SESSION_INFO
from core.importing.base import (
    FileResult, ProgressTicker, epoch_ms, file_mtime, short_hash, timestamp_of, title_from_text)
from core.importing.session import SessionTarget, first_text_title
from core.importing.tree import processing_order, sync_branches

FORMAT = "langgraph"


class LcObject:
    """A LangGraph/LangChain serialized object, kept as data (never instantiated)."""

    __slots__ = ("module", "name", "value", "code")

    def __init__(self, module: str, name: str, value: Any, code: int):
        self.module, self.name, self.value, self.code = module, name, value, code

    @property
    def kind(self) -> str:
        return self.name


class UndecodableBlob(Exception):
    pass


def _ext_hook(code: int, data: bytes) -> Any:
    import msgpack

    try:
        value = msgpack.unpackb(data, ext_hook=_ext_hook, strict_map_key=False, raw=False)
    except Exception:  # noqa: BLE001 - a damaged extension stays visible as bytes
        return {"_ext": code, "_bytes": base64.b64encode(data).decode("ascii")}
    if isinstance(value, (list, tuple)) and len(value) >= 3 and isinstance(value[0], str) and \
            isinstance(value[1], str):
        return LcObject(value[0], value[1], value[2], code)
    return {"_ext": code, "value": value}


def decode_blob(kind: str | None, blob: Any) -> Any:
    if blob is None or kind in (None, "null", "empty"):
        return None
    if kind == "msgpack":
        import msgpack

        try:
            return msgpack.unpackb(bytes(blob), ext_hook=_ext_hook, strict_map_key=False, raw=False)
        except Exception as error:  # noqa: BLE001
            raise UndecodableBlob(f"msgpack blob cannot be decoded ({error})") from None
    if kind == "json":
        try:
            text = blob.decode("utf-8") if isinstance(blob, (bytes, bytearray)) else str(blob)
            return _revive_json(json.loads(text))
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise UndecodableBlob(f"JSON blob cannot be decoded ({error})") from None
    if kind in ("bytes", "bytearray"):
        return {"_bytes": base64.b64encode(bytes(blob)).decode("ascii")}
    if kind == "pickle":
        raise UndecodableBlob("pickled blob (arbor never unpickles data from a file)")
    raise UndecodableBlob(f"blob of unknown type {kind!r}")


def _revive_json(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get("lc") in (1, 2) and value.get("type") == "constructor" and \
                isinstance(value.get("id"), list) and value["id"]:
            ids = [str(p) for p in value["id"]]
            return LcObject(".".join(ids[:-1]), ids[-1], _revive_json(value.get("kwargs", {})), -1)
        return {k: _revive_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_revive_json(v) for v in value]
    return value


_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel = 4


def plain(value: Any, depth: int = 0) -> Any:
    """JSON-safe data for session_state and metadata."""
    if depth > 64:
        return _SHORT_REPR.repr(value)[:200]  # (repr() itself recurses: deep data overflows)
    if isinstance(value, LcObject):
        inner = plain(value.value, depth + 1)
        out = {"_type": f"{value.module}.{value.name}"}
        if isinstance(inner, dict):
            out.update(inner)
        else:
            out["value"] = inner
        return out
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"_bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


# ------------------------------------------------------------------ messages
_ROLE_BY_CLASS = {"HumanMessage": "user", "HumanMessageChunk": "user", "AIMessage": "assistant",
                  "AIMessageChunk": "assistant", "SystemMessage": "system",
                  "SystemMessageChunk": "system", "ToolMessage": "toolResult",
                  "ToolMessageChunk": "toolResult", "FunctionMessage": "toolResult",
                  "ChatMessage": None, "ChatMessageChunk": None}
_ROLE_BY_TYPE = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant",
                 "system": "system", "tool": "toolResult", "function": "toolResult"}


def message_fields(value: Any) -> dict[str, Any] | None:
    """The fields of a LangChain message (object or dict), or None if it is not one."""
    if isinstance(value, LcObject):
        if value.name in _ROLE_BY_CLASS and isinstance(value.value, dict):
            fields = dict(value.value)
            fields.setdefault("_class", value.name)
            return fields
        return None
    if isinstance(value, dict) and ("content" in value) and (
            value.get("type") in _ROLE_BY_TYPE or value.get("role") in _ROLE_BY_TYPE):
        return dict(value)
    if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], str) and \
            value[0] in _ROLE_BY_TYPE:
        return {"type": value[0], "content": value[1]}
    return None


def _content_blocks(content: Any) -> Any:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(plain(content)) if content is not None else ""
    out = []
    for block in content:
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                out.append({"type": "text", "text": block.get("text", "")})
            elif kind in ("thinking", "reasoning"):
                out.append({"type": "thinking",
                            "thinking": block.get("thinking", block.get("reasoning", ""))})
            elif kind == "tool_use":
                out.append({"type": "toolCall", "id": block.get("id", ""),
                            "name": block.get("name", ""), "arguments": plain(block.get("input", {}))})
            elif kind in ("image_url", "image"):
                out.append({"type": "image", **plain(block)})
            else:
                out.append(plain(block))
        else:
            out.append({"type": "text", "text": str(plain(block))})
    return out


def convert_message(fields: dict[str, Any], timestamp) -> dict[str, Any]:
    cls = fields.get("_class")
    role = _ROLE_BY_CLASS.get(cls) if cls else None
    if role is None:
        role = _ROLE_BY_TYPE.get(str(fields.get("type") or fields.get("role") or ""), None)
    if role is None:
        role = str(fields.get("role") or fields.get("type") or "user")
    content = fields.get("content")
    rest = {k: plain(v) for k, v in fields.items() if k not in ("content",)}
    if role == "toolResult":
        blocks = _content_blocks(content)
        message: dict[str, Any] = {
            "role": "toolResult", "toolCallId": str(fields.get("tool_call_id", "")),
            "toolName": str(fields.get("name") or ""),
            "content": [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks,
            "isError": fields.get("status") == "error"}
    else:
        message = {"role": role, "content": _content_blocks(content)}
        calls = fields.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            blocks = message["content"]
            if isinstance(blocks, str):
                blocks = [{"type": "text", "text": blocks}] if blocks else []
            for call in calls:
                call = plain(call)
                if isinstance(call, dict):
                    blocks.append({"type": "toolCall", "id": call.get("id", ""),
                                   "name": call.get("name", ""), "arguments": call.get("args", {})})
            message["content"] = blocks
        usage = fields.get("usage_metadata")
        if isinstance(usage, dict):
            inp, out = int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
            message["usage"] = {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0,
                                "totalTokens": int(usage.get("total_tokens") or inp + out)}
        meta = fields.get("response_metadata")
        if isinstance(meta, dict) and isinstance(meta.get("model_name") or meta.get("model"), str):
            message["model"] = meta.get("model_name") or meta.get("model")
    ms = epoch_ms(timestamp)
    if ms is not None:
        message["timestamp"] = ms
    message["langchain"] = rest
    return message


def message_key(fields: dict[str, Any]) -> str:
    mid = fields.get("id")
    body = json.dumps(plain({k: v for k, v in fields.items() if k != "id"}), sort_keys=True,
                      default=str)
    digest = hashlib.sha1(body.encode("utf-8", "replace")).hexdigest()[:16]
    return f"{mid}|{digest}" if isinstance(mid, str) and mid else digest


# ------------------------------------------------------------------ import
def open_readonly(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """A read-only connection to a LangGraph database; HeldFile (an OSError) for a link to a
    file of a store this process has open (SQLite would open it, and closing it drop the
    store's locks: `core.store.held_files`)."""
    from core.store.held_files import check_path

    check_path(path)
    uri = path.resolve().as_uri()
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM checkpoints LIMIT 1").fetchall()
        return conn, None
    except sqlite3.Error:
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)
        conn.execute("SELECT 1 FROM checkpoints LIMIT 1").fetchall()
        return conn, ("opened as immutable (the folder is read-only): changes still in its "
                      "write-ahead log may be missing")


def fingerprint(path: Path) -> str:
    """What changes when the database gains checkpoints or writes, asked through SQLite: the
    file may be a live database (never read with plain file I/O), and writes still in its
    WAL change neither the main file's size nor its time."""
    try:
        conn, _note = open_readonly(path)
    except sqlite3.Error:
        return ""
    try:
        parts = [conn.execute("SELECT COUNT(*), MAX(checkpoint_id) FROM checkpoints").fetchone()]
        try:
            parts.append(conn.execute("SELECT COUNT(*) FROM writes").fetchone())
        except sqlite3.Error:
            pass  # no writes table
        return hashlib.sha1(repr(parts).encode()).hexdigest()
    except sqlite3.Error:
        return ""
    finally:
        conn.close()


def import_file(store, path: Path, result: FileResult, ticker: ProgressTicker) -> None:
    try:
        source, note = open_readonly(path)
    except sqlite3.Error as error:
        result.status, result.error = "failed", f"cannot open the LangGraph database ({error})"
        return
    if note:
        result.skip(None, note)
    try:
        columns = {row[1] for row in source.execute("PRAGMA table_info(checkpoints)")}
        needed = {"thread_id", "checkpoint_id", "parent_checkpoint_id", "checkpoint"}
        if not needed <= columns:
            result.status = "not-a-log"
            result.error = "a checkpoints table without LangGraph's columns"
            return
        has_ns = "checkpoint_ns" in columns
        ns_expr = "checkpoint_ns" if has_ns else "''"
        threads = source.execute(
            f"SELECT thread_id, {ns_expr}, COUNT(*) FROM checkpoints GROUP BY thread_id, {ns_expr}"
            f" ORDER BY MIN(checkpoint_id)").fetchall()
        total = sum(t[2] for t in threads) or 1
        ticker.total = total
        done = 0
        db_tag = short_hash(str(path.resolve()), 8)
        for thread_id, ns, count in threads:
            _import_thread(store, source, path, result, str(thread_id), str(ns or ""), db_tag,
                           has_ns, columns)
            done += count
            ticker(done)
            result.lines += count
        if not threads:
            result.status = "not-a-log"
            result.error = "a LangGraph database without checkpoints"
    finally:
        source.close()


def _import_thread(store, source: sqlite3.Connection, path: Path, result: FileResult,
                   thread_id: str, ns: str, db_tag: str, has_ns: bool, columns: set[str]) -> None:
    type_col = "type" if "type" in columns else "'msgpack'"
    meta_col = "metadata" if "metadata" in columns else "NULL"
    where = "thread_id = ? AND checkpoint_ns = ?" if has_ns else "thread_id = ?"
    args = (thread_id, ns) if has_ns else (thread_id,)
    rows = source.execute(
        f"SELECT checkpoint_id, parent_checkpoint_id, {type_col}, checkpoint, {meta_col}"
        f" FROM checkpoints WHERE {where} ORDER BY checkpoint_id", args).fetchall()
    # (one thread's checkpoints; each blob is decoded once and dropped after its messages
    # are planned)
    where_label = f"thread {thread_id}" + (f" namespace {ns}" if ns else "")
    ids = [str(r[0]) for r in rows]
    index = {cid: i for i, cid in enumerate(ids)}
    parents: list[int | None] = []
    for r in rows:
        p = index.get(str(r[1])) if r[1] is not None else None
        parents.append(p)
    # Decode each checkpoint.
    decoded: list[dict[str, Any] | None] = []
    metas: list[dict[str, Any]] = []
    blobs: list[tuple[Any, Any] | None] = []

    def decode(i: int) -> dict[str, Any] | None:
        """Checkpoint i, decoded when its turn comes (its blob is then let go)."""
        kind, blob = blobs[i] or (None, None)
        blobs[i] = None
        try:
            value = decode_blob(kind, blob)
        except UndecodableBlob as error:
            result.skip(None, f"{where_label} checkpoint {ids[i]}: {error} (kept as a bare tag)")
            return None
        if not isinstance(value, dict):
            result.skip(None, f"{where_label} checkpoint {ids[i]}: not a checkpoint object")
            return None
        return value

    for r in rows:
        blobs.append((r[2], r[3]))
        decoded.append(None)
        meta = {}
        if r[4] is not None:
            try:
                raw_meta = r[4].decode("utf-8") if isinstance(r[4], (bytes, bytearray)) else str(r[4])
                meta = plain(json.loads(raw_meta))   # (plain: no deeper than it keeps)
            except RecursionError:
                meta = {"_unreadable": "metadata nested too deeply to read"}
                result.skip(None, f"{where_label} checkpoint {r[0]}: its metadata is nested too "
                                  "deeply to read (the checkpoint is imported without it)")
            except (ValueError, UnicodeDecodeError):
                try:
                    meta = plain(decode_blob("msgpack", r[4]))
                except UndecodableBlob:
                    meta = {"_raw": plain(r[4])}
        metas.append(meta if isinstance(meta, dict) else {"value": meta})
    del rows
    pending_writes: dict[str, list[dict[str, Any]]] = {}
    try:
        wcols = {row[1] for row in source.execute("PRAGMA table_info(writes)")}
        if {"checkpoint_id", "channel", "value"} <= wcols:
            wtype = "type" if "type" in wcols else "'msgpack'"
            for cid, task, idx, channel, kind, value in source.execute(
                    f"SELECT checkpoint_id, task_id, idx, channel, {wtype}, value FROM writes"
                    f" WHERE {where} ORDER BY checkpoint_id, task_id, idx", args):
                try:
                    decoded_value = plain(decode_blob(kind, value))
                except UndecodableBlob as error:
                    decoded_value = {"_undecodable": str(error)}
                pending_writes.setdefault(str(cid), []).append(
                    {"task_id": task, "idx": idx, "channel": channel, "value": decoded_value})
    except sqlite3.Error:
        pass

    # Plan the entries: per checkpoint the message keys and entry ids of its messages.
    plan: list[tuple[str, str | None, str, dict[str, Any], Any]] = []  # id, parent, type, data, ts
    planned_ids: set[str] = set()
    anchor: list[str | None] = [None] * len(ids)
    keys_of: list[list[str]] = [[] for _ in ids]
    ids_of: list[list[str]] = [[] for _ in ids]
    states: list[dict[str, Any]] = [{} for _ in ids]
    stamps: list[Any] = [None] * len(ids)
    root_id = "thread"
    first_ts = None
    title = ""

    def visit(i: int) -> None:
        nonlocal first_ts, title
        checkpoint = decode(i) or {}
        stamp = timestamp_of(checkpoint.get("ts")) or (stamps[parents[i]] if parents[i] is not None
                                                        else None)
        stamps[i] = stamp
        if stamp is not None and (first_ts is None or stamp < first_ts):
            first_ts = stamp
        values = checkpoint.get("channel_values") if isinstance(checkpoint.get("channel_values"),
                                                               dict) else {}
        states[i] = {k: plain(v) for k, v in values.items() if k != "messages"}
        p = parents[i]
        base_keys = keys_of[p] if p is not None else []
        base_ids = ids_of[p] if p is not None else []
        if "messages" in values and isinstance(values["messages"], list):
            fields_list = [message_fields(m) for m in values["messages"]]
        else:
            keys_of[i], ids_of[i] = base_keys, base_ids
            anchor[i] = base_ids[-1] if base_ids else (anchor[p] if p is not None else root_id)
            decoded[i] = {"ts": checkpoint.get("ts")}
            return
        keys: list[str] = []
        entry_ids: list[str] = []
        common = 0
        for position, fields in enumerate(fields_list):
            raw = values["messages"][position]
            fields = fields if fields is not None else {"type": "unknown", "content": plain(raw),
                                                        "_class": "Unknown"}
            key = message_key(fields)
            keys.append(key)
            if position == common and position < len(base_keys) and base_keys[position] == key:
                entry_ids.append(base_ids[position])
                common += 1
                continue
            mid = fields.get("id") if isinstance(fields.get("id"), str) and fields.get("id") \
                else f"m{position}"
            entry_id = mid if mid not in planned_ids else f"{mid}@{ids[i]}"
            parent_id = entry_ids[-1] if entry_ids else root_id
            planned_ids.add(entry_id)
            message = convert_message(fields, stamp)
            message.setdefault("langchain", {})["checkpoint_id"] = ids[i]
            plan.append((entry_id, parent_id, MESSAGE, {"message": message}, stamp))
            entry_ids.append(entry_id)
            if not title and message.get("role") == "user":
                from core.model.entries import content_text

                title = title_from_text(content_text(message.get("content")))
        keys_of[i], ids_of[i] = keys, entry_ids
        anchor[i] = entry_ids[-1] if entry_ids else root_id
        decoded[i] = {"ts": checkpoint.get("ts")}   # the messages are in the plan now

    broken = processing_order(parents, visit)
    for i in broken:
        result.skip(None, f"{where_label} checkpoint {ids[i]}: parent cycle, made a root")
    # Leaf checkpoints that add nothing of their own still get a branch, except a run's
    # input checkpoint: a leaf only until the run's next checkpoint (its input, in its
    # writes, becomes that one's messages), so a marker for it would outlive it in a store
    # that followed the database (nothing is deleted) and that a whole import of the
    # finished database does not make. Its tag goes on the entry its messages end at.
    children_count: dict[str | None, int] = {}
    for entry_id, parent_id, *_ in plan:
        children_count[parent_id] = children_count.get(parent_id, 0) + 1
    has_kids = {p for p in parents if p is not None}
    leaf_entry: dict[int, str] = {}
    claimed: set[str] = set()
    for i in range(len(ids)):
        if i in has_kids:
            continue
        entry = anchor[i] or root_id
        if children_count.get(entry) or entry in claimed:
            if metas[i].get("source") == "input":
                continue
            marker = f"checkpoint:{ids[i]}"
            plan.append((marker, entry, CUSTOM,
                         {"customType": "langgraph:checkpoint",
                          "data": {"checkpoint_id": ids[i], "state": states[i],
                                   "metadata": plain(metas[i])}}, stamps[i]))
            children_count[entry] = children_count.get(entry, 0) + 1
            entry = marker
            anchor[i] = marker
        claimed.add(entry)
        leaf_entry[i] = entry

    uid = f"{FORMAT}:{thread_id}" + (f":{ns}" if ns else "") + f"@{db_tag}"
    untitled = f"thread {thread_id}"
    name = title or untitled
    if ns:  # "node:task_id", nested ones joined by "|": name the innermost node
        inner = f" · sub-graph {ns.split('|')[-1].split(':')[0]}"
        untitled, name = untitled + inner, name + inner
    metadata = {"format": FORMAT, "path": str(path), "thread_id": thread_id, "checkpoint_ns": ns,
                "checkpoints": len(ids)}
    created_at = first_ts or file_mtime(path)
    parent_uid = None
    if ns:
        parent_uid = f"{FORMAT}:{thread_id}@{db_tag}"
    target = SessionTarget(store, uid=uid, name=name, source=FORMAT, metadata=metadata,
                           created_at=created_at, kind="subgraph" if ns else "session",
                           parent_session=parent_uid)
    root_seq, _ = target.add(root_id, None, SESSION_INFO,
                             {"name": f"LangGraph thread {thread_id}" + (f" ({ns})" if ns else ""),
                              "langgraph": {"thread_id": thread_id, "checkpoint_ns": ns}},
                             created_at)
    for entry_id, parent_id, entry_type, data, stamp in plan:
        parent_seq = target.seq_of(parent_id)
        target.add(entry_id, parent_seq, entry_type, data, stamp or created_at)
    newest_leaf_ckpt = max(leaf_entry, key=lambda i: ids[i]) if leaf_entry else None
    state_by_seq = {target.seq_of(e): states[i] for i, e in leaf_entry.items()}
    meta_by_seq = {target.seq_of(e): {"checkpoint_id": ids[i]} for i, e in leaf_entry.items()}

    def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
        text = first_text_title(store, path_, 40)
        if fork is None:
            return "main" if not store.branches.of_session(target.id) else (text or "root")
        return text or "branch"

    target.flush()
    sync = sync_branches(
        store, target.id, key_prefix=f"{FORMAT}:{uid}",
        newest_leaf=target.seq_of(leaf_entry[newest_leaf_ckpt]) if newest_leaf_ckpt is not None
        else None,
        name_for=name_for, state_for=lambda seq: state_by_seq.get(seq),
        meta_for=lambda seq: meta_by_seq.get(seq))
    target.result.branches_added = sync.added
    # Checkpoints (tags), once each.
    existing = store.annotations.checkpoint_metadata_values(target.id, "checkpoint_id")
    for i, cid in enumerate(ids):
        if cid in existing:
            continue
        seq = target.seq_of(anchor[i] or root_id) or root_seq
        branch = sync.owner_of(seq)
        if branch is None:
            continue
        meta = metas[i]
        step = meta.get("step") if isinstance(meta, dict) else None
        source_kind = meta.get("source") if isinstance(meta, dict) else None
        label = f"step {step}" if step is not None else "checkpoint"
        if source_kind:
            label += f" ({source_kind})"
        info = {"checkpoint_id": cid, "parent_checkpoint_id": ids[parents[i]] if parents[i] is not None
                else None, "thread_id": thread_id, "checkpoint_ns": ns, "metadata": plain(meta),
                "ts": (decoded[i] or {}).get("ts")}
        if pending_writes.get(cid):
            info["pending_writes"] = pending_writes[cid]
        store.annotations.create_checkpoint(branch, label, entry_seq=seq, session_state=states[i],
                                is_auto=True, metadata=info, created_at=stamps[i] or created_at)
    if name != untitled and not target.result.created and \
            store.sessions.name(target.id) == untitled:
        # named before its first message was written (a followed thread): named now as a
        # whole import names it, unless someone renamed it meanwhile
        store.sessions.rename(target.id, name)
    result.sessions.append(target.finish(name=name))
