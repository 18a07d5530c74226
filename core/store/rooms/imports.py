"""How far each imported file got (its record and stamp), and scratch stores: the
sessions a big import's workers wrote, moved into the store by SQL."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

from core.model.clock import to_text
from core.model.errors import ArborError

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any, Callable, Iterator   # nor typing, ~2.5 ms)


from core.store.records import _loads
from . import Room


class ImportsRoom(Room):
    def records(self) -> dict[str, str]:
        """Every imported file's record: source key -> its state as JSON text (read as
        text: an import over thousands of unchanged files decodes what it needs)."""
        return dict(self._all(self._sql.IMPORT_RECORDS))

    def any_record(self) -> bool:
        """Whether any file was ever imported into this store."""
        return self._one(self._sql.IMPORT_ANY) is not None

    def stamps(self) -> dict[str, tuple]:
        """Every imported file's stamp: source key -> (record version, complete, size,
        mtime_ns, inode, device, lines), what telling an unchanged file from `stat` needs
        (kept in columns: no record's JSON is read; see importers/unchanged.py)."""
        return {row[0]: row[1:] for row in self._all(self._sql.IMPORT_STAMPS)}

    def record_sessions(self) -> dict[str, str]:
        """source key -> the uids of the sessions its file wrote into (JSON text)."""
        return dict(self._all(self._sql.IMPORT_RECORD_SESSIONS))

    def session_summaries(self, uids: list[str]) -> dict[str, tuple[str, str, int, int]]:
        """uid -> (name, source, entries, branches) of these sessions (500 a query)."""
        out: dict[str, tuple[str, str, int, int]] = {}
        for start in range(0, len(uids), 500):
            chunk = uids[start:start + 500]
            for uid, name, source, entries, branches in self._all(
                    self._sql.session_summaries(len(chunk)), chunk):
                out[uid] = (name, source, entries, branches)
        return out

    def source(self, key: str) -> tuple[int, str, int, float, dict[str, Any]] | None:
        """What was recorded of an imported file: (session id, format, size, mtime, state)."""
        row = self._one(self._sql.IMPORT_SOURCE_GET, (key,))
        if row is None:
            return None
        state = _loads(row[4], {})
        return row[0], row[1], row[2], row[3], state if isinstance(state, dict) else {}

    def record_source(self, *, key: str, path: str, external_session_id: int, fmt: str,
                      size: int, mtime: float, state: dict[str, Any]) -> None:
        """Record (or replace) how far a file was imported and into which session."""
        def number(name: str) -> int | None:
            value = state.get(name)
            return value if type(value) is int else None

        with self.transaction() as conn:
            conn.execute(self._sql.IMPORT_SOURCE_SET,
                         (path, key, external_session_id, fmt, size, mtime, json.dumps(state),
                          to_text(self._store.clock()), number("version"),
                          1 if state.get("complete") is True else 0, number("mtime_ns"),
                          number("inode"), number("device"), number("lines") or 0))

    def forget_sources(self, external_session_id: int) -> None:
        """Forget which files were imported into a session (its next import starts over)."""
        with self.transaction() as conn:
            conn.execute(self._sql.IMPORT_SOURCES_FORGET, (external_session_id,))

    def source_paths(self) -> list[tuple[str, str]]:
        """(resolved path, format) of every file the store imported from."""
        with self.reading() as conn:
            rows = conn.execute(self._sql.IMPORT_SOURCE_KEYS).fetchall()
        return [(key[len(fmt) + 1:], fmt) for key, fmt in rows
                if key.startswith(f"{fmt}:") and len(key) > len(fmt) + 1]

    @property
    def takes_scratch(self) -> bool:
        """Whether sessions imported into a scratch store (a worker's, in a big import:
        core.importing.workers.parallel) can be moved into this store (SQLite: yes)."""
        return getattr(self._backend, "takes_scratch", False)

    def big_import(self, running: bool) -> None:
        """A big import starts (`running`) or has ended: while it runs, the search index
        merges its segments in bigger steps, less work for the many it writes (SQLite;
        a setting of the store's: an import killed before it ends leaves it so until the
        next big import ends)."""
        merge = getattr(self._backend, "merge_in_big_steps", None)
        if merge is not None:
            with self.transaction() as conn:
                merge(conn, running)

    def price_cards(self) -> list[tuple[str, str]]:
        """The rates kept for pricing (price_cards.py), for a scratch store to start with."""
        from core.store.sqlite.merge import price_cards

        with self._lock:
            return price_cards(self._store._conn)

    @contextmanager
    def scratch_attached(self, path: str | os.PathLike) -> Iterator[None]:
        """The scratch store at `path` open beside this one, for `merge_scratch_session`
        (not inside a transaction: a file is attached between them)."""
        from core.store.sqlite import merge as sqlite_merge

        with self._lock:
            if self._store._depth:
                raise RuntimeError("a scratch store is attached outside any transaction")
            conn = self._store._conn
            sqlite_merge.attach(conn, os.fspath(path))
            try:
                yield
            finally:
                if self._store._depth:   # (a failure inside a transaction rolled it back already)
                    raise RuntimeError("scratch_attached ended inside a transaction")
                sqlite_merge.detach(conn)

    def scratch_problems(self) -> list[str]:
        """What in the attached scratch store cannot be moved into this store (tables with
        rows this store does not take from a scratch store); empty when all can."""
        from core.store.sqlite import merge as sqlite_merge

        with self._lock:
            return sqlite_merge.unmergeable(self._store._conn)

    def merge_scratch_sessions(self, uids: list[str], *,
                               pace: Callable[[], Any] = lambda: None) -> bool:
        """Move these sessions of the attached scratch store (the first ones it made, in
        order) into this store, with new ids, inside the caller's write transaction, which
        `pace()` may commit and go on with (`commit_and_continue`) between stretches of
        their entries (sqlite_merge.merge_sessions says what a commit there leaves). False,
        changing nothing, when this store has a session with one of these uids already."""
        from core.store.sqlite import merge as sqlite_merge

        with self._lock:
            if not self._store.in_write_transaction:
                raise RuntimeError("merge_scratch_sessions needs an open store.transaction()")
            conn = self._store._conn
            if any(conn.execute(self._sql.SESSION_ID_BY_UID, (uid,)).fetchone() is not None
                   for uid in uids):
                return False
            ids = sorted(row[0] for row in conn.execute(
                f"SELECT id FROM {sqlite_merge.SCRATCH}.external_sessions WHERE uid IN"
                f" ({', '.join('?' * len(uids))})", uids))
            if len(ids) != len(uids) or (ids and ids[-1] - ids[0] + 1 != len(ids)) or \
                    (ids and conn.execute(f"SELECT COUNT(*) FROM {sqlite_merge.SCRATCH}."
                                          "external_sessions WHERE id < ?", (ids[0],)
                                          ).fetchone()[0]):
                raise ArborError("the scratch store's sessions are not the first ones it made")
            if ids:
                sqlite_merge.merge_sessions(conn, ids[0], ids[-1], pace=pace)
            return True

    def seed_tail(self, store_path: str, key: str) -> dict[str, int] | None:
        """(This store a worker's new scratch store.) Take in, ids unchanged, the import
        record `key` of the store at `store_path` and the rows of the sessions it names
        (sqlite_tail.seed); the highest seeded id of each id space, None without a record."""
        from core.store.sqlite import tail as sqlite_tail

        with self._lock:
            if self._store._depth:
                raise RuntimeError("a scratch store is seeded outside any transaction")
            return sqlite_tail.seed(self._store._conn, store_path, key)

    def merge_scratch_tail(self, seeds: dict[str, int], key: str) -> bool:
        """Move what the attached scratch store's import added to the sessions it was
        seeded with (sqlite_tail.seed: `seeds`, the highest seeded id of each id space; `key`,
        the file's record) into this store, inside the caller's write transaction. False,
        changing nothing, when they cannot be (sqlite_tail.merge_tail)."""
        from core.store.sqlite import tail as sqlite_tail

        with self._lock:
            if not self._store.in_write_transaction:
                raise RuntimeError("merge_scratch_tail needs an open store.transaction()")
            return sqlite_tail.merge_tail(self._store._conn, seeds, key)

    def merge_scratch_prices(self) -> None:
        """Keep the rates the attached scratch store's importer had to ask the price table
        for (each card's days, this store's and the scratch store's together)."""
        from core.store.sqlite import merge as sqlite_merge

        with self.transaction() as conn:
            sqlite_merge.merge_price_cards(conn)
