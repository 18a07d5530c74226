"""`ArborSaver`: a LangGraph checkpointer that writes into an arbor store.

A thread is a session, each checkpoint an entry on a branch (with the new messages of its
`messages` channel before it as message entries) and an arbor checkpoint there carrying
the channel values; forks are branches (see `threads` for where each checkpoint goes and
which one a thread resumes from). What LangGraph needs back exactly is kept beside it:
the checkpoint as the saver's serializer wrote it, its metadata, and the pending writes
of each checkpoint. Pickle is never written nor read.

Each `put`, `put_writes`, `delete_thread` and `copy_thread` is one transaction of the
store, durable when it returns; LangGraph writes a step's pending writes before the
checkpoint that follows them, so a process killed between the two leaves the previous
checkpoint with the writes of the tasks that finished, and a resumed run applies those
and runs only the tasks that had not.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions,
                                      Checkpoint, CheckpointMetadata, CheckpointTuple,
                                      get_checkpoint_id, get_serializable_checkpoint_metadata)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from core.model.entries import CUSTOM, content_text
from core.importing.base import title_from_text
from core.agents.langgraph.importer import plain
from core.store import LangGraphCheckpoint, Store, open_store
from . import threads
from .messages import MessageKeys, as_arbor_message, chain_digest, common_prefix

PAGE = 64          # checkpoints read per query while listing
_END = object()


class PickleRefused(ValueError):
    """A serializer that would write (or a stored value that needs) pickle."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _plain_value(value: Any, depth: int = 0) -> Any:
    """A channel value as JSON-safe data: pydantic models (LangChain messages among them)
    by their fields, not their repr (slow, and unreadable in the app)."""
    if depth > 32:
        return plain(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            fields = dump()
        except Exception:  # noqa: BLE001 - a model that cannot dump itself is shown as text
            return plain(value)
        if isinstance(fields, dict):
            return {"_type": type(value).__name__, **plain(fields)}
    if isinstance(value, dict):
        return {str(k): _plain_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_value(v, depth + 1) for v in value]
    return plain(value)


class ArborSaver(BaseCheckpointSaver[int]):
    """Checkpoints of LangGraph agents as arbor sessions, branches and checkpoints.

    `store`: an open arbor store (`core.open_store(path_or_url)`); None opens the default
    one (`$ARBOR_DB`, else the user data folder) and closes it with `close()`.
    `messages_channel`: the channel whose messages become message entries.
    """

    def __init__(self, store: Store | None = None, *, serde: SerializerProtocol | None = None,
                 messages_channel: str = "messages") -> None:
        super().__init__(serde=serde or JsonPlusSerializer())
        inner = getattr(self.serde, "serde", self.serde)  # (the typed wrapper, if any)
        for candidate in (self.serde, inner):
            if getattr(candidate, "pickle_fallback", False):
                raise PickleRefused("arbor never stores pickled data: use a serializer "
                                    "without pickle_fallback")
        self._own_store = store is None
        self.store = store if store is not None else open_store()
        self.messages_channel = messages_channel
        self._keys = MessageKeys()

    # ------------------------------------------------------------------ opening
    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str | None = None, **options: Any
                         ) -> Iterator["ArborSaver"]:
        """A saver over the store at a path (or a `postgresql://` URL where that backend
        is installed); the store is closed when the block ends."""
        store = open_store(conn_string)
        saver = cls(store, **options)
        saver._own_store = True
        try:
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        if self._own_store:
            self.store.close()

    # --------------------------------------------------------- serialization
    def _dumps(self, value: Any) -> tuple[str, bytes]:
        kind, data = self.serde.dumps_typed(value)
        if kind == "pickle":
            raise PickleRefused("the serializer chose pickle; arbor never stores pickled data")
        return kind, data

    def _loads(self, kind: str | None, data: bytes | None) -> Any:
        if kind == "pickle":
            raise PickleRefused("a stored value is pickled; arbor never loads pickle")
        return self.serde.loads_typed((kind, data))

    # -------------------------------------------------------------- reading
    def _tuple(self, row: LangGraphCheckpoint, *, writes: bool = True) -> CheckpointTuple:
        config: RunnableConfig = {"configurable": {
            "thread_id": row.thread_id, "checkpoint_ns": row.checkpoint_ns,
            "checkpoint_id": row.checkpoint_id}}
        parent: RunnableConfig | None = None
        if row.parent_checkpoint_id:
            parent = {"configurable": {"thread_id": row.thread_id,
                                       "checkpoint_ns": row.checkpoint_ns,
                                       "checkpoint_id": row.parent_checkpoint_id}}
        pending = [(task_id, channel, self._loads(kind, value)) for task_id, channel, kind, value
                   in self.store.langgraph.writes(row.external_session_id, row.checkpoint_id)
                   ] if writes else []
        return CheckpointTuple(config, self._loads(row.type, row.blob), json.loads(row.metadata),
                               parent, pending)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint the config names; without a `checkpoint_id`, the one the thread
        resumes from: its current branch's (a roll back in the app moves it).

        Resumed from, a checkpoint that another checkpoint already continued (the current
        branch was rolled back to it) comes without its pending writes: they are what the
        branch left behind was made of, and the tasks due after it run again. A checkpoint
        nothing continued yet keeps them (the tasks that finished before a crash are not
        run again)."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "") or ""
        store = self.store
        with store.reading():
            thread = threads.find_thread(store, thread_id, ns)
            if thread is None:
                return None
            checkpoint_id = get_checkpoint_id(config)
            if checkpoint_id:
                row = store.langgraph.checkpoint(thread.session_id, str(checkpoint_id))
                return self._tuple(row) if row is not None else None
            row = threads.resume_point(store, thread)
            if row is None:
                return None
            return self._tuple(row, writes=not store.langgraph.checkpoint_continued(
                row.external_session_id, row.checkpoint_id))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None
             ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (by id, as LangGraph's savers list them, whatever the
        branch), of a thread's namespace (of all of its namespaces when the config names
        none; of every thread for None), before a checkpoint, matching metadata."""
        store = self.store
        sessions: list[int] | None = None
        only_id = None
        if config is not None:
            conf = config.get("configurable", {})
            thread_id = str(conf["thread_id"]) if conf.get("thread_id") is not None else None
            if thread_id is not None:
                if "checkpoint_ns" in conf:
                    found = store.langgraph.session(thread_id, conf.get("checkpoint_ns") or "")
                    sessions = [found] if found is not None else []
                else:
                    sessions = [sid for _ns, sid in store.langgraph.sessions(thread_id)]
            only_id = conf.get("checkpoint_id")
        if sessions is not None and not sessions:
            return
        after: tuple[str, int] | None = None
        if before is not None and get_checkpoint_id(before):
            after = (str(get_checkpoint_id(before)), -1)  # strictly older ids
        left = limit if limit is not None else None
        if left is not None and left <= 0:
            return
        while True:
            size = PAGE if filter or only_id or left is None else max(1, min(PAGE, left))
            page = store.langgraph.checkpoint_page(sessions, after=after, size=size)
            for row in page:
                if only_id is not None and row.checkpoint_id != only_id:
                    continue
                if filter:
                    metadata = json.loads(row.metadata)
                    if any(key not in metadata or metadata[key] != value
                           for key, value in filter.items()):
                        continue
                yield self._tuple(row)
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return
            if len(page) < size:
                return
            last = page[-1]
            after = (last.checkpoint_id, last.external_session_id)

    # -------------------------------------------------------------- writing
    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        """Store a checkpoint: its new messages and an entry for it on its branch, an arbor
        checkpoint there, and what LangGraph reads back. One transaction."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "") or ""
        parent_id = conf.get("checkpoint_id")
        kind, blob = self._dumps(checkpoint)
        meta = get_serializable_checkpoint_metadata(config, metadata)
        meta_text = _json(meta)
        values = checkpoint.get("channel_values") or {}
        messages = values.get(self.messages_channel)
        keys = self._keys.keys(messages) if isinstance(messages, list) else None
        result: RunnableConfig = {"configurable": {
            "thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}
        store = self.store
        with store.transaction():
            parents = meta.get("parents") if isinstance(meta.get("parents"), dict) else {}
            thread = threads.open_thread(store, thread_id, ns,
                                         spawned_at=parents.get(threads.parent_namespace(ns)))
            if store.langgraph.checkpoint(thread.session_id, checkpoint["id"]) is not None:
                store.langgraph.rewrite_checkpoint(thread.session_id, checkpoint["id"], type=kind,
                                                   blob=blob, metadata=meta_text)
                return result
            parent = store.langgraph.checkpoint(thread.session_id, str(parent_id)) \
                if parent_id else None
            step, source = meta.get("step"), meta.get("source")
            new, count, digest, dropped = self._new_messages(parent, messages, keys)
            stamp = checkpoint.get("ts")
            converted = [as_arbor_message(m, stamp) for m in new]
            branch_id, held = threads.branch_for(
                store, thread, parent, converted,
                name=f"{source or 'fork'} at step {step}" if step is not None else "fork")
            if converted[held:]:
                store.entries.append_messages(branch_id, converted[held:])
                if not ns:
                    self._name_thread(thread, thread_id, converted)
            info = {"checkpoint_id": checkpoint["id"], "parent_checkpoint_id": parent_id,
                    "step": step, "source": source}
            if dropped:
                info["messages_replaced"] = dropped
            entry = store.entries.append_to_branch(branch_id, CUSTOM, {
                "customType": threads.CHECKPOINT_TYPE, "data": info}, timestamp=stamp)
            label = f"step {step}" if step is not None else "checkpoint"
            if source:
                label += f" ({source})"
            tag = store.annotations.create_checkpoint(
                branch_id, label, entry_seq=entry.seq, session_state=self._state_view(values),
                is_auto=True, created_at=stamp, metadata={
                    "checkpoint_id": checkpoint["id"], "parent_checkpoint_id": parent_id,
                    "thread_id": thread_id, "checkpoint_ns": ns, "metadata": plain(meta),
                    "ts": stamp, "writer": "arbor checkpointer"})
            store.langgraph.add_checkpoint(
                thread.session_id, checkpoint["id"], parent_checkpoint_id=parent_id,
                checkpoint_ref=tag.id, entry_seq=entry.seq, type=kind, blob=blob,
                metadata=meta_text, messages=count, messages_digest=digest)
        return result

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        """Keep a task's writes with the checkpoint they follow. One transaction."""
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "") or ""
        rows = [(task_id, WRITES_IDX_MAP.get(channel, index), task_path, channel,
                 *self._dumps(value)) for index, (channel, value) in enumerate(writes)]
        replace = all(channel in WRITES_IDX_MAP for channel, _value in writes)
        store = self.store
        with store.transaction():
            thread = threads.open_thread(store, thread_id, ns)
            store.langgraph.put_writes(thread.session_id, str(conf["checkpoint_id"]), rows,
                                       replace=replace)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's sessions (every namespace) with all they hold. Explicit, as
        every deletion in arbor is: nothing else LangGraph does deletes history."""
        store = self.store
        with store.transaction():
            for _ns, session_id in store.langgraph.sessions(str(thread_id)):
                store.sessions.delete(session_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Every checkpoint (every namespace, every branch) and pending write of a thread,
        written again as another thread; its current branch is current in the copy too."""
        store = self.store
        source, target = str(source_thread_id), str(target_thread_id)
        with store.transaction():
            for ns, session_id in store.langgraph.sessions(source):
                copied = None
                for row in store.langgraph.checkpoints_in_order(session_id):
                    config: RunnableConfig = {"configurable": {
                        "thread_id": target, "checkpoint_ns": ns,
                        "checkpoint_id": row.parent_checkpoint_id}}
                    self.put(config, self._loads(row.type, row.blob), json.loads(row.metadata), {})
                    copied = copied or store.langgraph.session(target, ns)
                if copied is None:
                    continue
                store.langgraph.copy_writes(session_id, copied)
                head = threads.resume_point(store, threads.find_thread(store, source, ns))
                if head is not None:
                    twin = store.langgraph.checkpoint(copied, head.checkpoint_id)
                    for branch_id, branch_head in store.branches.heads(copied):
                        if twin is not None and branch_head == twin.entry_seq:
                            store.branches.set_current(branch_id)
                            break

    # -------------------------------------------------------------- helpers
    def _new_messages(self, parent: LangGraphCheckpoint | None, messages: Any,
                      keys: list[str] | None) -> tuple[list[Any], int, str, int]:
        """(messages to write as entries, how many the checkpoint holds, their digest, how
        many of the parent's it no longer holds)."""
        if keys is None:  # no messages channel in this checkpoint: the parent's stand
            if parent is None:
                return [], 0, "", 0
            return [], parent.messages, parent.messages_digest, 0
        base = parent.messages if parent is not None else 0
        digest, at = chain_digest(keys, base if base <= len(keys) else None)
        if parent is None or base == 0 or (at is not None and at == parent.messages_digest):
            return list(messages[base:]), len(keys), digest, 0
        # The list was rewritten: compare with the parent's own messages.
        before = self._loads(parent.type, parent.blob).get("channel_values", {}).get(
            self.messages_channel)
        old = self._keys.keys(before) if isinstance(before, list) else []
        same = common_prefix(old, keys)
        return list(messages[same:]), len(keys), digest, len(old) - same

    def _name_thread(self, thread: threads.Thread, thread_id: str,
                     messages: list[dict[str, Any]]) -> None:
        """Name the session from its first human message (unless it has another name)."""
        store = self.store
        first = next((m for m in messages if m.get("role") == "user"), None)
        if first is None or store.sessions.name(thread.session_id) != \
                threads.placeholder_name(thread_id):
            return
        text = title_from_text(content_text(first.get("content")))
        if text:
            store.sessions.rename(thread.session_id, text)

    @staticmethod
    def _state_view(values: dict[str, Any]) -> dict[str, Any]:
        """The channel values as plain data for the app and for a roll back's restored state
        (messages are entries; LangGraph's own trigger channels are left out; the exact
        values are in the stored checkpoint)."""
        return {str(k): _plain_value(v) for k, v in values.items()
                if k != "messages" and not str(k).startswith(("branch:", "__"))}

    # ----------------------------------------------------------------- async
    # The store's calls are short and run in a worker thread, never on the event loop.
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        found = self.list(config, filter=filter, before=before, limit=limit)
        while True:
            item = await asyncio.to_thread(next, found, _END)
            if item is _END:
                return
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)
