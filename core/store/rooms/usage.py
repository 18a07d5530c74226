"""Tokens and cost: recorded per response as entries are written, read back as
reports and as figures per session, branch, range and response."""

from __future__ import annotations


from core.model.clock import to_text

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from typing import Any   # nor typing, ~2.5 ms)


from . import Room


class UsageRoom(Room):
    # While True, the responses the entry writers write wait for their price (no cost yet)
    # instead of being priced: an import's first rows then load nothing of the price table.
    # `price_waiting()` prices them afterwards (a first import's, once its newest sessions
    # are in; `reprice` would too: they are among the stale). rows.KEPT_ONLY: only those the
    # store keeps no rate for wait (a big import's, whose workers bring the rates in).
    prices_later = False

    def record(self, external_session_id: int, provider: str, protocol: str, model: str,
               input_tokens: int, output_tokens: int, total_tokens: int, duration_ms: int,
               timestamp: Any = None) -> None:
        """A model request an agent reports itself (the seed API's usage log): priced and
        counted in the session's totals like a response read from an entry. (An agent that
        appends its replies with `usage` in them need not call this: those are counted.)"""
        from core.usage.tokens import UsageRecord
        from core.store.usage.rows import UsageRows

        record = UsageRecord(model=model or "", provider=provider or "", protocol=protocol or "",
                             input_tokens=max(0, int(input_tokens)), output_tokens=max(0, int(output_tokens)),
                             duration_ms=int(duration_ms))
        stamp = to_text(timestamp if timestamp is not None else self._store.clock())
        with self.transaction() as conn:
            rows = UsageRows.reading(external_session_id)
            rows.unkeyed.append((record, (None, None, None), stamp))
            rows.write(conn, self._sql, self._backend)

    def report(self, by: str = "day", *, since: Any = None, until: Any = None,
               source: str | None = None, timezone: str | None = None,
               copies_under_original: bool = False) -> Any:
        """`arbor usage`: a `core.usage.tokens.Report` (rows per group, and totals); by session,
        `copies_under_original` folds each copy of a session into its original's row."""
        from core.store.usage import queries as usage_queries

        return usage_queries.report(self._store, by, since=since, until=until, source=source,
                                    zone_name=timezone, copies_under_original=copies_under_original)

    def by_session(self) -> dict[int, Any]:
        """Every session's usage figure (`core.usage.tokens.Figure`), its sub-agents' included, from
        the totals kept as entries are written: as cheap as listing the sessions."""
        from core.store.usage import queries as usage_queries

        return usage_queries.session_figures(self._store)

    def of_responses(self, seqs: list[int]) -> dict[int, Any]:
        """The usage of the responses these entries hold, by entry seq."""
        from core.store.usage import queries as usage_queries

        return usage_queries.responses(self._store, seqs)

    def of_path(self, head_seq: int | None, *, after_seq: int | None = None,
                before_seq: int | None = None) -> Any:
        """The usage on the path root -> head after the entry `after_seq` (a branch's own
        part, from its fork point) and before `before_seq`: a `core.usage.tokens.Figure`."""
        from core.store.usage import queries as usage_queries

        after = before = None
        if after_seq is not None:
            entry = self._store.entries.get(after_seq)
            after = entry.depth if entry is not None else None
        if before_seq is not None:
            entry = self._store.entries.get(before_seq)
            before = entry.depth if entry is not None else None
        return usage_queries.path_figure(self._store, head_seq,
                                         after_depth=-1 if after is None else after,
                                         before_depth=before)

    def of_range(self, head_seq: int | None, start: int, stop: int) -> Any:
        """The usage of the responses at depths [start, stop) of the path root -> head (a
        compaction's summarised part): a `core.usage.tokens.Figure`."""
        from core.store.usage import queries as usage_queries

        return usage_queries.path_figure(self._store, head_seq, after_depth=start - 1, before_depth=stop)

    def last_response_model(self, head_seq: int | None) -> tuple[str, str, str] | None:
        """(model, provider, timestamp) of the newest response on the path root -> head that
        names its model; None when there is none."""
        from core.store.usage import queries as usage_queries

        return usage_queries.last_model(self._store, head_seq)

    def by_day_and_model(self, since: Any, until: Any, *, timezone: str | None = None
                         ) -> dict[str, dict[str, Any]]:
        """{local day: {model: Figure}} (the usage screen's chart)."""
        from core.store.usage import queries as usage_queries

        return usage_queries.daily_by_model(self._store, since, until, timezone)

    def prices_stale(self) -> bool:
        """Whether some cost was computed with other prices than today's."""
        from core.store.usage.rows import prices_stale

        with self.reading() as conn:
            return prices_stale(conn, self._sql)

    def reprice(self) -> int:
        """Price again what was priced with other prices (an upgraded table, a changed
        ARBOR_PRICES); returns how many responses changed."""
        from core.store.usage.rows import reprice

        with self.transaction() as conn:
            return reprice(conn, self._sql)

    def price_waiting(self) -> int:
        """Price the responses written waiting for their price (`prices_later`), in one
        transaction, and their sessions' totals; returns how many were priced."""
        from core.store.usage.rows import price_waiting

        with self.transaction() as conn:
            return price_waiting(conn, self._sql)

    def waiting(self) -> bool:
        """Whether some response waits for its price (`prices_later`)."""
        from core.store.usage.rows import WAITING

        with self.reading() as conn:
            return conn.execute(self._sql.USAGE_ANY_WAITING, (WAITING,)).fetchone() is not None

    def of_session(self, external_session_id: int) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self._store._conn.execute(self._sql.USAGE_OF_SESSION, (external_session_id,))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row)) for row in cursor.fetchall()]
