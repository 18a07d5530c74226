"""How one response's usage is read from each agent's logs (core/usage/tokens.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.usage.tokens import (
    CODEX_TOKEN_COUNT, CodexTurns, UsageTracker, claude_key, from_claude, from_langgraph, from_pi,
    larger, period_key, utc_bounds, local_zone)

REPO = Path(__file__).resolve().parent.parent


def test_claude_key_is_message_and_request_id_or_message_id_alone():
    assert claude_key("msg_1", "req_1") == "msg_1:req_1"
    assert claude_key("msg_1", None) == "msg_1"
    assert claude_key("msg_1", "") == "msg_1"
    assert claude_key(None, "req_1") is None


def test_claude_usage_keeps_the_four_kinds_and_the_one_hour_writes():
    record = from_claude({"input_tokens": 3, "output_tokens": 5, "cache_creation_input_tokens": 700,
                          "cache_read_input_tokens": 11,
                          "cache_creation": {"ephemeral_5m_input_tokens": 200,
                                             "ephemeral_1h_input_tokens": 500}, "speed": "fast"},
                         model="claude-opus-4-6", message_id="m", request_id="r")
    assert (record.input_tokens, record.output_tokens, record.cache_creation_tokens,
            record.cache_read_tokens) == (3, 5, 700, 11)
    assert record.cache_creation_1h_tokens == 500 and record.fast and record.total_tokens == 719
    assert from_claude({"input_tokens": 1}, model="<synthetic>", message_id="m",
                       request_id=None).model == ""


def test_hostile_numbers_count_as_nothing():
    record = from_claude({"input_tokens": -5, "output_tokens": float("nan"),
                          "cache_read_input_tokens": "12", "cache_creation_input_tokens": True},
                         model="m", message_id="x", request_id=None)
    assert record.total_tokens == 0 and record.is_empty()


def test_the_larger_copy_wins():
    small = from_claude({"input_tokens": 3, "output_tokens": 1}, model="m", message_id="a", request_id="b")
    big = from_claude({"input_tokens": 3, "output_tokens": 301}, model="m", message_id="a", request_id="b")
    assert larger(big, small) and not larger(small, big) and not larger(big, big)


def test_codex_turns_last_total_repeats_and_cached_input():
    turns = CodexTurns()

    def u(inp, cached, out, rsn):
        return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": rsn, "total_tokens": inp + out}

    first = turns.take({"last_token_usage": u(1000, 600, 300, 100), "total_token_usage": u(1000, 600, 300, 100)},
                       model="gpt-5-codex", provider="openai")
    assert (first.input_tokens, first.cache_read_tokens, first.output_tokens, first.reasoning_tokens) == \
        (400, 600, 300, 100)
    # the same total again: the same turn, reported twice
    assert turns.take({"last_token_usage": u(1000, 600, 300, 100),
                       "total_token_usage": u(1000, 600, 300, 100)}, model="m", provider="") is None
    # only the running total: the difference
    third = turns.take({"total_token_usage": u(1500, 900, 330, 110)}, model="m", provider="")
    assert (third.input_tokens, third.cache_read_tokens, third.output_tokens, third.reasoning_tokens) == \
        (200, 300, 30, 10)
    assert turns.take(None, model="m", provider="") is None   # rate limits only


def test_pi_logged_cost_is_used_and_a_zero_for_used_tokens_is_not():
    logged = from_pi({"input": 1, "output": 2, "cost": {"total": 0.75}}, model="m", provider="p")
    assert logged.logged_cost == 0.75
    assert from_pi({"input": 1, "output": 2}, model="m", provider="p").logged_cost is None
    assert from_pi({"input": 1, "output": 2, "cost": {"total": 0}}, model="m", provider="p").logged_cost is None
    assert from_pi({"input": 1, "output": 2, "cost": {"total": "1"}}, model="m", provider="p").logged_cost is None


def test_langgraph_input_includes_cache_reads_and_writes():
    record = from_langgraph({"input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050,
                             "input_token_details": {"cache_read": 700, "cache_creation": 200},
                             "output_token_details": {"reasoning": 20}},
                            model="claude-sonnet-4-5", message_id="run-1")
    assert (record.input_tokens, record.cache_read_tokens, record.cache_creation_tokens,
            record.output_tokens, record.reasoning_tokens) == (100, 700, 200, 50, 20)
    assert record.total_tokens == 1050


def test_tracker_follows_the_codex_model_and_reads_each_format():
    tracker = UsageTracker()
    assert tracker.take("model_change", "e1", "t", {"modelId": "gpt-5-codex", "provider": "openai"}) is None
    record = tracker.take(CODEX_TOKEN_COUNT, "e2", "t", {"payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 10, "output_tokens": 1}}}})
    assert record.model == "gpt-5-codex" and record.provider == "openai" and record.key is None
    claude = tracker.take("message", "e3", "t", {
        "message": {"role": "assistant", "model": "claude-x", "responseId": "msg_1",
                    "claude": {"usage": {"input_tokens": 1, "output_tokens": 2}}},
        "claude": {"requestId": "req_1", "isSidechain": True}})
    assert claude.key == "msg_1:req_1" and claude.subagent
    pi = tracker.take("message", "e4", "2025-01-01T00:00:00+00:00", {
        "message": {"role": "assistant", "model": "m", "provider": "anthropic",
                    "usage": {"input": 1, "output": 1}}})
    assert pi.key == "e4@2025-01-01T00:00:00+00:00"
    assert tracker.take("message", "e5", "t", {"message": {"role": "user", "usage": {"input": 9}}}) is None


def test_local_days_weeks_and_months():
    from datetime import date

    assert period_key(date(2025, 10, 8), "week") == "2025-10-06"    # the Monday
    assert period_key(date(2025, 10, 8), "month") == "2025-10"
    zone = local_zone("Asia/Kolkata")
    assert utc_bounds(date(2025, 10, 1), date(2025, 10, 1), zone) == \
        ("2025-09-30T18:30:00", "2025-10-01T18:30:00")


def test_importing_usage_does_not_import_the_price_table():
    script = ("import sys; sys.path.insert(0, %r); import core.usage.tokens, core.usage.pricing;"
              " print('genai_prices' in sys.modules)") % str(REPO)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
