"""A session's tail read apart: a scratch store seeded with the session as the store holds
it, read on in by a worker, and its tail merged back into the store.

A first import reads the newest session's first part itself (its rows on screen at once)
and leaves the rest of that file (often the longest, the one an agent writes now) for
later. A worker (core.importing.workers) then reads on in it: its scratch store (merge.py's
`make_scratch`) is first given, with their ids unchanged, the rows of the file's sessions
and the file's import record (`seed`), so that its import goes on exactly where the
store's stopped (the record's offset and reader state; the entries its parents, chains and
branches point to; the usage rows a later copy of a response replaces). What the worker
adds gets ids above the seeded ones; `merge_tail` moves it into the store, shifting only
those ids (by each id space's offset to the store's first free one: the ids a read of
the tail in the store itself would have given at that point), while references into the
seeded part keep their values. The rows the read may have changed (the sessions' own rows
and totals, their branches, the usage copies it replaced, the record) are taken from the
scratch store.

The store is read here through SQLite only (a connection of the worker's own, in one read
transaction); the worker holds no other connection to it.
"""

from __future__ import annotations

import json
import sqlite3

from .merge import COLUMNS, SCRATCH, SPACES, STRETCH, _first_free

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# The tables seeded (in this order: a row's references exist before it), with how each
# row is found: by the sessions' ids (:ids, a JSON list), or by the record's key.
_SEEDED = {
    "external_sessions": "id IN (SELECT value FROM json_each(:ids))",
    "entries": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "usage": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "spawn_points": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "internal_sessions": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "reflog": "internal_session_id IN (SELECT id FROM internal_sessions WHERE"
              " external_session_id IN (SELECT value FROM json_each(:ids)))",
    "labels": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "session_usage": "external_session_id IN (SELECT value FROM json_each(:ids))",
    "import_sources": "source_key = :key",
}


def seed(scratch: sqlite3.Connection, store_path: str, key: str) -> dict[str, int] | None:
    """Copy into the new scratch store (`scratch`, a connection outside any transaction)
    the import record `key` of the store at `store_path` and the rows of the sessions it
    names, ids unchanged. Returns the highest seeded id of each id space (SPACES; 0 where
    none), which `merge_tail` needs; None when the store has no such record."""
    source = sqlite3.connect(store_path, timeout=60, isolation_level=None)
    try:
        source.execute("BEGIN")   # (one snapshot of the store for all the tables)
        row = source.execute("SELECT state FROM import_sources WHERE source_key = ?",
                             (key,)).fetchone()
        if row is None:
            return None
        try:
            uids = [uid for uid in json.loads(row[0]).get("sessions") or []
                    if isinstance(uid, str)]
        except (ValueError, TypeError, AttributeError):
            return None
        ids = [r[0] for r in source.execute(
            "SELECT id FROM external_sessions WHERE uid IN"
            f" ({', '.join('?' * len(uids))})", uids)] if uids else []
        if not ids or len(ids) != len(uids):
            return None
        args = {"ids": json.dumps(ids), "key": key}
        # (the rows are the store's, whole and consistent: not checked again one by one,
        # in whatever order they come, against what the scratch store holds so far)
        scratch.execute("PRAGMA foreign_keys = OFF")
        scratch.execute("BEGIN")
        try:
            for table, where in _SEEDED.items():
                names = _columns(scratch, table)
                values = [_seeded_value(table, name) for name in names]
                rows = source.execute(f"SELECT {', '.join(values)} FROM {table} WHERE {where}"
                                      f" ORDER BY {names[0]}", args).fetchall()
                if rows:
                    scratch.executemany(
                        f"INSERT INTO {table}({', '.join(names)})"
                        f" VALUES ({', '.join('?' * len(names))})", rows)
            # (what the record said: the store's must say so still when the tail is merged)
            scratch.execute("INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)",
                            (_SEEDED_RECORD, row[0]))
            seeds = {}
            for space, (table, column) in SPACES.items():
                seeds[space] = int(scratch.execute(
                    f"SELECT COALESCE(MAX({column}), 0) FROM {table}").fetchone()[0])
            scratch.execute("COMMIT")
        except BaseException:
            scratch.execute("ROLLBACK")
            raise
        finally:
            scratch.execute("PRAGMA foreign_keys = ON")
        return seeds
    finally:
        source.close()


_SEEDED_RECORD = "tail: the record seeded"


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _seeded_value(table: str, column: str) -> str:
    """A column as seeded: references to other sessions' rows (which the scratch store
    does not hold; `merge_tail` never writes them back) as NULL."""
    how = dict(COLUMNS.get(table, ())).get(column)
    return "NULL" if how == "null" else column


def _mapped(column: str, how: str) -> str:
    """A scratch column as it goes into the store: an id above the seeded ones of its
    space shifted by that space's offset, a seeded one (or NULL) as it is."""
    if how in SPACES:
        return f"CASE WHEN s.{column} > :seed_{how} THEN s.{column} + :{how} ELSE s.{column} END"
    if how == "text":
        return f"CAST(s.{column} AS TEXT)"
    if how == "counted":
        # (as merge.py: a response another session has already is counted there)
        return ("CASE WHEN s.response_key IS NOT NULL AND EXISTS (SELECT 1 FROM main.usage AS m"
                " WHERE m.response_key = s.response_key) THEN 0 ELSE s.counted END")
    if how == "null":
        return "NULL"
    return f"s.{column}"


def _insert_new(conn: sqlite3.Connection, table: str, where: str, args: dict) -> None:
    """The scratch rows of `table` matching `where` (over `s`), into the store, mapped."""
    names = [column for column, _how in COLUMNS[table]]
    values = [_mapped(column, how) for column, how in COLUMNS[table]]
    conn.execute(f"INSERT INTO main.{table}({', '.join(names)}) SELECT {', '.join(values)}"
                 f" FROM {SCRATCH}.{table} AS s WHERE {where}"
                 f" ORDER BY s.{COLUMNS[table][0][0]}", args)


def _update_seeded(conn: sqlite3.Connection, table: str, key: str, where: str, args: dict,
                   keep: tuple[str, ...] = ()) -> None:
    """The store's rows of `table` that were seeded (found by `key`, unchanged by the
    shift) set to the scratch store's values where these differ, but for `keep` and
    references to other sessions ("null" columns, the store's own). (Only rows that
    differ: an update fires the store's triggers, whose sums of costs would move by
    rounding.)"""
    pairs = [(column, _mapped(column, how)) for column, how in COLUMNS[table]
             if column != key and how != "null" and column not in keep]
    differs = " OR ".join(f"main.{table}.{n} IS NOT {v}" for n, v in pairs)
    conn.execute(f"UPDATE main.{table} SET ({', '.join(n for n, _ in pairs)}) ="
                 f" ({', '.join(v for _, v in pairs)}) FROM {SCRATCH}.{table} AS s"
                 f" WHERE main.{table}.{key} = s.{key} AND {where} AND ({differs})", args)


def merge_tail(conn: sqlite3.Connection, seeds: dict[str, int], key: str) -> bool:
    """Move what the attached scratch store's import added to the seeded sessions (and any
    session it made) into the store, inside the caller's write transaction (one: a commit
    part-way would leave entries the record does not cover). False, changing nothing, when
    the seeded sessions are not the store's any more (deleted, or made again), the file's
    record in the store is not the one seeded (another import read on in it meanwhile), or
    a session the read made has a uid the store has."""
    from core.store.statements.usage import SQLite

    seeded = conn.execute(
        f"SELECT s.id, s.uid, m.uid FROM {SCRATCH}.external_sessions AS s LEFT JOIN"
        " main.external_sessions AS m ON m.id = s.id WHERE s.id <= ?", (seeds["X"],)).fetchall()
    if not seeded or any(uid != theirs for _id, uid, theirs in seeded):
        return False
    # another import of the file since (the app following it): its tail is not this one's
    if conn.execute(f"SELECT 1 FROM main.import_sources AS m JOIN {SCRATCH}.store_meta AS s"
                    " ON s.key = ? AND s.value = m.state WHERE m.source_key = ?",
                    (_SEEDED_RECORD, key)).fetchone() is None:
        return False
    if conn.execute(f"SELECT 1 FROM {SCRATCH}.external_sessions AS s JOIN"
                    " main.external_sessions AS m ON m.uid = s.uid WHERE s.id > ?",
                    (seeds["X"],)).fetchone() is not None:
        return False
    args: dict[str, Any] = {f"seed_{space}": value for space, value in seeds.items()}
    for space, (table, column) in SPACES.items():
        args[space] = _first_free(conn, table, column) - seeds[space] - 1
    args["key"] = key
    # sessions the read made, then the seeded ones' own rows (names, facts, totals)
    _insert_new(conn, "external_sessions", "s.id > :seed_X", args)
    _update_seeded(conn, "external_sessions", "id", "s.id <= :seed_X", args)
    # the seeded responses the read priced or replaced with a later copy (their buckets
    # follow by the store's trigger), before the new ones are summed into the buckets
    _update_seeded(conn, "usage", "seq", "s.seq <= :seed_U", args,
                   keep=("counted", "bucketed"))
    low, high = conn.execute(f"SELECT MIN(seq), MAX(seq) FROM {SCRATCH}.entries"
                             " WHERE seq > :seed_E", args).fetchone()
    if low is not None:
        for start in range(low, high + 1, STRETCH):
            part = {**args, "low": start, "high": min(start + STRETCH, high + 1)}
            _insert_new(conn, "entries", "s.seq >= :low AND s.seq < :high", part)
            conn.execute(f"INSERT INTO main.entries_fts(rowid, text) SELECT s.rowid + :E,"
                         f" CAST(s.text AS TEXT) FROM {SCRATCH}.entries_fts AS s"
                         " WHERE s.rowid >= :low AND s.rowid < :high ORDER BY s.rowid", part)
    last_usage = conn.execute(SQLite.USAGE_LAST_SEQ).fetchone()[0]
    _insert_new(conn, "usage", "s.seq > :seed_U", args)
    conn.execute(SQLite.USAGE_BUCKETS_OF_BATCH, (last_usage,))
    for table in ("internal_sessions", "reflog", "labels"):
        column = COLUMNS[table][0][0]
        space = dict(COLUMNS[table])[column]
        _insert_new(conn, table, f"s.{column} > :seed_{space}", args)
        _update_seeded(conn, table, column, f"s.{column} <= :seed_{space}", args)
    # spawn points and the usage totals: the sessions' whole sets, the scratch store's
    ids = (f"SELECT CASE WHEN id > :seed_X THEN id + :X ELSE id END"
           f" FROM {SCRATCH}.external_sessions")
    conn.execute(f"DELETE FROM main.spawn_points WHERE external_session_id IN ({ids})", args)
    _insert_new(conn, "spawn_points", "1", args)
    conn.execute(f"DELETE FROM main.session_usage WHERE external_session_id IN ({ids})", args)
    names = _columns(conn, "session_usage")
    values = ["CASE WHEN s.external_session_id > :seed_X THEN s.external_session_id + :X"
              " ELSE s.external_session_id END" if name == "external_session_id" else f"s.{name}"
              for name in names]
    conn.execute(f"INSERT INTO main.session_usage({', '.join(names)}) SELECT"
                 f" {', '.join(values)} FROM {SCRATCH}.session_usage AS s", args)
    # the file's record: where the next import goes on
    _update_seeded(conn, "import_sources", "source_key", "s.source_key = :key", args)
    return True
