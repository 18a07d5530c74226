"""What a compaction is worth in money: what the summarised part cost, and what the next
request saves by sending the summary instead of it.

The summarised part's cost is the recorded usage of the responses in it (each once). The
saving is an estimate: the next request's prompt shrinks from the plan's `tokens_before` to
its `tokens_after`, priced at the rates of the model that answered last on the branch
(input price, and cache-read price for a prompt that would have been read from the cache;
a request crossing a long-context threshold is priced at that tier as a whole, as the
provider bills it). `estimate()` reads the store and the price table, so it runs in a
worker; `CompactionCost.saving()` is plain arithmetic for the dialog to redo as the summary
changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.usage.tokens import Figure


@dataclass
class Saving:
    tokens: int                 # fewer prompt tokens in the next request
    uncached_usd: float         # at the input price
    cached_usd: float           # had the prompt been read from the cache


@dataclass
class CompactionCost:
    summarised: Figure          # the responses inside the summarised part
    model: str = ""             # the model that answered last on the branch ("" none)
    card: Any = None            # its core.usage.pricing.PriceCard, None when it has no price

    def saving(self, tokens_before: int, tokens_after: int) -> Saving | None:
        """The next request's saving; None when nothing is saved or there is no price."""
        saved = tokens_before - tokens_after
        if saved <= 0 or self.card is None:
            return None
        before, after = self.card.rates_for(tokens_before), self.card.rates_for(tokens_after)
        return Saving(saved, tokens_before * before.input - tokens_after * after.input,
                      tokens_before * before.cache_read - tokens_after * after.cache_read)


def estimate(store: Any, plan: Any) -> CompactionCost:
    """The summarised part's usage and the branch's last model with its price card."""
    span = plan.summarised
    figure = store.usage.of_range(span.head_seq, span.start, span.stop) if span else Figure()
    head = span.head_seq if span else None
    last = store.usage.last_response_model(head) if head is not None else None
    if last is None:
        return CompactionCost(figure)
    model, provider, stamp = last
    from core.usage.pricing import parse_time, price_book   # the price table: only when a cost is computed

    card = price_book().card(model, provider, parse_time(stamp))
    return CompactionCost(figure, model, card)
