"""The full-text index over entries (FTS5), kept without a copy of the text.

Since migration 11 it stems English words (the `porter` tokenizer over `unicode61`:
"migration", "migrations" and "Migrate" are one word to it) and keeps word positions, so
quoted phrases are phrase queries and bm25 ranks the hits. It is contentless
(`content=''`): the index's text is `entries.search_text` of each entry, a pure function
of the stored row, so an entry is removed from the index by giving that text again.

The index before it (word prefixes, no positions) is renamed `entries_fts_words` by the
migration and kept while the new one catches up in the background (core/store/search.py):
entries below the backlog's mark are found through it until then.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False   # (reading SQL must stay cheap: `arbor import` with nothing changed
if TYPE_CHECKING:       # loads this module, and neither typing nor json)
    from typing import Iterator

    from core.history.search_query import SearchQuery

# The index of migrations 2 to 10 (migration 2 makes it; never change a released migration).
CREATE_WORDS = ("CREATE VIRTUAL TABLE entries_fts USING fts5(text, content = '', detail = none,"
                " columnsize = 0, tokenize = 'unicode61 remove_diacritics 2')")
CREATE = ("CREATE VIRTUAL TABLE entries_fts USING fts5(text, content = '',"
          " tokenize = 'porter unicode61 remove_diacritics 2')")
INDEX = "entries_fts"
WORDS = "entries_fts_words"   # the index from before migration 11, while the backlog lasts

INSERT = "INSERT INTO entries_fts(rowid, text) VALUES (?, ?)"
_DELETE = "INSERT INTO {0}({0}, rowid, text) VALUES ('delete', ?, ?)"
_BATCH = 5000
# An existing store with fewer entries than this is re-indexed by the migration itself
# (well under a second); a bigger one in the background, a short transaction at a time.
REINDEX_AT_ONCE = 20_000

# store_meta keys (core/store/search.py reads them through `backlog`)
BELOW = "search_index_below"      # entries with a smaller seq are not in the index yet
WORDS_UNTIL = "search_index_words_until"   # WORDS holds the entries with a smaller seq


# FTS5 merges the index's segments `automerge` at a time (its default: 4). A big import
# writes a segment at every commit (about every 0.1 s): merged 16 at a time, each text is
# copied into fewer levels of segments, 0.96-1.13 s of CPU against 1.13-1.43 s for the
# index of a 100 MB tree. Searches read a few more segments after it, until later writes
# merge them (back at 4).
MERGE_STEPS, BIG_MERGE_STEPS = 4, 16


def merge_in_big_steps(conn: sqlite3.Connection, big: bool) -> None:
    """(In a write transaction) Have the index merge its segments 16 at a time while a big
    import runs (`big`), or back to FTS5's default of 4 after it."""
    steps = BIG_MERGE_STEPS if big else MERGE_STEPS
    conn.execute(f"INSERT INTO {INDEX}({INDEX}, rank) VALUES ('automerge', {steps})")


def merge_steps(conn: sqlite3.Connection) -> int:
    """How many segments the index merges at a time (its `automerge`)."""
    row = conn.execute(f"SELECT v FROM {INDEX}_config WHERE k = 'automerge'").fetchone()
    return MERGE_STEPS if row is None else int(row[0])


def texts_of(rows) -> list[tuple[int, str]]:
    """(seq, search text) of (seq, type, data) rows, leaving out entries without text."""
    import json

    from core.model.entries import search_text   # (not at import: reading SQL must stay cheap)

    out: list[tuple[int, str]] = []
    for seq, entry_type, data in rows:
        try:
            value = json.loads(data)
        except ValueError:
            continue
        text = search_text(entry_type, value) if isinstance(value, dict) else ""
        if text:
            out.append((seq, text))
    return out


def _texts(conn: sqlite3.Connection, where: str, args: tuple) -> Iterator[list[tuple[int, str]]]:
    cursor = conn.execute(f"SELECT seq, type, data FROM entries {where} ORDER BY seq", args)
    while True:
        rows = cursor.fetchmany(_BATCH)
        if not rows:
            return
        batch = texts_of(rows)
        if batch:
            yield batch


def index_entries(conn: sqlite3.Connection, where: str = "", args: tuple = ()) -> None:
    """Add these entries' text to the index (entries not in it yet)."""
    for batch in _texts(conn, where, args):
        conn.executemany(INSERT, batch)


def unindex_entries(conn: sqlite3.Connection, where: str, args: tuple, table: str = INDEX) -> None:
    """Remove these entries from the index `table` (call before deleting them)."""
    delete = _DELETE.format(table)
    for batch in _texts(conn, where, args):
        conn.executemany(delete, batch)


def rebuild(conn: sqlite3.Connection) -> None:
    """Replace the index with a contentless one over every entry (migration 2)."""
    conn.execute("DROP TABLE IF EXISTS entries_fts")
    conn.execute(CREATE_WORDS)
    index_entries(conn)


# ------------------------------------------------------------------ migration 11
def start_stemmed_index(conn: sqlite3.Connection) -> None:
    """Migration 11: a stemming index with positions in place of the word index. A small
    store is indexed at once; a big one keeps its word index (renamed) for what the new
    one does not cover yet, and the backlog is indexed later (`add_rows`), newest first."""
    conn.execute(f"ALTER TABLE entries_fts RENAME TO {WORDS}")
    conn.execute(CREATE)
    low, high = conn.execute("SELECT MIN(seq), MAX(seq) FROM entries").fetchone()
    if high is None or high - low < REINDEX_AT_ONCE:
        index_entries(conn)
        conn.execute(f"DROP TABLE {WORDS}")
        return
    mark = str(high + 1)
    conn.executemany("INSERT INTO store_meta(key, value) VALUES (?, ?) ON CONFLICT(key)"
                     " DO UPDATE SET value = excluded.value", ((BELOW, mark), (WORDS_UNTIL, mark)))


def backlog(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """(below, words_until) while the index has a backlog, else None."""
    rows = dict(conn.execute("SELECT key, value FROM store_meta WHERE key IN (?, ?)",
                             (BELOW, WORDS_UNTIL)).fetchall())
    if BELOW not in rows:
        return None
    return int(rows[BELOW]), int(rows.get(WORDS_UNTIL, rows[BELOW]))


def backlog_rows(conn: sqlite3.Connection, below: int, count: int) -> list[tuple]:
    """The newest `count` entries below `below`: (seq, type, data)."""
    return conn.execute("SELECT seq, type, data FROM entries WHERE seq < ? ORDER BY seq DESC"
                        " LIMIT ?", (below, count)).fetchall()


def add_rows(conn: sqlite3.Connection, texts: list[tuple[int, str]], low: int, below: int,
             done: bool) -> int:
    """In the write transaction that takes the backlog from `below` down to `low`: index
    `texts` of the entries that are still there, then move the mark (or, `done`, drop the
    word index: the new one covers everything). Returns how many were indexed."""
    there = {seq for (seq,) in conn.execute(
        "SELECT seq FROM entries WHERE seq >= ? AND seq < ?", (low, below))}
    rows = [(seq, text) for seq, text in texts if seq in there]
    conn.executemany(INSERT, rows)
    if done:
        conn.execute(f"DROP TABLE IF EXISTS {WORDS}")
        conn.execute("DELETE FROM store_meta WHERE key IN (?, ?)", (BELOW, WORDS_UNTIL))
    else:
        conn.execute("UPDATE store_meta SET value = ? WHERE key = ?", (str(low), BELOW))
    return len(rows)


def forget_session(conn: sqlite3.Connection, external_session_id: int) -> None:
    """Before a session's entries are deleted: take them out of the index, and out of the
    word index while it is kept (each holds the entries its mark says)."""
    state = backlog(conn)
    if state is None:
        unindex_entries(conn, "WHERE external_session_id = ?", (external_session_id,))
        return
    below, until = state
    unindex_entries(conn, "WHERE external_session_id = ? AND seq >= ?", (external_session_id, below))
    unindex_entries(conn, "WHERE external_session_id = ? AND seq < ?", (external_session_id, until),
                    table=WORDS)


# ---------------------------------------------------------------------- queries
def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def match(query: SearchQuery, *, prefixes: bool = True) -> str:
    """FTS5's query: each loose word a prefix (not `prefixes`: whole, by its stem), each
    phrase a phrase, all of them (AND)."""
    terms = [_quoted(w) + ("*" if prefixes and query.is_prefix(w) else "") for w in query.words]
    terms += [_quoted(" ".join(phrase)) for phrase in query.phrases]
    return " ".join(terms)


def _scope(column: str, external_session_id: int | None, sessions) -> tuple[str, list]:
    """The condition (and its arguments) that keeps a search to one session or to a set of
    them (`sessions`: any collection of ids, passed as one JSON array)."""
    if sessions is not None:
        import json

        return (f" AND {column} IN (SELECT value FROM json_each(?))",
                [json.dumps(sorted(sessions))])
    if external_session_id is not None:
        return f" AND {column} = ?", [external_session_id]
    return "", []


def ranked(conn: sqlite3.Connection, query: SearchQuery, *, external_session_id: int | None,
           window: int, sessions=None, scored: bool = True) -> list[tuple[int, float]]:
    """(seq, score: higher is better) of the newest `window` entries that match, scored by
    bm25. (Ranking every match of a word in most entries takes seconds on a million: the
    newest `window` are read, and LIMIT stops the index scan there.) `sessions`: only
    entries of these sessions (ids). Not `scored`: every score 0 (bm25 reads all of each
    word's entries to weigh it: most of the time of a common word).

    Scored, the words are first matched whole (by their stems): when that fills the window,
    those are the entries ranked. FTS5 reads a prefix's entries whole, twice (to match, then
    to weigh it for bm25), and LIMIT cannot stop that: a common word as a prefix costs 3x
    its whole-word match on a million entries (bench/bench_mcp.py). Fewer whole-word matches
    than a window: the words are matched as prefixes, as always."""
    if scored and any(query.is_prefix(w) for w in query.words):
        whole = _ranked(conn, match(query, prefixes=False), external_session_id=external_session_id,
                        window=window, sessions=sessions, score="-bm25(entries_fts)")
        if len(whole) >= window:
            return whole
    return _ranked(conn, match(query), external_session_id=external_session_id, window=window,
                   sessions=sessions, score="-bm25(entries_fts)" if scored else "0.0")


def _ranked(conn: sqlite3.Connection, words: str, *, external_session_id: int | None,
            window: int, sessions, score: str) -> list[tuple[int, float]]:
    if external_session_id is None and sessions is None:
        sql = (f"SELECT rowid, {score} FROM entries_fts WHERE entries_fts MATCH ?"
               " ORDER BY rowid DESC LIMIT ?")
        return conn.execute(sql, (words, window)).fetchall()
    if sessions is None:
        # within the session's span of seqs: the index skips the other sessions' matches
        # instead of joining each one (3x less CPU for a big session among many)
        low, high = conn.execute("SELECT MIN(seq), MAX(seq) FROM entries"
                                 " WHERE external_session_id = ?", (external_session_id,)).fetchone()
        if low is None:
            return []
        sql = (f"SELECT f.rowid, {score} FROM entries_fts f JOIN entries e ON"
               " e.seq = f.rowid WHERE entries_fts MATCH ? AND f.rowid BETWEEN ? AND ?"
               " AND e.external_session_id = ? ORDER BY f.rowid DESC LIMIT ?")
        return conn.execute(sql, (words, low, high, external_session_id, window)).fetchall()
    where, args = _scope("e.external_session_id", external_session_id, sessions)
    sql = (f"SELECT f.rowid, {score} FROM entries_fts f JOIN entries e ON"
           f" e.seq = f.rowid WHERE entries_fts MATCH ?{where} ORDER BY f.rowid DESC LIMIT ?")
    return conn.execute(sql, (words, *args, window)).fetchall()


def by_words(conn: sqlite3.Connection, query: SearchQuery, *, below: int,
             external_session_id: int | None, limit: int, sessions=None) -> list[int]:
    """Seqs below `below` whose text has every word asked for as a prefix, newest first,
    through the word index (the history the new index does not cover yet)."""
    words = " ".join(_quoted(w) + "*" for w in query.all_words)
    sql = f"SELECT f.rowid FROM {WORDS} f"
    args: list = [words, below]
    where = f" WHERE {WORDS} MATCH ? AND f.rowid < ?"
    if external_session_id is not None or sessions is not None:
        sql += " JOIN entries e ON e.seq = f.rowid"
        scope, more = _scope("e.external_session_id", external_session_id, sessions)
        where += scope
        args += more
    args.append(limit)
    return [seq for (seq,) in conn.execute(sql + where + " ORDER BY f.rowid DESC LIMIT ?", args)]


_HIT = ("SELECT e.seq, e.id, e.external_session_id, x.session_name, e.type, e.role,"
        " e.timestamp, e.data FROM entries e JOIN external_sessions x"
        " ON x.id = e.external_session_id WHERE e.seq IN ({})")


def hit_rows(conn: sqlite3.Connection, seqs: list[int]) -> list[tuple]:
    """The rows a search hit is made of, of these entries (any order)."""
    out: list[tuple] = []
    for start in range(0, len(seqs), 500):
        chunk = seqs[start:start + 500]
        out += conn.execute(_HIT.format(",".join("?" * len(chunk))), chunk).fetchall()
    return out
