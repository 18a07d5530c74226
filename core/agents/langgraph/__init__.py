"""LangGraph: `SqliteSaver` databases read into the store (`importer`). Agents that
checkpoint into arbor itself use `core.langgraph.ArborSaver`."""

from __future__ import annotations

from core.agents.base import Agent


def _database(tables: frozenset) -> bool:
    return "checkpoints" in tables


AGENT = Agent(
    source="langgraph", title="LangGraph", colour="#af87d7", rank=90, database=_database,
    importer="core.agents.langgraph.importer", session_noun="LangGraph thread",
    logs_note="a `SqliteSaver` database (tables `checkpoints`, `writes`), wherever the graph keeps it",
    resume_note="a LangGraph thread goes on in its graph, which arbor's checkpointer "
                "continues from the current branch",
    usage_rule="`usage_metadata` on AI messages, keyed by the message id")
