"""New responses are priced from the rates kept in the store (core/store/usage/price_cards.py):
the same floats as the price book gives, without loading the price table once a model's
rates for that day are kept. Issue 11: appending 10 lines to a 30 MB session and importing
took 9x a no-change import, most of it loading genai-prices (~0.3 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from core import open_store
from core.usage import pricing
from core.importing import import_paths
from core.store.usage.price_cards import StoredPrices
from tests import usage_files as uf

genai_prices = pytest.importorskip("genai_prices")

REPO = Path(__file__).resolve().parent.parent
MODELS = ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-opus-4-1-20250805",
          "claude-haiku-4-5-20251001", "gpt-5-codex", "gpt-5.1-codex-max", "gemini-2.5-pro",
          "deepseek-chat", uf.UNPRICED]
DAYS = ["2025-01-01", "2025-10-01", "2026-03-12", "2026-03-13", "2026-10-13", "2026-10-14",
        "2026-12-31"]
# (input, cache write, of it 1 h, cache read, output, reasoning): below and above the 200k tier
TOKENS = [(3, 1000, 500, 2000, 301, 0), (7, 100, 0, 250_000, 500, 100), (400_000, 0, 0, 0, 10, 0)]


def _stamp(day: str) -> str:
    return f"{day}T10:00:01.000+00:00"


def _no_book():
    raise AssertionError("the price table was asked for a card the store keeps")


def test_kept_cards_price_exactly_as_the_book(store_location):
    book = pricing.price_book()
    store = open_store(store_location)
    try:
        learned = {}
        with store.transaction() as conn:
            prices = StoredPrices(conn, store._sql)
            assert prices.basis == book.basis
            for model in MODELS:
                for day in DAYS:
                    for fast in (False, True):
                        for tokens in TOKENS:
                            assert prices.cost_at(model, "", _stamp(day), *tokens, fast=fast) == \
                                book.cost_at(model, "", _stamp(day), *tokens, fast=fast)
                        learned[model, day, fast] = book.span_at(model, "", _stamp(day), fast)
            prices.save()
        with store.transaction() as conn:
            kept = StoredPrices(conn, store._sql)
            kept.book = _no_book
            for (model, day, fast), span in learned.items():
                if span is None:        # priced by the time of day: never kept
                    with pytest.raises(AssertionError, match="the price table was asked"):
                        kept.cost_at(model, "", _stamp(day), *TOKENS[0], fast=fast)
                    continue
                _card, first, until = span
                days = [day]
                # another day of the same span: priced without the table too
                if until is None:
                    days.append((date.fromisoformat(day) + timedelta(days=100)).isoformat())
                elif first is None:
                    days.append((date.fromisoformat(day) - timedelta(days=100)).isoformat())
                for other in days:
                    for tokens in reversed(TOKENS):
                        assert kept.cost_at(model, "", _stamp(other), *tokens, fast=fast) == \
                            book.cost_at(model, "", _stamp(other), *tokens, fast=fast), (model, other)
    finally:
        store.close()


# Runs `arbor import` and reports which of the price table's packages it loaded.
LOADED_RUN = r"""
import json, sys
from tui.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "loaded": sorted(m for m in sys.modules
                                               if m.split(".")[0] in ("genai_prices", "pydantic"))}, f)
"""


def _import(tmp_path: Path, home: Path, db: Path, env: dict | None = None) -> list[str]:
    out = tmp_path / "loaded.json"
    done = subprocess.run(
        [sys.executable, "-c", LOADED_RUN, str(out), "import", "-q", "--discover", "--db", str(db)],
        capture_output=True, text=True, cwd=str(REPO),
        env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO), **(env or {})})
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["code"] == 0
    return result["loaded"]


def _append_response(path: Path, uuid: str, when: str, model: str, usage: dict) -> None:
    last = json.loads(path.read_text().splitlines()[-1])
    lines = [uf._user(f"{uuid}-q", last["uuid"], when, "one more thing"),
             uf._assistant(uuid, f"{uuid}-q", when, f"msg_{uuid}", f"req_{uuid}", usage, model=model)]
    with open(path, "a") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))


def _row(db: Path, uuid: str) -> tuple:
    store = open_store(db)
    try:
        return store._one("SELECT model, timestamp, input_tokens, cache_creation_tokens,"
                          " cache_creation_1h_tokens, cache_read_tokens, output_tokens,"
                          " reasoning_tokens, cost_usd, price_basis FROM usage"
                          " WHERE response_key = ?", (f"msg_{uuid}:req_{uuid}",))
    finally:
        store.close()


def _book_cost(row: tuple) -> float | None:
    model, stamp, inp, cw, cw1h, cr, out, rsn, _cost, _basis = row
    return pricing.price_book().cost_at(model, "anthropic", stamp, inp, cw, cw1h, cr, out, rsn)


def test_an_import_of_appended_lines_does_not_load_the_price_table(tmp_path):
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    assert "genai_prices" in _import(tmp_path, home, db), "a new store's first import asks the table"

    # the same model, a later day of the same prices: priced from the kept card
    _append_response(session, "n1", "2025-10-02T11:00:00.000Z", uf.SONNET, uf._usage(9, 333, 700, 9000))
    assert _import(tmp_path, home, db) == []
    row = _row(db, "n1")
    assert row[0] == uf.SONNET and row[8] is not None
    assert row[8] == _book_cost(row)
    assert row[9] == pricing.basis()

    # a model the store has no card for: the table is asked once, then its card is kept
    opus = "claude-opus-4-1-20250805"
    _append_response(session, "n2", "2025-10-02T12:00:00.000Z", opus, uf._usage(5, 50, 0, 100))
    assert "genai_prices" in _import(tmp_path, home, db)
    _append_response(session, "n3", "2025-10-03T12:00:00.000Z", opus, uf._usage(6, 60, 0, 200))
    assert _import(tmp_path, home, db) == []
    for uuid in ("n2", "n3"):
        row = _row(db, uuid)
        assert row[0] == opus and row[8] is not None and row[8] == _book_cost(row)


def test_other_prices_are_not_taken_from_the_kept_cards(tmp_path, monkeypatch):
    """ARBOR_PRICES changes the basis: the cards kept under the old one are not used (the
    override prices the new response) and are dropped."""
    folder = tmp_path / "projects" / "-work-usage-demo"
    session = uf.claude_session(folder)
    store = open_store(tmp_path / "arbor.db")
    try:
        import_paths(store, [folder])
        old = pricing.basis()
        prices = tmp_path / "prices.json"
        prices.write_text(json.dumps({"claude-sonnet-4-5*": {"input_mtok": 1, "output_mtok": 2}}))
        monkeypatch.setenv("ARBOR_PRICES", str(prices))
        assert pricing.basis() != old
        _append_response(session, "n1", "2025-10-02T11:00:00.000Z", uf.SONNET, uf._usage(1000, 500))
        import_paths(store, [folder])
        cost, basis = store._one("SELECT cost_usd, price_basis FROM usage WHERE response_key = ?",
                                 ("msg_n1:req_n1",))
        assert cost == pytest.approx(1000 * 1e-6 + 500 * 2e-6)
        assert basis == pricing.basis()
        keys = [key for (key,) in store._conn.execute(
            "SELECT key FROM store_meta WHERE key LIKE 'price_cards %'")]
        assert keys and all(key.startswith(f"price_cards {pricing.basis()} ") for key in keys)
    finally:
        store.close()


def test_a_kept_row_this_arbor_cannot_read_is_asked_again(tmp_path):
    store = open_store(tmp_path / "arbor.db")
    try:
        stamp = _stamp("2025-10-01")
        with store.transaction() as conn:
            prices = StoredPrices(conn, store._sql)
            key = prices._key((uf.SONNET, "", False))
            conn.execute(store._sql.META_SET, (key, '[["x"], 7, {"no": 1}]'))
            assert prices.cost_at(uf.SONNET, "", stamp, *TOKENS[0]) == \
                pricing.price_book().cost_at(uf.SONNET, "", stamp, *TOKENS[0])
            prices.save()
        with store.transaction() as conn:
            kept = StoredPrices(conn, store._sql)
            kept.book = _no_book
            assert kept.cost_at(uf.SONNET, "", stamp, *TOKENS[1]) == \
                pricing.price_book().cost_at(uf.SONNET, "", stamp, *TOKENS[1])
    finally:
        store.close()


def test_without_learning_a_card_not_kept_is_not_asked_of_the_book(tmp_path, monkeypatch):
    """`StoredPrices(learn=False)` (a big import's own rows, `rows.KEPT_ONLY`) prices from
    the cards kept and answers NOT_KEPT for the others, without asking the book."""
    book = pricing.price_book()
    store = open_store(tmp_path / "store.db")
    try:
        with store.transaction() as conn:
            prices = StoredPrices(conn, store._sql)
            kept = prices.cost_at(MODELS[0], "", _stamp(DAYS[1]), *TOKENS[0])
            prices.save()
        monkeypatch.setattr(pricing, "price_book", _no_book)
        with store.transaction() as conn:
            prices = StoredPrices(conn, store._sql, learn=False)
            assert prices.cost_at(MODELS[0], "", _stamp(DAYS[1]), *TOKENS[0]) == kept == \
                book.cost_at(MODELS[0], "", _stamp(DAYS[1]), *TOKENS[0])
            assert prices.cost_at(MODELS[1], "", _stamp(DAYS[1]), *TOKENS[0]) is prices.NOT_KEPT
    finally:
        store.close()
