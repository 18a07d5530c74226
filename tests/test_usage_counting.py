"""Counting, end to end: logs made for the purpose imported into a store, figures read back.

Expected costs come from genai-prices' own `calc_price`, one call per response, not from
arbor's rates: the two are computed differently and must agree.
"""

from __future__ import annotations

import json
from datetime import date, datetime

import pytest

from core import open_store
from core.importing import import_paths
from tests import usage_files as uf

genai_prices = pytest.importorskip("genai_prices")


def _price(model, stamp, inp, out, write=0, read=0, provider="anthropic"):
    when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    usage = genai_prices.Usage(input_tokens=inp + write + read, cache_write_tokens=write,
                               cache_read_tokens=read, output_tokens=out)
    return float(genai_prices.calc_price(usage, model, provider_id=provider,
                                         genai_request_timestamp=when).total_price)


R = uf.CLAUDE_RESPONSES
STAMPS = {"r1": "2025-10-01T10:00:01.000Z", "r2": "2025-10-01T10:00:04.000Z",
          "r3": "2025-10-01T10:01:05.000Z", "r5": "2025-10-01T10:02:11.000Z",
          "r6": "2025-10-02T09:00:05.000Z"}


def _cost_of(name):
    r = R[name]
    return _price(uf.SONNET, STAMPS[name], r["input"], r["output"], r["write"], r["read"])


SUB = uf.SUBAGENT_RESPONSE
SUB_COST = _price(uf.SONNET, "2025-10-01T10:00:11.000Z", SUB["input"], SUB["output"], SUB["write"],
                  SUB["read"])


@pytest.fixture
def claude_store(tmp_path, store_location):
    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    store = open_store(store_location)
    import_paths(store, [folder])
    yield store
    store.close()


def _sum(kind, names):
    return sum(R[n][kind] for n in names)


def test_claude_code_counts_each_response_once_with_its_largest_copy(claude_store):
    store = claude_store
    main = store.sessions.by_uid(uf.SESSION)
    figures = store.usage.by_session()
    figure = figures[main.id]
    names = list(R)
    assert figure.responses == len(names) + 1    # r1..r6 and the sub-agent's
    assert figure.input_tokens == _sum("input", names) + SUB["input"]
    # r1 counted with its final output (301), not 1 + 12 + 301, not 1
    assert figure.output_tokens == _sum("output", names) + SUB["output"]
    assert figure.cache_creation_tokens == _sum("write", names) + SUB["write"]
    assert figure.cache_read_tokens == _sum("read", names) + SUB["read"]
    # r4's model has no price: the figure says so and names it; the rest is priced
    assert figure.incomplete and figure.unpriced == {uf.UNPRICED}
    priced = sum(_cost_of(n) for n in ("r1", "r2", "r3", "r5", "r6")) + SUB_COST
    assert figure.cost_usd == pytest.approx(priced, rel=1e-9)
    # the sub-agent part is shown apart: its own file, and the sidechain lines of the main file
    assert figure.subagent_cost_usd == pytest.approx(SUB_COST + _cost_of("r5"), rel=1e-9)
    # the sub-agent's own session is not a figure of its own in the list
    sub = [s for s in store.sessions.list() if s.kind == "subagent"]
    assert sub and all(s.id not in figures for s in sub)


def test_a_long_context_request_is_priced_at_the_higher_tier(claude_store):
    store = claude_store
    main = store.sessions.by_uid(uf.SESSION)
    seqs = [e.seq for e in store.entries.of_session(main.id)]
    by_seq = store.usage.of_responses(seqs)
    r3 = [u for u in by_seq.values() if u.cache_read_tokens == R["r3"]["read"]]
    assert len(r3) == 1
    r = R["r3"]
    info = genai_prices.data_snapshot.get_snapshot().find_provider_model(uf.SONNET, None, "anthropic", None)[1]
    prices = info.get_prices(datetime.fromisoformat("2025-10-01T10:01:05+00:00"))
    tier = {k: float(getattr(prices, k).tiers[0].price) for k in
            ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok")}
    whole = (r["input"] * tier["input_mtok"] + r["output"] * tier["output_mtok"]
             + r["read"] * tier["cache_read_mtok"] + r["write"] * tier["cache_write_mtok"]) / 1e6
    assert r3[0].cost_usd == pytest.approx(whole, rel=1e-9)
    assert r3[0].cost_usd == pytest.approx(_cost_of("r3"), rel=1e-9)


def test_a_response_in_two_sessions_counts_in_each_and_once_in_totals(tmp_path):
    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    uf.claude_resumed_copy(folder)
    with open_store(tmp_path / "s.db") as store:
        import_paths(store, [folder])
        figures = store.usage.by_session()
        first = figures[store.sessions.by_uid(uf.SESSION).id]
        second = figures[store.sessions.by_uid(uf.RESUMED).id]
        assert second.responses == 2 and second.output_tokens == R["r1"]["output"] + 100
        report = store.usage.report("model")
        total = report.totals
        assert total.responses == first.responses + 1      # r1 once, plus the new one
        assert total.output_tokens == first.output_tokens + 100
        by_session = store.usage.report("session")
        assert sum(f.responses for _k, _l, f in by_session.rows) == first.responses + 2
        assert by_session.totals.responses == total.responses
        assert [k for k, _l, _f in report.rows] == [uf.SONNET, uf.UNPRICED]
        # deleting the session that held r1 first makes the copy count in totals (the
        # sub-agents' own sessions stay, on their own: the one in subagents/ and r5's,
        # written inline in the main file)
        store.sessions.delete(store.sessions.by_uid(uf.SESSION).id)
        assert store.usage.report("model").totals.responses == 2 + 1 + 1


def test_a_second_import_and_a_rebuilt_store_count_the_same(claude_store, tmp_path):
    store = claude_store
    before = store.usage.report("session").as_json()
    import_paths(store, [tmp_path / "projects"])
    assert store.usage.report("session").as_json() == before
    # a store made before this migration: its usage is read again from its entries
    from core.store.usage.rows import rebuild_from_entries

    with store.transaction() as conn:
        rebuild_from_entries(conn, store._sql, store._backend)
    assert store.usage.report("session").as_json() == before


def test_codex_turns_count_last_usage_once_and_cached_input_as_cache_read(tmp_path):
    path = uf.codex_rollout(tmp_path / "sessions")
    with open_store(tmp_path / "s.db") as store:
        import_paths(store, [path])
        (session,) = [s for s in store.sessions.list()]
        figure = store.usage.by_session()[session.id]
        e = uf.CODEX_EXPECTED
        assert (figure.input_tokens, figure.cache_read_tokens, figure.output_tokens,
                figure.reasoning_tokens, figure.responses) == \
            (e["input"], e["cache_read"], e["output"], e["reasoning"], e["responses"])
        assert figure.models == {uf.CODEX_MODEL} and not figure.incomplete
        expected = _price(uf.CODEX_MODEL, "2025-10-05T12:00:05Z", e["input"], e["output"],
                          read=e["cache_read"], provider="openai")
        assert figure.cost_usd == pytest.approx(expected, rel=1e-9)


def test_codex_lines_appended_later_continue_the_running_total(tmp_path):
    path = uf.codex_rollout(tmp_path / "sessions")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))
    with open_store(tmp_path / "s.db") as store:
        import_paths(store, [path])
        path.write_text("".join(lines))   # the agent wrote its next turn (totals only)
        import_paths(store, [path])
        (session,) = store.sessions.list()
        figure = store.usage.by_session()[session.id]
        assert figure.responses == 3 and figure.output_tokens == uf.CODEX_EXPECTED["output"]


def test_pi_logged_cost_is_used_and_computed_only_where_missing(tmp_path):
    path = uf.pi_session(tmp_path / "pi")
    with open_store(tmp_path / "s.db") as store:
        import_paths(store, [path])
        (session,) = store.sessions.list()
        figure = store.usage.by_session()[session.id]
        computed = _price("claude-sonnet-4-5", "2025-10-07T08:00:04Z", 1000, 2000) + \
            _price("claude-sonnet-4-5", "2025-10-07T08:00:06Z", 10, 20)
        assert figure.cost_usd == pytest.approx(0.75 + computed, rel=1e-9)
        assert figure.responses == 3 and not figure.incomplete


def test_usage_report_json_has_exactly_the_documented_shape(claude_store):
    report = claude_store.usage.report("day", timezone="UTC").as_json()
    assert set(report) == {"rows", "totals"}
    fields = {"input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens",
              "total_tokens", "cost_usd", "models", "incomplete"}
    assert set(report["totals"]) == fields
    assert [row["key"] for row in report["rows"]] == ["2025-10-01", "2025-10-02"]
    for row in report["rows"]:
        assert set(row) == fields | {"key"}
        assert row["total_tokens"] == row["input_tokens"] + row["output_tokens"] + \
            row["cache_creation_tokens"] + row["cache_read_tokens"]
    assert report["rows"][0]["incomplete"] and not report["rows"][1]["incomplete"]
    assert uf.UNPRICED in report["totals"]["models"]
    json.dumps(report)


def test_days_are_local_and_the_range_is_inclusive(claude_store):
    utc = claude_store.usage.report("day", timezone="UTC")
    assert [(k, f.responses) for k, _l, f in utc.rows] == [("2025-10-01", 6), ("2025-10-02", 1)]
    # UTC+14: 10:00Z on the 1st is already midnight of the 2nd, 09:00Z on the 2nd is 23:00
    kiri = claude_store.usage.report("day", timezone="Pacific/Kiritimati")
    assert [(k, f.responses) for k, _l, f in kiri.rows] == [("2025-10-02", 7)]
    # --since/--until are local days, both included
    one = claude_store.usage.report("day", timezone="Pacific/Kiritimati", since=date(2025, 10, 1),
                                    until=date(2025, 10, 1))
    assert one.rows == [] and one.totals.responses == 0
    both = claude_store.usage.report("week", timezone="UTC", since=date(2025, 10, 2),
                                     until=date(2025, 10, 2))
    assert [(k, f.responses) for k, _l, f in both.rows] == [("2025-09-29", 1)]
    # India's days start at 18:30Z: rows are made per minute there
    india = claude_store.usage.report("month", timezone="Asia/Kolkata")
    assert [(k, f.responses) for k, _l, f in india.rows] == [("2025-10", 7)]


def test_branch_figures_start_at_the_fork_point(claude_store):
    store = claude_store
    main = store.sessions.by_uid(uf.SESSION)
    branches = {b.name: b for b in store.branches.of_session(main.id)}
    forked = [b for b in branches.values() if b.fork_seq is not None and b.parent_session_id]
    assert forked, branches
    rewind = [b for b in forked if store.usage.of_path(b.head_seq, after_seq=b.fork_seq).output_tokens
              == R["r6"]["output"]]
    assert len(rewind) == 1
    own = store.usage.of_path(rewind[0].head_seq, after_seq=rewind[0].fork_seq)
    assert own.responses == 1 and own.cost_usd == pytest.approx(_cost_of("r6"), rel=1e-9)
    whole = store.usage.of_path(rewind[0].head_seq)
    assert whole.responses == 3    # r1 and r2 before the fork, r6 after it
