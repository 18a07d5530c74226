"""What arbor knows of each agent, one package per agent, side by side: how its logs are read
into the store (`<agent>.importer`) and how a branch is written back as a new native session
of that agent, the way its own fork does (`<agent>.writer`), for `arbor resume` and the app's
`o` key. `arbor` hands a session written through `core` back to the agent that continues it;
`native` holds what the writers share (the branch being written, new ids, writing a new file
atomically), and `resume` the plan and the run.

Names are imported on first use (PEP 562): an import of Claude Code logs loads its importer,
not the writers.
"""

from __future__ import annotations

import importlib

_WHERE = {"Ids": "native", "ResumeError": "native",
          "ResumePlan": "resume", "prepare_resume": "resume", "run": "resume"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'core.agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
