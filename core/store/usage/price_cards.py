"""Pricing new responses without loading the price table: the rates `core.usage.pricing` resolved
for a model are kept in the store and used by later imports.

Loading the table (`genai-prices` and pydantic) takes ~0.3 s, five times the rest of an
import that reads ten new lines of a session. So each `PriceCard` the book computes is
kept in `store_meta`, one row per price basis, model, provider and fast mode, with the UTC
days [first, until) on which the table gives that same card (`PriceBook.span_at`). An
import that meets a model on a day it has a card for prices from it with the same floats
and the same arithmetic as `PriceBook.cost_at`; anything else asks the book once and keeps
what it answered. A new basis (the table upgraded, ARBOR_PRICES changed) finds nothing kept
under it, and the rows of other bases are dropped when the book is next loaded. A model
priced by the time of day is never kept: the book prices it every time.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

_PREFIX = "price_cards "
_MISSING = object()
_BY_TIME = object()
# What `cost_at` answers, in a StoredPrices made with `learn=False`, for a response that only
# the book could price (no card kept for its model and day): the response waits.
NOT_KEPT = object()


def _utc_day(stamp: str | None) -> str | None:
    """The UTC day of a stored timestamp ('YYYY-MM-DD'), None when it is not plain UTC text
    (then the book prices it, as before)."""
    if stamp and len(stamp) >= 10 and stamp[4] == "-" and stamp[7] == "-" and \
            (stamp.endswith(("+00:00", "Z")) or len(stamp) == 10):
        return stamp[:10]
    return None


class StoredPrices:
    """`cost_at` and `basis` of a PriceBook, from the cards kept in the store where it can;
    `save()` keeps the cards it had to ask the book for (in the caller's transaction).
    `learn=False`: the book is never asked; `cost_at` answers NOT_KEPT where it would be."""

    NOT_KEPT = NOT_KEPT

    def __init__(self, conn, sql, *, learn: bool = True):
        from core.usage import pricing

        self.basis = pricing.basis()
        self.learn = learn
        self._conn = conn
        self._sql = sql
        self._spans: dict[tuple, list] = {}     # (model, provider, fast) -> [[first, until, card]]
        self._daily: dict[tuple, Any] = {}      # (model, provider, fast, day) -> card | None
        self._changed: set[tuple] = set()
        self._book = None

    def book(self):
        if self._book is None:
            from core.usage import pricing

            self._book = pricing.price_book()
            if self._book.basis != self.basis:   # ARBOR_PRICES changed meanwhile
                self.basis = self._book.basis
                self._spans.clear()
                self._daily.clear()
                self._changed.clear()
            self._drop_other_bases()
        return self._book

    def cost_at(self, model: str, provider: str, stamp: str, input_tokens: int, cache_write: int,
                cache_write_1h: int, cache_read: int, output: int, reasoning: int = 0,
                fast: bool = False) -> float | None:
        day = _utc_day(stamp)
        card: Any = _BY_TIME
        if day is not None:
            key = (model, provider, bool(fast), day)
            card = self._daily.get(key, _MISSING)
            if card is _MISSING:
                card = self._kept(key)
                if card is _MISSING:
                    if not self.learn:
                        return NOT_KEPT
                    card = self._learn(model, provider, bool(fast), stamp)
                self._daily[key] = card
        if card is _BY_TIME:
            if not self.learn:
                return NOT_KEPT
            return self.book().cost_at(model, provider, stamp, input_tokens, cache_write,
                                       cache_write_1h, cache_read, output, reasoning, fast)
        if card is None:
            return None
        return card.cost(input_tokens, cache_write, min(cache_write_1h, cache_write), cache_read,
                         output, min(reasoning, output))

    # ------------------------------------------------------------------ cards
    def _spans_of(self, model: str, provider: str, fast: bool) -> list:
        which = (model, provider, fast)
        spans = self._spans.get(which)
        if spans is None:
            row = self._conn.execute(self._sql.META_GET, (self._key(which),)).fetchone()
            spans = []
            if row is not None:
                try:
                    spans = json.loads(row[0])
                except ValueError:
                    spans = []
                if not isinstance(spans, list):
                    spans = []
            self._spans[which] = spans
        return spans

    def _kept(self, key: tuple) -> Any:
        model, provider, fast, day = key
        from core.usage.pricing import PriceCard

        for span in self._spans_of(model, provider, fast):
            try:
                first, until, card = span
                if (first is None or first <= day) and (until is None or day < until):
                    return None if card is None else PriceCard.from_json(card)
            except (TypeError, ValueError):
                continue     # a row this arbor cannot read: asked of the book again
        return _MISSING

    def _learn(self, model: str, provider: str, fast: bool, stamp: str) -> Any:
        found = self.book().span_at(model, provider, stamp, fast)
        if found is None:
            return _BY_TIME
        card, first, until = found
        self._spans_of(model, provider, fast).append(
            [first, until, None if card is None else card.to_json()])
        self._changed.add((model, provider, fast))
        return card

    def _key(self, which: tuple) -> str:
        return f"{_PREFIX}{self.basis} {json.dumps(list(which))}"

    # ------------------------------------------------------------------ store
    def save(self) -> None:
        """Keep the cards asked of the book since the last save (call inside the transaction
        that writes the rows they priced)."""
        for which in sorted(self._changed):
            self._conn.execute(self._sql.META_SET,
                               (self._key(which), json.dumps(self._spans[which])))
        self._changed.clear()

    def _drop_other_bases(self) -> None:
        mine = f"{_PREFIX}{self.basis} "
        stale = [key for (key,) in self._conn.execute(self._sql.META_KEYS_WITH_PREFIX,
                                                      (_PREFIX,)).fetchall()
                 if not key.startswith(mine)]
        for key in stale:
            self._conn.execute(self._sql.META_DELETE, (key,))
