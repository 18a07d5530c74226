"""Prices come from the genai-prices table; arbor's fast per-token rates must give its answers."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.usage import pricing
from core.usage.pricing import PriceBook, PricesError

genai_prices = pytest.importorskip("genai_prices")

MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-opus-4-1-20250805",
          "claude-haiku-4-5-20251001", "gpt-5-codex", "gpt-5.1-codex-max", "gemini-2.5-pro",
          "deepseek-chat"]


@settings(max_examples=300, deadline=None)
@given(model=st.sampled_from(MODELS),
       when=st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2026, 12, 31),
                         timezones=st.just(UTC)),
       uncached=st.integers(0, 400_000), write=st.integers(0, 150_000),
       read=st.integers(0, 400_000), output=st.integers(0, 80_000), data=st.data())
def test_rates_give_the_packages_own_price(model, when, uncached, write, read, output, data):
    hour = data.draw(st.integers(0, write))
    reasoning = data.draw(st.integers(0, output))
    book = PriceBook()
    mine = book.cost(model, "", when, uncached, write, hour, read, output, reasoning)
    usage = genai_prices.Usage(input_tokens=uncached + write + read, cache_write_tokens=write,
                               cache_write_1h_tokens=hour, cache_read_tokens=read,
                               output_tokens=output, output_reasoning_tokens=reasoning)
    ref = genai_prices.calc_price(usage, model, genai_request_timestamp=when).total_price
    assert mine == pytest.approx(float(ref), rel=1e-9, abs=1e-12)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")
    assert book.cost_at(model, "", stamp, uncached, write, hour, read, output, reasoning) == \
        pytest.approx(float(ref), rel=1e-9, abs=1e-12)


def test_a_long_context_request_is_priced_at_the_higher_rate_as_a_whole():
    book = PriceBook()
    when = datetime(2025, 10, 1, tzinfo=UTC)
    model = "claude-sonnet-4-5-20250929"
    info = genai_prices.data_snapshot.get_snapshot().find_provider_model(model, None, "anthropic", None)[1]
    tiered = info.get_prices(when).input_mtok
    assert isinstance(tiered, genai_prices.types.TieredPrices)
    threshold = tiered.tiers[0].start
    below = book.cost(model, "anthropic", when, threshold, 0, 0, 0, 0)
    above = book.cost(model, "anthropic", when, threshold + 1, 0, 0, 0, 0)
    assert below == pytest.approx(threshold * float(tiered.base) / 1e6)
    # every token of the larger request at the tier's rate, not only the one over the line
    assert above == pytest.approx((threshold + 1) * float(tiered.tiers[0].price) / 1e6)
    # cache reads count toward the threshold: a request of 1,000 new tokens on a 250k cache
    read_heavy = book.cost(model, "anthropic", when, 1000, 0, 0, 250_000, 0)
    cache_rate = info.get_prices(when).cache_read_mtok
    assert read_heavy == pytest.approx((1000 * float(tiered.tiers[0].price)
                                        + 250_000 * float(cache_rate.tiers[0].price)) / 1e6)


def test_a_model_the_table_does_not_know_has_no_price():
    book = PriceBook()
    assert book.cost("my-local-llama-7b", "", None, 100, 0, 0, 0, 10) is None
    assert book.cost_at("my-local-llama-7b", "", "2025-01-01T00:00:00+00:00", 1, 0, 0, 0, 1) is None
    assert book.cost("", "anthropic", None, 100, 0, 0, 0, 10) is None


def test_overrides_win_and_globs_match(tmp_path, monkeypatch):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({
        "my-local-*": {"input_mtok": 0, "output_mtok": 0},
        "claude-sonnet-4-5-20250929": {"input_mtok": 1, "output_mtok": 2,
                                       "cache_read_mtok": {"base": 0.1, "tiers": [{"start": 10, "price": 1}]}},
    }))
    monkeypatch.setenv("ARBOR_PRICES", str(path))
    book = pricing.price_book()
    assert book.cost("my-local-llama", "", None, 1000, 0, 0, 0, 1000) == 0.0
    assert book.cost("claude-sonnet-4-5-20250929", "anthropic", None, 1_000_000, 0, 0, 0, 1_000_000) \
        == pytest.approx(3.0)
    # the tier of an override applies to the whole request, as the table's do
    assert book.cost("claude-sonnet-4-5-20250929", "", None, 0, 0, 0, 11, 0) == pytest.approx(11 / 1e6)
    first = book.basis
    path.write_text(json.dumps({"my-local-*": {"input_mtok": 1}}))
    assert pricing.price_book().basis != first   # a changed file is read again


@pytest.mark.parametrize("text, fragment", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected an object"),
    ('{"m": {"input_mtok": -1}}', "0 or more"),
    ('{"m": {"inptu_mtok": 1}}', "unknown price 'inptu_mtok'"),
    ('{"m": {"input_mtok": {"base": 1}}}', "tiered price"),
])
def test_a_bad_overrides_file_is_one_clear_sentence(tmp_path, monkeypatch, text, fragment):
    path = tmp_path / "prices.json"
    path.write_text(text)
    monkeypatch.setenv("ARBOR_PRICES", str(path))
    with pytest.raises(PricesError, match=fragment.replace("(", r"\(")):
        pricing.price_book()


def test_a_missing_overrides_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("ARBOR_PRICES", str(tmp_path / "nope.json"))
    with pytest.raises(PricesError, match="nope.json: cannot read it"):
        pricing.price_book()


def test_basis_changes_with_the_table_version(monkeypatch):
    one = pricing.basis(data=b"")
    monkeypatch.setattr(pricing, "table_version", lambda: "999.0")
    assert pricing.basis(data=b"") != one


def test_the_price_book_reads_the_package_metadata_once(monkeypatch):
    """price_book() runs on every batch of usage rows an import writes: the table's version
    must not be read from the package metadata each time (it cost ~0.6 s of a 100 MB import)."""
    import importlib.metadata

    calls = []
    real = importlib.metadata.version

    def counting(name):
        calls.append(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", counting)
    forget = getattr(pricing.table_version, "cache_clear", lambda: None)
    forget()
    try:
        for _ in range(5):
            pricing.price_book()
    finally:
        forget()
    assert len(calls) <= 1   # (none when the version is read from the dist-info folder's name)


def test_the_table_version_is_the_one_the_package_metadata_gives(monkeypatch):
    """Read from the name of the dist-info folder beside the package (importlib.metadata
    costs ~25 ms to import), it must be what importlib.metadata says; and when that folder
    cannot be told (none, or two), importlib.metadata is asked."""
    import importlib.metadata

    forget = pricing.table_version.cache_clear
    forget()
    try:
        assert pricing._version_beside_package() == importlib.metadata.version("genai-prices")
        assert pricing.table_version() == importlib.metadata.version("genai-prices")
        forget()
        monkeypatch.setattr(pricing, "_version_beside_package", lambda: None)
        monkeypatch.setattr(importlib.metadata, "version", lambda name: "7.7.7")
        assert pricing.table_version() == "7.7.7"
    finally:
        forget()


def test_fast_mode_is_priced_as_the_table_says():
    book = PriceBook()
    snapshot = genai_prices.data_snapshot.get_snapshot()
    fast_models = [m.id for p in snapshot.providers if p.id == "anthropic" for m in p.models
                   if any(v.when == {"speed": "fast"} for v in m.price_variants or ())]
    if not fast_models:
        pytest.skip("this table has no fast-mode prices")
    when = datetime(2026, 6, 1, tzinfo=UTC)
    model = fast_models[0]
    usage = genai_prices.Usage(input_tokens=1000, output_tokens=1000)
    ref = genai_prices.calc_price(usage, model, genai_request_timestamp=when,
                                  price_context={"speed": "fast"}).total_price
    assert book.cost(model, "anthropic", when, 1000, 0, 0, 0, 1000, fast=True) == \
        pytest.approx(float(ref))
    assert Decimal(str(book.cost(model, "anthropic", when, 1000, 0, 0, 0, 1000))) <= ref
