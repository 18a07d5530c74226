"""The usage screen's spans (week, month, year, all, dates typed), bars that stay readable
over a year, and copies made by `o` counted under their original (issue 26, item 7)."""

from __future__ import annotations

from datetime import date

import pytest

from conftest import open_fixed, settle
from core import open_store
from core.usage.span import UsageSpan, bucket_starts, by_bucket, grain_for
from tui.app import ArborApp
from usage_history import FIRST, NOW, ORIGINAL, TODAY, build_usage_history

SIZE = (120, 40)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")   # days are local: make them the same on every machine


@pytest.fixture
def history_db(tmp_path):
    return build_usage_history(tmp_path / "usage.db")


# ------------------------------------------------------------------ spans
def test_spans_up_to_today():
    assert UsageSpan.last("week", TODAY) == UsageSpan("week", date(2026, 2, 23), TODAY)
    assert UsageSpan.last("month", TODAY).since == date(2026, 1, 31)
    assert UsageSpan.last("year", TODAY).since == date(2025, 3, 2)
    assert UsageSpan.last("all", TODAY) == UsageSpan("all", None, TODAY)
    assert UsageSpan.last("all", TODAY).title(FIRST) == "all time, since 2025-01-06"


@pytest.mark.parametrize("typed, since, until", [
    ("2025-06-01 2025-08-31", date(2025, 6, 1), date(2025, 8, 31)),
    ("from 2025-06-01 to 2025-08-31", date(2025, 6, 1), date(2025, 8, 31)),
    ("2025-08-31 – 2025-06-01", date(2025, 6, 1), date(2025, 8, 31)),   # either order
    ("2025-12-24", date(2025, 12, 24), TODAY),                          # one date: to today
    ("2025-6-1..2025-6-30", date(2025, 6, 1), date(2025, 6, 30)),
])
def test_dates_typed(typed, since, until):
    span = UsageSpan.parse(typed, TODAY)
    assert (span.kind, span.since, span.until) == ("custom", since, until)


@pytest.mark.parametrize("typed, said", [
    ("last tuesday", "YYYY-MM-DD"), ("2025-02-30", "2025-02-30 is not a date"),
    ("2026-04-01", "after today"), ("2025-01-01 2025-02-01 2025-03-01", "YYYY-MM-DD"),
    ("2025-01-01 and then some", "YYYY-MM-DD"),
])
def test_dates_that_are_not_a_span_are_said(typed, said):
    with pytest.raises(ValueError, match=said):
        UsageSpan.parse(typed, TODAY)


def test_a_long_span_is_drawn_in_weeks_months_or_years():
    year = UsageSpan.last("year", TODAY)
    assert grain_for(date(2026, 1, 31), TODAY, 100) == "day"      # 30 bars of 2+ columns
    assert grain_for(year.since, TODAY, 110) == "week" or len(bucket_starts(year.since, TODAY, "week")) * 2 > 110
    assert grain_for(year.since, TODAY, 100) == "month"
    assert grain_for(date(2015, 1, 1), TODAY, 70) == "year"
    assert bucket_starts(date(2025, 12, 31), date(2026, 2, 2), "week")[0] == date(2025, 12, 29)
    assert [d.isoformat() for d in bucket_starts(date(2025, 11, 15), TODAY, "month")] == \
        ["2025-11-01", "2025-12-01", "2026-01-01", "2026-02-01", "2026-03-01"]


def test_bars_sum_their_days(store_location):
    build_usage_history(store_location)
    with open_store(store_location, create=False) as store:
        by_day = store.usage.by_day_and_model(None, TODAY)
        months = by_bucket(by_day, "month")
        total = store.usage.report("model").totals.cost_usd
        assert sum(f.cost_usd for bar in months.values() for f in bar.values()) == \
            pytest.approx(total)
        assert min(months) == date(2025, 1, 1) and max(months) == date(2026, 2, 1)


# ---------------------------------------------------------------- copies
def test_copies_are_counted_under_their_original(store_location):
    build_usage_history(store_location)
    with open_store(store_location, create=False) as store:
        apart = store.usage.report("session")
        assert [label for _k, label, _f in apart.rows[:3]] == [ORIGINAL] * 3   # the complaint
        grouped = store.usage.report("session", copies_under_original=True)
        rows = [(label, figure.cost_usd) for _k, label, figure in grouped.rows]
        assert [label for label, _ in rows].count(ORIGINAL) == 1
        # the original's responses once, and what each copy added (1 + 2)
        assert rows[0] == (ORIGINAL, pytest.approx(9.5 + 12.25 + 1 + 2))
        (key, _label, _figure) = grouped.rows[0]
        assert grouped.copies == {key: 2}
        assert grouped.totals.cost_usd == pytest.approx(apart.totals.cost_usd)
        assert sum(f.cost_usd for _k, _l, f in grouped.rows) == pytest.approx(grouped.totals.cost_usd)


# ------------------------------------------------------------------ screen
def app_for(path) -> ArborApp:
    return ArborApp(open_fixed(path), clock=lambda: NOW, poll_interval=None, store_label=path.name)


def _usage(*keys):
    async def run(pilot) -> None:
        await settle(pilot)
        await _usage_keys(pilot, "dollar_sign", *keys)
    return run


@pytest.mark.parametrize("keys", [(), ("w",), ("y",), ("a",),
                                  ("c", "ctrl+u", "type:2025-06-01 2025-08-31", "enter")],
                         ids=["month", "week", "year", "all", "dates"])
def test_usage_spans_120x40(snap_compare, history_db, keys):
    assert snap_compare(app_for(history_db), terminal_size=SIZE, run_before=_usage(*keys))


@pytest.mark.parametrize("keys", [("y",), ("a",)], ids=["year", "all"])
def test_usage_spans_80x24(snap_compare, history_db, keys):
    assert snap_compare(app_for(history_db), terminal_size=(80, 24), run_before=_usage(*keys))


async def test_the_span_is_said_in_the_title_and_a_wrong_date_changes_nothing(history_db):
    app = app_for(history_db)
    async with app.run_test(size=SIZE) as pilot:
        await _usage("y")(pilot)
        screen = app.screen
        assert "Usage · last 12 months" in str(screen.query_one("#usage-title").render())
        assert screen.query_one("#usage-chart").grain == "month"   # (53 weeks: not 2 columns each)
        rows = screen.query_one("#usage-sessions")
        assert [name for name, _f, _s in rows.rows].count(ORIGINAL) == 1
        assert rows.notes[0] == "+2 copies" and rows.rows[0][0] == ORIGINAL
        await _usage_keys(pilot, "c", "ctrl+u", "type:2025-02-30", "enter")
        assert app.screen is screen and screen.span == UsageSpan.last("year", TODAY)
        assert [n.message for n in app._notifications][-1] == "2025-02-30 is not a date"
        await _usage_keys(pilot, "a")
        assert "all time, since 2025-01-06" in str(screen.query_one("#usage-title").render())


async def _usage_keys(pilot, *keys) -> None:
    for key in keys:
        if key.startswith("type:"):
            for char in key[5:]:
                await pilot.press({" ": "space", "-": "minus"}.get(char, char))
        else:
            await pilot.press(key)
        await settle(pilot)
