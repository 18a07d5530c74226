"""Labels (the newest label of a target wins; an empty one clears it) and
checkpoints (tags: a named entry and a snapshot of the branch's state)."""

from __future__ import annotations

import re

from core.model.clock import parse, to_text
from core.model.errors import NotFound
from core.seed.models import Checkpoint, LazyHistory

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms)


from core.store.records import _loads, _dumps
from . import Room


class AnnotationsRoom(Room):
    def add_label(self, external_session_id: int, label: str | None, *, target_seq: int | None = None,
                  target_branch: int | None = None, entry_seq: int | None = None,
                  created_at: Any = None) -> None:
        """Record a label; None or "" clears the target's label. The log keeps every change."""
        if (target_seq is None) == (target_branch is None):
            raise ValueError("a label targets exactly one entry or one branch")
        text = (label or "").strip() or None
        with self.transaction() as conn:
            conn.execute(self._sql.LABEL_INSERT,
                         (external_session_id, target_seq, target_branch, text, entry_seq,
                          to_text(created_at if created_at is not None else self._store.clock())))

    def label_log(self, external_session_id: int) -> list[dict[str, Any]]:
        """Every label change of a session, oldest first: label (None: cleared), at, the
        target entry's id or the target branch's id, the label entry's id."""
        return [{"label": r[0], "at": r[1], "target_entry": r[2], "target_branch": r[3],
                 "label_entry": r[4]}
                for r in self._all(self._sql.LABEL_LOG, (external_session_id,))]

    def _current_labels(self, sql: str, external_session_id: int) -> dict[int, str]:
        out: dict[int, str] = {}
        for target, label in self._all(sql, (external_session_id,)):
            if label is None:
                out.pop(target, None)
            else:
                out[target] = label
        return out

    def entry_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled entry of a session (seq -> label)."""
        return self._current_labels(self._sql.LABELS_OF_ENTRIES, external_session_id)

    def branch_labels(self, external_session_id: int) -> dict[int, str]:
        """The current label of each labelled branch of a session (internal id -> label)."""
        return self._current_labels(self._sql.LABELS_OF_BRANCHES, external_session_id)

    def _checkpoint_from_row(self, row) -> Checkpoint:
        (cid, ext, iid, entry_seq, name, state, auto, created, meta, tools, entry_id, hidden) = row
        checkpoint = Checkpoint(
            id=cid, internal_session_id=iid, checkpoint_name=name, session_state=_loads(state, {}),
            is_auto=bool(auto), created_at=parse(created), metadata=_loads(meta, {}),
            tool_invocations=_loads(tools, []), external_session_id=ext, entry_seq=entry_seq,
            entry_id=entry_id, is_hidden=bool(hidden))
        checkpoint.conversation_history = LazyHistory(
            lambda head=entry_seq: self._store.paths.replay(head).messages if head is not None else [])
        return checkpoint

    def _select_checkpoints(self, sql: str, args: tuple) -> list[Checkpoint]:
        with self.reading() as conn:
            return [self._checkpoint_from_row(row) for row in conn.execute(sql, args).fetchall()]

    def create_checkpoint(self, internal_session_id: int, checkpoint_name: str = "", *,
                          entry_seq: int | None = None, session_state: dict[str, Any] | None = None,
                          is_auto: bool = False, metadata: dict[str, Any] | None = None,
                          tool_invocations: list[dict[str, Any]] | None = None,
                          created_at: Any = None) -> Checkpoint:
        """Tag an entry (default: the branch's head) with a snapshot of the branch's state."""
        sql = self._sql
        with self.transaction() as conn:
            row = conn.execute(sql.INTERNAL_FOR_CHECKPOINT, (internal_session_id,)).fetchone()
            if row is None:
                raise NotFound(f"branch {internal_session_id} does not exist")
            self._store._check_own(conn, sql.ENTRY_SESSION_OF, entry_seq, row[0], "entry",
                            "a checkpoint's entry")
            state = session_state if session_state is not None else _loads(row[2], {})
            new_id = self._backend.inserted_id(conn.execute(
                sql.CHECKPOINT_INSERT,
                (row[0], internal_session_id, entry_seq if entry_seq is not None else row[1],
                 checkpoint_name, _dumps(state), 1 if is_auto else 0,
                 to_text(created_at if created_at is not None else self._store.clock()),
                 _dumps(metadata or {}), _dumps(tool_invocations or []))))
            conn.execute(sql.INTERNAL_COUNT_CHECKPOINT, (internal_session_id,))
            conn.execute(sql.EXTERNAL_COUNT_CHECKPOINT, (row[0],))
            return self.get_checkpoint(new_id)

    def set_checkpoint_hidden(self, checkpoint_id: int, hidden: bool) -> None:
        """Hide a checkpoint (or show it again); nothing is deleted."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.CHECKPOINT_SET_HIDDEN,
                                (1 if hidden else 0, checkpoint_id)).rowcount:
                raise NotFound(f"checkpoint {checkpoint_id} does not exist")

    def get_checkpoint(self, checkpoint_id: int) -> Checkpoint | None:
        found = self._select_checkpoints(self._sql.CHECKPOINT_BY_ID, (checkpoint_id,))
        return found[0] if found else None

    def checkpoints_of_branch(self, internal_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints(self._sql.CHECKPOINTS_OF_BRANCH, (internal_session_id,))

    def checkpoints_of_session(self, external_session_id: int) -> list[Checkpoint]:
        return self._select_checkpoints(self._sql.CHECKPOINTS_OF_SESSION, (external_session_id,))

    def checkpoint_metadata_values(self, external_session_id: int, key: str) -> set[Any]:
        """The values of `metadata[key]` over a session's checkpoints (a plain key)."""
        if not re.fullmatch(r"\w+", key):
            raise ValueError(f"not a plain metadata key: {key!r}")
        return {row[0] for row in self._all(self._sql.CHECKPOINT_METADATA_FIELD_OF_SESSION,
                                            (key, external_session_id))}

    def delete_checkpoint(self, checkpoint_id: int) -> bool:
        with self.transaction() as conn:
            return conn.execute(self._sql.CHECKPOINT_DELETE, (checkpoint_id,)).rowcount > 0
