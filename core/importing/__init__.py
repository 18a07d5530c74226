"""The import machinery: agents' logs (Claude Code, Codex, pi v1-v3, LangGraph SqliteSaver)
into the store. What each agent's log means is read by its own importer
(`core.agents.<agent>.importer`); here is what they share: which files, from where, the
report, the records of how far each file got, workers for a big import, and following.

The public API (safe to call from a worker thread that owns the store):

    report = import_paths(store, [path, ...], progress=callback)
    result = import_file(store, path)      # one file, from where its last import stopped
    paths = discover()

One file (or LangGraph thread) becomes one external session; its entry tree is kept and
every leaf becomes an internal session. A file is read from where its last import stopped
(state.py), in short transactions, so agents writing to the store are never locked out for
long. Lines that cannot be read are skipped and reported with their line numbers.

Names are imported on first use (PEP 562): `arbor import` over files that have not changed
reads only `files.py` and `unchanged.py` (see `unchanged.look`).
"""

from __future__ import annotations

import importlib

_WHERE = {
    "FileResult": "base", "ImportReport": "base", "Progress": "base", "SessionResult": "base",
    "Skipped": "base",
    "FORMATS": "detect", "detect_format": "detect",
    "discover": "files", "expand_paths": "files",
    "COMMIT_EVERY": "driver", "import_paths": "driver", "import_file": "driver",
    "link_lineage": "driver", "plan_paths": "driver",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'core.importing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    if name != "COMMIT_EVERY":      # a setting: read from the driver each time
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
