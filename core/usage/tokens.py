"""Token usage of model responses: one record per API response, read from each agent's logs.

How arbor counts (the README says the same for users):

* One record per API response, per session. Claude Code writes one line per content block
  of a response, each with the same `message.id`, `requestId` and `usage`: the response is
  keyed by `message.id` + `requestId` (by `message.id` alone where `requestId` is missing),
  counted once, and where its copies differ the largest copy is kept.
* Tokens are kept in four kinds: input (not from the cache), output, cache creation
  (writes) and cache read; total = the four together. Reasoning output is part of output
  and is shown apart.
* Codex: `token_count` events; `last_token_usage` is the turn's, `total_token_usage` the
  running total (a turn without `last_token_usage` is the difference of two totals; an event
  that repeats the previous total is the same turn again and is not counted). Codex's
  `input_tokens` includes the cached input: the cached part is reported as cache read and
  not again as input.
* pi: the cost pi logged with the response is used; it is computed only where pi logged
  none (or logged $0 for a response that used tokens: pi writes 0 for a model it has no
  price for).
* LangGraph: `usage_metadata` on AI messages (whose `input_tokens` include cache reads and
  writes, as LangChain counts them).
* The agents read after those (Gemini CLI, …) write their usage in pi's shape, with
  `reasoning`, keyed by a `responseId` their importer names (each agent's `usage_rule`,
  core/agents/<agent>/__init__.py, says which).
* A response that appears in several sessions (a resumed or forked copy of a log: Claude
  Code's lines keep their `message.id` and `requestId`; a Codex fork repeats its parent's
  `token_count` events, known by the running total with the turn's counts; arbor's own
  resume writes the same ids) counts in each of those sessions, and once in any total
  across sessions.
* A sub-agent's usage counts in the session that spawned it, and is shown apart.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta, timezone, tzinfo

from core.model.values import Record

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any, Iterable

GROUPINGS = ("session", "day", "week", "month", "model", "project")


class UsageRecord(Record):
    """The usage of one API response, as written to the store."""

    __slots__ = _fields = ("model", "provider", "input_tokens", "output_tokens",
                           "cache_creation_tokens", "cache_read_tokens",
                           "cache_creation_1h_tokens", "reasoning_tokens", "key", "logged_cost",
                           "fast", "subagent", "protocol", "duration_ms")
    model: str
    provider: str
    input_tokens: int          # not from the cache
    output_tokens: int         # reasoning included
    cache_creation_tokens: int
    cache_read_tokens: int
    cache_creation_1h_tokens: int   # part of cache_creation written for an hour (priced apart)
    reasoning_tokens: int      # part of output
    key: str | None            # the response's identity across sessions, None if it has none
    logged_cost: float | None
    fast: bool
    subagent: bool
    protocol: str
    duration_ms: int

    def __init__(self, model: str = "", provider: str = "", input_tokens: int = 0,
                 output_tokens: int = 0, cache_creation_tokens: int = 0,
                 cache_read_tokens: int = 0, cache_creation_1h_tokens: int = 0,
                 reasoning_tokens: int = 0, key: str | None = None,
                 logged_cost: float | None = None, fast: bool = False, subagent: bool = False,
                 protocol: str = "", duration_ms: int = 0):
        self.model = model
        self.provider = provider
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cache_creation_tokens = cache_creation_tokens
        self.cache_read_tokens = cache_read_tokens
        self.cache_creation_1h_tokens = cache_creation_1h_tokens
        self.reasoning_tokens = reasoning_tokens
        self.key = key
        self.logged_cost = logged_cost
        self.fast = fast
        self.subagent = subagent
        self.protocol = protocol
        self.duration_ms = duration_ms

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + \
            self.cache_read_tokens

    def is_empty(self) -> bool:
        return self.total_tokens == 0 and not self.logged_cost


def _count(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value if value > 0 else 0
    if kind is float and math.isfinite(value) and value > 0:
        return int(value)
    return 0


def _money(value: Any) -> float | None:
    if type(value) in (int, float) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def claude_key(message_id: Any, request_id: Any) -> str | None:
    """`message.id` + `requestId`; `message.id` alone where the request id is missing."""
    if not isinstance(message_id, str) or not message_id:
        return None
    if isinstance(request_id, str) and request_id:
        return f"{message_id}:{request_id}"
    return message_id


def from_claude(usage: dict[str, Any], *, model: Any, message_id: Any, request_id: Any,
                cost_usd: Any = None, sidechain: bool = False) -> UsageRecord:
    """A Claude Code (Anthropic Messages API) `usage` object."""
    creation = usage.get("cache_creation")
    one_hour = _count(creation.get("ephemeral_1h_input_tokens")) if isinstance(creation, dict) else 0
    written = _count(usage.get("cache_creation_input_tokens"))
    if isinstance(creation, dict) and not written:
        written = one_hour + _count(creation.get("ephemeral_5m_input_tokens"))
    model = model if isinstance(model, str) and model != "<synthetic>" else ""
    return UsageRecord(
        model=model, provider="anthropic", protocol="anthropic-messages",
        input_tokens=_count(usage.get("input_tokens")), output_tokens=_count(usage.get("output_tokens")),
        cache_creation_tokens=written, cache_read_tokens=_count(usage.get("cache_read_input_tokens")),
        cache_creation_1h_tokens=min(one_hour, written), key=claude_key(message_id, request_id),
        logged_cost=_money(cost_usd), fast=usage.get("speed") == "fast", subagent=sidechain)


def codex_counts(usage: Any) -> tuple[int, int, int, int] | None:
    """(input incl. cached, cached input, output incl. reasoning, reasoning) of a Codex usage."""
    if not isinstance(usage, dict):
        return None
    return (_count(usage.get("input_tokens")), _count(usage.get("cached_input_tokens")),
            _count(usage.get("output_tokens")), _count(usage.get("reasoning_output_tokens")))


class CodexTurns:
    """Turns the `token_count` events of one rollout into one record per turn."""

    def __init__(self) -> None:
        self.previous_total: tuple[int, int, int, int] | None = None

    def take(self, info: Any, *, model: str, provider: str) -> UsageRecord | None:
        if not isinstance(info, dict):
            return None   # a rate-limit-only event: no usage in it
        total = codex_counts(info.get("total_token_usage"))
        last = codex_counts(info.get("last_token_usage"))
        previous = self.previous_total
        if total is not None:
            if total == previous:
                return None   # the same turn reported again
            self.previous_total = total
        if last is None:
            if total is None:
                return None
            base = previous or (0, 0, 0, 0)
            last = tuple(max(0, a - b) for a, b in zip(total, base))  # type: ignore[assignment]
        # The turn's identity across sessions: a fork's rollout repeats its parent's events
        # (with new timestamps), and the running total with the turn's own counts names the
        # turn; where the file is read without its parent, the copy is then counted once.
        key = None if total is None else "codex:" + ",".join(map(str, (*total, *last)))
        inp, cached, out, reasoning = last
        cached = min(cached, inp)
        record = UsageRecord(model=model, provider=provider or "openai", protocol="openai-responses",
                             input_tokens=inp - cached, cache_read_tokens=cached,
                             output_tokens=out, reasoning_tokens=min(reasoning, out), key=key)
        return None if record.is_empty() else record


def from_pi(usage: dict[str, Any], *, model: Any, provider: Any, response_id: Any = None,
            api: Any = "") -> UsageRecord:
    """pi's assistant `usage` ({input, output, cacheRead, cacheWrite, totalTokens, cost}),
    the shape every agent's importer after the first four writes (with `reasoning`)."""
    record = UsageRecord(
        model=model if isinstance(model, str) else "", provider=provider if isinstance(provider, str) else "",
        protocol=api if isinstance(api, str) else "",
        input_tokens=_count(usage.get("input")), output_tokens=_count(usage.get("output")),
        cache_read_tokens=_count(usage.get("cacheRead")), cache_creation_tokens=_count(usage.get("cacheWrite")),
        key=response_id if isinstance(response_id, str) and response_id else None)
    # (pi writes no reasoning count; the agents read into this shape may: core/agents/gemini)
    record.reasoning_tokens = min(_count(usage.get("reasoning")), record.output_tokens)
    cost = usage.get("cost")
    logged = _money(cost.get("total")) if isinstance(cost, dict) else _money(cost)
    if logged is not None and (logged > 0 or record.total_tokens == 0):
        record.logged_cost = logged
    return record


def from_langgraph(usage: dict[str, Any], *, model: Any, provider: Any = "",
                   message_id: Any = None) -> UsageRecord:
    """LangChain `usage_metadata` (input_tokens include cache reads and writes)."""
    details = usage.get("input_token_details")
    details = details if isinstance(details, dict) else {}
    out_details = usage.get("output_token_details")
    out_details = out_details if isinstance(out_details, dict) else {}
    read, write = _count(details.get("cache_read")), _count(details.get("cache_creation"))
    inp = _count(usage.get("input_tokens"))
    output = _count(usage.get("output_tokens"))
    return UsageRecord(
        model=model if isinstance(model, str) else "", provider=provider if isinstance(provider, str) else "",
        protocol="langchain", input_tokens=max(0, inp - read - write), cache_read_tokens=read,
        cache_creation_tokens=write, output_tokens=output,
        reasoning_tokens=min(_count(out_details.get("reasoning")), output),
        key=message_id if isinstance(message_id, str) and message_id else None)


CODEX_TOKEN_COUNT = "codex:event_msg.token_count"
CODEX_TURN_CONTEXT = "codex:turn_context"
# Entry types that can carry usage, or the model that later usage is priced at.
USAGE_TYPES = frozenset({"message", "model_change", CODEX_TOKEN_COUNT, CODEX_TURN_CONTEXT})


class UsageTracker:
    """Reads the usage out of the entries of one session, in the order they are written.

    The same code serves an import, an agent appending through `core`, a live follow and
    the migration that fills the usage table of an older store: usage is derived from the
    entries, whatever wrote them. Codex reports usage in `token_count` events that name no
    model, so the tracker follows `turn_context`/`model_change` entries for it.
    """

    def __init__(self) -> None:
        self.model = ""
        self.provider = ""
        self.codex = CodexTurns()
        self.primed = False

    def take(self, entry_type: str, entry_id: str, timestamp: str,
             data: dict[str, Any]) -> UsageRecord | None:
        if entry_type == "message":
            message = data.get("message")
            if not isinstance(message, dict) or message.get("role") != "assistant":
                return None
            model = message.get("model")
            if isinstance(model, str) and model:
                self.model = model
            extra = message.get("claude")
            if isinstance(extra, dict) and isinstance(extra.get("usage"), dict):
                line = data.get("claude")
                line = line if isinstance(line, dict) else {}
                return from_claude(extra["usage"], model=model, message_id=message.get("responseId"),
                                   request_id=line.get("requestId"), cost_usd=line.get("costUSD"),
                                   sidechain=line.get("isSidechain") is True)
            chain = message.get("langchain")
            if isinstance(chain, dict) and isinstance(chain.get("usage_metadata"), dict):
                meta = chain.get("response_metadata")
                provider = meta.get("model_provider", "") if isinstance(meta, dict) else ""
                return from_langgraph(chain["usage_metadata"], model=model, provider=provider,
                                      message_id=chain.get("id"))
            usage = message.get("usage")
            if isinstance(usage, dict):
                response = message.get("responseId")
                key = response if isinstance(response, str) and response else f"{entry_id}@{timestamp}"
                return from_pi(usage, model=model, provider=message.get("provider"),
                               response_id=key, api=message.get("api"))
            return None
        if entry_type == "model_change":
            model, provider = data.get("modelId"), data.get("provider")
            if isinstance(model, str) and model:
                self.model = model
            if isinstance(provider, str):
                self.provider = provider
            return None
        if entry_type == CODEX_TURN_CONTEXT:
            payload = data.get("payload")
            model = payload.get("model") if isinstance(payload, dict) else None
            if isinstance(model, str) and model:
                self.model = model
            return None
        if entry_type == CODEX_TOKEN_COUNT:
            payload = data.get("payload")
            info = payload.get("info") if isinstance(payload, dict) else None
            return self.codex.take(info, model=self.model, provider=self.provider or "openai")
        return None


def larger(a: UsageRecord, b: UsageRecord) -> bool:
    """Whether copy `a` of a response should replace copy `b` (the larger one is kept)."""
    ta, tb = a.total_tokens, b.total_tokens
    if ta != tb:
        return ta > tb
    return a.output_tokens > b.output_tokens


# ----------------------------------------------------------------------- reports
class Figure(Record):
    """Summed usage of a group of responses."""

    __slots__ = _fields = ("input_tokens", "output_tokens", "cache_creation_tokens",
                           "cache_read_tokens", "reasoning_tokens", "cost_usd", "responses",
                           "models", "unpriced", "subagent_cost_usd", "subagent_tokens")
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    reasoning_tokens: int
    cost_usd: float
    responses: int
    models: set[str]
    unpriced: set[str]   # models of responses without a price
    subagent_cost_usd: float
    subagent_tokens: int

    def __init__(self, input_tokens: int = 0, output_tokens: int = 0,
                 cache_creation_tokens: int = 0, cache_read_tokens: int = 0,
                 reasoning_tokens: int = 0, cost_usd: float = 0.0, responses: int = 0,
                 models: set[str] | None = None, unpriced: set[str] | None = None,
                 subagent_cost_usd: float = 0.0, subagent_tokens: int = 0):
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cache_creation_tokens = cache_creation_tokens
        self.cache_read_tokens = cache_read_tokens
        self.reasoning_tokens = reasoning_tokens
        self.cost_usd = cost_usd
        self.responses = responses
        self.models = set() if models is None else models
        self.unpriced = set() if unpriced is None else unpriced
        self.subagent_cost_usd = subagent_cost_usd
        self.subagent_tokens = subagent_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_creation_tokens + \
            self.cache_read_tokens

    @property
    def incomplete(self) -> bool:
        return bool(self.unpriced)

    def add_row(self, model: str, inp: int, out: int, cc: int, cr: int, reasoning: int,
                cost: float | None, responses: int, unpriced: int, sub_cost: float = 0.0,
                sub_tokens: int = 0) -> None:
        self.input_tokens += inp
        self.output_tokens += out
        self.cache_creation_tokens += cc
        self.cache_read_tokens += cr
        self.reasoning_tokens += reasoning
        self.cost_usd += cost or 0.0
        self.responses += responses
        self.subagent_cost_usd += sub_cost or 0.0
        self.subagent_tokens += sub_tokens or 0
        if model or responses:
            self.models.add(model or "(unknown model)")
        if unpriced:
            self.unpriced.add(model or "(unknown model)")

    def merge(self, other: "Figure") -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_creation_tokens += other.cache_creation_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cost_usd += other.cost_usd
        self.responses += other.responses
        self.subagent_cost_usd += other.subagent_cost_usd
        self.subagent_tokens += other.subagent_tokens
        self.models |= other.models
        self.unpriced |= other.unpriced

    def as_json(self, key: Any = None, *, with_key: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"key": key} if with_key else {}
        out.update({
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens, "total_tokens": self.total_tokens,
            "cost_usd": round(self.cost_usd, 6), "models": sorted(self.models),
            "incomplete": self.incomplete})
        return out


class Report(Record):
    """A usage report: a figure a row (grouped `by`) and the totals."""

    __slots__ = _fields = ("by", "rows", "totals", "copies")
    by: str
    rows: list[tuple[str, str, Figure]]    # (key, label, figure)
    totals: Figure
    copies: dict[str, int]   # by session, copies under their original: the copies a row holds

    def __init__(self, by: str, rows: list[tuple[str, str, Figure]], totals: Figure,
                 copies: dict[str, int] | None = None):
        self.by = by
        self.rows = rows
        self.totals = totals
        self.copies = copies or {}

    def as_json(self) -> dict[str, Any]:
        return {"rows": [figure.as_json(key) for key, _label, figure in self.rows],
                "totals": self.totals.as_json(with_key=False)}


def local_zone(name: str | None = None) -> tzinfo:
    """The named zone, or the user's local one (TZ or the system's)."""
    if name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {name!r} (an IANA name such as Europe/Paris or UTC)") \
                from None
    zone = datetime.now().astimezone().tzinfo
    import os

    tz = os.environ.get("TZ")
    if tz:
        try:
            from zoneinfo import ZoneInfo

            return ZoneInfo(tz.lstrip(":"))
        except Exception:
            pass
    return zone or timezone.utc


def period_key(local_day: date, by: str) -> str:
    if by == "week":
        return (local_day - timedelta(days=local_day.weekday())).isoformat()   # the Monday
    if by == "month":
        return local_day.strftime("%Y-%m")
    return local_day.isoformat()


def utc_bounds(since: date | None, until: date | None, zone: tzinfo) -> tuple[str | None, str | None]:
    """Stored-timestamp bounds [lo, hi) for local days since..until (both included)."""
    def at(day: date) -> str:
        local = datetime(day.year, day.month, day.day, tzinfo=zone)
        return local.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")

    lo = at(since) if since else None
    hi = at(until + timedelta(days=1)) if until else None
    return lo, hi


def fmt_cost(figure: Figure, *, digits: int = 2) -> str:
    """'$1.23', '$1.23+' when some of it has no price, '—' when none of it has."""
    if figure.unpriced and figure.cost_usd == 0 and figure.responses:
        return "no price"
    text = fmt_usd(figure.cost_usd, digits)
    return text + "+" if figure.unpriced else text


def fmt_usd(value: float, digits: int = 2) -> str:
    """Dollars, with more digits for amounts below a cent (never "$0.00" for a real cost)."""
    if 0 < value < 0.0001:
        return "<$0.0001"
    if 0 < value < 0.01:
        return f"${value:.4f}"
    return f"${value:,.{digits}f}"


def fmt_tokens(count: int) -> str:
    for limit, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if count >= limit:
            value = count / limit
            return f"{value:.1f}{suffix}" if value < 100 else f"{value:.0f}{suffix}"
    return str(count)


def merge_rows(rows: Iterable[tuple[str, Figure]]) -> Figure:
    total = Figure()
    for _key, figure in rows:
        total.merge(figure)
    return total
