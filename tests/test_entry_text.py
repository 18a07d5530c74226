"""The text of an entry: what search indexes, and what deleting from the index must repeat."""

from hypothesis import given
from hypothesis import strategies as st

from core.model.entries import FTS_TEXT_LIMIT, content_text, search_text

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "input_text", "output_text", "thinking", "toolCall",
                              "tool_use", "toolResult", "image", "other"])},
    optional={"text": scalars, "thinking": scalars, "name": st.text(max_size=8),
              "arguments": st.dictionaries(st.text(max_size=5), scalars, max_size=3),
              "content": st.one_of(st.text(max_size=20),
                                   st.lists(st.fixed_dictionaries({"type": st.just("text"),
                                                                   "text": st.text(max_size=9)}),
                                            max_size=2))})


@given(blocks)
def test_one_block_reads_as_it_does_among_others(block):
    # a single block has a shortcut; it must give what the general path gives
    assert content_text([block]) == content_text([block, ""]) == content_text([block, 7])


def test_content_text_shapes():
    assert content_text("plain") == "plain"
    assert content_text(None) == ""
    assert content_text({"type": "text", "text": "one"}) == "one"
    assert content_text([{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "b"},
                         {"type": "toolCall", "name": "bash", "arguments": {"cmd": "ls é"}},
                         {"type": "toolResult", "content": [{"type": "text", "text": "out"}]}]) \
        == 'a\nb\nbash {"cmd": "ls é"}\nout'


def test_search_text_is_capped_and_storable():
    long = {"message": {"role": "user", "content": "x" * (FTS_TEXT_LIMIT + 10)}}
    assert len(search_text("message", long)) == FTS_TEXT_LIMIT
    odd = {"message": {"role": "user", "content": "bad \udcff byte"}}
    assert search_text("message", odd) == "bad ? byte"
    assert search_text("label", {"label": "x"}) == ""
    assert search_text("compaction", {"summary": "sum"}) == "sum"
