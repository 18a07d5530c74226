"""What the panes showed lately, kept for when the store stops answering: going back to a
session or branch seen a moment ago shows it as it was read (its messages as far as they
were read), instead of "not loaded". Used only while the store does not answer; when it
does, everything is read afresh."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

SESSIONS = 16   # sessions' branch trees kept
BRANCHES = 8    # branches' message sources kept (each holds the windows it read)


class ShownCache:
    def __init__(self) -> None:
        self._sessions: OrderedDict[int, tuple] = OrderedDict()
        self._branches: OrderedDict[tuple[int, Any], tuple] = OrderedDict()

    def keep_session(self, session_id: int, read: tuple) -> None:
        _keep(self._sessions, session_id, read, SESSIONS)

    def session(self, session_id: int) -> tuple | None:
        return _get(self._sessions, session_id)

    def keep_branch(self, branch_id: int, view: Any, source: Any, labels: dict) -> None:
        """`view`: what else the source was made for (raw or context, the filter)."""
        _keep(self._branches, (branch_id, view), (source, labels), BRANCHES)

    def branch(self, branch_id: int, view: Any) -> tuple | None:
        return _get(self._branches, (branch_id, view))


def _keep(kept: OrderedDict, key, value, most: int) -> None:
    kept[key] = value
    kept.move_to_end(key)
    while len(kept) > most:
        kept.popitem(last=False)


def _get(kept: OrderedDict, key):
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
    return found
