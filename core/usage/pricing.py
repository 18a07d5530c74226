"""What a model response cost, from the price table of the `genai-prices` package.

The table is pydantic's `genai-prices` (offline: the data ships inside the package; nothing
is fetched). It knows prices that changed over time (the price on the day of the request
is used) and per-request tiers: a request whose input (uncached + cache writes + cache
reads) is over a tier's threshold is priced at that tier's rates as a whole.

Asking the package for every response is slow (about 0.2 ms a call), so for each model,
price period and tier the package is asked a handful of times for the cost of one kind of
token at a time, and those per-token rates are kept: a response then costs a few
multiplications. `tests/test_pricing.py` checks that this gives the package's own answer.

`ARBOR_PRICES` may name a JSON file of overrides, `{"model or glob": {price keys}}`, in the
package's own terms (`input_mtok`, `output_mtok`, `cache_read_mtok`, `cache_write_mtok`,
`cache_write_1h_mtok`, `output_reasoning_mtok`, `requests_kcount`; a value is a number or
`{"base": 3, "tiers": [{"start": 200000, "price": 6}]}`). An override wins over the table.

A model the table does not know has no price: `cost()` returns None and the figure that
holds it is "incomplete", never $0.

Nothing here is imported at app start: `core.usage.tokens` imports this module when it first
prices a response.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
from _thread import allocate_lock   # (threading's Lock, without loading threading)
from datetime import UTC, datetime
from pathlib import Path

from core.util.digests import blake2b
from core.model.errors import ArborError
from core.model.values import Frozen

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

TYPE_CHECKING = False   # (decimal is imported with the table: pricing from kept cards needs
if TYPE_CHECKING:       # neither)
    from decimal import Decimal

PRICES_ENV = "ARBOR_PRICES"
_PACKAGE = "genai-prices"
_MODULE = "genai_prices"    # its import name, and its dist-info folder's prefix
# The kinds of token a rate is kept for, in this order.
_KINDS = ("input", "cache_write", "cache_write_1h", "cache_read", "output", "reasoning")
_PROBE_OUTPUT = 1_000_000


class PricesError(ArborError):
    """The overrides file named by ARBOR_PRICES cannot be used."""


@functools.cache
def table_version() -> str:
    """The installed price table's version ('' when the package is missing), read once a
    process: importlib.metadata parses the package's METADATA file on every call (about
    50 us; `price_book()` asks on every batch of usage rows an import writes), and importing
    it costs ~25 ms, more than a small import's own work: the version is first read from the
    name of the one `genai_prices-VERSION.dist-info` folder beside the package (found without
    importing it), and importlib.metadata asked only when that is not clear."""
    beside = _version_beside_package()
    if beside is not None:
        return beside
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(_PACKAGE)
    except PackageNotFoundError:
        return ""


def _version_beside_package() -> str | None:
    from importlib.util import find_spec

    try:
        spec = find_spec(_MODULE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent.parent
    prefix = _MODULE + "-"
    try:
        found = [entry.name for entry in os.scandir(folder)
                 if entry.name.startswith(prefix) and entry.name.endswith(".dist-info")]
    except OSError:
        return None
    if len(found) != 1:
        return None
    return found[0][len(prefix):-len(".dist-info")] or None


def overrides_path() -> Path | None:
    value = os.environ.get(PRICES_ENV, "").strip()
    return Path(value).expanduser() if value else None


def _overrides_bytes(path: Path | None) -> bytes:
    if path is None:
        return b""
    from core.store.held_files import open_unless_held

    try:
        with open_unless_held(path) as handle:
            return handle.read()
    except OSError as error:
        raise PricesError(f"{PRICES_ENV}={path}: cannot read it ({error.strerror or error})")


def basis(path: Path | None = None, data: bytes | None = None) -> int:
    """A number that changes when the prices would: the table's version and the overrides.
    Stored beside every computed cost, so costs made with other prices are found and redone."""
    if data is None:
        data = _overrides_bytes(path if path is not None else overrides_path())
    digest = blake2b(table_version().encode() + b"\0" + data, digest_size=7).digest()
    return int.from_bytes(digest, "big") or 1


class Rates(Frozen):
    """USD per token of each kind, and per request, within one price tier."""

    __slots__ = _fields = ("input", "cache_write", "cache_write_1h", "cache_read", "output",
                           "reasoning", "request")
    input: float
    cache_write: float
    cache_write_1h: float
    cache_read: float
    output: float
    reasoning: float
    request: float

    def __init__(self, input: float, cache_write: float, cache_write_1h: float,
                 cache_read: float, output: float, reasoning: float, request: float):
        for name, value in zip(self._fields, (input, cache_write, cache_write_1h, cache_read,
                                              output, reasoning, request)):
            object.__setattr__(self, name, value)


class PriceCard(Frozen):
    """The rates of one model in one price period: `tiers[i]` applies when a request's input
    is above `starts[i]` (starts[0] is -1: the base rates)."""

    __slots__ = _fields = ("model", "starts", "tiers")
    model: str          # the table's name for it, or the override's pattern
    starts: tuple[int, ...]
    tiers: tuple[Rates, ...]

    def __init__(self, model: str, starts: tuple[int, ...], tiers: tuple[Rates, ...]):
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "starts", starts)
        object.__setattr__(self, "tiers", tiers)

    def rates_for(self, prompt_tokens: int) -> Rates:
        chosen = self.tiers[0]
        for start, rates in zip(self.starts, self.tiers):
            if prompt_tokens > start:
                chosen = rates
        return chosen

    def to_json(self) -> list:
        """[model, starts, [[input, cache_write, …, request] a tier]]: JSON, read back by
        `from_json` to the same floats (so a kept card prices exactly as this one)."""
        return [self.model, list(self.starts),
                [[r.input, r.cache_write, r.cache_write_1h, r.cache_read, r.output, r.reasoning,
                  r.request] for r in self.tiers]]

    @classmethod
    def from_json(cls, value: Any) -> "PriceCard":
        model, starts, tiers = value
        return cls(model=model, starts=tuple(starts), tiers=tuple(Rates(*rates) for rates in tiers))

    def cost(self, input_tokens: int, cache_write: int, cache_write_1h: int, cache_read: int,
             output: int, reasoning: int = 0) -> float:
        r = self.rates_for(input_tokens + cache_write + cache_read)
        write_5m = cache_write - cache_write_1h
        return (input_tokens * r.input + write_5m * r.cache_write + cache_write_1h * r.cache_write_1h
                + cache_read * r.cache_read + (output - reasoning) * r.output
                + reasoning * r.reasoning + r.request)


def _decimal(value: Any, where: str) -> "Decimal":
    from decimal import Decimal, InvalidOperation

    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise PricesError(f"{where}: expected a number, got {value!r}")
    try:
        out = Decimal(str(value))
    except InvalidOperation:
        raise PricesError(f"{where}: expected a number, got {value!r}") from None
    if not out.is_finite() or out < 0:
        raise PricesError(f"{where}: expected a price of 0 or more, got {value!r}")
    return out


_OVERRIDE_KEYS = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok",
                  "cache_write_1h_mtok", "output_reasoning_mtok", "requests_kcount")


def _model_price_from(spec: Any, where: str):
    """An override's prices as the package's ModelPrice (so they are applied by the same
    rules as the table's)."""
    from genai_prices import types

    if not isinstance(spec, dict) or not spec:
        raise PricesError(f"{where}: expected an object of prices such as "
                          '{"input_mtok": 3, "output_mtok": 15}')
    prices: dict[str, Any] = {}
    for key, value in spec.items():
        if key not in _OVERRIDE_KEYS:
            raise PricesError(f"{where}: unknown price {key!r} (known: {', '.join(_OVERRIDE_KEYS)})")
        if isinstance(value, dict):
            tiers = value.get("tiers")
            if not isinstance(tiers, list) or "base" not in value:
                raise PricesError(f"{where}.{key}: a tiered price is "
                                  '{"base": N, "tiers": [{"start": TOKENS, "price": N}]}')
            built = []
            for i, tier in enumerate(tiers):
                if not isinstance(tier, dict) or not isinstance(tier.get("start"), int) \
                        or isinstance(tier.get("start"), bool) or tier["start"] < 0:
                    raise PricesError(f"{where}.{key}.tiers[{i}]: needs a whole \"start\" >= 0")
                built.append(types.Tier(start=tier["start"],
                                        price=_decimal(tier.get("price"), f"{where}.{key}.tiers[{i}]")))
            prices[key] = types.TieredPrices(base=_decimal(value["base"], f"{where}.{key}.base"),
                                             tiers=built)
        else:
            prices[key] = _decimal(value, f"{where}.{key}")
    return types.ModelPrice(**prices)


def _card(name: str, model_price) -> PriceCard:
    """Per-token rates of each tier, asked of the package's own calculation."""
    from decimal import Decimal

    from genai_prices import Usage, types

    starts = sorted({tier.start for value in model_price.__dict__.values()
                     if isinstance(value, types.TieredPrices) for tier in value.tiers})
    request = model_price.requests_kcount
    per_request = float(request) / 1000 if isinstance(request, Decimal) else 0.0

    def price(**counts) -> Decimal:
        return model_price.calc_price(Usage(**counts))["total_price"] - Decimal(str(per_request))

    bounds = [-1, *starts]
    tiers = []
    for start in bounds:
        t = start + 1 if start >= 0 else 1     # a total input inside this tier
        base = price(input_tokens=t)
        rates = {
            "input": base / t,
            "cache_read": price(input_tokens=t, cache_read_tokens=t) / t,
            "cache_write": price(input_tokens=t, cache_write_tokens=t) / t,
            "cache_write_1h": price(input_tokens=t, cache_write_tokens=t, cache_write_1h_tokens=t) / t,
            "output": (price(input_tokens=t, output_tokens=_PROBE_OUTPUT) - base) / _PROBE_OUTPUT,
            "reasoning": (price(input_tokens=t, output_tokens=_PROBE_OUTPUT,
                                output_reasoning_tokens=_PROBE_OUTPUT) - base) / _PROBE_OUTPUT,
        }
        tiers.append(Rates(**{k: float(v) for k, v in rates.items()}, request=per_request))
    return PriceCard(model=name, starts=tuple(bounds), tiers=tuple(tiers))


class PriceBook:
    """Prices for responses: the package's table with the overrides on top. One per basis."""

    def __init__(self, overrides: dict[str, Any] | None = None, *, basis_value: int = 0):
        self.basis = basis_value
        self._overrides: list[tuple[str, Any]] = []
        for pattern, spec in (overrides or {}).items():
            self._overrides.append((pattern.lower(), _model_price_from(spec, f"{PRICES_ENV}[{pattern!r}]")))
        self._models: dict[tuple[str, str], Any] = {}
        self._cards: dict[tuple, PriceCard] = {}
        self._daily: dict[tuple, PriceCard | None] = {}
        self._lock = allocate_lock()

    # ----------------------------------------------------------------- lookup
    def _override(self, model: str):
        lower = model.lower()
        for pattern, price in self._overrides:
            if pattern == lower:
                return pattern, price
        for pattern, price in self._overrides:
            if any(ch in pattern for ch in "*?[") and fnmatch.fnmatchcase(lower, pattern):
                return pattern, price
        return None

    def _table_model(self, model: str, provider: str):
        key = (model, provider)
        if key in self._models:
            return self._models[key]
        from genai_prices.data_snapshot import get_snapshot

        snapshot = get_snapshot()
        found = None
        for provider_id in ([provider] if provider else []) + [None]:
            try:
                found = snapshot.find_provider_model(model, None, provider_id, None)[1]
                break
            except LookupError:
                continue
        self._models[key] = found
        return found

    def card(self, model: str, provider: str = "", when: datetime | None = None,
             fast: bool = False) -> PriceCard | None:
        """The rates that applied to `model` at `when`, None when nothing prices it."""
        if not model:
            return None
        when = when or datetime.now(UTC)
        with self._lock:
            override = self._override(model)
            if override is not None:
                key = ("override", override[0])
                card = self._cards.get(key)
                if card is None:
                    card = self._cards[key] = _card(override[0], override[1])
                return card
            info = self._table_model(model, provider)
            if info is None:
                return None
            period = _active_period(info, when)
            context = {"speed": "fast"} if fast else None
            variants = _active_variants(info, when, context)
            key = (info.id, id(info), period, variants)
            card = self._cards.get(key)
            if card is None:
                card = self._cards[key] = _card(info.id, info.get_prices(when, context))
            return card

    def cost(self, model: str, provider: str, when: datetime | None, input_tokens: int,
             cache_write: int, cache_write_1h: int, cache_read: int, output: int,
             reasoning: int = 0, fast: bool = False) -> float | None:
        card = self.card(model, provider, when, fast)
        if card is None:
            return None
        return card.cost(input_tokens, cache_write, min(cache_write_1h, cache_write), cache_read,
                         output, min(reasoning, output))

    def cost_at(self, model: str, provider: str, stamp: str, input_tokens: int, cache_write: int,
                cache_write_1h: int, cache_read: int, output: int, reasoning: int = 0,
                fast: bool = False) -> float | None:
        """`cost()` for a stored UTC timestamp text; the card is remembered per model and
        UTC day (prices change by date), except for models priced by the time of day."""
        key = (model, provider, fast, stamp[:10])
        card = self._daily.get(key, _MISSING)
        if card is _MISSING:
            when = parse_time(stamp)
            card = self.card(model, provider, when, fast)
            info = None if card is None or self._override(model) else self._table_model(model, provider)
            if info is None or not _by_time_of_day(info):
                self._daily[key] = card
        if card is None:
            return None
        return card.cost(input_tokens, cache_write, min(cache_write_1h, cache_write), cache_read,
                         output, min(reasoning, output))

    def span_at(self, model: str, provider: str, stamp: str, fast: bool = False
                ) -> tuple[PriceCard | None, str | None, str | None] | None:
        """`cost_at`'s card for a stamp, and the UTC days [first, until) on which every stamp
        gets that same card (None: no bound), so a store can keep it and price later
        responses without this table (core/store/usage/price_cards.py). None when the card can
        change within a day (a model priced by the time of day)."""
        when = parse_time(stamp)
        card = self.card(model, provider, when, fast)
        if not model or self._override(model) is not None:
            return card, None, None       # no price, or an override's: the same on any day
        info = self._table_model(model, provider)
        if info is None:
            return None, None, None       # the table does not know it
        if _by_time_of_day(info):
            return None
        from genai_prices import types

        day = (when or datetime.now(UTC)).astimezone(UTC).date()
        constraints = [p.constraint for p in info.prices] if isinstance(info.prices, list) else []
        constraints += [v.constraint for v in info.price_variants or ()]
        starts = {c.start_date for c in constraints if isinstance(c, types.StartDateConstraint)}
        first = max((d for d in starts if d <= day), default=None)
        until = min((d for d in starts if d > day), default=None)
        return (card, first.isoformat() if first else None, until.isoformat() if until else None)

    def known(self, model: str, provider: str = "") -> bool:
        return self.card(model, provider) is not None


_MISSING = object()


def _by_time_of_day(info) -> bool:
    from genai_prices import types

    prices = info.prices if isinstance(info.prices, list) else []
    constraints = [p.constraint for p in prices] + [v.constraint for v in info.price_variants or ()]
    return any(isinstance(c, types.TimeOfDateConstraint) for c in constraints)


def _active_period(info, when: datetime) -> int:
    """Which of a model's dated prices applies at `when` (the package's own rule)."""
    prices = info.prices
    if not isinstance(prices, list):
        return -1
    for index in range(len(prices) - 1, -1, -1):
        constraint = prices[index].constraint
        if constraint is None or constraint.active(when):
            return index
    return 0


def _active_variants(info, when: datetime, context: dict | None) -> tuple[int, ...]:
    if not context:
        return ()
    out = []
    for index, variant in enumerate(info.price_variants or ()):
        if variant.constraint is not None and not variant.constraint.active(when):
            continue
        if all(context.get(k) == v for k, v in variant.when.items()):
            out.append(index)
    return tuple(out)


_book: PriceBook | None = None
_book_lock = allocate_lock()


def price_book() -> PriceBook:
    """This process's price book, made again when ARBOR_PRICES or its file changed."""
    global _book
    path = overrides_path()
    data = _overrides_bytes(path)
    value = basis(data=data)
    with _book_lock:
        if _book is None or _book.basis != value:
            overrides = None
            if data:
                try:
                    overrides = json.loads(data)
                except ValueError as error:
                    raise PricesError(f"{PRICES_ENV}={path}: not JSON ({error})") from None
                if not isinstance(overrides, dict):
                    raise PricesError(f"{PRICES_ENV}={path}: expected an object of "
                                      '{"model": {"input_mtok": …, "output_mtok": …}}')
            _book = PriceBook(overrides, basis_value=value)
        return _book


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
