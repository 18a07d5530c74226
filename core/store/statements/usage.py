"""Usage rows, their totals and buckets, and the reports read from them.

SQLite's statements and PostgreSQL's, side by side under the same
names (`?` and `%s` for parameters)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
from .common import SESSION_USAGE_ON_CONFLICT


def _sqlite_bucket_batch() -> str:
    """The statement that sums the usage rows an import wrote with `bucketed = 0` after the
    seq given into their buckets (core/store/sqlite/migrations.py, migrations 9 and 12)."""
    key = "counted, hour, external_session_id, model"
    sums = ("responses", "input_tokens", "output_tokens", "cache_creation_tokens",
            "cache_read_tokens", "reasoning_tokens", "cost_usd", "unpriced", "subagent_cost_usd",
            "subagent_tokens")
    tokens = "u.input_tokens + u.output_tokens + u.cache_creation_tokens + u.cache_read_tokens"
    return (f"INSERT INTO usage_buckets({key}, {', '.join(sums)})"
            " SELECT u.counted, substr(u.timestamp, 1, 13), u.external_session_id, u.model,"
            " COUNT(*), SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),"
            " SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), SUM(COALESCE(u.cost_usd, 0)),"
            " SUM(u.cost_usd IS NULL),"
            " SUM(CASE WHEN u.subagent = 1 THEN COALESCE(u.cost_usd, 0) ELSE 0 END),"
            f" SUM(CASE WHEN u.subagent = 1 THEN {tokens} ELSE 0 END)"
            " FROM usage u WHERE u.seq > ? AND u.bucketed = 0 GROUP BY 1, 2, 3, 4"
            f" ON CONFLICT({key}) DO UPDATE SET "
            + ", ".join(f"{c} = {c} + excluded.{c}" for c in sums))



class SQLite:
    USAGE_INSERT = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp) VALUES (?,?,?,?,?,?,?,?,?)")
    USAGE_OF_SESSION = (
        "SELECT provider, protocol, model, input_tokens, output_tokens, total_tokens,"
        " duration_ms, timestamp FROM usage WHERE external_session_id = ? ORDER BY seq")
    # one row per response (core/store/usage/rows.py); the order of usage_rows._row
    USAGE_INSERT_RESPONSE = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp, entry_seq, chain, depth,"
        " response_key, cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens,"
        " reasoning_tokens, cost_usd, cost_logged, price_basis, fast, subagent, counted)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
    # an import's rows: summed into their buckets a batch at a time (migration 12), after
    # the usage row with the seq USAGE_LAST_SEQ gave before the batch
    USAGE_INSERT_RESPONSE_BATCH = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp, entry_seq, chain, depth,"
        " response_key, cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens,"
        " reasoning_tokens, cost_usd, cost_logged, price_basis, fast, subagent, counted, bucketed)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)")
    USAGE_LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) FROM usage"
    USAGE_BUCKETS_OF_BATCH = _sqlite_bucket_batch()
    USAGE_UPDATE_COPY = (
        "UPDATE usage SET input_tokens = ?, output_tokens = ?, cache_creation_tokens = ?,"
        " cache_creation_1h_tokens = ?, cache_read_tokens = ?, reasoning_tokens = ?,"
        " total_tokens = ?, cost_usd = ?, cost_logged = ?, price_basis = ? WHERE seq = ?")
    USAGE_SESSION_HAS_ROWS = "SELECT 1 FROM usage WHERE external_session_id = ? LIMIT 1"
    ENTRY_OF_SESSION_BEFORE = ("SELECT 1 FROM entries WHERE external_session_id = ? AND seq < ?"
                               " LIMIT 1")
    USAGE_CODEX_STATE = (
        "SELECT type, data FROM entries WHERE external_session_id = ? AND seq < ? AND type IN"
        " ('model_change', 'codex:turn_context', 'codex:event_msg.token_count') ORDER BY seq")
    USAGE_SOURCE_ENTRIES = (
        "SELECT seq, external_session_id, id, type, timestamp, data, chain, depth FROM entries"
        " WHERE type IN ('message', 'model_change', 'codex:turn_context',"
        " 'codex:event_msg.token_count') ORDER BY external_session_id, seq")
    USAGE_DROP_DERIVED = (
        "DELETE FROM usage WHERE entry_seq IS NOT NULL OR external_session_id IN"
        " (SELECT id FROM external_sessions WHERE source != 'arbor')")
    SESSION_USAGE_ADD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
        + SESSION_USAGE_ON_CONFLICT)
    # Rebuilt from the rows (after a migration, a repricing, a deletion of a session).
    SESSION_USAGE_CLEAR = "DELETE FROM session_usage"
    SESSION_USAGE_REBUILD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens)"
        " SELECT external_session_id, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),"
        " SUM(cache_creation_tokens), SUM(cache_read_tokens), SUM(reasoning_tokens),"
        " COALESCE(SUM(cost_usd), 0), SUM(cost_usd IS NULL),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens"
        " + cache_creation_tokens + cache_read_tokens END), 0)"
        " FROM usage GROUP BY external_session_id, model")
    SESSION_USAGE_REBUILD_OF = SESSION_USAGE_REBUILD.replace(
        " FROM usage GROUP BY", " FROM usage WHERE external_session_id = ? GROUP BY")
    # the first row of each response across sessions is the one that counts in totals
    USAGE_RECOUNT = (
        "UPDATE usage SET counted = CASE WHEN response_key IS NULL OR seq = (SELECT MIN(u.seq)"
        " FROM usage u WHERE u.response_key = usage.response_key) THEN 1 ELSE 0 END")
    USAGE_RECOUNT_KEYS_OF = (
        "SELECT DISTINCT response_key FROM usage WHERE external_session_id = ? AND counted = 1"
        " AND response_key IS NOT NULL")
    USAGE_RECOUNT_KEY = (
        "UPDATE usage SET counted = 1 WHERE seq = (SELECT MIN(seq) FROM usage WHERE"
        " response_key = ?) AND NOT EXISTS (SELECT 1 FROM usage WHERE response_key = ?"
        " AND counted = 1)")
    USAGE_TO_PRICE = (
        "SELECT seq, model, provider, timestamp, input_tokens, cache_creation_tokens,"
        " cache_creation_1h_tokens, cache_read_tokens, output_tokens, reasoning_tokens, fast"
        " FROM usage WHERE cost_logged = 0 AND price_basis != ?")
    USAGE_SET_PRICE = "UPDATE usage SET cost_usd = ?, price_basis = ? WHERE seq = ?"
    # the responses written waiting for their price (core/store/usage/rows.py: WAITING)
    USAGE_WAITING = (
        "SELECT seq, external_session_id, model, provider, timestamp, input_tokens,"
        " cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens, output_tokens,"
        " reasoning_tokens, fast FROM usage WHERE price_basis = ? AND cost_logged = 0")
    USAGE_ANY_WAITING = "SELECT 1 FROM usage WHERE price_basis = ? AND cost_logged = 0 LIMIT 1"
    SESSION_USAGE_CLEAR_OF = "DELETE FROM session_usage WHERE external_session_id = ?"
    # (< or >, not !=: each side is a range of idx_usage_basis, so nothing stale costs no scan)
    USAGE_STALE_PRICES = ("SELECT 1 FROM usage WHERE (price_basis < ?1 OR price_basis > ?1)"
                          " AND cost_logged = 0 LIMIT 1")
    SESSION_USAGE_ALL = (
        "SELECT external_session_id, model, responses, input_tokens, output_tokens,"
        " cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced,"
        " subagent_cost_usd, subagent_tokens FROM session_usage")
    USAGE_SUBAGENT_PARENTS = (
        "SELECT x.id, COALESCE(x.parent_id, (SELECT p.id FROM external_sessions p"
        " WHERE p.uid = x.parent_session)) FROM external_sessions x"
        " WHERE x.kind = 'subagent'")
    USAGE_SESSION_NAMES = "SELECT id, uid, session_name FROM external_sessions"
    _USAGE_SUMS = (
        "COUNT(*), SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),"
        " SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), COALESCE(SUM(u.cost_usd), 0),"
        " SUM(u.cost_usd IS NULL), COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.input_tokens + u.output_tokens"
        " + u.cache_creation_tokens + u.cache_read_tokens END), 0)")
    USAGE_OF_PATH_PIECE = (
        f"SELECT u.model, {_USAGE_SUMS} FROM usage u WHERE u.chain = ? AND u.depth BETWEEN ? AND ?"
        " GROUP BY u.model")
    USAGE_LAST_ON_PATH_PIECE = (
        "SELECT u.model, u.provider, u.timestamp FROM usage u WHERE u.chain = ?"
        " AND u.depth BETWEEN ? AND ? AND u.model <> '' ORDER BY u.depth DESC LIMIT 1")

    @staticmethod
    def usage_copies_in_session(count: int) -> str:
        marks = ",".join("?" * count)
        return ("SELECT response_key, seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, subagent FROM usage"
                f" WHERE external_session_id = ? AND response_key IN ({marks})")

    @staticmethod
    def usage_keys_elsewhere(count: int) -> str:
        marks = ",".join("?" * count)
        return (f"SELECT DISTINCT response_key FROM usage WHERE response_key IN ({marks})"
                " AND external_session_id != ?")

    @staticmethod
    def usage_of_entries(count: int) -> str:
        marks = ",".join("?" * count)
        return ("SELECT entry_seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, cost_logged FROM usage"
                f" WHERE entry_seq IN ({marks})")

    @staticmethod
    def usage_bucket_report(grain: str, *, counted_only: bool, since: str | None,
                            until: str | None, source: str | None) -> tuple[str, list[Any]]:
        """`usage_report` from the hourly buckets (migration 9): the same rows, for grains
        of an hour or more ('hour', 'model', 'project', 'session', 'all') and bounds on
        whole hours."""
        group = {"hour": "b.hour", "model": "''", "project": "x.cwd",
                 "session": "b.external_session_id", "all": "''"}[grain]
        where, args = ["b.responses <> 0"], []
        if counted_only:
            where.append("b.counted = 1")
        if since:
            where.append("b.hour >= ?")
            args.append(since[:13])
        if until:
            where.append("b.hour < ?")
            args.append(until[:13])
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = b.external_session_id"
        if source:
            where.append("x.source = ?")
            args.append(source)
        sql = (f"SELECT {group}, b.model, SUM(b.responses), SUM(b.input_tokens),"
               " SUM(b.output_tokens), SUM(b.cache_creation_tokens), SUM(b.cache_read_tokens),"
               " SUM(b.reasoning_tokens), SUM(b.cost_usd), SUM(b.unpriced),"
               " SUM(b.subagent_cost_usd), SUM(b.subagent_tokens)"
               f" FROM usage_buckets b{join} WHERE " + " AND ".join(where) + " GROUP BY 1, 2")
        return sql, args

    @staticmethod
    def usage_report(grain: str, *, counted_only: bool, since: str | None, until: str | None,
                     source: str | None) -> tuple[str, list[Any]]:
        """Usage summed per (group, model): grain 'hour' and 'minute' group by the UTC hour or
        minute (the caller makes local days of them), 'model', 'project' (the session's cwd),
        'session', or 'all' (one group)."""
        group = {"hour": "substr(u.timestamp, 1, 13)", "minute": "substr(u.timestamp, 1, 16)",
                 "model": "''", "project": "x.cwd", "session": "u.external_session_id",
                 "all": "''"}[grain]
        where, args = [], []
        if counted_only:
            where.append("u.counted = 1")
        if since:
            where.append("u.timestamp >= ?")
            args.append(since)
        if until:
            where.append("u.timestamp < ?")
            args.append(until)
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = u.external_session_id"
        if source:
            where.append("x.source = ?")
            args.append(source)
        sql = (f"SELECT {group}, u.model, {SQLite._USAGE_SUMS} FROM usage u{join}"
               + (" WHERE " + " AND ".join(where) if where else "") + " GROUP BY 1, 2")
        return sql, args


class Postgres:
    USAGE_INSERT = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    USAGE_OF_SESSION = (
        "SELECT provider, protocol, model, input_tokens, output_tokens, total_tokens,"
        " duration_ms, timestamp FROM usage WHERE external_session_id = %s ORDER BY seq")
    # one row per response (core/store/usage/rows.py); the order of usage_rows._row
    USAGE_INSERT_RESPONSE = (
        "INSERT INTO usage(external_session_id, provider, protocol, model, input_tokens,"
        " output_tokens, total_tokens, duration_ms, timestamp, entry_seq, chain, depth,"
        " response_key, cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens,"
        " reasoning_tokens, cost_usd, cost_logged, price_basis, fast, subagent, counted)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
    # (PostgreSQL's trigger sums each row: the batch statement is SQLite's)
    USAGE_INSERT_RESPONSE_BATCH = None
    USAGE_LAST_SEQ = None
    USAGE_BUCKETS_OF_BATCH = None
    USAGE_UPDATE_COPY = (
        "UPDATE usage SET input_tokens = %s, output_tokens = %s, cache_creation_tokens = %s,"
        " cache_creation_1h_tokens = %s, cache_read_tokens = %s, reasoning_tokens = %s,"
        " total_tokens = %s, cost_usd = %s, cost_logged = %s, price_basis = %s WHERE seq = %s")
    USAGE_SESSION_HAS_ROWS = "SELECT 1 FROM usage WHERE external_session_id = %s LIMIT 1"
    ENTRY_OF_SESSION_BEFORE = ("SELECT 1 FROM entries WHERE external_session_id = %s AND seq < %s"
                               " LIMIT 1")
    USAGE_CODEX_STATE = (
        "SELECT type, data FROM entries WHERE external_session_id = %s AND seq < %s AND type IN"
        " ('model_change', 'codex:turn_context', 'codex:event_msg.token_count') ORDER BY seq")
    USAGE_SOURCE_ENTRIES = (
        "SELECT seq, external_session_id, id, type, timestamp, data, chain, depth FROM entries"
        " WHERE type IN ('message', 'model_change', 'codex:turn_context',"
        " 'codex:event_msg.token_count') ORDER BY external_session_id, seq")
    USAGE_DROP_DERIVED = (
        "DELETE FROM usage WHERE entry_seq IS NOT NULL OR external_session_id IN"
        " (SELECT id FROM external_sessions WHERE source != 'arbor')")
    SESSION_USAGE_ADD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT(external_session_id, model) DO UPDATE SET"
        " responses = session_usage.responses + excluded.responses,"
        " input_tokens = session_usage.input_tokens + excluded.input_tokens,"
        " output_tokens = session_usage.output_tokens + excluded.output_tokens,"
        " cache_creation_tokens = session_usage.cache_creation_tokens + excluded.cache_creation_tokens,"
        " cache_read_tokens = session_usage.cache_read_tokens + excluded.cache_read_tokens,"
        " reasoning_tokens = session_usage.reasoning_tokens + excluded.reasoning_tokens,"
        " cost_usd = session_usage.cost_usd + excluded.cost_usd, unpriced = session_usage.unpriced + excluded.unpriced,"
        " subagent_cost_usd = session_usage.subagent_cost_usd + excluded.subagent_cost_usd,"
        " subagent_tokens = session_usage.subagent_tokens + excluded.subagent_tokens")
    # Rebuilt from the rows (after a migration, a repricing, a deletion of a session).
    SESSION_USAGE_CLEAR = "DELETE FROM session_usage"
    SESSION_USAGE_REBUILD = (
        "INSERT INTO session_usage(external_session_id, model, responses, input_tokens,"
        " output_tokens, cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd,"
        " unpriced, subagent_cost_usd, subagent_tokens)"
        " SELECT external_session_id, model, COUNT(*), SUM(input_tokens), SUM(output_tokens),"
        " SUM(cache_creation_tokens), SUM(cache_read_tokens), SUM(reasoning_tokens),"
        " COALESCE(SUM(cost_usd), 0), SUM((cost_usd IS NULL)::int),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens"
        " + cache_creation_tokens + cache_read_tokens END), 0)"
        " FROM usage GROUP BY external_session_id, model")
    SESSION_USAGE_REBUILD_OF = SESSION_USAGE_REBUILD.replace(
        " FROM usage GROUP BY", " FROM usage WHERE external_session_id = %s GROUP BY")
    # the first row of each response across sessions is the one that counts in totals
    USAGE_RECOUNT = (
        "UPDATE usage SET counted = CASE WHEN response_key IS NULL OR seq = (SELECT MIN(u.seq)"
        " FROM usage u WHERE u.response_key = usage.response_key) THEN 1 ELSE 0 END")
    USAGE_RECOUNT_KEYS_OF = (
        "SELECT DISTINCT response_key FROM usage WHERE external_session_id = %s AND counted = 1"
        " AND response_key IS NOT NULL")
    USAGE_RECOUNT_KEY = (
        "UPDATE usage SET counted = 1 WHERE seq = (SELECT MIN(seq) FROM usage WHERE"
        " response_key = %s) AND NOT EXISTS (SELECT 1 FROM usage WHERE response_key = %s"
        " AND counted = 1)")
    USAGE_TO_PRICE = (
        "SELECT seq, model, provider, timestamp, input_tokens, cache_creation_tokens,"
        " cache_creation_1h_tokens, cache_read_tokens, output_tokens, reasoning_tokens, fast"
        " FROM usage WHERE cost_logged = 0 AND price_basis != %s")
    USAGE_SET_PRICE = "UPDATE usage SET cost_usd = %s, price_basis = %s WHERE seq = %s"
    USAGE_WAITING = (
        "SELECT seq, external_session_id, model, provider, timestamp, input_tokens,"
        " cache_creation_tokens, cache_creation_1h_tokens, cache_read_tokens, output_tokens,"
        " reasoning_tokens, fast FROM usage WHERE price_basis = %s AND cost_logged = 0")
    USAGE_ANY_WAITING = "SELECT 1 FROM usage WHERE price_basis = %s AND cost_logged = 0 LIMIT 1"
    SESSION_USAGE_CLEAR_OF = "DELETE FROM session_usage WHERE external_session_id = %s"
    USAGE_STALE_PRICES = "SELECT 1 FROM usage WHERE cost_logged = 0 AND price_basis != %s LIMIT 1"
    SESSION_USAGE_ALL = (
        "SELECT external_session_id, model, responses, input_tokens, output_tokens,"
        " cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced,"
        " subagent_cost_usd, subagent_tokens FROM session_usage")
    USAGE_SUBAGENT_PARENTS = (
        "SELECT x.id, COALESCE(x.parent_id, (SELECT p.id FROM external_sessions p"
        " WHERE p.uid = x.parent_session)) FROM external_sessions x"
        " WHERE x.kind = 'subagent'")
    USAGE_SESSION_NAMES = "SELECT id, uid, session_name FROM external_sessions"
    _USAGE_SUMS = (
        "COUNT(*), SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_creation_tokens),"
        " SUM(u.cache_read_tokens), SUM(u.reasoning_tokens), COALESCE(SUM(u.cost_usd), 0),"
        " SUM((u.cost_usd IS NULL)::int), COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.cost_usd END), 0),"
        " COALESCE(SUM(CASE WHEN u.subagent = 1 THEN u.input_tokens + u.output_tokens"
        " + u.cache_creation_tokens + u.cache_read_tokens END), 0)")
    USAGE_OF_PATH_PIECE = (
        f"SELECT u.model, {_USAGE_SUMS} FROM usage u WHERE u.chain = %s AND u.depth BETWEEN %s AND %s"
        " GROUP BY u.model")
    USAGE_LAST_ON_PATH_PIECE = (
        "SELECT u.model, u.provider, u.timestamp FROM usage u WHERE u.chain = %s"
        " AND u.depth BETWEEN %s AND %s AND u.model <> '' ORDER BY u.depth DESC LIMIT 1")

    @staticmethod
    def usage_copies_in_session(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return ("SELECT response_key, seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, subagent FROM usage"
                f" WHERE external_session_id = %s AND response_key IN ({marks})")

    @staticmethod
    def usage_keys_elsewhere(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return (f"SELECT DISTINCT response_key FROM usage WHERE response_key IN ({marks})"
                " AND external_session_id != %s")

    @staticmethod
    def usage_of_entries(count: int) -> str:
        marks = ",".join(["%s"] * count)
        return ("SELECT entry_seq, model, input_tokens, output_tokens, cache_creation_tokens,"
                " cache_read_tokens, reasoning_tokens, cost_usd, cost_logged FROM usage"
                f" WHERE entry_seq IN ({marks})")

    @staticmethod
    def usage_bucket_report(grain: str, *, counted_only: bool, since: str | None,
                            until: str | None, source: str | None) -> tuple[str, list[Any]]:
        """`usage_report` from the hourly buckets (migration 9); see sqlite.Postgres."""
        group = {"hour": "b.hour", "model": "''", "project": "x.cwd",
                 "session": "b.external_session_id", "all": "''"}[grain]
        where, args = ["b.responses <> 0"], []
        if counted_only:
            where.append("b.counted = 1")
        if since:
            where.append("b.hour >= %s")
            args.append(since[:13])
        if until:
            where.append("b.hour < %s")
            args.append(until[:13])
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = b.external_session_id"
        if source:
            where.append("x.source = %s")
            args.append(source)
        sql = (f"SELECT {group}, b.model, SUM(b.responses), SUM(b.input_tokens),"
               " SUM(b.output_tokens), SUM(b.cache_creation_tokens), SUM(b.cache_read_tokens),"
               " SUM(b.reasoning_tokens), SUM(b.cost_usd), SUM(b.unpriced),"
               " SUM(b.subagent_cost_usd), SUM(b.subagent_tokens)"
               f" FROM usage_buckets b{join} WHERE " + " AND ".join(where) + " GROUP BY 1, 2")
        return sql, args

    @staticmethod
    def usage_report(grain: str, *, counted_only: bool, since: str | None, until: str | None,
                     source: str | None) -> tuple[str, list[Any]]:
        """Usage summed per (group, model): grain 'hour' and 'minute' group by the UTC hour or
        minute (the caller makes local days of them), 'model', 'project' (the session's cwd),
        'session', or 'all' (one group)."""
        group = {"hour": "substr(u.timestamp, 1, 13)", "minute": "substr(u.timestamp, 1, 16)",
                 "model": "''", "project": "x.cwd", "session": "u.external_session_id",
                 "all": "''"}[grain]
        where, args = [], []
        if counted_only:
            where.append("u.counted = 1")
        if since:
            where.append("u.timestamp >= %s")
            args.append(since)
        if until:
            where.append("u.timestamp < %s")
            args.append(until)
        join = ""
        if source or grain == "project":
            join = " JOIN external_sessions x ON x.id = u.external_session_id"
        if source:
            where.append("x.source = %s")
            args.append(source)
        sql = (f"SELECT {group}, u.model, {Postgres._USAGE_SUMS} FROM usage u{join}"
               + (" WHERE " + " AND ".join(where) if where else "") + " GROUP BY 1, 2")
        return sql, args
