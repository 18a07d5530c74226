"""External sessions: what the user sees in the list (a repository, in git's words),
and their lineage: sub-agents under the tool call that spawned them, forks under
the entry they left their source at."""

from __future__ import annotations

import re
from datetime import timedelta

from core.model.clock import parse, to_text
from core.model.errors import ArborError, NotFound

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms; nor the session models, made in `_from_row`)

    from core.seed.models import ExternalSession


from core.store.records import SessionSummary, SpawnedSession, UnlinkedChild, _loads, _dumps
from . import Room


class SessionsRoom(Room):
    def create(self, session_name: str = "", *, uid: str | None = None,
               user_id: int = 0, cwd: str = "", source: str = "arbor",
               kind: str = "session", parent_session: str | None = None,
               metadata: dict[str, Any] | None = None, created_at: Any = None,
               header_version: int = 3) -> ExternalSession:
        stamp = to_text(created_at if created_at is not None else self._store.clock())
        stored_metadata = _dumps(metadata or {})
        with self.transaction() as conn:
            for _attempt in range(16):
                new_uid = uid or self._store.id_factory()
                new_id = self._backend.insert_unless_taken(
                    conn, self._sql.EXTERNAL_INSERT,
                    (new_uid, user_id, session_name, stamp, stamp, stored_metadata, cwd,
                     source, kind, parent_session, header_version), "uid")
                if new_id is not None:
                    break
                if uid:
                    raise ArborError(f"a session with id {uid!r} already exists")
            self._link.made[("session", new_id)] = [str(session_name), stored_metadata, 0]
            # what reading the row back gives (a session this transaction just made has no
            # branch yet), without reading it: the columns not given are their defaults
            return self._from_row(
                (new_id, new_uid, int(user_id), str(session_name), stamp, stamp, 1,
                 stored_metadata, 0, str(cwd), str(source), str(kind),
                 None if parent_session is None else str(parent_session), 0, 0, None, []))

    def _from_row(self, row) -> ExternalSession:
        """A session from `EXTERNAL_BY_ID`'s columns; a backend's select may end with the
        session's branch keys (`EXTERNAL_BRANCH_IDS`'s, in one round trip), else they are
        read apart."""
        from core.seed.models import ExternalSession

        (ext_id, uid, user_id, name, created, updated, active, meta, checkpoints, cwd, source,
         kind, parent, messages, branch_count, current, *branch_ids) = row
        if branch_ids:
            ids = list(branch_ids[0] or ())
        else:
            ids = [r[0] for r in self._store._conn.execute(self._sql.EXTERNAL_BRANCH_IDS, (ext_id,))]
        return ExternalSession(
            id=ext_id, user_id=user_id, session_name=name, created_at=parse(created),
            updated_at=parse(updated), is_active=bool(active), internal_session_ids=ids,
            current_internal_session_id=current, metadata=_loads(meta, {}),
            branch_count=branch_count, total_checkpoints=checkpoints, uid=uid, cwd=cwd,
            source=source, kind=kind, parent_session=parent, message_count=messages,
        )

    def get(self, external_session_id: int) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.EXTERNAL_BY_ID, (external_session_id,)).fetchone()
            return self._from_row(row) if row else None

    def by_uid(self, uid: str) -> ExternalSession | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.EXTERNAL_BY_UID, (uid,)).fetchone()
            return self._from_row(row) if row else None

    def find(self, *, uid_prefix: str | None = None, cwd: str | None = None,
             kind: str | None = None, active: bool | None = None,
             user_id: int | None = None, limit: int | None = None
             ) -> list[ExternalSession]:
        """Newest activity first."""
        sql, args = self._sql.find_external_sessions(
            uid_prefix=uid_prefix, cwd=cwd, kind=kind, active=active, user_id=user_id, limit=limit)
        with self.reading() as conn:
            return [self._from_row(row) for row in conn.execute(sql, args).fetchall()]

    def update(self, session: ExternalSession) -> bool:
        if not session.id:
            return False
        with self.transaction() as conn:
            self._link.made.pop(("session", session.id), None)
            cursor = conn.execute(
                self._sql.EXTERNAL_UPDATE,
                (session.session_name, 1 if session.is_active else 0, _dumps(session.metadata),
                 session.total_checkpoints, session.user_id, session.cwd,
                 to_text(self._store.clock()), session.id),
            )
            if cursor.rowcount and session.current_internal_session_id:
                row = conn.execute(self._sql.INTERNAL_BY_LANGGRAPH_IN_SESSION,
                                   (session.current_internal_session_id, session.id)).fetchone()
                if row:
                    self._store.branches.set_current(row[0])
            return cursor.rowcount > 0

    def mark_most_recent(self, external_session_id: int) -> None:
        """Make a session the newest activity of its working directory, the one
        `SessionManager.continue_recent` picks: its updated_at becomes now, or one millisecond
        after the newest other session of that directory when the clock has not moved past
        it (times are stored to the millisecond, and a tie goes to the session made later)."""
        with self.transaction() as conn:
            session = self.get(external_session_id)
            if session is None:
                raise NotFound(f"session {external_session_id} does not exist")
            stamp = parse(to_text(self._store.clock()))
            newest = self.find(cwd=session.cwd, kind=session.kind, limit=1)
            if newest and newest[0].id != session.id and newest[0].updated_at >= stamp:
                stamp = newest[0].updated_at + timedelta(milliseconds=1)
            conn.execute(self._sql.EXTERNAL_TOUCH, (to_text(stamp), external_session_id))

    def list(self, *, include_archived: bool = False, limit: int | None = None
             ) -> list[SessionSummary]:
        """The session list, newest activity first, without loading any session."""
        sql = self._sql.list_sessions(include_archived=include_archived, limit=limit)
        with self.reading() as conn:
            rows = conn.execute(sql).fetchall()
        return [SessionSummary(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], bool(r[8]), r[9],
                               r[10], r[11], r[12]) for r in rows]

    def id_by_uid(self, uid: str) -> int | None:
        with self.reading() as conn:
            row = conn.execute(self._sql.SESSION_ID_BY_UID, (uid,)).fetchone()
        return row[0] if row else None

    def id_by_source_key(self, source_key: str) -> int | None:
        """The session imported from a file (`import_sources.source_key`)."""
        with self.reading() as conn:
            row = conn.execute(self._sql.SESSION_ID_BY_SOURCE_KEY, (source_key,)).fetchone()
        return row[0] if row else None

    def count(self, *, user_id: int | None = None,
              archived: bool = False) -> int:
        """How many sessions there are (of one user; only the archived ones)."""
        if archived:
            return self._one(self._sql.EXTERNAL_COUNT_ARCHIVED)[0]
        if user_id is not None:
            return self._one(self._sql.EXTERNAL_COUNT_OF_USER, (user_id,))[0]
        return self._one(self._sql.EXTERNAL_COUNT)[0]

    def name(self, external_session_id: int) -> str | None:
        """A session's name (None: no such session)."""
        made = self._store._made("session", external_session_id)
        if made is not None:
            return made[0]
        row = self._one(self._sql.EXTERNAL_NAME, (external_session_id,))
        return row[0] if row else None

    def metadata(self, external_session_id: int) -> dict[str, Any]:
        """A session's metadata ({} when it has none or no such session)."""
        made = self._store._made("session", external_session_id)
        if made is not None:
            text = made[1]
        else:
            row = self._one(self._sql.EXTERNAL_METADATA, (external_session_id,))
            text = row[0] if row else None
        value = _loads(text, {}) if text else {}
        return value if isinstance(value, dict) else {}

    def set_metadata(self, external_session_id: int, metadata: dict[str, Any]) -> None:
        """Replace a session's metadata (its activity time stays)."""
        text = _dumps(metadata)
        with self.transaction() as conn:
            conn.execute(self._sql.EXTERNAL_SET_METADATA, (text, external_session_id))
            made = self._link.made.get(("session", external_session_id))
            if made is not None:
                made[1] = text

    def set_cwd_if_empty(self, external_session_id: int, cwd: str) -> None:
        """Give a session its working folder unless it has one."""
        with self.transaction() as conn:
            conn.execute(self._sql.EXTERNAL_SET_CWD_IF_EMPTY, (cwd, external_session_id))

    def totals(self, external_session_id: int) -> tuple[int, int]:
        """(entries, branches) of a session, counted."""
        row = self._one(self._sql.EXTERNAL_TOTALS, (external_session_id, external_session_id))
        return row[0], row[1]

    def sizes(self, external_session_id: int) -> tuple[int, int]:
        """(entries, branches) of a session, the entries from the count its row keeps (as
        the session list shows them): an import of a few lines into a session of 100,000
        entries does not count them all to report its size. (0, 0) for no such session."""
        row = self._one(self._sql.EXTERNAL_KEPT_TOTALS, (external_session_id,))
        return (row[0], row[1]) if row is not None else (0, 0)

    def by_metadata(self, source: str, equal: dict[str, Any], *,
                    unset: str) -> list[ExternalSession]:
        """The sessions of a source whose metadata has every key of `equal` with its value
        and no `unset` key, oldest first. Keys are plain names (letters, digits, `_`)."""
        for name in (*equal, unset):
            if not re.fullmatch(r"\w+", name):
                raise ValueError(f"not a plain metadata key: {name!r}")
        args: list[Any] = [source]
        for key, value in equal.items():
            args += [key, value]
        args.append(unset)
        with self.reading() as conn:
            return [self._from_row(row) for row in conn.execute(
                self._sql.sessions_by_metadata(len(equal)), args).fetchall()]

    def listing(self, *, kind: str = "session", cwd: str | None = None,
                preview: bool = False) -> list[tuple[str, str, str, str, int, Any]]:
        """(uid, name, cwd, updated_at, message count, first user message or None) of every
        session of a kind (in one folder), newest activity first, in one query. The message
        is read only with `preview`."""
        sql, args = self._sql.session_listing(kind=kind, cwd=cwd, preview=preview)
        out = []
        for uid, name, session_cwd, updated, count, first in self._all(sql, args):
            message = None
            if first:
                data = _loads(first, {})
                message = data.get("message") if isinstance(data, dict) else None
            out.append((uid, name, session_cwd, updated, count, message))
        return out

    def rename(self, external_session_id: int, name: str) -> None:
        with self.transaction() as conn:
            cursor = conn.execute(self._sql.EXTERNAL_RENAME, (name, external_session_id))
            made = self._link.made.get(("session", external_session_id))
            if made is not None:   # (it is there: this transaction made it)
                made[0] = str(name)
            elif not cursor.rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def set_active(self, external_session_id: int, active: bool) -> None:
        """Archive (active=False) or restore a session; nothing is deleted."""
        with self.transaction() as conn:
            if not conn.execute(self._sql.EXTERNAL_SET_ACTIVE,
                                (1 if active else 0, external_session_id)).rowcount:
                raise NotFound(f"session {external_session_id} does not exist")

    def delete(self, external_session_id: int) -> bool:
        """Delete a session and everything in it. Explicit, never implied by another operation."""
        sql = self._sql
        with self.transaction() as conn:
            made = self._link.made
            for key in [key for key, value in made.items() if key == ("session", external_session_id)
                        or (key[0] == "branch" and value == external_session_id)
                        or (key[0] == "entry" and value[2] == external_session_id)]:
                del made[key]
            self._backend.forget_session_entries(conn, external_session_id)
            uid = conn.execute(sql.EXTERNAL_UID, (external_session_id,)).fetchone()
            # responses this session held first: a copy in another session counts instead
            held = [r[0] for r in conn.execute(sql.USAGE_RECOUNT_KEYS_OF, (external_session_id,))]
            conn.execute(sql.EXTERNAL_DETACH_BRANCHES, (external_session_id,))
            conn.execute(sql.EXTERNAL_DELETE_ENTRIES, (external_session_id,))
            deleted = conn.execute(sql.EXTERNAL_DELETE, (external_session_id,)).rowcount
            if held:
                conn.executemany(sql.USAGE_RECOUNT_KEY, [(key, key) for key in held])
            if uid:
                for statement in sql.EXTERNAL_DELETE_EVENTS:
                    conn.execute(statement, (uid[0],))
        self._segments_cache.clear()
        return deleted > 0

    def add_spawn_point(self, external_session_id: int, key: str, seq: int) -> None:
        """Remember that the entry `seq` of this session started a child known by `key`
        (a tool call id, a child's thread id). The first entry recorded for a key stays."""
        with self.transaction() as conn:
            conn.execute(self._sql.SPAWN_POINT_ADD, (key, external_session_id, seq))

    def spawn_point(self, key: str, parent_ref: str | None = None) -> tuple[int, int] | None:
        """(session id, entry seq) of the entry that started the child known by `key`;
        where several sessions hold the key, the one whose uid is `parent_ref` (or a
        sub-agent of it) first."""
        with self.reading() as conn:
            row = conn.execute(self._sql.SPAWN_POINT, (key, parent_ref, parent_ref)).fetchone()
        return (row[0], row[1]) if row else None

    def set_lineage(self, external_session_id: int, *, kind: str | None = None,
                    parent_ref: str | None = None, spawn_ref: str | None = None) -> None:
        """Say where a session came from (see core.history.lineage); None leaves a field as it is."""
        with self.transaction() as conn:
            conn.execute(self._sql.LINEAGE_SET, (kind, parent_ref, spawn_ref, external_session_id))

    def unlinked_children(self) -> list[UnlinkedChild]:
        """Sessions that name a parent but are not yet attached to it (or to the entry
        that started them)."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.LINEAGE_UNLINKED).fetchall()
        return [UnlinkedChild(*row) for row in rows]

    def last_shared_entry(self, child_id: int, parent_id: int) -> int | None:
        """The parent's entry that is the deepest entry the child copied (same id): where a
        fork that copies its source's history left it."""
        with self.reading() as conn:
            row = conn.execute(self._sql.LINEAGE_LAST_SHARED, (parent_id, child_id)).fetchone()
        return row[0] if row else None

    def link_child(self, child_id: int, parent_id: int, spawn_seq: int | None) -> None:
        """Attach a session under its parent (never under itself or its own descendants)."""
        with self.transaction() as conn:
            ancestor, steps = parent_id, 0
            while ancestor is not None and steps < 1000:
                if ancestor == child_id:
                    return
                row = conn.execute(self._sql.LINEAGE_PARENT_OF, (ancestor,)).fetchone()
                ancestor = row[0] if row else None
                steps += 1
            conn.execute(self._sql.LINEAGE_LINK, (parent_id, spawn_seq, child_id))

    def children(self, external_session_id: int) -> list[SpawnedSession]:
        """The sessions attached under this one, oldest first, with the entry each started at."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.LINEAGE_CHILDREN, (external_session_id,)).fetchall()
        return [SpawnedSession(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]),
                               _loads(r[8], {})) for r in rows]
