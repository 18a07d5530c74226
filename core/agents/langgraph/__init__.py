"""LangGraph: `SqliteSaver` databases read into the store (`importer`). Agents that
checkpoint into arbor itself use `core.langgraph.ArborSaver`."""
