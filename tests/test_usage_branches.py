"""Usage per branch and per compaction: each branch's own cost from its fork point (the
branches pane), and what a compaction's summarised part cost and what the next request
saves (the compaction preview)."""

from __future__ import annotations

import pytest

from core import open_store
from core.actions import operations
from core.history.compaction_cost import CompactionCost, estimate
from core.importing import import_paths
from core.usage.tokens import Figure, fmt_usd
from tests import usage_files as uf

pytest.importorskip("genai_prices")

R = uf.CLAUDE_RESPONSES


@pytest.fixture
def claude_store(tmp_path):
    folder = tmp_path / "projects" / "-work-usage-demo"
    uf.claude_session(folder)
    store = open_store(tmp_path / "s.db")
    import_paths(store, [folder])
    yield store
    store.close()


def _branches(store):
    session = store.sessions.by_uid(uf.SESSION)
    return session, store.branches.of_session(session.id)


def test_each_branch_counts_its_own_part_from_its_fork_point(claude_store):
    """The rewind (u5 -> r6) forks after r2: its own part is r6 alone; the branch it
    forked from holds r1..r4 on its path; the sidechain written inline (r5) is a sub-agent's
    session of its own, as the one in subagents/ is."""
    from tui.components.branches_pane import own_usage

    store = claude_store
    session, branches = _branches(store)
    own = {}
    for branch in branches:
        figure = own_usage(store, branch)
        own[branch.id] = figure
    by_output = {figure.output_tokens: branch for branch, figure in
                 ((b, own[b.id]) for b in branches)}
    rewind = by_output[R["r6"]["output"]]
    assert own[rewind.id].responses == 1 and rewind.fork_seq is not None
    assert own[rewind.id].cache_read_tokens == R["r6"]["read"]
    main_output = sum(R[n]["output"] for n in ("r1", "r2", "r3", "r4"))
    main = by_output[main_output]
    assert main.parent_session_id is None and own[main.id].responses == 4
    assert own[main.id].unpriced == {uf.UNPRICED}
    # the branches' own parts add up to the session's figure (less its sub-agents': the one
    # in subagents/ and r5's, written inline)
    total = sum(f.responses for f in own.values())
    assert total == store.usage.by_session()[session.id].responses - 2
    assert len(branches) == 2


def test_the_branches_pane_shows_each_branchs_own_cost(claude_store):
    from tui.components.branches_pane import BranchesPane, flatten, own_usage
    from tui.render.formatting import usage_amount

    store = claude_store
    session, branches = _branches(store)
    pane = BranchesPane()
    pane.usage_of = lambda branch: own_usage(store, branch)
    rows = flatten(branches, {}, [])
    pane.rows = rows
    rewind = next(i for i, row in enumerate(rows) if row.branch.fork_seq is not None
                  and own_usage(store, row.branch).output_tokens == R["r6"]["output"])
    top = pane.render_row(rewind, 40)[0].plain
    expected = usage_amount(own_usage(store, rows[rewind].branch))
    assert top.rstrip().endswith(expected) and len(top) <= 40
    # too narrow for the amount: the title keeps its room, no amount
    assert expected not in pane.render_row(rewind, 16)[0].plain
    # with a figure whose model has no price and no cost, tokens are shown
    unpriced = Figure()
    unpriced.add_row(uf.UNPRICED, 10, 20, 0, 0, 0, None, 1, 1)
    pane.usage_of = lambda branch: unpriced
    pane._usage.clear()
    assert pane.render_row(rewind, 40)[0].plain.rstrip().endswith("30 tok")


def test_a_cost_the_store_could_not_give_once_is_asked_again(claude_store):
    """A busy store (or a server away) answers None once: the row shows no amount then, and
    the next drawing asks again instead of keeping the None for the session's life."""
    from tui.components.branches_pane import BranchesPane, flatten, own_usage
    from tui.render.formatting import usage_amount

    store = claude_store
    _session, branches = _branches(store)
    pane = BranchesPane()
    answers = [None]
    pane.usage_of = lambda branch: answers.pop() if answers else own_usage(store, branch)
    pane.rows = flatten(branches, {}, [])
    first = pane.render_row(0, 40)[0].plain
    expected = usage_amount(own_usage(store, pane.rows[0].branch))
    assert expected not in first
    assert pane.render_row(0, 40)[0].plain.rstrip().endswith(expected)


def test_the_compaction_plan_says_what_the_summarised_part_cost(claude_store):
    store = claude_store
    session, branches = _branches(store)
    rewind = next(b for b in branches if b.fork_seq is not None
                  and store.usage.of_path(b.head_seq, after_seq=b.fork_seq).responses == 1
                  and store.usage.of_path(b.head_seq, after_seq=b.fork_seq).output_tokens
                  == R["r6"]["output"])
    plan = operations.plan_compaction(store, rewind.id, keep_recent_tokens=5, summariser=None)
    assert plan.summarised_count
    cost = estimate(store, plan)
    # what was summarised: the path before the kept part (r1 and r2 on the rewind's path)
    span = plan.summarised
    on_path = store.usage.of_path(rewind.head_seq)
    kept = store.usage.of_range(rewind.head_seq, span.stop, 10**9)
    assert cost.summarised.responses + kept.responses == on_path.responses
    assert cost.summarised.output_tokens + kept.output_tokens == on_path.output_tokens
    assert cost.summarised.cost_usd == pytest.approx(on_path.cost_usd - kept.cost_usd)
    # the model that answered last on the branch prices the saving
    assert cost.model == uf.SONNET and cost.card is not None


def test_the_saving_prices_the_smaller_prompt_at_the_last_models_rates():
    from core.usage.pricing import price_book

    card = price_book().card("claude-sonnet-4-5", "anthropic")
    cost = CompactionCost(Figure(), "claude-sonnet-4-5", card)
    base = card.rates_for(0)
    saving = cost.saving(150_000, 10_000)
    assert saving.tokens == 140_000
    assert saving.uncached_usd == pytest.approx(140_000 * base.input)
    assert saving.cached_usd == pytest.approx(140_000 * base.cache_read)
    # a prompt above the long-context threshold was billed at the higher rate as a whole
    high = card.rates_for(250_000)
    assert high.input > base.input
    saving = cost.saving(250_000, 10_000)
    assert saving.uncached_usd == pytest.approx(250_000 * high.input - 10_000 * base.input)
    # nothing saved, or no price: no saving
    assert cost.saving(10_000, 12_000) is None
    assert CompactionCost(Figure(), "claude-imaginary-9", None).saving(50_000, 1_000) is None


def test_amounts_below_a_hundredth_of_a_cent_are_never_shown_as_zero():
    assert fmt_usd(0.00002) == "<$0.0001"
    assert fmt_usd(0.0042) == "$0.0042"
    assert fmt_usd(0) == "$0.00"
    assert fmt_usd(12.5) == "$12.50"


async def test_the_compaction_preview_shows_the_cost_and_the_saving(demo_db):
    from conftest import settle
    from test_tui_snapshots import app_for

    app = app_for(demo_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("tab", "c")
        await settle(pilot)
        text = str(app.screen.query_one("#compact-plan").render())
        assert "Cost: $" in text and "for the summarised part" in text
        assert "Saves: " in text and "on the next request" in text and "input price" in text


def test_a_response_header_shows_its_cost_or_only_what_fits():
    from datetime import datetime, timezone

    from core.model.entries import Entry
    from core.store.usage.queries import ResponseUsage
    from tui.render.message_render import header
    from tui.message_source import Item

    entry = Entry(seq=1, id="abcdef123456", external_session_id=1, parent_seq=None,
                  type="message", timestamp="2025-10-01T10:00:00.000Z", depth=0, chain=1,
                  msg_index=0, role="assistant",
                  data={"message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                    "content": "hi"}})
    usage = ResponseUsage("claude-sonnet-4-5-20250929", 10, 1200, 0, 3000, 0, 0.0042, False)
    now = datetime(2025, 10, 2, tzinfo=timezone.utc)
    wide = header(Item("entry", entry, 0, usage=usage), None, now, 100).plain
    assert "4.2k tok $0.0042" in wide and "abcdef12" in wide
    middle = header(Item("entry", entry, 0, usage=usage), None, now, 60).plain
    assert "$0.0042" in middle and "tok" not in middle and "abcdef12" in middle
    narrow = header(Item("entry", entry, 0, usage=usage), None, now, 34).plain
    assert "$0.0042" in narrow and len(narrow) <= 34
    unpriced = ResponseUsage("x", 10, 20, 0, 0, 0, None, False)
    assert "no price" in header(Item("entry", entry, 0, usage=unpriced), None, now, 100).plain
