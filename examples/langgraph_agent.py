"""A small LangGraph agent that keeps its threads in an arbor store, runnable offline.

    pip install 'arbor[langgraph]' langgraph    # the saver; the example's graph needs langgraph
    python examples/langgraph_agent.py --db /tmp/agent.db "Plan a day in Lisbon" "Add a museum"
    arbor --db /tmp/agent.db          # the thread, its checkpoints and branches, live

The "model" is langchain-core's fake chat model (canned replies, no network) and one tool
(a word count) that the agent calls when asked to count, so the conversation has a tool
call and its result. Each run of this script goes on from the thread's current branch: roll
back or make another branch current in the app, then run it again (`--continue` to go on
without a new message, e.g. after a roll back to a question).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

from core.langgraph import ArborSaver  # noqa: E402


def count_words(text: str) -> int:
    return len(text.split())


def build(checkpointer):
    """agent -> (tools -> agent)* -> end."""
    turns = FakeMessagesListChatModel(responses=[
        AIMessage("Here is a plan: the castle in the morning, Alfama at noon, "
                  "Belém in the afternoon."),
        AIMessage("Added the tile museum after lunch."),
        AIMessage("Sure, let me count.", tool_calls=[
            {"name": "count_words", "args": {"text": "castle Alfama Belém museum"},
             "id": "call-1"}]),
        AIMessage("That plan has 4 stops."),
    ])

    def agent(state: MessagesState):
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(f"That plan has {last.content} stops.")]}
        reply = turns.invoke(state["messages"])
        if "count" in str(last.content).lower() and not reply.tool_calls:
            reply = AIMessage("Let me count.", tool_calls=[{
                "name": "count_words", "args": {"text": str(last.content)}, "id": "call-n"}])
        return {"messages": [reply]}

    def tools(state: MessagesState):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(str(count_words(**call["args"])),
                                         tool_call_id=call["id"], name=call["name"])]}

    def route(state: MessagesState):
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("messages", nargs="*", help="one turn per message")
    parser.add_argument("--db", help="the arbor store (default: $ARBOR_DB, else arbor's own)")
    parser.add_argument("--thread", default="lisbon", help="the thread id (default: lisbon)")
    parser.add_argument("--continue", dest="go_on", action="store_true",
                        help="first go on from the current branch without a new message")
    args = parser.parse_args(argv)
    config = {"configurable": {"thread_id": args.thread}}
    with ArborSaver.from_conn_string(args.db) as saver:
        graph = build(saver)
        if args.go_on:
            graph.invoke(None, config)
        for text in args.messages:
            graph.invoke({"messages": [HumanMessage(text)]}, config)
        for message in graph.get_state(config).values.get("messages", []):
            print(f"{message.type:>5}: {message.content}")
        print(f"\n{len(list(graph.get_state_history(config)))} checkpoints in thread "
              f"{args.thread!r}; arbor --db {saver.store.path} shows them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
