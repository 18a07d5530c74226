"""The range of days a usage view covers, and the bars it is drawn in.

A span is the last week, month or year up to today, all the history, or dates typed by
the user. A chart of a long span groups its days into weeks, months or years, the finest
grain whose bars still get two columns each (a bar and a gap) in the room there is.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from .tokens import Figure

KINDS = ("week", "month", "year", "all", "custom")
_LAST = {"week": 7, "month": 30, "year": 365}
GRAINS = ("day", "week", "month", "year")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
_BETWEEN = re.compile(r"\b(from|since|to|until|till|through|and)\b|[\s\-–—.,:;/]", re.IGNORECASE)


class UsageSpan:
    """Local days `since`..`until`, both included (`since` None: from the first day with
    usage, for `all`)."""

    __slots__ = ("kind", "since", "until")

    def __init__(self, kind: str, since: date | None, until: date):
        self.kind, self.since, self.until = kind, since, until

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UsageSpan) and (self.kind, self.since, self.until) == \
            (other.kind, other.since, other.until)

    def __repr__(self) -> str:
        return f"UsageSpan({self.kind!r}, {self.since!r}, {self.until!r})"

    @classmethod
    def last(cls, kind: str, today: date) -> UsageSpan:
        """The last week, month (30 days) or year (365 days) up to `today`, or all of it."""
        if kind == "all":
            return cls("all", None, today)
        return cls(kind, today - timedelta(days=_LAST[kind] - 1), today)

    @classmethod
    def parse(cls, text: str, today: date) -> UsageSpan:
        """Dates typed by the user: `2026-01-10 2026-02-20` (any words between them), or
        one date: from it to today. Raises ValueError saying what is wrong."""
        found = _DATE.findall(text)
        if not found or len(found) > 2 or _BETWEEN.sub("", _DATE.sub("", text)):
            raise ValueError("type one or two dates as YYYY-MM-DD, such as 2026-01-10 2026-02-20")
        days = []
        for piece in found:
            year, month, day = (int(part) for part in piece.split("-"))
            try:
                days.append(date(year, month, day))
            except ValueError:
                raise ValueError(f"{piece} is not a date") from None
        since, until = (days[0], today) if len(days) == 1 else sorted(days)
        if since > until:
            raise ValueError(f"{since.isoformat()} is after today")
        return cls("custom", since, until)

    def title(self, first: date | None = None) -> str:
        """`last 7 days`, `last 30 days`, `last 12 months`, `all time (since …)`, `a – b`."""
        if self.kind == "week":
            return "last 7 days"
        if self.kind == "month":
            return "last 30 days"
        if self.kind == "year":
            return "last 12 months"
        if self.kind == "all":
            return f"all time, since {first.isoformat()}" if first else "all time"
        if self.since == self.until:
            return self.since.isoformat() if self.since else ""
        return f"{self.since.isoformat() if self.since else ''} – {self.until.isoformat()}"


def bucket_start(day: date, grain: str) -> date:
    """The first day of the bar `day` falls in: itself, its week's Monday, its month's or
    its year's first day."""
    if grain == "week":
        return day - timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    if grain == "year":
        return day.replace(month=1, day=1)
    return day


def bucket_starts(since: date, until: date, grain: str) -> list[date]:
    """Every bar of the span, in order (the first may begin before `since`)."""
    out, day = [], bucket_start(since, grain)
    while day <= until:
        out.append(day)
        if grain == "day":
            day += timedelta(days=1)
        elif grain == "week":
            day += timedelta(days=7)
        elif grain == "month":
            day = (day.replace(day=28) + timedelta(days=4)).replace(day=1)
        else:
            day = day.replace(year=day.year + 1)
    return out


def grain_for(since: date, until: date, columns: int, per_bar: int = 2) -> str:
    """The finest grain whose bars each get `per_bar` columns in `columns` (years always)."""
    for grain in GRAINS[:-1]:
        if len(bucket_starts(since, until, grain)) * per_bar <= columns:
            return grain
    return "year"


def by_bucket(by_day: dict[str, dict[str, Figure]], grain: str) -> dict[date, dict[str, Figure]]:
    """{bar's first day: {model: figure}} from {local day (ISO): {model: figure}}."""
    out: dict[date, dict[str, Figure]] = {}
    for day, models in by_day.items():
        start = bucket_start(date.fromisoformat(day), grain)
        bar = out.setdefault(start, {})
        for model, figure in models.items():
            total = bar.get(model)
            if total is None:
                total = bar[model] = Figure()
            total.merge(figure)
    return out
