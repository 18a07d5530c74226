"""The search index on PostgreSQL: each entry's search text as a `tsvector` in a GIN index,
the counterpart of sqlite_search (the same names, the same behaviour).

Since migration 11 its words are stemmed by `arbor_english`, a text search configuration
of the store's own: PostgreSQL's English Snowball stemmer without its stop words (SQLite's
porter tokenizer keeps every word too, so "the" or "it" find the same on both), and it
keeps positions (quoted phrases are `<->` phrase queries; ts_rank ranks the hits). ASCII
punctuation splits words, as SQLite's unicode61 tokenizer does. Only the first 250,000
characters of a text are indexed: a tsvector holds at most 1 MB.

The index from before (word prefixes, 'simple', no positions) is renamed
`entries_search_words` by the migration and kept while the new one catches up
(core/store/search.py). Deleting an entry deletes its rows in both (ON DELETE CASCADE).
"""

from __future__ import annotations

import re
from core.store.sqlite.search_index import BELOW, REINDEX_AT_ONCE, WORDS_UNTIL, texts_of  # noqa: F401

TYPE_CHECKING = False   # (its statements are read by every SQLite import: no typing)
if TYPE_CHECKING:
    from typing import Any

    from core.history.search_query import SearchQuery

# (the statements are PostgreSQL's in core/store/statements/search.py, which every SQLite
# store reads too: that module must not load this one)
from core.store.statements.search import POSTGRES_CONFIG as CONFIG  # noqa: E402
from core.store.statements.search import POSTGRES_LEXEMES as LEXEMES  # noqa: E402
from core.store.statements.search import Postgres as _Statements  # noqa: E402

WORDS = "entries_search_words"
SEARCH_INSERT = _Statements.SEARCH_INSERT
_PUNCTUATION = re.compile(r"[\s!-/:-@\[-`{-~]+")

_V11 = f"""
ALTER TABLE entries_search RENAME TO {WORDS};
ALTER INDEX idx_entries_search RENAME TO idx_{WORDS};
ALTER TABLE {WORDS} RENAME CONSTRAINT entries_search_pkey TO {WORDS}_pkey;
ALTER TABLE {WORDS} RENAME CONSTRAINT entries_search_seq_fkey TO {WORDS}_seq_fkey;
CREATE TEXT SEARCH DICTIONARY {CONFIG}_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION {CONFIG} (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION {CONFIG} ALTER MAPPING FOR asciiword, asciihword,
    hword_asciipart, word, hword, hword_part WITH {CONFIG}_stem;
CREATE TABLE entries_search (
    seq BIGINT PRIMARY KEY REFERENCES entries(seq) ON DELETE CASCADE,
    words tsvector NOT NULL
);
CREATE INDEX idx_entries_search ON entries_search USING gin (words);
"""


def search_text(text: bytes | str) -> str:
    """Search text as PostgreSQL takes it: text cannot hold NUL."""
    if type(text) is bytes:
        text = text.decode("utf-8")
    return text.replace("\x00", " ") if "\x00" in text else text


def start_stemmed_index(conn: Any) -> None:
    """Migration 11 (see sqlite_search.start_stemmed_index)."""
    conn.execute(_V11)
    low, high = conn.execute("SELECT MIN(seq), MAX(seq) FROM entries").fetchone()
    if high is None or high - low < REINDEX_AT_ONCE:
        for start in range(0, (high or 0) + 1, 5000):
            rows = conn.execute("SELECT seq, type, data FROM entries WHERE seq >= %s AND seq < %s",
                                (start, start + 5000)).fetchall()
            _insert(conn, texts_of(rows))
        conn.execute(f"DROP TABLE {WORDS}")
        return
    mark = str(high + 1)
    for key in (BELOW, WORDS_UNTIL):
        conn.execute("INSERT INTO store_meta(key, value) VALUES (%s, %s) ON CONFLICT(key)"
                     " DO UPDATE SET value = excluded.value", (key, mark))


def _insert(conn: Any, texts: list[tuple[int, str]], *, only_present: bool = False) -> None:
    if not texts:
        return
    sql = ("INSERT INTO entries_search(seq, words) SELECT r.seq, " + LEXEMES.format(text="r.text")
           + " FROM unnest(%s::bigint[], %s::text[]) AS r(seq, text)")
    if only_present:
        sql += (" WHERE EXISTS (SELECT 1 FROM entries e WHERE e.seq = r.seq)"
                " ON CONFLICT (seq) DO NOTHING")
    conn.execute(sql, ([seq for seq, _ in texts], [search_text(text) for _, text in texts]))


def backlog(conn: Any) -> tuple[int, int] | None:
    rows = dict(conn.execute("SELECT key, value FROM store_meta WHERE key IN (%s, %s)",
                             (BELOW, WORDS_UNTIL)).fetchall())
    if BELOW not in rows:
        return None
    return int(rows[BELOW]), int(rows.get(WORDS_UNTIL, rows[BELOW]))


def backlog_rows(conn: Any, below: int, count: int) -> list[tuple]:
    return conn.execute("SELECT seq, type, data FROM entries WHERE seq < %s ORDER BY seq DESC"
                        " LIMIT %s", (below, count)).fetchall()


def add_rows(conn: Any, texts: list[tuple[int, str]], low: int, below: int, done: bool) -> int:
    """See sqlite_search.add_rows. (The mark's row is locked first: two processes stepping
    through the backlog at once take turns, and the second finds the mark moved.)"""
    conn.execute("SELECT value FROM store_meta WHERE key = %s FOR UPDATE", (BELOW,)).fetchone()
    there = {seq for (seq,) in conn.execute(
        "SELECT seq FROM entries WHERE seq >= %s AND seq < %s", (low, below)).fetchall()}
    rows = [(seq, text) for seq, text in texts if seq in there]
    _insert(conn, rows, only_present=True)
    if done:
        conn.execute(f"DROP TABLE IF EXISTS {WORDS}")
        conn.execute("DELETE FROM store_meta WHERE key IN (%s, %s)", (BELOW, WORDS_UNTIL))
    else:
        conn.execute("UPDATE store_meta SET value = %s WHERE key = %s", (str(low), BELOW))
    return len(rows)


# ---------------------------------------------------------------------- queries
def _tokens(word: str) -> list[str]:
    return [t for t in _PUNCTUATION.split(word) if t]


def tsquery(query: SearchQuery) -> str:
    """The tsquery text: each loose word a prefix, each phrase a `<->` chain, all ANDed."""
    terms = [f"'{t}'" + (":*" if query.is_prefix(w) else "") for w in query.words
             for t in _tokens(w)]
    for phrase in query.phrases:
        tokens = [f"'{t}'" for w in phrase for t in _tokens(w)]
        if tokens:
            terms.append("(" + " <-> ".join(tokens) + ")")
    return " & ".join(terms)


def ranked(conn: Any, query: SearchQuery, *, external_session_id: int | None,
           window: int, sessions=None, scored: bool = True) -> list[tuple[int, float]]:
    """See sqlite_search.ranked (ts_rank here)."""
    text = tsquery(query)
    if not text:   # only punctuation: SQLite matches nothing for it either
        return []
    score = "ts_rank(s.words, q)" if scored else "0.0::real"
    sql = (f"SELECT s.seq, {score} FROM to_tsquery('{CONFIG}', %s) AS q,"
           " entries_search s")
    args: list[Any] = [text]
    if sessions is not None:
        sql += " JOIN entries e ON e.seq = s.seq AND e.external_session_id = ANY(%s::bigint[])"
        args.append(sorted(sessions))
    elif external_session_id is not None:
        sql += " JOIN entries e ON e.seq = s.seq AND e.external_session_id = %s"
        args.append(external_session_id)
    args.append(window)
    return conn.execute(sql + " WHERE s.words @@ q ORDER BY s.seq DESC LIMIT %s", args).fetchall()


def by_words(conn: Any, query: SearchQuery, *, below: int, external_session_id: int | None,
             limit: int, sessions=None) -> list[int]:
    """See sqlite_search.by_words."""
    tokens = [t for w in query.all_words for t in _tokens(w)]
    if not tokens:
        return []
    sql = f"SELECT s.seq FROM {WORDS} s"
    args: list[Any] = []
    if sessions is not None:
        sql += " JOIN entries e ON e.seq = s.seq AND e.external_session_id = ANY(%s::bigint[])"
        args.append(sorted(sessions))
    elif external_session_id is not None:
        sql += " JOIN entries e ON e.seq = s.seq AND e.external_session_id = %s"
        args.append(external_session_id)
    sql += " WHERE s.words @@ to_tsquery('simple', %s) AND s.seq < %s ORDER BY s.seq DESC LIMIT %s"
    args += [" & ".join(f"'{t}':*" for t in tokens), below, limit]
    return [seq for (seq,) in conn.execute(sql, args).fetchall()]


_HIT = ("SELECT e.seq, e.id, e.external_session_id, x.session_name, e.type, e.role,"
        " e.timestamp, e.data FROM entries e JOIN external_sessions x"
        " ON x.id = e.external_session_id WHERE e.seq = ANY(%s::bigint[])")


def hit_rows(conn: Any, seqs: list[int]) -> list[tuple]:
    return conn.execute(_HIT, (seqs,)).fetchall() if seqs else []
