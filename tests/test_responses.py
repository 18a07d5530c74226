"""One reply as a reader sees it: a response written as several entries, with its results."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from core.model.entries import Entry
from core.history.responses import Grouping, groups


def _entry(seq: int, entry_type: str = "message", **message) -> Entry:
    data = {"message": message} if entry_type == "message" else {"type": "progress"}
    return Entry(seq=seq, id=f"e{seq}", external_session_id=1, parent_seq=seq - 1 or None,
                 type=entry_type, timestamp="2026-01-01T00:00:00Z", depth=seq, chain=0,
                 msg_index=seq, role=message.get("role"), data=data)


def user(seq, text="hi"):
    return _entry(seq, role="user", content=text)


def reply(seq, response=None, calls=(), stop=None):
    content = [{"type": "text", "text": "t"}] + [
        {"type": "toolCall", "id": call, "name": "Bash", "arguments": {}} for call in calls]
    message = {"role": "assistant", "content": content}
    if response:
        message["responseId"] = response
    if stop:
        message["stopReason"] = stop
    return _entry(seq, **message)


def result(seq, call):
    return _entry(seq, role="toolResult", toolCallId=call, content=[{"type": "text", "text": "ok"}])


def progress(seq):
    return _entry(seq, "claude:progress")


def spans(entries):
    return [[entry.seq for entry in group] for group in groups(entries)]


def test_claude_code_lines_of_one_response_and_their_results_are_one_message():
    entries = [user(1), reply(2, "m1"), reply(3, "m1", ["a"]), reply(4, "m1", ["b"]), progress(5),
               result(6, "a"), result(7, "b"), reply(8, "m2"), user(9)]
    assert spans(entries) == [[1], [2, 3, 4, 5, 6, 7], [8], [9]]


def test_parallel_calls_with_results_between_the_lines_stay_one_message():
    entries = [reply(1, "m1", ["a"]), result(2, "a"), reply(3, "m1", ["b"]), result(4, "b"),
               reply(5, "m2", ["c"]), result(6, "c")]
    assert spans(entries) == [[1, 2, 3, 4], [5, 6]]


def test_codex_items_without_an_id_join_until_a_result():
    entries = [user(1), reply(2), reply(3, calls=["a"]), result(4, "a"), reply(5, calls=["b"]),
               result(6, "b"), reply(7)]
    assert spans(entries) == [[1], [2, 3, 4], [5, 6], [7]]


def test_pi_replies_that_ended_stay_apart():
    entries = [reply(1, stop="toolUse", calls=["a"]), result(2, "a"), reply(3, stop="stop"),
               reply(4, stop="stop")]
    assert spans(entries) == [[1, 2], [3], [4]]


def test_a_result_of_another_call_and_anything_else_end_the_message():
    entries = [reply(1, "m1", ["a"]), result(2, "x"), result(3, "a"), reply(4, "m1"), user(5),
               progress(6), result(7, "a")]
    assert spans(entries) == [[1], [2], [3], [4], [5], [6], [7]]


def test_a_different_response_id_starts_a_new_message():
    entries = [reply(1, "m1"), reply(2, "m2"), reply(3), reply(4, "m2")]
    assert spans(entries) == [[1], [2], [3], [4]]


def _any_entry(draw_kind, seq, rng):
    calls = ["a", "b", "c"]
    if draw_kind == 0:
        return user(seq)
    if draw_kind == 1:
        return reply(seq, rng.choice([None, "m1", "m2"]), rng.sample(calls, rng.randint(0, 2)),
                     rng.choice([None, None, "stop"]))
    if draw_kind == 2:
        return result(seq, rng.choice(calls))
    return progress(seq)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=40),
       st.integers(min_value=0, max_value=10_000))
def test_grouping_read_backwards_agrees_with_reading_from_the_front(kinds, seed):
    """The pane asks about any row in any order (a window at a time); the answer must be
    the one a front-to-back reading gives."""
    rng = random.Random(seed)
    entries = [_any_entry(kind, seq, rng) for seq, kind in enumerate(kinds, 1)]
    fronts = []
    position = 0
    for group in groups(entries):
        fronts.append((position, position + len(group) - 1))
        position += len(group)
    span_of = {index: span for span in fronts for index in range(span[0], span[1] + 1)}
    grouping = Grouping(lambda index: entries[index], len(entries))
    order = list(range(len(entries)))
    rng.shuffle(order)
    for index in order:
        assert grouping.span(index) == span_of[index]
