"""The real app in tmux while a LangGraph agent writes through ArborSaver: its turns
appear live, with checkpoints as one-line markers (not their data)."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from core.langgraph import ArborSaver
from core.store import open_store

from langgraph_graphs import chat_graph
from terminal import Terminal, arbor_command, tmux_or_skip

THREAD = {"configurable": {"thread_id": "live"}}


def test_the_agents_turns_appear_live_in_the_app(tmp_path):
    tmux_or_skip()
    path = tmp_path / "agents.db"
    store = open_store(path)
    try:
        graph = chat_graph(ArborSaver(store), [f"reply number {n}" for n in range(10)])
        graph.invoke({"messages": [HumanMessage("Fix the flaky login test")]}, THREAD)
        with Terminal([*arbor_command(), "--db", str(path), "--no-follow"], cwd=tmp_path) as term:
            screen = term.wait_for("reply number 0")
            assert "Fix the flaky login test" in screen
            assert "◆ checkpoint" in screen and "customType" not in screen
            graph.invoke({"messages": [HumanMessage("and the logout one")]}, THREAD)
            screen = term.wait_for("reply number 1", timeout=30)
            assert "and the logout one" in screen
            assert "4 msg" in screen           # the branch row counts the new messages
            graph.invoke({"messages": [HumanMessage("thanks")]}, THREAD)
            term.wait_for("reply number 2", timeout=30)
            assert term.exited() is None
            assert "Traceback" not in term.history()
    finally:
        store.close()
