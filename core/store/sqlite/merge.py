"""Sessions written into a scratch store, moved into the store by SQL.

A big import converts new log files in worker processes (core.importing.workers.parallel): each
worker imports its files into a scratch store of its own, an ordinary arbor store on a
temporary file with two differences (`make_scratch`): its search rows are kept in a plain
table (the text each entry gives the full-text index), and it is tuned for one writer
that nobody else reads. The importing process then attaches the scratch file and copies
each session over, a statement a table, with new ids: every id space of the scratch
(entry seqs, session, branch, checkpoint, label and usage ids) is shifted by an offset
that puts its rows after the store's own. What the importer would have written into the
store itself is what arrives, row for row; only what the store derives is not copied but
derived again as the rows go in (the usage buckets, by their trigger; whether a response
is counted, against the store's other sessions; the search index, from the search rows).

`COLUMNS` says, for every table of the schema, how each column comes over; a table not
named there must be empty in a scratch store (`unmergeable` says which are not), and
tests/test_import_parallel.py checks that every column of a new store is named, so a
column added by a later migration cannot be left behind unnoticed.
"""

from __future__ import annotations

import json
import sqlite3

from core.store.statements.common import SESSION_USAGE_ON_CONFLICT

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Callable

SCRATCH = "scratch"   # the schema name the scratch file is attached under

# How each column of each merged table comes over. A plain name is copied; an id space
# letter shifts the value by that space's offset (NULL stays NULL):
#   E entry seqs, X sessions, I branches (internal sessions), R reflog seqs,
#   L label seqs, U usage seqs.
# "null": a reference to another session's rows, which a scratch store never has
# (`unmergeable` refuses one that does: each session gets offsets of its own).
# "text": UTF-8 the scratch store keeps as a BLOB (`_executemany_bytes`), read as text.
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "external_sessions": (
        ("id", "X"), ("uid", ""), ("user_id", ""), ("session_name", ""), ("created_at", ""),
        ("updated_at", ""), ("is_active", ""), ("metadata", ""), ("total_checkpoints", ""),
        ("cwd", ""), ("source", ""), ("kind", ""), ("parent_session", ""),
        ("header_version", ""), ("message_count", ""), ("entry_count", ""),
        # made by linking sessions, which the importing process does once all are in
        ("parent_id", "null"), ("spawn_seq", "null"), ("spawn_ref", ""),
        ("first_user_seq", "E")),
    "entries": (
        ("seq", "E"), ("external_session_id", "X"), ("id", ""), ("parent_seq", "E"),
        ("type", ""), ("timestamp", ""), ("depth", ""), ("chain", "E"), ("msg_index", ""),
        ("role", ""), ("data", "text")),
    "internal_sessions": (
        ("id", "I"), ("external_session_id", "X"), ("langgraph_session_id", ""), ("name", ""),
        ("state_data", ""), ("created_at", ""), ("updated_at", ""), ("is_current", ""),
        ("checkpoint_count", ""), ("parent_session_id", "I"),
        ("branch_point_checkpoint_id", "null"), ("fork_seq", "E"), ("head_seq", "E"),
        ("tool_invocation_count", ""), ("metadata", ""), ("is_hidden", "")),
    "reflog": (
        ("seq", "R"), ("internal_session_id", "I"), ("old_head_seq", "E"),
        ("new_head_seq", "E"), ("reason", ""), ("created_at", "")),
    "labels": (
        ("seq", "L"), ("external_session_id", "X"), ("target_seq", "E"),
        ("target_branch", "I"), ("label", ""), ("entry_seq", "E"), ("created_at", "")),
    "usage": (
        ("seq", "U"), ("external_session_id", "X"), ("provider", ""), ("protocol", ""),
        ("model", ""), ("input_tokens", ""), ("output_tokens", ""), ("total_tokens", ""),
        ("duration_ms", ""), ("timestamp", ""), ("entry_seq", "E"), ("chain", "E"),
        ("depth", ""), ("response_key", ""), ("cache_creation_tokens", ""),
        ("cache_creation_1h_tokens", ""), ("cache_read_tokens", ""), ("reasoning_tokens", ""),
        ("cost_usd", ""), ("cost_logged", ""), ("price_basis", ""), ("fast", ""),
        ("subagent", ""), ("counted", "counted"), ("bucketed", "")),
    "spawn_points": (("spawn_key", ""), ("external_session_id", "X"), ("seq", "E")),
    # (`state` is the reader's: offsets in the file and the log's own ids, none of ours)
    "import_sources": (
        ("path", ""), ("source_key", ""), ("external_session_id", "X"), ("format", ""),
        ("size", ""), ("mtime", ""), ("state", ""), ("imported_at", ""),
        ("record_version", ""), ("complete", ""), ("mtime_ns", ""), ("inode", ""),
        ("device", ""), ("lines", "")),
}
# Tables in the order their rows go in (a row's references exist before it).
# Tables in the order merge_sessions copies them (a row's references exist before it).
ORDER = ("external_sessions", "entries", "usage", "spawn_points", "internal_sessions",
         "reflog", "labels", "import_sources")
# Not copied: derived again as rows go in, or the store's own.
DERIVED = frozenset({"usage_buckets", "session_usage", "entries_fts", "schema_migrations",
                     "sqlite_sequence", "store_meta"})
# Never written by an import of the files workers read (Claude Code logs): a scratch store
# with rows in one of these, or in a table named nowhere here, is not moved in.
# (checkpoints among them: a checkpoint and a branch may name each other, which rows copied
# a table at a time could not satisfy.)
EMPTY = frozenset({"checkpoints", "operation_log", "session_run_events",
                   "session_capability_events", "session_capabilities", "langgraph_threads",
                   "langgraph_checkpoints", "langgraph_writes"})
# The id spaces: their table and column, and whether the table counts them in
# sqlite_sequence (AUTOINCREMENT: an id once used is never given again).
SPACES = {"E": ("entries", "seq"), "X": ("external_sessions", "id"),
          "I": ("internal_sessions", "id"), "R": ("reflog", "seq"), "L": ("labels", "seq"), "U": ("usage", "seq")}
# Which rows of a table belong to one session (:session, its id in the scratch store).
# Which rows of a table belong to the sessions moved (scratch ids :first to :last).
_OF_SESSIONS = {"external_sessions": "s.id BETWEEN :first AND :last",
                "reflog": f"s.internal_session_id IN (SELECT id FROM {SCRATCH}.internal_sessions"
                          " WHERE external_session_id BETWEEN :first AND :last)"}
_PRICE_CARDS = "price_cards %"


# Indexes an import never reads by (the store's replay, listing and reports do): a scratch
# store does without them, and the store builds its own as the rows go in.
# (idx_usage_entry stays: merge_sessions reads a stretch's usage rows by it)
_UNREAD_INDEXES = ("idx_entries_parent", "idx_entries_chain", "idx_entries_compactions",
                   "idx_entries_first_user", "idx_usage_path", "idx_usage_basis")


def make_scratch(conn: sqlite3.Connection) -> None:
    """Turn a new, empty store into a scratch store: its search rows in a plain table (the
    importer writes them as it would into the index), no usage buckets (the store makes
    its own), no indexes an import does not read by, and none of the durability a store
    shared with others needs."""
    conn.execute("DROP TABLE entries_fts")
    conn.execute("CREATE TABLE entries_fts(text TEXT)")
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"
                                " AND tbl_name = 'usage'").fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')
    for name in _UNREAD_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")
    _light(conn)


def _light(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA synchronous = OFF")   # (first: the switch below then syncs nothing)
    conn.execute("PRAGMA journal_mode = MEMORY")


def _executemany_bytes(conn: sqlite3.Connection, sql: str, rows: list[tuple]) -> None:
    """Rows whose last field is UTF-8 bytes, written as they are (a BLOB): the store reads
    them back as text (`CAST(... AS TEXT)` in merge_sessions), so the scratch store's
    importer does not decode every entry's data only for SQLite to encode it again."""
    conn.executemany(sql, rows)


def is_scratch(conn: sqlite3.Connection, schema: str = "main") -> bool:
    row = conn.execute(f"SELECT sql FROM {schema}.sqlite_master WHERE name = 'entries_fts'").fetchone()
    return row is not None and "VIRTUAL" not in str(row[0]).upper()


def attach(conn: sqlite3.Connection, path: str) -> None:
    """Attach a scratch file (outside any transaction)."""
    conn.execute(f"ATTACH DATABASE ? AS {SCRATCH}", (path,))
    if not is_scratch(conn, SCRATCH):
        conn.execute(f"DETACH DATABASE {SCRATCH}")
        raise ValueError(f"{path} is not a scratch store")


def detach(conn: sqlite3.Connection) -> None:
    conn.execute(f"DETACH DATABASE {SCRATCH}")


def unmergeable(conn: sqlite3.Connection) -> list[str]:
    """What in the attached scratch store this module cannot copy: tables with rows that
    never come over (EMPTY, or not named here), references between sessions."""
    found = []
    for (table,) in conn.execute(f"SELECT name FROM {SCRATCH}.sqlite_master WHERE type = 'table'"
                                 " ORDER BY name").fetchall():
        if table in COLUMNS or table in DERIVED or table.startswith("entries_fts"):
            continue
        if conn.execute(f'SELECT 1 FROM {SCRATCH}."{table}" LIMIT 1').fetchone() is not None:
            found.append(table)
    for table, columns in COLUMNS.items():
        for column, how in columns:
            if how == "null" and conn.execute(
                    f"SELECT 1 FROM {SCRATCH}.{table} WHERE {column} IS NOT NULL LIMIT 1"
            ).fetchone() is not None:
                found.append(f"{table}.{column}")
    return found


def sessions(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    """(id, uid) of the scratch store's sessions, in the order they were made."""
    return conn.execute(f"SELECT id, uid FROM {SCRATCH}.external_sessions ORDER BY id").fetchall()


def taken_uids(conn: sqlite3.Connection) -> set[str]:
    """Uids of scratch sessions the store has already."""
    return {row[0] for row in conn.execute(
        f"SELECT s.uid FROM {SCRATCH}.external_sessions AS s"
        " JOIN main.external_sessions AS m ON m.uid = s.uid")}


def _first_free(conn: sqlite3.Connection, table: str, column: str) -> int:
    row = conn.execute(
        f"SELECT MAX(COALESCE((SELECT seq FROM main.sqlite_sequence WHERE name = ?), 0),"
        f" COALESCE((SELECT MAX({column}) FROM main.{table}), 0))", (table,)).fetchone()
    return int(row[0] or 0) + 1


def _where(table: str) -> str:
    return _OF_SESSIONS.get(table, "s.external_session_id BETWEEN :first AND :last")


def _reserve(conn: sqlite3.Connection, args: dict[str, int]) -> dict[str, int]:
    """The offset of each id space for the rows moved, and their room in the store: their
    ids run on from the store's first free one, and sqlite_sequence is moved past them at
    once (every table here is AUTOINCREMENT), so that another writer, between the
    transactions of a long move, takes ids after them, never among them."""
    offsets: dict[str, int] = {}
    for space, (table, column) in SPACES.items():
        low, high = conn.execute(f"SELECT MIN(s.{column}), MAX(s.{column}) FROM {SCRATCH}.{table}"
                                 f" AS s WHERE {_where(table)}", args).fetchone()
        if low is None:
            offsets[space] = 0     # no rows of this space: no room needed
            continue
        first = _first_free(conn, table, column)
        offsets[space] = first - low
        last = first + high - low
        if conn.execute("UPDATE main.sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ?",
                        (last, table)).rowcount == 0:
            conn.execute("INSERT INTO main.sqlite_sequence(name, seq) VALUES (?, ?)", (table, last))
    return offsets


def _select(table: str, overrides: dict[str, str] | None = None) -> tuple[str, str]:
    """(the columns, the SELECT list over the scratch table `s`) of one table."""
    names, values = [], []
    for column, how in COLUMNS[table]:
        names.append(column)
        if overrides and column in overrides:
            values.append(overrides[column])
        elif how == "":
            values.append(f"s.{column}")
        elif how == "null":
            values.append("NULL")
        elif how == "text":
            values.append(f"CAST(s.{column} AS TEXT)")
        elif how == "counted":
            # a response another session of the store has already is counted there
            values.append("CASE WHEN s.response_key IS NOT NULL AND EXISTS (SELECT 1 FROM"
                          " main.usage AS m WHERE m.response_key = s.response_key)"
                          " THEN 0 ELSE s.counted END")
        else:
            values.append(f"s.{column} + :{how}")
    return ", ".join(names), ", ".join(values)


def _copy(conn: sqlite3.Connection, table: str, where: str, args: dict[str, Any], *,
          overrides: dict[str, str] | None = None) -> None:
    names, values = _select(table, overrides)
    conn.execute(f"INSERT INTO main.{table}({names}) SELECT {values} FROM {SCRATCH}.{table}"
                 f" AS s WHERE {where} ORDER BY s.{COLUMNS[table][0][0]}", args)


# The sessions' totals, from the rows of one stretch of their entries (the same sums the
# importer's writer keeps as it writes them: store/writer.py, store/usage/rows.py).
_ADD_COUNTS = (
    "UPDATE main.external_sessions SET entry_count = entry_count + c.entries,"
    " message_count = message_count + c.messages,"
    " first_user_seq = COALESCE(first_user_seq, c.first_user)"
    " FROM (SELECT external_session_id + :X AS id, COUNT(*) AS entries,"
    " SUM(type = 'message') AS messages, MIN(CASE WHEN role = 'user' THEN seq END) + :E"
    " AS first_user FROM {s}.entries WHERE seq >= :low AND seq < :high"
    " AND +external_session_id BETWEEN :first AND :last GROUP BY external_session_id) AS c"
    " WHERE main.external_sessions.id = c.id").format(s=SCRATCH)
_ADD_USAGE = (
    "INSERT INTO main.session_usage(external_session_id, model, responses, input_tokens,"
    " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
    " unpriced, subagent_cost_usd, subagent_tokens)"
    " SELECT external_session_id + :X, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),"
    " SUM(cache_creation_tokens), SUM(cache_read_tokens), SUM(reasoning_tokens),"
    " TOTAL(COALESCE(cost_usd, 0)), SUM(cost_usd IS NULL),"
    " TOTAL(CASE WHEN subagent = 1 THEN COALESCE(cost_usd, 0) ELSE 0 END),"
    " SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens + cache_creation_tokens"
    " + cache_read_tokens ELSE 0 END)"
    " FROM {s}.usage WHERE +external_session_id BETWEEN :first AND :last AND {which}"
    " GROUP BY external_session_id, model ORDER BY external_session_id, model"
    + SESSION_USAGE_ON_CONFLICT)
STRETCH = 2000   # entries moved a statement (about 0.1 s of the store's work at most)
# A stretch's rows are found by their seqs (`+external_session_id`: not by the session, whose
# index would have SQLite read all of a long session's rows for each stretch: a 310 MB
# session moved in 110 stretches spent 2 s counting entries and most of its search rows'
# time finding them).


def _copy_usage(conn: sqlite3.Connection, where: str, args: dict) -> None:
    """Usage rows moved in, and summed into the store's buckets: those an import wrote with
    `bucketed = 0` by one statement (migration 12), any other by the trigger as it goes in."""
    from core.store.statements.usage import SQLite

    last = conn.execute(SQLite.USAGE_LAST_SEQ).fetchone()[0]
    _copy(conn, "usage", where, args)
    conn.execute(SQLite.USAGE_BUCKETS_OF_BATCH, (last,))


def merge_sessions(conn: sqlite3.Connection, first: int, last: int, *,
                   pace: Callable[[], Any] = lambda: None, stretch: int = STRETCH) -> int:
    """Copy the scratch sessions with ids `first` to `last` into the store, inside the
    caller's write transaction; returns the offset of their ids (a session's id in the
    store is its scratch id plus it). None of their uids may be taken.

    Their entries go in a stretch at a time, each with its search rows, usage rows, spawn
    points and the sessions' totals for them, and `pace()` is called between stretches
    (the caller may commit there). What a commit between them leaves are sessions the way
    an interrupted import leaves one: entries with all that belongs to them, no branches yet
    and no import record, so the next import of their files reads them again and adds the
    rest. The branches and the records come last."""
    args: dict[str, Any] = {"first": first, "last": last}
    args.update(_reserve(conn, args))
    _copy(conn, "external_sessions", _where("external_sessions"), args,
          overrides={"entry_count": "0", "message_count": "0", "first_user_seq": "NULL"})
    low, high = conn.execute(f"SELECT MIN(seq), MAX(seq) FROM {SCRATCH}.entries WHERE"
                             " external_session_id BETWEEN :first AND :last", args).fetchone()
    if low is not None:
        for start in range(low, high + 1, stretch):
            part = {**args, "low": start, "high": min(start + stretch, high + 1)}
            ours = "+s.external_session_id BETWEEN :first AND :last"
            _copy(conn, "entries", f"{ours} AND s.seq >= :low AND s.seq < :high", part)
            conn.execute(f"INSERT INTO main.entries_fts(rowid, text) SELECT s.rowid + :E,"
                         f" CAST(s.text AS TEXT) FROM {SCRATCH}.entries_fts AS s WHERE"
                         f" s.rowid IN (SELECT seq FROM {SCRATCH}.entries WHERE seq >= :low AND"
                         " seq < :high AND +external_session_id BETWEEN :first AND :last)"
                         " ORDER BY s.rowid", part)
            _copy_usage(conn, f"{ours} AND s.entry_seq >= :low AND s.entry_seq < :high", part)
            conn.execute(_ADD_USAGE.format(s=SCRATCH, which="entry_seq >= :low AND"
                                           " entry_seq < :high"), part)
            _copy(conn, "spawn_points", f"{ours} AND s.seq >= :low AND s.seq < :high", part)
            conn.execute(_ADD_COUNTS, part)
            pace()
    _copy_usage(conn, f"{_where('usage')} AND s.entry_seq IS NULL", args)
    conn.execute(_ADD_USAGE.format(s=SCRATCH, which="entry_seq IS NULL"), args)
    for table in ("internal_sessions", "reflog", "labels", "import_sources"):
        _copy(conn, table, _where(table), args)
    # the sessions' own rows as the importer left them (their names, facts and totals)
    names = [column for column, how in COLUMNS["external_sessions"] if how == ""]
    conn.execute(f"UPDATE main.external_sessions SET ({', '.join(names)}) ="
                 f" ({', '.join('s.' + name for name in names)}),"
                 f" first_user_seq = s.first_user_seq + :E FROM {SCRATCH}.external_sessions AS s"
                 " WHERE main.external_sessions.id = s.id + :X AND s.id BETWEEN :first AND :last",
                 args)
    return args["X"]


def merge_price_cards(conn: sqlite3.Connection) -> None:
    """Keep the rates the workers had to ask the price table for (core/store/usage/price_cards.py):
    each card's days, the store's and the scratch store's together."""
    for key, value in conn.execute(f"SELECT key, value FROM {SCRATCH}.store_meta"
                                   " WHERE key LIKE ?", (_PRICE_CARDS,)).fetchall():
        row = conn.execute("SELECT value FROM main.store_meta WHERE key = ?", (key,)).fetchone()
        if row is not None and row[0] == value:
            continue
        try:
            spans = json.loads(row[0]) if row is not None else []
            for span in json.loads(value):
                if span not in spans:
                    spans.append(span)
        except (ValueError, TypeError):
            continue
        conn.execute("INSERT INTO main.store_meta(key, value) VALUES (?, ?) ON CONFLICT(key)"
                     " DO UPDATE SET value = excluded.value", (key, json.dumps(spans)))


def seed_price_cards(conn: sqlite3.Connection, rows: list[tuple[str, str]]) -> None:
    """Give a scratch store the rates the store keeps, so its importer prices as the store
    would without loading the price table."""
    conn.executemany("INSERT OR REPLACE INTO store_meta(key, value) VALUES (?, ?)", rows)


def price_cards(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    return conn.execute("SELECT key, value FROM store_meta WHERE key LIKE ?",
                        (_PRICE_CARDS,)).fetchall()


def open_scratch(path: str, *, template: "Any" = None, cards: list[tuple[str, str]] = (),
                 clock: "Any" = None, id_factory: "Any" = None) -> "Any":
    """A `Store` on a scratch file at `path` (made from `template`, another scratch store,
    when given: a copy of its pages is much cheaper than the migrations). Its entries are
    written inline: a worker process has no core to spare for a writer thread."""
    from pathlib import Path

    from core.store.store import Store

    if template is not None:
        target = sqlite3.connect(path)
        try:
            # (none of a store's durability, as `_light`; and the copy is put in WAL mode
            # here, so that `Store` below finds it there: its switch to WAL, and `_light`'s
            # back, each synced the file: about 45 ms a batch, a tenth of a worker's time)
            target.execute("PRAGMA synchronous = OFF")
            template._db.backup(target)
            target.execute("PRAGMA journal_mode = WAL")
        finally:
            target.close()
    store = Store(Path(path), clock=clock, id_factory=id_factory)
    conn = store._db
    if not is_scratch(conn):
        make_scratch(conn)
        seed_price_cards(conn, list(cards))
    else:
        _light(conn)
    backend = store._backend      # (this store's own: nothing else in the process opens it)
    backend._bulk_supported = False
    backend.executemany_text = _executemany_bytes
    return store
