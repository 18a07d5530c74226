"""Sessions whose agent deleted the log they were imported from (Claude Code removes
transcripts after 30 days by default): arbor keeps its copy, and says so in the session
list ("log deleted, kept in arbor"); `o` writes a native session from the store (the
writers never read the agent's file to write one).

A session is marked when every file that wrote into it is gone. Two queries and one `stat`
per imported file; run where the session list is read (a worker)."""

from __future__ import annotations

import json
import os


def logs_gone(store) -> set[str]:
    """The uids of the sessions whose imported files are all gone."""
    paths = {f"{fmt}:{path}": path for path, fmt in store.imports.source_paths()}
    present: set[str] = set()
    gone: set[str] = set()
    for key, uids_text in store.imports.record_sessions().items():
        path = paths.get(key)
        if path is None:
            continue
        try:
            uids = json.loads(uids_text) if isinstance(uids_text, str) else uids_text
        except ValueError:
            continue
        if not isinstance(uids, list):
            continue
        (present if os.path.exists(path) else gone).update(u for u in uids if isinstance(u, str))
    return gone - present
