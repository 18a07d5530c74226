"""Hand a branch of any agent's session to another agent (issue 31): the branch translated
for the target (translate.py, with the tool table in tools.py), written through the
target's own writer (targets.py, core/agents), imported and nested under the original
(provenance.py), compacted first when it would not fit (handoff.py), with secrets masked
on request (redact.py). docs/handoff.md says per pair what crosses, what is summarised and
what is left out.

Names are imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib

_WHERE = {"prepare_handoff": "handoff", "finish_handoff": "handoff", "HandoffPlan": "handoff", "BranchTooLarge": "handoff",
          "WRITABLE": "targets", "Redactor": "redact", "RedactUnavailable": "redact",
          "continued_in": "provenance"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'core.handoff' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
