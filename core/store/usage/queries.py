"""Reading usage back: reports, session and branch figures, a response's own figures.

Every figure here is read from rows kept up to date as entries are written (`usage`, one
row per response per session, and `session_usage`, a session's totals per model), so none
of it sums the entries themselves. Totals across sessions count a response once (rows with
`counted = 0` are copies of a response another session holds first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

from core.usage.tokens import Figure, Report, local_zone, period_key, utc_bounds

if TYPE_CHECKING:
    from core.store.store import Store


@dataclass(frozen=True, slots=True)
class ResponseUsage:
    """One response's usage, for a message header."""

    model: str
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    logged: bool

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + \
            self.cache_read_tokens

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_tokens + self.cache_read_tokens


def _figure_rows(rows, figure_of) -> None:
    for row in rows:
        key, model = row[0], row[1]
        figure_of(key).add_row(model, row[3], row[4], row[5], row[6], row[7], row[8], row[2], row[9],
                               row[10], row[11])


def _parents(store: "Store") -> dict[int, int]:
    """Sub-agent session id -> the id of the session that spawned it."""
    out: dict[int, int] = {}
    with store.reading() as conn:
        for child, parent in conn.execute(store._sql.USAGE_SUBAGENT_PARENTS):
            if parent is not None and parent != child:
                out[child] = parent
    return out


# A copy of another session's conversation (`o` / `arbor resume`, an agent's own fork): the
# session it was copied from. (No parameters: the same statement on both backends.)
_COPIES_OF = ("SELECT x.id, COALESCE(x.parent_id, (SELECT p.id FROM external_sessions p"
              " WHERE p.uid = x.parent_session)) FROM external_sessions x WHERE x.kind = 'fork'")


def _top(session: int, parents: dict[int, int]) -> int:
    seen = 0
    while session in parents and seen < 64:
        session = parents[session]
        seen += 1
    return session


def session_figures(store: "Store") -> dict[int, Figure]:
    """Every session's figure (its own usage and its sub-agents'), from the kept totals:
    one row per session and model, however many responses."""
    parents = _parents(store)
    out: dict[int, Figure] = {}
    with store.reading() as conn:
        rows = conn.execute(store._sql.SESSION_USAGE_ALL).fetchall()
    for session, model, responses, inp, out_t, cc, cr, rsn, cost, unpriced, sub_cost, sub_tokens in rows:
        top = _top(session, parents)
        figure = out.get(top)
        if figure is None:
            figure = out[top] = Figure()
        if top != session:   # a sub-agent's usage: all of it is the sub-agent part
            sub_cost, sub_tokens = cost, inp + out_t + cc + cr
        figure.add_row(model, inp, out_t, cc, cr, rsn, cost, responses, unpriced, sub_cost, sub_tokens)
    return out


def report(store: "Store", by: str, *, since: date | None = None, until: date | None = None,
           source: str | None = None, zone_name: str | None = None,
           copies_under_original: bool = False) -> Report:
    """`arbor usage`: one figure per group, and the total (each response once).

    `copies_under_original` (by session): a copy of a session (kind `fork`: what `o`
    writes, an agent's own fork) is not a row of its own but part of the row of the session
    it was copied from, each response once (its copied responses are that session's); the
    report's `copies` says how many each row holds."""
    zone = local_zone(zone_name)
    lo, hi = utc_bounds(since, until, zone)
    sql = store._sql
    if by in ("day", "week", "month"):
        grain = "minute" if _odd_offset(zone) else "hour"
    else:
        grain = by
    # the hourly buckets kept by triggers (a few rows per session and hour); the responses
    # themselves only where a local day starts inside an hour (zones off by 30 or 45 min)
    build = sql.usage_report if grain == "minute" else sql.usage_bucket_report
    query, args = build(grain, counted_only=by != "session" or copies_under_original, since=lo,
                        until=hi, source=source)
    total_query, total_args = build("all", counted_only=True, since=lo, until=hi, source=source)
    with store.reading() as conn:
        rows = conn.execute(query, args).fetchall()
        total_rows = conn.execute(total_query, total_args).fetchall()
        names = {}
        if by == "session":
            parents = _parents(store)
            copied_from: dict[int, int] = {}
            if copies_under_original:
                copied_from = {child: parent for child, parent in conn.execute(_COPIES_OF)
                               if parent is not None and parent != child}
            names = {sid: (uid, name) for sid, uid, name in conn.execute(sql.USAGE_SESSION_NAMES)}
    groups: dict[Any, Figure] = {}

    def figure_of(key):
        figure = groups.get(key)
        if figure is None:
            figure = groups[key] = Figure()
        return figure

    if by in ("day", "week", "month"):
        cache: dict[str, str] = {}

        def local_key(stamp: str) -> str:
            out = cache.get(stamp)
            if out is None:
                text = stamp + (":00:00" if len(stamp) == 13 else ":00")
                moment = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
                out = cache[stamp] = period_key(moment.astimezone(zone).date(), by)
            return out

        _figure_rows(rows, lambda stamp: figure_of(local_key(stamp)))
    elif by == "session":
        tops: dict[int, int] = {}

        def original(session: int) -> int:
            """The session a row goes to: a sub-agent's parent, a copy's original."""
            top = tops.get(session)
            if top is None:
                top, seen = session, 0
                while seen < 64 and (top in parents or top in copied_from):
                    top = parents.get(top, copied_from.get(top))
                    seen += 1
                tops[session] = top
            return top

        for row in rows:
            session = row[0]
            top = original(session)
            sub_cost, sub_tokens = row[10], row[11]
            if top != session:
                sub_cost, sub_tokens = row[8], row[3] + row[4] + row[5] + row[6]
            figure_of(top).add_row(row[1], row[3], row[4], row[5], row[6], row[7], row[8], row[2],
                                   row[9], sub_cost, sub_tokens)
    elif by == "model":
        for row in rows:
            figure_of(row[1] or "(unknown model)").add_row(row[1], *row[3:8], row[8], row[2],
                                                            row[9], row[10], row[11])
    else:
        _figure_rows(rows, figure_of)
    totals = Figure()
    _figure_rows(total_rows, lambda _key: totals)
    out_rows = []
    for key, figure in groups.items():
        if by == "session":
            uid, name = names.get(key, (str(key), ""))
            out_rows.append((uid, name, figure))
        else:
            out_rows.append((key if key is not None else "", "", figure))
    if by in ("model", "project", "session"):
        out_rows.sort(key=lambda r: (-r[2].cost_usd, -r[2].total_tokens, str(r[0])))
    else:
        out_rows.sort(key=lambda r: r[0])
    copies: dict[str, int] = {}
    if by == "session" and copies_under_original:
        for child in copied_from:
            top = original(child)
            if top != child:
                uid = names.get(top, (str(top), ""))[0]
                copies[uid] = copies.get(uid, 0) + 1
    return Report(by=by, rows=out_rows, totals=totals, copies=copies)


def _odd_offset(zone) -> bool:
    """Whether the zone's offset is not a whole number of hours (India, Nepal, …) at some
    time of the year: its days then start at a minute that hourly rows cannot split."""
    for month in (1, 7):
        offset = datetime(2025, month, 1, tzinfo=timezone.utc).astimezone(zone).utcoffset()
        if offset is not None and offset.total_seconds() % 3600:
            return True
    return False


def responses(store: "Store", seqs: list[int]) -> dict[int, ResponseUsage]:
    """The usage of the responses held by these entries (a message header's figures)."""
    out: dict[int, ResponseUsage] = {}
    if not seqs:
        return out
    sql = store._sql
    with store.reading() as conn:
        for start in range(0, len(seqs), 400):
            chunk = seqs[start:start + 400]
            for row in conn.execute(sql.usage_of_entries(len(chunk)), chunk):
                out[row[0]] = ResponseUsage(row[1], row[2], row[3], row[4], row[5], row[6], row[7],
                                            bool(row[8]))
    return out


def path_figure(store: "Store", head_seq: int | None, *, after_depth: int = -1,
                before_depth: int | None = None) -> Figure:
    """The usage of the responses on the path root -> head whose depth is above
    `after_depth` (a branch's own part starts after its fork point) and below
    `before_depth`."""
    figure = Figure()
    if head_seq is None:
        return figure
    sql = store._sql
    pieces = store.paths.segments(head_seq)
    with store.reading() as conn:
        for chain, lo, hi in pieces:
            lo = max(lo, after_depth + 1)
            if before_depth is not None:
                hi = min(hi, before_depth - 1)
            if lo > hi:
                continue
            for row in conn.execute(sql.USAGE_OF_PATH_PIECE, (chain, lo, hi)):
                figure.add_row(row[0], row[2], row[3], row[4], row[5], row[6], row[7], row[1], row[8],
                               row[9], row[10])
    return figure


def last_model(store: "Store", head_seq: int | None) -> tuple[str, str, str] | None:
    """The model (with its provider and time) of the newest response on the path that names one."""
    if head_seq is None:
        return None
    sql = store._sql
    with store.reading() as conn:
        for chain, lo, hi in reversed(store.paths.segments(head_seq)):
            row = conn.execute(sql.USAGE_LAST_ON_PATH_PIECE, (chain, lo, hi)).fetchone()
            if row is not None:
                return row[0], row[1], row[2]
    return None


def daily_by_model(store: "Store", since: date, until: date,
                   zone_name: str | None = None) -> dict[str, dict[str, Figure]]:
    """{local day: {model: figure}} from `since` to `until` (each response once): what
    the usage screen's chart draws."""
    zone = local_zone(zone_name)
    lo, hi = utc_bounds(since, until, zone)
    grain = "minute" if _odd_offset(zone) else "hour"
    build = store._sql.usage_report if grain == "minute" else store._sql.usage_bucket_report
    query, args = build(grain, counted_only=True, since=lo, until=hi, source=None)
    with store.reading() as conn:
        rows = conn.execute(query, args).fetchall()
    out: dict[str, dict[str, Figure]] = {}
    cache: dict[str, str] = {}
    for row in rows:
        stamp = row[0]
        day = cache.get(stamp)
        if day is None:
            text = stamp + (":00:00" if len(stamp) == 13 else ":00")
            moment = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
            day = cache[stamp] = moment.astimezone(zone).date().isoformat()
        models = out.setdefault(day, {})
        figure = models.get(row[1])
        if figure is None:
            figure = models[row[1]] = Figure()
        figure.add_row(row[1], *row[3:8], row[8], row[2], row[9], row[10], row[11])
    return out
