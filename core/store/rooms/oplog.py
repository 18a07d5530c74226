"""The operation log: every operation of the app with what it changed, for undo."""

from __future__ import annotations


from core.model.clock import to_text

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms)


from core.store.records import LoggedOperation, _operation_from_row, _dumps
from . import Room


class OperationLog(Room):
    def record(self, kind: str, external_session_id: int | None, description: str,
               changes: list[list[Any]], *, undoes: int | None = None) -> int:
        """Append one operation of the app (and what it changed) to the undo log."""
        with self.transaction() as conn:
            return self._backend.inserted_id(conn.execute(
                self._sql.OPLOG_INSERT,
                (kind, external_session_id, description, _dumps(changes), undoes,
                 to_text(self._store.clock()))))

    def last_undoable(self) -> LoggedOperation | None:
        """The newest operation that is not an undo and has not been undone."""
        row = self._one(self._sql.OPLOG_LAST_UNDOABLE)
        return _operation_from_row(row) if row else None

    def recent(self, limit: int = 100) -> list[LoggedOperation]:
        """The newest operations first (undos included)."""
        return [_operation_from_row(row) for row in self._all(self._sql.OPLOG_RECENT, (limit,))]
