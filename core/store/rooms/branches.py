"""Internal sessions: branches, each a named head entry, the branch it forked from
and where; the current one is HEAD. Moving a head is logged (the reflog)."""

from __future__ import annotations


from core.model.clock import parse, to_text
from core.model.errors import ArborError, NotFound

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms; nor the session models, made in `_from_row`)

    from core.seed.models import InternalSession


from core.store.records import _loads, _dumps
from . import Room


class BranchesRoom(Room):
    def _from_row(self, row) -> InternalSession:
        from core.seed.models import InternalSession, LazyHistory

        (iid, ext, lg, name, state, created, updated, current, cps, parent, bp_cp, fork_seq,
         head_seq, tools, meta, head_id, msg_index, fork_id, hidden) = row
        session = InternalSession(
            id=iid, external_session_id=ext, langgraph_session_id=lg,
            session_state=_loads(state, {}), created_at=parse(created), is_current=bool(current),
            checkpoint_count=cps, parent_session_id=parent, branch_point_checkpoint_id=bp_cp,
            tool_invocation_count=tools, metadata=_loads(meta, {}), name=name, head_seq=head_seq,
            head_id=head_id, fork_seq=fork_seq, fork_id=fork_id, message_count=msg_index or 0,
            updated_at=parse(updated), is_hidden=bool(hidden),
        )
        session.conversation_history = LazyHistory(
            lambda head=head_seq: self._store.paths.replay(head).messages if head is not None else [])
        return session

    def _select(self, sql: str, args: tuple) -> list[InternalSession]:
        with self.reading() as conn:
            return [self._from_row(row) for row in conn.execute(sql, args).fetchall()]

    def create(self, external_session_id: int, *, head_seq: int | None = None,
               fork_seq: int | None = None, parent_session_id: int | None = None,
               branch_point_checkpoint_id: int | None = None,
               session_state: dict[str, Any] | None = None, name: str = "",
               is_current: bool = True, metadata: dict[str, Any] | None = None,
               langgraph_session_id: str | None = None, created_at: Any = None,
               checkpoint_count: int = 0, tool_invocation_count: int = 0
               ) -> InternalSession:
        stamp = to_text(created_at if created_at is not None else self._store.clock())
        sql = self._sql
        with self.transaction() as conn:
            head = self._own_entry(conn, head_seq, external_session_id, "a branch's head")
            fork = self._own_entry(conn, fork_seq, external_session_id, "a branch's fork point")
            self._store._check_own(conn, sql.INTERNAL_SESSION_OF, parent_session_id, external_session_id,
                            "branch", "a branch's parent")
            self._store._check_own(conn, sql.CHECKPOINT_SESSION_OF, branch_point_checkpoint_id,
                            external_session_id, "checkpoint", "a branch's fork point")
            if is_current:
                conn.execute(sql.INTERNAL_CLEAR_CURRENT, (external_session_id,))
            state_text, metadata_text = _dumps(session_state or {}), _dumps(metadata or {})
            for _attempt in range(16):
                lg = langgraph_session_id or f"{self._store.id_factory()}{self._store.id_factory()}"
                try:
                    new_id = self._backend.insert_unless_taken(
                        conn, sql.INTERNAL_INSERT,
                        (external_session_id, lg, name, state_text, stamp, stamp,
                         1 if is_current else 0, checkpoint_count, parent_session_id,
                         branch_point_checkpoint_id, fork_seq, head_seq, tool_invocation_count,
                         metadata_text), "langgraph_session_id")
                except self._backend.errors as error:
                    raise ArborError(f"cannot create branch: {error}") from None
                if new_id is not None:
                    break
                if langgraph_session_id:
                    raise ArborError(f"cannot create branch: the branch key {lg!r} is taken")
            conn.execute(sql.EXTERNAL_TOUCH, (stamp, external_session_id))
            made = self._link.made
            made[("branch", new_id)] = external_session_id
            session = made.get(("session", external_session_id))
            if session is not None:
                session[2] += 1   # (branches it has)
            if (head_seq is not None and head is None) or (fork_seq is not None and fork is None):
                return self.get(new_id)
            # what reading the row back gives, without reading it (the head's id and message
            # index, the fork's id: from the entries' rows this transaction read)
            return self._from_row(
                (new_id, external_session_id, str(lg), str(name), state_text, stamp, stamp,
                 1 if is_current else 0, int(checkpoint_count), parent_session_id,
                 branch_point_checkpoint_id, fork_seq, head_seq, int(tool_invocation_count),
                 metadata_text, head and head[1], head and head[8], fork and fork[1], 0))

    def _own_entry(self, conn: Any, seq: int | None, external_session_id: int, role: str
                   ) -> tuple | None:
        """Refuse (as `_check_own`) an entry a branch points at unless it is one of the
        session's; its row when this transaction has read it (else None: only its session
        is read, not its data)."""
        if seq is None:
            return None
        row = self._link.made.get(("entry", seq))
        if row is None:
            self._store._check_own(conn, self._sql.ENTRY_SESSION_OF, seq, external_session_id, "entry",
                            role)
        elif row[2] != external_session_id:
            raise ArborError(f"entry {seq} belongs to another session; {role} must be one of "
                             f"session {external_session_id}")
        return row

    def get(self, internal_session_id: int) -> InternalSession | None:
        found = self._select(self._sql.INTERNAL_BY_ID, (internal_session_id,))
        return found[0] if found else None

    def by_key(self, langgraph_session_id: str) -> InternalSession | None:
        found = self._select(self._sql.INTERNAL_BY_LANGGRAPH_ID, (langgraph_session_id,))
        return found[0] if found else None

    def of_session(self, external_session_id: int, *, newest_first: bool = True
                   ) -> list[InternalSession]:
        sql = self._sql.INTERNAL_OF_SESSION_NEWEST_FIRST if newest_first \
            else self._sql.INTERNAL_OF_SESSION
        return self._select(sql, (external_session_id,))

    def children(self, parent_session_id: int) -> list[InternalSession]:
        return self._select(self._sql.INTERNAL_CHILDREN, (parent_session_id,))

    def current(self, external_session_id: int) -> InternalSession | None:
        found = self._select(self._sql.INTERNAL_CURRENT, (external_session_id,))
        return found[0] if found else None

    def heads(self, external_session_id: int) -> list[tuple[int, int | None]]:
        """(branch id, head seq) of every branch of a session, oldest branch first."""
        made = self._store._made("session", external_session_id)
        if made is not None and not made[2]:
            return []   # (made by this transaction, which has given it no branch yet)
        return [(row[0], row[1]) for row in self._all(self._sql.INTERNAL_HEADS, (external_session_id,))]

    def key_taken(self, langgraph_session_id: str) -> bool:
        """Whether a branch of any session has this key (`langgraph_session_id`)."""
        return self._one(self._sql.INTERNAL_KEY_TAKEN, (langgraph_session_id,)) is not None

    def add_tool_calls_to_current(self, external_session_id: int, count: int) -> None:
        """Count tool calls into the session's current branch."""
        with self.transaction() as conn:
            conn.execute(self._sql.INTERNAL_ADD_TOOL_CALLS_TO_CURRENT, (count, external_session_id))

    def current_id(self, external_session_id: int) -> int | None:
        """The id of the session's current branch (None: it has none)."""
        row = self._one(self._sql.INTERNAL_CURRENT_ID, (external_session_id,))
        return row[0] if row else None

    def count(self, external_session_id: int) -> int:
        return self._one(self._sql.INTERNAL_COUNT, (external_session_id,))[0]

    def set_current(self, internal_session_id: int) -> bool:
        sql = self._sql
        with self.transaction() as conn:
            session = self._link.made.get(("branch", internal_session_id))
            if session is None:
                row = conn.execute(sql.INTERNAL_SESSION_OF, (internal_session_id,)).fetchone()
                if row is None:
                    return False
                session = row[0]
            conn.execute(sql.INTERNAL_CLEAR_OTHER_CURRENT, (session, internal_session_id))
            conn.execute(sql.INTERNAL_SET_CURRENT, (internal_session_id,))
            return True

    def unset_current(self, internal_session_id: int) -> bool:
        """Make a branch not current (its session then has no current branch until one is set)."""
        with self.transaction() as conn:
            return conn.execute(self._sql.INTERNAL_UNSET_CURRENT, (internal_session_id,)).rowcount > 0

    def update_fields(self, internal_session_id: int, **fields: Any) -> bool:
        """Update stored fields of a branch (state, counters, metadata, name); not its history."""
        convert = {"session_state": _dumps, "metadata": _dumps, "checkpoint_count": int,
                   "name": str, "tool_invocation_count": int}
        names = [name for name in fields if convert[name]]
        args = [convert[name](fields[name]) for name in names]
        names.append("updated_at")
        args.append(to_text(self._store.clock()))
        with self.transaction() as conn:
            cursor = conn.execute(self._sql.update_internal_fields(names),
                                  (*args, internal_session_id))
            return cursor.rowcount > 0

    def delete(self, internal_session_id: int) -> bool:
        """Remove a branch pointer. Its entries stay (they are history)."""
        with self.transaction() as conn:
            made = self._link.made
            session = made.pop(("branch", internal_session_id), None)
            if session is not None and ("session", session) in made:
                made.pop(("session", session))   # (its branches are read again)
            return conn.execute(self._sql.INTERNAL_DELETE, (internal_session_id,)).rowcount > 0

    def move_head(self, internal_session_id: int, head_seq: int | None, *, reason: str = "") -> None:
        """Point a branch at another entry; a move that is not a plain append is logged."""
        sql = self._sql
        with self.transaction() as conn:
            external_session_id, old_head = self._store.entries._branch_target(conn, internal_session_id)
            self._store._check_own(conn, sql.ENTRY_SESSION_OF, head_seq, external_session_id, "entry",
                            "a branch's head")
            conn.execute(sql.INTERNAL_MOVE_HEAD,
                         (head_seq, to_text(self._store.clock()), internal_session_id))
            if reason and old_head != head_seq:
                conn.execute(sql.REFLOG_INSERT,
                             (internal_session_id, old_head, head_seq, reason, to_text(self._store.clock())))

    def reflog(self, internal_session_id: int) -> list[tuple[int | None, int | None, str, str]]:
        return [tuple(row) for row in self._all(self._sql.REFLOG_OF_BRANCH, (internal_session_id,))]

    def set_hidden(self, internal_session_id: int, hidden: bool) -> None:
        """Hide a branch (or show it again); its entries and head stay as they are."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.INTERNAL_SET_HIDDEN,
                                (1 if hidden else 0, internal_session_id)).rowcount:
                raise NotFound(f"branch {internal_session_id} does not exist")

    def containing(self, seq: int) -> InternalSession | None:
        """A branch whose path holds the entry: the current one if it does, else the newest."""
        entry = self._store.entries.get(seq)
        if entry is None:
            return None
        branches = self.of_session(entry.external_session_id)
        branches.sort(key=lambda b: not b.is_current)
        for branch in branches:
            if branch.head_seq is not None and branch.head_seq >= seq and \
                    self._store.paths.at_depth(branch.head_seq, entry.depth) == seq:
                return branch
        return None
