"""The usage rows of one session's entries, kept by the `EntryWriter` as it writes them.

One row per API response per session (`usage.response_key` is unique within a session),
priced when written (from the rates kept in the store, price_cards.py: the price table is
loaded only for a model and day the store has no rates for), and the session's totals (`session_usage`, one row per model) moved
by the same amounts in the same transaction: so listing sessions with their cost reads
one small row each, and nothing is summed at display time.
"""

from __future__ import annotations


from core.usage.tokens import CODEX_TOKEN_COUNT, UsageRecord, UsageTracker, larger

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any
    from .price_cards import StoredPrices
    from core.store.writer import EntryWriter

_CHUNK = 400


class UsageRows:
    """Collects the usage of the entries an `EntryWriter` writes; `flush()` stores it."""

    HOLD = 4000  # responses held before they are written (the writer flushes them sooner)

    def __init__(self, writer: "EntryWriter"):
        self.writer = writer
        self.session = writer.external_session_id
        self.tracker = UsageTracker()
        self.keyed: dict[str, list] = {}      # key -> [record, (seq, chain, depth), stamp]
        self.unkeyed: list[tuple[UsageRecord, tuple, str]] = []
        self._primed = False
        self._had_usage: bool | None = None

    @classmethod
    def reading(cls, session: int, *, had_usage: bool | None = None) -> "UsageRows":
        """Rows for a session without an EntryWriter (the migration, a reported request)."""
        rows = cls.__new__(cls)
        rows.writer = None  # type: ignore[assignment]
        rows.session = session
        rows.tracker = UsageTracker()
        rows.keyed = {}
        rows.unkeyed = []
        rows._primed = True
        rows._had_usage = had_usage
        return rows

    def take(self, seq: int, chain: int, depth: int, entry_id: str, entry_type: str, stamp: str,
             data: dict[str, Any]) -> None:
        if entry_type == CODEX_TOKEN_COUNT and not self._primed:
            self._prime()
        record = self.tracker.take(entry_type, entry_id, stamp, data)
        if record is None or record.is_empty():
            return
        key = record.key
        where = (seq, chain, depth)
        if key is None:
            self.unkeyed.append((record, where, stamp))
            return
        held = self.keyed.get(key)
        if held is None:
            self.keyed[key] = [record, where, stamp]
        elif larger(record, held[0]):
            held[0] = record   # the larger copy's counts, the first copy's entry and time

    def pending(self) -> int:
        return len(self.keyed) + len(self.unkeyed)

    def _prime(self) -> None:
        """Before the first Codex turn of a writer that appends to an existing session: the
        model and the running total the session's earlier entries left off with."""
        self._primed = True
        writer = self.writer
        sql = writer._sql
        conn = writer.conn
        if conn.execute(sql.ENTRY_OF_SESSION_BEFORE, (self.session, writer._base)).fetchone() is None:
            return
        for entry_type, data in conn.execute(sql.USAGE_CODEX_STATE,
                                             (self.session, writer._base)).fetchall():
            decoded = _decode(data)
            if decoded is not None:
                self.tracker.take(entry_type, "", "", decoded)  # the model, the running total

    # ------------------------------------------------------------------ write
    def flush(self) -> None:
        if not self.keyed and not self.unkeyed:
            return
        writer = self.writer
        self.write(writer.conn, writer._sql, writer._backend,
                   later=writer.store.usage.prices_later)

    def write(self, conn, sql, backend, *, later: bool = False) -> None:
        """`later`: the responses the agent gave no cost of are written waiting for their
        price (no cost, price_basis WAITING; `price_waiting` prices them), so that nothing
        of the price table is loaded here (a first import's newest sessions); KEPT_ONLY:
        those the store keeps no rate for (price_cards.py) wait, the others are priced."""
        if later is True:
            book = None
        else:
            from .price_cards import StoredPrices

            # (the table is loaded only for a card not kept, and never with KEPT_ONLY)
            book = StoredPrices(conn, sql, learn=later != KEPT_ONLY)
        session = self.session
        if self._had_usage is None:
            self._had_usage = conn.execute(sql.USAGE_SESSION_HAS_ROWS, (session,)).fetchone() is not None
        keys = list(self.keyed)
        existing: dict[str, tuple] = {}
        elsewhere: set[str] = set()
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start:start + _CHUNK]
            if self._had_usage:
                for row in conn.execute(sql.usage_copies_in_session(len(chunk)), (session, *chunk)):
                    existing[row[0]] = row
            for (key,) in conn.execute(sql.usage_keys_elsewhere(len(chunk)), (*chunk, session)):
                elsewhere.add(key)
        inserts: list[tuple] = []
        updates: list[tuple] = []
        delta: dict[str, list] = {}

        def move(model: str, sign: int, inp, out, cc, cr, rsn, cost, sub: bool) -> None:
            d = delta.get(model)
            if d is None:
                d = delta[model] = [0] * 10
                d[6] = 0.0
                d[8] = 0.0
            d[0] += sign
            d[1] += sign * inp
            d[2] += sign * out
            d[3] += sign * cc
            d[4] += sign * cr
            d[5] += sign * rsn
            d[6] += sign * (cost or 0.0)
            d[7] += sign * (1 if cost is None else 0)
            if sub:
                d[8] += sign * (cost or 0.0)
                d[9] += sign * (inp + out + cc + cr)

        for key, (record, where, stamp) in self.keyed.items():
            old = existing.get(key)
            cost, logged, basis = self._price(book, record, stamp)
            if old is not None:
                # (key, seq, model, input, output, cc, cr, reasoning, cost, subagent)
                old_total = old[3] + old[4] + old[5] + old[6]
                if record.total_tokens > old_total or (record.total_tokens == old_total and
                                                       record.output_tokens > old[4]):
                    updates.append((record.input_tokens, record.output_tokens,
                                    record.cache_creation_tokens, record.cache_creation_1h_tokens,
                                    record.cache_read_tokens, record.reasoning_tokens,
                                    record.total_tokens, cost, logged, basis, old[1]))
                    move(old[2], -1, old[3], old[4], old[5], old[6], old[7], old[8], bool(old[9]))
                    move(old[2], 1, record.input_tokens, record.output_tokens,
                         record.cache_creation_tokens, record.cache_read_tokens,
                         record.reasoning_tokens, cost, bool(old[9]))
                continue
            inserts.append(self._row(record, where, stamp, key, cost, logged, basis,
                                     0 if key in elsewhere else 1))
            move(record.model, 1, record.input_tokens, record.output_tokens,
                 record.cache_creation_tokens, record.cache_read_tokens, record.reasoning_tokens,
                 cost, record.subagent)
        for record, where, stamp in self.unkeyed:
            cost, logged, basis = self._price(book, record, stamp)
            inserts.append(self._row(record, where, stamp, None, cost, logged, basis, 1))
            move(record.model, 1, record.input_tokens, record.output_tokens,
                 record.cache_creation_tokens, record.cache_read_tokens, record.reasoning_tokens,
                 cost, record.subagent)
        self.keyed.clear()
        self.unkeyed.clear()
        if inserts:
            if sql.USAGE_BUCKETS_OF_BATCH and BATCH_BUCKETS:
                # the rows, then their buckets in one statement (not a trigger per row)
                last = conn.execute(sql.USAGE_LAST_SEQ).fetchone()[0]
                backend.executemany(conn, sql.USAGE_INSERT_RESPONSE_BATCH, inserts)
                conn.execute(sql.USAGE_BUCKETS_OF_BATCH, (last,))
            else:
                backend.executemany(conn, sql.USAGE_INSERT_RESPONSE, inserts)
            self._had_usage = True
        if updates:
            backend.executemany(conn, sql.USAGE_UPDATE_COPY, updates)
        if delta:
            backend.executemany(conn, sql.SESSION_USAGE_ADD,
                                [(session, model, *d) for model, d in delta.items()])
        if book is not None:
            book.save()

    def _price(self, book: "StoredPrices | None", record: UsageRecord, stamp: str
               ) -> tuple[float | None, int, int]:
        if record.logged_cost is not None:
            return record.logged_cost, 1, 0
        if book is None:
            return None, 0, WAITING
        cost = book.cost_at(record.model, record.provider, stamp, record.input_tokens,
                            record.cache_creation_tokens, record.cache_creation_1h_tokens,
                            record.cache_read_tokens, record.output_tokens, record.reasoning_tokens,
                            record.fast)
        if cost is book.NOT_KEPT:
            return None, 0, WAITING
        return cost, 0, book.basis

    def _row(self, record: UsageRecord, where: tuple, stamp: str, key: str | None, cost,
             logged: int, basis: int, counted: int) -> tuple:
        return (self.session, record.provider, record.protocol, record.model, record.input_tokens,
                record.output_tokens, record.total_tokens, record.duration_ms, stamp, *where, key,
                record.cache_creation_tokens, record.cache_creation_1h_tokens,
                record.cache_read_tokens, record.reasoning_tokens, cost, logged, basis,
                1 if record.fast else 0, 1 if record.subagent else 0, counted)


# The price basis of a response written waiting for its price (`UsageRows.write(later=True)`):
# no basis the price table gives (pricing.basis is never 0), so it is also among those
# `prices_stale` finds and `reprice` prices, should `price_waiting` never come.
WAITING = 0
# `prices_later` (UsageRoom) so: a response is priced where the store keeps the rate for its
# model and day (price_cards.py), and written waiting where only the price table has it.
KEPT_ONLY = "kept"

# Whether a batch's rows are summed into their buckets by one statement (where the backend
# has it) rather than by the trigger, row by row; the same buckets either way
# (tests/test_usage_buckets_batch.py turns it off to compare).
BATCH_BUCKETS = True


def _decode(data: Any) -> dict[str, Any] | None:
    from core.util.fastjson import strict_loads

    try:
        decoded = strict_loads(data)
    except ValueError:
        return None
    return decoded if isinstance(decoded, dict) else None




def rebuild_from_entries(conn, sql, backend) -> None:
    """Fill the usage table from the entries of every session (a store made before arbor
    counted usage this way): the same reading as when entries are written, then each
    response counted once across sessions and every session's totals summed. Rows recorded
    by an agent through `record_usage` (no entry behind them) are kept and priced."""
    conn.execute(sql.USAGE_DROP_DERIVED)
    rows: UsageRows | None = None
    for seq, session, entry_id, entry_type, stamp, data, chain, depth in \
            conn.execute(sql.USAGE_SOURCE_ENTRIES).fetchall():
        if rows is None or rows.session != session:
            if rows is not None:
                rows.write(conn, sql, backend)
            rows = UsageRows.reading(session, had_usage=False)
        decoded = _decode(data)
        if decoded is not None:
            rows.take(seq, chain, depth, entry_id, entry_type, stamp, decoded)
        if rows.pending() >= UsageRows.HOLD:
            rows.write(conn, sql, backend)
    if rows is not None:
        rows.write(conn, sql, backend)
    reprice(conn, sql, rebuild=False)
    recount(conn, sql)


def recount(conn, sql) -> None:
    """Which copy of each response counts in totals, and every session's totals, again."""
    conn.execute(sql.USAGE_RECOUNT)
    conn.execute(sql.SESSION_USAGE_CLEAR)
    conn.execute(sql.SESSION_USAGE_REBUILD)


def prices_stale(conn, sql) -> bool:
    """Whether some cost was computed with other prices than today's (the table was
    upgraded or ARBOR_PRICES changed). Does not import the price table."""
    from core.usage import pricing

    return conn.execute(sql.USAGE_STALE_PRICES, (pricing.basis(),)).fetchone() is not None


def price_waiting(conn, sql) -> int:
    """Price the responses written waiting for their price (WAITING), with the rates kept in
    the store where it has them (price_cards.py: the table is loaded for the others), and
    bring their sessions' totals up to date; returns how many. One statement an update; the
    buckets follow the costs by their trigger."""
    from .price_cards import StoredPrices

    waiting = conn.execute(sql.USAGE_WAITING, (WAITING,)).fetchall()
    if not waiting:
        return 0
    book = StoredPrices(conn, sql)
    changed = []
    sessions = set()
    for seq, session, model, provider, stamp, inp, cc, cc1h, cr, out, rsn, fast in waiting:
        cost = book.cost_at(model, provider, stamp, inp, cc, cc1h, cr, out, rsn, bool(fast))
        changed.append((cost, book.basis, seq))
        sessions.add(session)
    conn.executemany(sql.USAGE_SET_PRICE, changed)
    for session in sorted(sessions):
        conn.execute(sql.SESSION_USAGE_CLEAR_OF, (session,))
        conn.execute(sql.SESSION_USAGE_REBUILD_OF, (session,))
    book.save()
    return len(changed)


def reprice(conn, sql, *, rebuild: bool = True) -> int:
    """Price again every response priced with other prices than today's; returns how many."""
    from core.usage import pricing

    book = pricing.price_book()
    changed = []
    for seq, model, provider, stamp, inp, cc, cc1h, cr, out, rsn, fast in \
            conn.execute(sql.USAGE_TO_PRICE, (book.basis,)).fetchall():
        cost = book.cost_at(model, provider, stamp, inp, cc, cc1h, cr, out, rsn, bool(fast))
        changed.append((cost, book.basis, seq))
    if changed:
        conn.executemany(sql.USAGE_SET_PRICE, changed)
        if rebuild:
            conn.execute(sql.SESSION_USAGE_CLEAR)
            conn.execute(sql.SESSION_USAGE_REBUILD)
    return len(changed)
