"""core.langgraph.ArborSaver: LangGraph's conformance suite, the sync API, what it writes
into the store (sessions, entries, checkpoints), and what it refuses."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from core.model.entries import CUSTOM, MESSAGE
from core.langgraph import ArborSaver, PickleRefused
from core.store import open_store

from langgraph_graphs import chat_graph, graph_with_subgraph

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def store(store_location):
    """An arbor store on each backend (SQLite file; PostgreSQL where a server can be run)."""
    s = open_store(store_location)
    yield s
    s.close()


@pytest.fixture
def saver(store):
    return ArborSaver(store)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_conformance_suite_passes(tmp_path, request, backend):
    """langgraph-checkpoint-conformance: every base capability and copy_thread, each on a
    fresh store, on each backend."""
    made = []
    server = request.getfixturevalue("postgres_server") if backend == "postgresql" else None

    @checkpointer_test(name="ArborSaver")
    async def arbor_saver():
        store = open_store(server.new_store_url("lg") if server is not None
                           else tmp_path / f"conformance-{len(made)}.db")
        made.append(store)
        yield ArborSaver(store)
        store.close()

    report = asyncio.run(validate(arbor_saver))
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    assert report.passed_all_base()
    for capability in [*(c.value for c in BASE_CAPABILITIES), "copy_thread"]:
        result = report.results[capability]
        assert result.detected and result.passed and result.tests_passed > 0, capability
    # prune and delete_for_runs would delete history: not offered (the suite skips them)
    assert not report.results["prune"].detected
    assert not report.results["delete_for_runs"].detected


def _put(saver, thread, parent=None, ns="", values=None, step=0, source="loop"):
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = dict(values or {})
    checkpoint["channel_versions"] = {key: 1 for key in checkpoint["channel_values"]}
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    if parent is not None:
        config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
    return saver.put(config, checkpoint, {"source": source, "step": step, "parents": {}},
                     checkpoint["channel_versions"])


def test_sync_methods(saver):
    """The sync API LangGraph's sync `invoke` uses: put, put_writes, get_tuple, list,
    copy_thread, delete_thread."""
    first = _put(saver, "t", values={"n": 1}, step=0)
    second = _put(saver, "t", first, values={"n": 2}, step=1)
    saver.put_writes(second, [("n", 3), ("__error__", "boom")], "task-1", "a:b")
    saver.put_writes(second, [("n", 99)], "task-1")   # the same (task, idx): kept as it was
    got = saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert got.checkpoint["channel_values"] == {"n": 2}
    assert got.parent_config["configurable"]["checkpoint_id"] == first["configurable"]["checkpoint_id"]
    assert sorted(got.pending_writes) == [("task-1", "__error__", "boom"), ("task-1", "n", 3)]
    listed = list(saver.list({"configurable": {"thread_id": "t"}}))
    assert [t.metadata["step"] for t in listed] == [1, 0]
    assert [t.metadata["step"] for t in saver.list(None, filter={"step": 0})] == [0]
    assert [t.metadata["step"] for t in saver.list(None, before=second)] == [0]
    saver.copy_thread("t", "u")
    assert [t.metadata["step"] for t in saver.list({"configurable": {"thread_id": "u"}})] == [1, 0]
    assert saver.get_tuple({"configurable": {"thread_id": "u"}}).pending_writes == got.pending_writes
    saver.delete_thread("t")
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}) is None
    assert saver.get_tuple({"configurable": {"thread_id": "u"}}) is not None


def test_list_pages_through_a_long_thread(saver):
    """Listing reads page by page (64 a query): every checkpoint once, newest first."""
    config = None
    for step in range(150):
        config = _put(saver, "long", config, values={"n": step}, step=step)
    steps = [t.metadata["step"] for t in saver.list({"configurable": {"thread_id": "long"}})]
    assert steps == list(range(149, -1, -1))
    assert len(list(saver.list({"configurable": {"thread_id": "long"}}, limit=100))) == 100
    assert [t.metadata["step"] for t in saver.list(
        {"configurable": {"thread_id": "long"}}, filter={"step": 3})] == [3]


def test_from_conn_string_opens_and_closes_the_store(tmp_path):
    path = tmp_path / "sub" / "store.db"
    with ArborSaver.from_conn_string(str(path)) as saver:
        _put(saver, "t", values={"x": "y"})
        store = saver.store
    assert store.closed
    again = open_store(path)
    try:
        assert again.langgraph.session("t") is not None
    finally:
        again.close()


def test_from_conn_string_takes_a_postgresql_url(postgres_server):
    url = postgres_server.new_store_url("lg")
    with ArborSaver.from_conn_string(url) as saver:
        config = _put(saver, "t", values={"x": "y"})
        assert saver.store._backend.name == "postgresql"
    with ArborSaver.from_conn_string(url) as saver:
        assert saver.get_tuple({"configurable": {"thread_id": "t"}}).config == config


def test_pickle_is_never_written_nor_read(store, saver):
    with pytest.raises(PickleRefused):
        ArborSaver(store, serde=JsonPlusSerializer(pickle_fallback=True))

    class Pickler(JsonPlusSerializer):
        def dumps_typed(self, obj):
            return "pickle", b"\x80\x04N."

    with pytest.raises(PickleRefused):
        _put(ArborSaver(store, serde=Pickler()), "p", values={"x": 1})
    assert store.langgraph.session("p") is None   # nothing written
    first = _put(saver, "q", values={"x": 1})
    with pytest.raises(PickleRefused):
        ArborSaver(store, serde=Pickler()).put_writes(first, [("x", 2)], "task")
    assert saver.get_tuple(first).pending_writes == []
    with pytest.raises(PickleRefused):
        saver._loads("pickle", b"\x80\x04N.")


def test_core_and_the_app_never_import_langgraph():
    script = (
        f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
        "import core, core.actions.operations, core.importing, core.store, core.seed.manager\n"
        "import tui.app, tui.cli\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core'))\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_thread_is_a_session_of_message_entries(store, saver):
    graph = chat_graph(saver)
    config = {"configurable": {"thread_id": "chat-1"}}
    graph.invoke({"messages": [HumanMessage("Fix the flaky login test")]}, config)
    graph.invoke({"messages": [HumanMessage("and the logout one")]}, config)
    session_id = store.langgraph.session("chat-1")
    session = store.sessions.get(session_id)
    assert session.session_name == "Fix the flaky login test"
    assert session.source == "langgraph"
    branch = store.branches.current(session_id)
    replayed = [(m["role"], m["content"]) for m in branch.conversation_history]
    assert replayed == [("user", "Fix the flaky login test"), ("assistant", "answer 0"),
                        ("user", "and the logout one"), ("assistant", "answer 1")]
    path = store.paths.entries(branch.head_seq)
    history = list(graph.get_state_history(config))
    checkpoint_entries = [e for e in path if e.type == CUSTOM]
    assert len(checkpoint_entries) == len(history)   # one entry per checkpoint, in order
    assert [e.data["data"]["checkpoint_id"] for e in checkpoint_entries] == \
        [s.config["configurable"]["checkpoint_id"] for s in reversed(history)]
    assert sum(e.type == MESSAGE for e in path) == 4  # each message once
    tags = store.annotations.checkpoints_of_session(session_id)
    assert len(tags) == len(history)
    assert {t.metadata["checkpoint_id"] for t in tags} == \
        {s.config["configurable"]["checkpoint_id"] for s in history}
    assert all(t.entry_seq in {e.seq for e in checkpoint_entries} for t in tags)


def test_channel_values_are_on_the_arbor_checkpoint(store, saver):
    config = _put(saver, "s", values={"plan": ["read", "fix"], "messages": [], "branch:to:x": None})
    session_id = store.langgraph.session("s")
    [tag] = store.annotations.checkpoints_of_session(session_id)
    assert tag.session_state == {"plan": ["read", "fix"]}
    assert tag.metadata["checkpoint_id"] == config["configurable"]["checkpoint_id"]
    assert tag.is_auto


def test_a_message_in_another_channel_is_kept_by_its_fields(store, saver):
    """A LangChain message (a pydantic model) outside `messages` is on the arbor checkpoint
    as its fields, not as its repr; LangGraph still gets the message itself back."""
    from langchain_core.messages import AIMessage

    config = _put(saver, "s", values={"last": AIMessage("done", id="m1"), "n": 3})
    [tag] = store.annotations.checkpoints_of_session(store.langgraph.session("s"))
    assert tag.session_state["n"] == 3
    last = tag.session_state["last"]
    assert last["_type"] == "AIMessage" and last["content"] == "done" and last["id"] == "m1"
    assert saver.get_tuple(config).checkpoint["channel_values"]["last"] == AIMessage("done", id="m1")


def test_rewritten_messages_are_not_written_twice(store, saver):
    """update_state removing a message: the new checkpoint's messages are compared with its
    parent's one by one; only what is new becomes an entry, and the entry says how many
    of the parent's it dropped."""
    graph = chat_graph(saver)
    config = {"configurable": {"thread_id": "edit"}}
    state = graph.invoke({"messages": [HumanMessage("one")]}, config)
    graph.update_state(config, {"messages": [RemoveMessage(id=state["messages"][-1].id),
                                             HumanMessage("two")]})
    session_id = store.langgraph.session("edit")
    branch = store.branches.current(session_id)
    path = store.paths.entries(branch.head_seq)
    assert [e.message["content"] for e in path if e.type == MESSAGE] == ["one", "answer 0", "two"]
    assert path[-1].data["data"]["messages_replaced"] == 1
    assert [m.content for m in graph.get_state(config).values["messages"]] == ["one", "two"]


def test_a_subgraph_namespace_is_a_child_session(store, saver):
    graph = graph_with_subgraph(saver)
    config = {"configurable": {"thread_id": "nested"}}
    graph.invoke({"messages": [HumanMessage("look into it")]}, config)
    namespaces = store.langgraph.sessions("nested")
    assert namespaces[0][0] == "" and len(namespaces) == 2
    child_ns, child_id = namespaces[1]
    assert child_ns.startswith("research:")
    parent_id = namespaces[0][1]
    child = store.sessions.get(child_id)
    assert child.kind == "subgraph"
    [spawned] = store.sessions.children(parent_id)
    assert spawned.id == child_id and spawned.spawn_seq is not None
    replay = store.branches.current(child_id).conversation_history
    assert [m["content"] for m in replay] == ["look into it", "answer 0", "found it"]
    # the spawn point is the parent's checkpoint the sub-graph ran from
    spawn_checkpoint = store.langgraph.checkpoint_at(spawned.spawn_seq)
    assert spawn_checkpoint is not None and spawn_checkpoint.external_session_id == parent_id
