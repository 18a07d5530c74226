"""Small LangGraph graphs for the checkpointer's tests (no network: langchain-core's fake
chat models). Also run as a script by the durability tests (see `main`)."""

from __future__ import annotations

import operator
import os
import sys
import time
from pathlib import Path
from typing import Annotated, TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph


def chat_graph(checkpointer, replies: list[str] | None = None, *, notes: bool = False):
    """One node, `agent`, answering each turn with the next canned reply (`notes`: with a
    note of its own before it, two messages in one step)."""
    model = FakeListChatModel(responses=replies or [f"answer {n}" for n in range(100)])

    def agent(state: MessagesState):
        reply = model.invoke(state["messages"])
        if notes:
            return {"messages": [AIMessage(f"note before {reply.content}"), reply]}
        return {"messages": [reply]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=checkpointer)


def graph_with_subgraph(checkpointer):
    """`agent` answers, then `research` runs a sub-graph of its own (a namespace)."""
    inner_model = FakeListChatModel(responses=["found it"] * 50)

    def look(state: MessagesState):
        return {"messages": [inner_model.invoke(state["messages"])]}

    inner = StateGraph(MessagesState)
    inner.add_node("look", look)
    inner.add_edge(START, "look")
    inner.add_edge("look", END)
    research = inner.compile()

    model = FakeListChatModel(responses=[f"answer {n}" for n in range(50)])

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("research", research)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "research")
    builder.add_edge("research", END)
    return builder.compile(checkpointer=checkpointer)


class Work(TypedDict):
    log: Annotated[list, operator.add]


def parallel_graph(checkpointer, side_effects: Path, gate: Path | None):
    """`fast` and `slow` run in one step; each appends its name to `log` and a line to
    `side_effects` (a record of every run of a node, even one whose step never ended);
    `slow` waits while `gate` does not exist."""

    def note(name: str) -> None:
        with open(side_effects, "a") as handle:
            handle.write(name + "\n")

    def fast(state: Work):
        note("fast")
        return {"log": ["fast"]}

    def slow(state: Work):
        while gate is not None and not gate.exists():
            time.sleep(0.02)
        note("slow")
        return {"log": ["slow"]}

    def last(state: Work):
        note("last")
        return {"log": ["last"]}

    builder = StateGraph(Work)
    builder.add_node("fast", fast)
    builder.add_node("slow", slow)
    builder.add_node("last", last)
    builder.add_edge(START, "fast")
    builder.add_edge(START, "slow")
    builder.add_edge(["fast", "slow"], "last")
    builder.add_edge("last", END)
    return builder.compile(checkpointer=checkpointer)


def main(argv: list[str]) -> int:
    """`python langgraph_graphs.py parallel DB THREAD SIDE_EFFECTS GATE`: run the parallel
    graph once (the test kills it while `slow` waits).
    `python langgraph_graphs.py chat DB THREAD TURNS`: run TURNS turns of the chat graph."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from core.langgraph import ArborSaver

    kind, db, thread = argv[0], argv[1], argv[2]
    with ArborSaver.from_conn_string(db) as saver:
        config = {"configurable": {"thread_id": thread}}
        if kind == "parallel":
            graph = parallel_graph(saver, Path(argv[3]), Path(argv[4]))
            graph.invoke({"log": []}, config)
        elif kind == "chat":
            graph = chat_graph(saver)
            for turn in range(int(argv[3])):
                graph.invoke({"messages": [("user", f"{thread} question {turn}")]}, config)
        else:
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
