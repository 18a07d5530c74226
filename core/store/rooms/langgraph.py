"""What arbor's LangGraph checkpointer keeps: threads, their checkpoints and
pending writes, beside the entries they became."""

from __future__ import annotations



TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms)


from core.store.records import LangGraphCheckpoint
from . import Room


class LangGraphRoom(Room):
    @staticmethod
    def _row(row) -> LangGraphCheckpoint:
        return LangGraphCheckpoint(row[0], row[1], row[2], row[3], row[4], row[5], bytes(row[6]),
                                   row[7], row[8], row[9], row[10], row[11])

    def session(self, thread_id: str, checkpoint_ns: str = "") -> int | None:
        """The session that holds a LangGraph thread's namespace (None: not in the store)."""
        row = self._one(self._sql.LANGGRAPH_THREAD_SESSION, (thread_id, checkpoint_ns))
        return row[0] if row else None

    def sessions(self, thread_id: str) -> list[tuple[str, int]]:
        """(namespace, session) of every namespace of a LangGraph thread, root first."""
        return [(row[1], row[2]) for row in self._all(self._sql.LANGGRAPH_THREAD_SESSIONS,
                                                      (thread_id,))]

    def thread_of(self, external_session_id: int) -> tuple[str, str] | None:
        """(thread id, namespace) of a session a LangGraph checkpointer writes (None: not one)."""
        row = self._one(self._sql.LANGGRAPH_THREAD_OF_SESSION, (external_session_id,))
        return (row[0], row[1]) if row else None

    def add_thread(self, thread_id: str, checkpoint_ns: str,
                   external_session_id: int) -> None:
        """Say that a session holds this LangGraph thread's namespace."""
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_THREAD_INSERT,
                         (thread_id, checkpoint_ns, external_session_id))

    def add_checkpoint(self, external_session_id: int, checkpoint_id: str, *,
                       parent_checkpoint_id: str | None, checkpoint_ref: int | None,
                       entry_seq: int | None, type: str, blob: bytes, metadata: str,
                       messages: int = 0, messages_digest: str = "") -> None:
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_CHECKPOINT_INSERT,
                         (external_session_id, checkpoint_id, parent_checkpoint_id, checkpoint_ref,
                          entry_seq, type, blob, metadata, messages, messages_digest))

    def rewrite_checkpoint(self, external_session_id: int, checkpoint_id: str, *,
                           type: str, blob: bytes, metadata: str) -> bool:
        """Replace what LangGraph stored for a checkpoint id it writes again (its entry and
        arbor checkpoint stay as they are)."""
        with self.transaction() as conn:
            return conn.execute(self._sql.LANGGRAPH_CHECKPOINT_REWRITE,
                                (type, blob, metadata, external_session_id,
                                 checkpoint_id)).rowcount > 0

    def checkpoint(self, external_session_id: int, checkpoint_id: str
                   ) -> LangGraphCheckpoint | None:
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_BY_ID, (external_session_id, checkpoint_id))
        return self._row(row) if row else None

    def checkpoint_at(self, entry_seq: int) -> LangGraphCheckpoint | None:
        """The LangGraph checkpoint whose entry this is (None: the entry is not one)."""
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_AT_ENTRY, (entry_seq,))
        return self._row(row) if row else None

    def checkpoint_continued(self, external_session_id: int, checkpoint_id: str) -> bool:
        """Whether another checkpoint of the session has this one as its parent."""
        return self._one(self._sql.LANGGRAPH_CHECKPOINT_HAS_CHILD,
                         (external_session_id, checkpoint_id)) is not None

    def newest_checkpoint(self, external_session_id: int) -> LangGraphCheckpoint | None:
        """The checkpoint of a session with the highest id (LangGraph's ids grow with time)."""
        row = self._one(self._sql.LANGGRAPH_CHECKPOINT_NEWEST, (external_session_id,))
        return self._row(row) if row else None

    def checkpoints_in_order(self, external_session_id: int) -> list[LangGraphCheckpoint]:
        """Every checkpoint of a session in the order they were written."""
        return [self._row(row) for row in
                self._all(self._sql.LANGGRAPH_CHECKPOINTS_IN_ORDER, (external_session_id,))]

    def checkpoint_page(self, sessions: list[int] | None, *,
                        after: tuple[str, int] | None = None, size: int = 64
                        ) -> list[LangGraphCheckpoint]:
        """Up to `size` checkpoints of these sessions (None: of every LangGraph session),
        newest id first, following the (checkpoint id, session) `after` when given. A long
        listing reads page by page, never holding the store between pages."""
        if sessions is not None and not sessions:
            return []
        args: list[Any] = list(sessions or [])
        if after is not None:
            args += [after[0], after[0], after[1]]
        args.append(int(size))
        sql = self._sql.langgraph_page(len(sessions) if sessions is not None else None,
                                       after is not None)
        return [self._row(row) for row in self._all(sql, args)]

    def put_writes(self, external_session_id: int, checkpoint_id: str,
                   rows: list[tuple[str, int, str, str, str | None, bytes | None]], *,
                   replace: bool) -> None:
        """Keep a task's pending writes with their checkpoint: rows of (task id, idx, task
        path, channel, type, value). A write already kept for (task id, idx) stays unless
        `replace` (LangGraph replaces its special writes: errors, interrupts)."""
        sql = self._sql.LANGGRAPH_WRITE_REPLACE if replace else self._sql.LANGGRAPH_WRITE_KEEP
        with self.transaction() as conn:
            self._backend.executemany(conn, sql, [(external_session_id, checkpoint_id, *row)
                                                  for row in rows])

    def writes(self, external_session_id: int, checkpoint_id: str
               ) -> list[tuple[str, str, str | None, bytes | None]]:
        """(task id, channel, type, value) of a checkpoint's pending writes, in the order
        LangGraph applies them (task path, task id, idx)."""
        return [(row[0], row[1], row[2], bytes(row[3]) if row[3] is not None else None)
                for row in self._all(self._sql.LANGGRAPH_WRITES_OF,
                                     (external_session_id, checkpoint_id))]

    def copy_writes(self, from_session: int, to_session: int) -> None:
        """Every pending write of one session's checkpoints, kept also for the same
        checkpoint ids of another."""
        with self.transaction() as conn:
            conn.execute(self._sql.LANGGRAPH_WRITES_COPY, (to_session, from_session))
