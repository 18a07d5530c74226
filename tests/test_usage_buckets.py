"""The hourly usage buckets (migration 9) are kept by triggers: after imports, a copy in a
second session, a deletion that hands a count on, a repricing, a rebuild and a migration,
they hold exactly the sums of the responses they stand for, and reports read from them
equal reports read from the responses themselves."""

from __future__ import annotations

import json

import pytest

from core import open_store
from core.importing import import_paths
from tests import usage_files as uf

pytest.importorskip("genai_prices")

RAW = ("SELECT counted, substr(timestamp, 1, 13), external_session_id, model, COUNT(*),"
       " SUM(input_tokens), SUM(output_tokens), SUM(cache_creation_tokens), SUM(cache_read_tokens),"
       " SUM(reasoning_tokens), SUM(COALESCE(cost_usd, 0)),"
       " SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END),"
       " SUM(CASE WHEN subagent = 1 THEN COALESCE(cost_usd, 0) ELSE 0 END),"
       " SUM(CASE WHEN subagent = 1 THEN input_tokens + output_tokens + cache_creation_tokens"
       " + cache_read_tokens ELSE 0 END) FROM usage GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4")
KEPT = ("SELECT counted, hour, external_session_id, model, responses, input_tokens, output_tokens,"
        " cache_creation_tokens, cache_read_tokens, reasoning_tokens, cost_usd, unpriced,"
        " subagent_cost_usd, subagent_tokens FROM usage_buckets ORDER BY 1, 2, 3, 4")


def _same(store) -> None:
    with store.reading() as conn:
        raw, kept = conn.execute(RAW).fetchall(), conn.execute(KEPT).fetchall()
    assert [r[:10] + (r[11],) for r in kept] == [r[:10] + (r[11],) for r in raw]
    for k, r in zip(kept, raw):
        assert k[10] == pytest.approx(r[10], abs=1e-9) and k[12] == pytest.approx(r[12], abs=1e-9)


def _reports_agree(store) -> None:
    """Each grouping read from the buckets equals the same read from the responses."""
    sql = store._sql
    from core.store.usage import queries as usage_queries

    for by in ("session", "day", "week", "month", "model", "project"):
        fast = store.usage.report(by).as_json()
        with pytest.MonkeyPatch.context() as patch:   # every report from the responses
            patch.setattr(sql, "usage_bucket_report", sql.usage_report)
            slow = usage_queries.report(store, by)
        assert json.dumps(fast, sort_keys=True) == json.dumps(slow.as_json(), sort_keys=True), by


def test_the_buckets_follow_every_change_to_the_responses(tmp_path, monkeypatch, store_location):
    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    uf.claude_resumed_copy(folder)
    store = open_store(store_location)
    import_paths(store, [folder, uf.codex_rollout(tmp_path / "codex"), uf.pi_session(tmp_path / "pi")])
    _same(store)
    assert len(store.connection.execute(KEPT).fetchall()) > 3
    _reports_agree(store)
    # the session that held r1 first goes: its copy in the resumed session counts now
    store.sessions.delete(store.sessions.by_uid(uf.SESSION).id)
    _same(store)
    _reports_agree(store)
    # other prices: every response priced again (updates move the buckets)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({uf.SONNET: {"input_mtok": 1, "output_mtok": 2}}))
    monkeypatch.setenv("ARBOR_PRICES", str(prices))
    assert store.usage.prices_stale()
    assert store.usage.reprice() > 0
    _same(store)
    _reports_agree(store)
    # read again from the entries
    from core.store.usage.rows import rebuild_from_entries

    with store.transaction() as conn:
        rebuild_from_entries(conn, store._sql, store._backend)
    _same(store)
    store.close()


def test_a_store_without_buckets_gets_them_summed_by_the_migration(tmp_path):
    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    path = tmp_path / "s.db"
    with open_store(path) as store:
        import_paths(store, [folder])
        before = store.usage.report("day").as_json()
        conn = store.connection
        for trigger in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER usage_buckets_{trigger}")
        conn.execute("DROP TABLE usage_buckets")
        # A store of schema 8: migration 9 and every later one not applied yet.
        conn.execute("DROP INDEX idx_import_stamps")
        conn.execute("DELETE FROM schema_migrations WHERE version >= 9")
    with open_store(path) as store:
        _same(store)
        assert store.usage.report("day").as_json() == before
