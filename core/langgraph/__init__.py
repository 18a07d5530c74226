"""arbor as a LangGraph checkpointer: `ArborSaver` (install with `pip install 'arbor[langgraph]'`).

Only this package imports LangGraph; `import core` and the app never do.
"""

from __future__ import annotations

try:
    from .saver import ArborSaver, PickleRefused
except ImportError as error:  # pragma: no cover - depends on the environment
    if (error.name or "").split(".")[0] not in ("langgraph", "langchain_core"):
        raise
    raise ImportError(
        "core.langgraph needs LangGraph's checkpoint package: pip install 'arbor[langgraph]'"
    ) from error

__all__ = ["ArborSaver", "PickleRefused"]
