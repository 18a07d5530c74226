"""A real StateGraph on ArborSaver: turns, a fork with update_state, a roll back and a
"make current" done in the store as the app does them, and the agent going on from there.
After each step the history LangGraph reports and the branch tree arbor shows agree."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from core.actions import operations
from core.model.entries import BRANCH_SUMMARY, MESSAGE
from core.langgraph import ArborSaver
from core.store import open_store

from langgraph_graphs import chat_graph

THREAD = {"configurable": {"thread_id": "agent-1"}}


@pytest.fixture
def store(store_location):
    """An arbor store on each backend (SQLite file; PostgreSQL where a server can be run)."""
    s = open_store(store_location)
    yield s
    s.close()


def texts(messages) -> list[str]:
    return [m.content if hasattr(m, "content") else m["content"] for m in messages]


def assert_tree_agrees(store, graph, config=THREAD) -> None:
    """Every checkpoint LangGraph lists is an entry of the session whose nearest checkpoint
    above it is LangGraph's parent, whose path holds exactly the checkpoint's messages;
    and the branch heads are the checkpoints nobody continued (LangGraph's leaves)."""
    history = list(graph.get_state_history(config))
    session_id = store.langgraph.session(config["configurable"]["thread_id"])
    parents = set()
    for snapshot in history:
        checkpoint_id = snapshot.config["configurable"]["checkpoint_id"]
        row = store.langgraph.checkpoint(session_id, checkpoint_id)
        assert row is not None and row.entry_seq is not None
        path = store.paths.entries(row.entry_seq)
        above = [e for e in path[:-1] if store.langgraph.checkpoint_at(e.seq) is not None]
        parent = snapshot.parent_config["configurable"]["checkpoint_id"] \
            if snapshot.parent_config else None
        parents.add(parent)
        nearest = store.langgraph.checkpoint_at(above[-1].seq).checkpoint_id if above else None
        if nearest != parent:
            # rolled back to a message with a summary: the parent is the checkpoint that
            # ends with that message, beside the summary (the message is on this path)
            summary = next(e for e in path if e.type == BRANCH_SUMMARY)
            parent_row = store.langgraph.checkpoint(session_id, parent)
            assert store.entries.get(parent_row.entry_seq).parent_seq == summary.parent_seq
            assert store.entries.get(summary.parent_seq).type == MESSAGE
        path_messages = [e.message["content"] for e in path if e.type == MESSAGE]
        assert path_messages == texts(snapshot.values.get("messages", []))
    leaves = {s.config["configurable"]["checkpoint_id"] for s in history} - parents
    heads = set()
    for _branch, head in store.branches.heads(session_id):
        found = store.langgraph.checkpoint_at(head)
        heads.add(found.checkpoint_id if found is not None else None)
    assert heads == leaves


def test_turns_fork_roll_back_and_go_on(store):
    graph = chat_graph(ArborSaver(store))
    for question in ("Fix the flaky login test", "and the logout one", "thanks"):
        graph.invoke({"messages": [HumanMessage(question)]}, THREAD)
    assert_tree_agrees(store, graph)
    session_id = store.langgraph.session("agent-1")
    assert store.branches.count(session_id) == 1

    # Fork: edit the question of the second turn (update_state on an earlier checkpoint)
    history = list(graph.get_state_history(THREAD))
    after_first = next(s for s in history if s.metadata["step"] == 1)
    fork = graph.update_state(after_first.config, {"messages": [HumanMessage("the signup one")]},
                              as_node="__start__")
    assert texts(graph.invoke(None, fork)["messages"]) == [
        "Fix the flaky login test", "answer 0", "the signup one", "answer 3"]
    assert_tree_agrees(store, graph)
    branches = {b.name: b for b in store.branches.of_session(session_id)}
    assert set(branches) == {"main", "update at step 2"}
    forked = branches["update at step 2"]
    assert forked.is_current and forked.parent_session_id == branches["main"].id
    assert store.entries.get(forked.fork_seq).data["data"]["checkpoint_id"] == \
        after_first.config["configurable"]["checkpoint_id"]
    assert forked.branch_point_checkpoint_id is not None

    # Roll back main in the store (as the app's `r` does) to the end of its second turn
    main = branches["main"]
    target = next(c for c in store.annotations.checkpoints_of_branch(main.id)
                  if c.metadata["metadata"]["step"] == 4)
    rolled = operations.rollback(store, main.id, checkpoint_id=target.id,
                                 summary="Left behind: a thank-you.")
    state = graph.get_state(THREAD)
    assert state.config["configurable"]["checkpoint_id"] == target.metadata["checkpoint_id"]
    assert texts(state.values["messages"]) == [
        "Fix the flaky login test", "answer 0", "and the logout one", "answer 1"]
    out = graph.invoke({"messages": [HumanMessage("now the signup test")]}, THREAD)
    assert texts(out["messages"])[-2:] == ["now the signup test", "answer 4"]
    rolled = store.branches.get(rolled.id)
    assert rolled.is_current   # the agent went on on the rolled-back branch
    replay = [m["content"] for m in rolled.conversation_history]
    assert replay == ["Fix the flaky login test", "answer 0", "and the logout one", "answer 1",
                      "Left behind: a thank-you.", "now the signup test", "answer 4"]
    assert store.branches.count(session_id) == 3
    assert_tree_agrees(store, graph)

    # Make the fork current again (the app's enter): the agent goes on from its head
    store.branches.set_current(forked.id)
    out = graph.invoke({"messages": [HumanMessage("and run it")]}, THREAD)
    assert texts(out["messages"]) == ["Fix the flaky login test", "answer 0", "the signup one",
                                      "answer 3", "and run it", "answer 5"]
    assert store.branches.current(session_id).id == forked.id
    assert store.branches.count(session_id) == 3
    assert_tree_agrees(store, graph)


def test_roll_back_to_a_message_resumes_just_after_it(store):
    """A message that is the last one a checkpoint added resumes from that checkpoint:
    rolled back to a question, the agent answers it again (invoke(None)); rolled back to
    an answer, the next question follows it. The agent writes on on the rolled-back branch."""
    graph = chat_graph(ArborSaver(store))
    for question in ("one", "two"):
        graph.invoke({"messages": [HumanMessage(question)]}, THREAD)
    session_id = store.langgraph.session("agent-1")
    main = store.branches.current(session_id)
    path = store.paths.entries(main.head_seq)
    question = next(e for e in path if e.type == MESSAGE and e.message["content"] == "two")
    rolled = operations.rollback(store, main.id, entry_id=question.seq)
    state = graph.get_state(THREAD)
    assert texts(state.values["messages"]) == ["one", "answer 0", "two"]
    assert state.next == ("agent",)
    assert texts(graph.invoke(None, THREAD)["messages"]) == ["one", "answer 0", "two", "answer 2"]
    assert store.branches.current(session_id).id == rolled.id
    assert [m["content"] for m in store.branches.get(rolled.id).conversation_history] \
        == ["one", "answer 0", "two", "answer 2"]
    assert_tree_agrees(store, graph)

    answer = next(e for e in path if e.type == MESSAGE and e.message["content"] == "answer 0")
    again = operations.rollback(store, rolled.id, entry_id=answer.seq)
    assert texts(graph.get_state(THREAD).values["messages"]) == ["one", "answer 0"]
    graph.invoke({"messages": [HumanMessage("three")]}, THREAD)
    assert [m["content"] for m in store.branches.get(again.id).conversation_history] \
        == ["one", "answer 0", "three", "answer 3"]
    assert store.branches.current(session_id).id == again.id
    assert_tree_agrees(store, graph)


def test_roll_back_to_a_message_with_a_summary_keeps_the_message_and_the_summary(store):
    """The app's roll back adds a summary of what is left behind by default: the agent goes
    on from the checkpoint that ends with the chosen message (the message stays in its
    state), on the rolled-back branch, after the summary."""
    graph = chat_graph(ArborSaver(store))
    for question in ("one", "two"):
        graph.invoke({"messages": [HumanMessage(question)]}, THREAD)
    session_id = store.langgraph.session("agent-1")
    main = store.branches.current(session_id)
    path = store.paths.entries(main.head_seq)
    answer = next(e for e in path if e.type == MESSAGE and e.message["content"] == "answer 0")
    rolled = operations.rollback(store, main.id, entry_id=answer.seq,
                                 summary="Left behind: two.")
    assert texts(graph.get_state(THREAD).values["messages"]) == ["one", "answer 0"]
    graph.invoke({"messages": [HumanMessage("three")]}, THREAD)
    assert texts(graph.get_state(THREAD).values["messages"]) == [
        "one", "answer 0", "three", "answer 2"]
    rolled = store.branches.get(rolled.id)
    assert rolled.is_current
    assert [m["content"] for m in rolled.conversation_history] == [
        "one", "answer 0", "Left behind: two.", "three", "answer 2"]
    assert store.branches.count(session_id) == 2
    assert not store.branches.reflog(rolled.id) or not any(
        "before the head" in reason for _old, _new, reason, _at in store.branches.reflog(rolled.id))
    assert_tree_agrees(store, graph)

    # the same to a question: asked again after the summary
    question = next(e for e in path if e.type == MESSAGE and e.message["content"] == "two")
    again = operations.rollback(store, rolled.id, entry_id=question.seq,
                                summary="Left behind: three.")
    assert texts(graph.invoke(None, THREAD)["messages"]) == ["one", "answer 0", "two", "answer 3"]
    assert [m["content"] for m in store.branches.get(again.id).conversation_history] \
        == ["one", "answer 0", "two", "Left behind: three.", "answer 3"]
    assert store.branches.count(session_id) == 3
    assert_tree_agrees(store, graph)


def test_roll_back_inside_a_step_resumes_from_the_checkpoint_before_it(store):
    """A message in the middle of what one step added is in no checkpoint's state: the
    thread resumes from the checkpoint before it, and the branch's head goes back there
    (logged in the reflog) before the agent writes on."""
    graph = chat_graph(ArborSaver(store), notes=True)
    graph.invoke({"messages": [HumanMessage("one")]}, THREAD)
    session_id = store.langgraph.session("agent-1")
    main = store.branches.current(session_id)
    note = next(e for e in store.paths.entries(main.head_seq)
                if e.type == MESSAGE and e.message["content"] == "note before answer 0")
    rolled = operations.rollback(store, main.id, entry_id=note.seq)
    assert texts(graph.get_state(THREAD).values["messages"]) == ["one"]
    graph.invoke(None, THREAD)
    rolled = store.branches.get(rolled.id)
    assert rolled.is_current
    assert [m["content"] for m in rolled.conversation_history] == [
        "one", "note before answer 1", "answer 1"]
    assert any("before the head" in reason for _old, _new, reason, _at in store.branches.reflog(rolled.id))
    assert_tree_agrees(store, graph)


def test_async_graph_on_the_saver(store):
    """The async methods drive an async run (ainvoke) the same way."""
    import asyncio

    graph = chat_graph(ArborSaver(store))

    async def run():
        await graph.ainvoke({"messages": [HumanMessage("hello")]}, THREAD)
        await graph.ainvoke({"messages": [HumanMessage("again")]}, THREAD)
        return [s async for s in graph.aget_state_history(THREAD)]

    history = asyncio.run(run())
    assert texts(history[0].values["messages"]) == ["hello", "answer 0", "again", "answer 1"]
    assert_tree_agrees(store, graph)
