"""Compaction and rollback plans read only what they keep and count the rest in SQL, and
still say what reading the whole path said (issue 8, item 5)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from core import open_store
from core.actions import operations as ops
from core.model.entries import COMPACTION, MESSAGE, message_tokens
from core.history.path_range import EXACT_LIMIT
from core.history.replay import compaction_summary_message
from core.history.summariser import RECENT_WINDOW, builtin_summary

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.make_big_store import BIG_NAME, build  # noqa: E402


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    yield s
    s.close()


def grow(store, branch_id: int, rng: random.Random, n: int) -> None:
    """n entries on a branch: user/assistant/tool messages of random sizes, and now and then
    an entry that is not a message."""
    for i in range(n):
        if rng.random() < 0.08:
            store.entries.append_to_branch(branch_id, "model_change", {"provider": "p", "modelId": f"m{i}"})
            continue
        role = rng.choice(["user", "assistant", "assistant", "toolResult"])
        text = " ".join("word" for _ in range(rng.randrange(1, 400)))
        if role == "assistant" and rng.random() < 0.5:
            content = [{"type": "text", "text": text},
                       {"type": "toolCall", "id": f"c{i}", "name": rng.choice(["bash", "read"]),
                        "arguments": {"path": f"src/f{i % 7}.py"}}]
        else:
            content = text
        store.entries.append_to_branch(branch_id, MESSAGE, {"message": {"role": role, "content": content}})


def tree(store, seed: int):
    """A session whose branches fork from one another (paths of several pieces), one of
    them compacted once already."""
    rng = random.Random(seed)
    session = store.sessions.create("s")
    main = store.branches.create(session.id, name="main")
    grow(store, main.id, rng, 60)
    branches = [store.branches.get(main.id)]
    for _ in range(4):
        source = rng.choice(branches)
        at = store.paths.at_depth(source.head_seq, rng.randrange(store.paths.length(source.head_seq)))
        new = ops.branch(store, source.id, at)
        grow(store, new.id, rng, rng.randrange(5, 40))
        branches.append(store.branches.get(new.id))
    ops.compact(store, branches[-1].id, keep_recent_tokens=500)
    grow(store, branches[-1].id, rng, 15)
    return [store.branches.get(b.id) for b in branches]


def reference_plan(store, branch, keep):
    """The plan as it was made before: the whole path read, entry by entry."""
    previous, start = store.paths.replay_start(branch.head_seq)
    context = [e for e in store.paths.entries(branch.head_seq, start) if e.type != COMPACTION]
    budget, index = 0, len(context)
    for position in range(len(context) - 1, -1, -1):
        cost = message_tokens(context[position].message) if context[position].type == MESSAGE else 0
        if budget + cost > keep:
            break
        budget += cost
        index = position
    cut = next((p for wanted in ("user", "assistant") for p in range(index, len(context))
                if context[p].message is not None and context[p].message.get("role") == wanted),
               len(context))
    previous_tokens = message_tokens(compaction_summary_message(previous)) if previous else 0
    tokens = previous_tokens + sum(message_tokens(e.message) for e in context if e.type == MESSAGE)
    return previous, context[:cut], context[cut:], tokens


@pytest.mark.parametrize("seed", range(6))
def test_compaction_plan_says_what_reading_the_whole_path_said(store, seed):
    for branch in tree(store, seed):
        for keep in (0, 40, 300, 2000, 10**9):
            plan = ops.plan_compaction(store, branch.id, keep_recent_tokens=keep)
            previous, summarised, kept, tokens = reference_plan(store, branch, keep)
            assert plan.summarised_count == len(summarised)
            assert plan.messages_summarised == sum(1 for e in summarised if e.type == MESSAGE)
            assert plan.kept_count == len(kept)
            assert (plan.first_kept.id if plan.first_kept else None) == (kept[0].id if kept else None)
            assert plan.tokens_before == tokens  # exact: few messages
            if summarised:
                assert plan.first_summarised.id == summarised[0].id
                assert plan.last_summarised.id == summarised[-1].id
                said = [e for e in summarised if e.type == MESSAGE]
                assert plan.first_message.id == said[0].id and plan.last_message.id == said[-1].id
                previous_summary = str(previous.data.get("summary", "")) if previous else None
                assert plan.summary == builtin_summary([e.message for e in said], previous_summary)
            else:
                assert plan.summarised_count == 0 and plan.summary == ""


@pytest.mark.parametrize("seed", range(3))
def test_left_behind_is_what_the_entry_by_entry_walk_found(store, seed):
    branches = tree(store, seed)
    for source in branches:
        for other in branches:
            for depth in (0, store.paths.length(other.head_seq) // 2, store.paths.length(other.head_seq) - 1):
                at = store.paths.at_depth(other.head_seq, depth)
                # the walk it replaces: down from the shallower depth until the paths agree
                d = min(store.entries.get(at).depth, store.paths.length(source.head_seq) - 1)
                while d >= 0 and store.paths.at_depth(source.head_seq, d) != store.paths.at_depth(at, d):
                    d -= 1
                expected = store.paths.entries(source.head_seq, d + 1)
                left = ops.left_behind(store, source.id, at)
                assert [e.seq for e in left.entries()] == [e.seq for e in expected]
                assert left.counts().messages == sum(1 for e in expected if e.type == MESSAGE)
                assert list(left.messages()) == [e.message for e in expected if e.message is not None]


class ReadCounter:
    """Counts the entries and messages the store hands out (what a plan reads)."""

    def __init__(self, store, monkeypatch) -> None:
        self.read = 0
        for room, name in (("paths", "entries"), ("paths", "messages"), ("paths", "sample"),
                           ("entries", "of_session")):
            original = getattr(getattr(store, room), name)

            def counted(*args, _original=original, **kwargs):
                out = _original(*args, **kwargs)
                self.read += len(out)
                return out

            monkeypatch.setattr(getattr(store, room), name, counted)


def test_plans_on_a_long_branch_read_only_what_they_keep(tmp_path, monkeypatch):
    path = tmp_path / "long.db"
    build(path, sessions=2, entries=20_010, big=20_000)
    store = open_store(path, create=False)
    session = next(s for s in store.sessions.list() if s.name == BIG_NAME)
    branch = store.branches.current(session.id)
    every = store.paths.entries(branch.head_seq)
    counter = ReadCounter(store, monkeypatch)

    plan = ops.plan_compaction(store, branch.id)
    assert plan.messages_summarised + plan.kept_count == 20_000
    assert plan.kept_count < 1000  # the default budget of 20,000 tokens
    assert plan.first_message.message["content"].startswith("Step 0:")
    assert "Step 0:" in plan.summary  # the goal: the first user request
    exact = sum(message_tokens(e.message) for e in every)
    assert abs(plan.tokens_before - exact) < exact * 0.05  # estimated from a sample
    # what it read: the kept part and one window, the summariser's first and last
    # messages, and the sample the estimate comes from, not 20,000 entries
    assert counter.read < plan.kept_count + ops.KEPT_WINDOW + RECENT_WINDOW + 200 + 500 + 10
    assert counter.read < 3000

    counter.read = 0
    left = ops.left_behind(store, branch.id, every[10].seq)
    assert left.counts().messages == 20_000 - 11
    summary = builtin_summary(left.messages())
    assert "(19,989 messages summarised)" in summary and "## Goal\nStep 12:" in summary
    assert counter.read < RECENT_WINDOW + 200 + 10
    store.close()


def test_token_estimate_is_exact_up_to_the_limit(store):
    rng = random.Random(3)
    session = store.sessions.create("s")
    main = store.branches.create(session.id)
    grow(store, main.id, rng, 300)
    branch = store.branches.get(main.id)
    left = ops.left_behind(store, branch.id, None)
    messages = left.counts().messages
    assert messages <= EXACT_LIMIT
    assert left.estimate_tokens(messages) == sum(message_tokens(e.message) for e in left.entries()
                                                 if e.type == MESSAGE)
