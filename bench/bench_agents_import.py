"""Benchmark: import speed per agent, per megabyte, next to Claude Code's (issue 30's target:
every agent within 1.5x of Claude Code's time per MB).

    .venv/bin/python bench/bench_agents_import.py [--mb 8] [--repeat 3]

For each agent whose logs are JSONL files, one long session is made from the agent's own
fixture (tests/test_agent_conformance.py's FIXTURES): its conversation repeated until the
file holds about --mb megabytes, every id made unique per copy (`-c<n>` after the values
of the id keys), the header lines kept once. Each file is imported into a new store,
in this process, --repeat times; the table gives the median seconds, MB/s and the ratio of
seconds per MB to Claude Code's. (LangGraph databases are measured in bench_langgraph.py.)
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

# Keys whose values are ids (of an entry, its parent, a response, a tool call): made unique
# per copy. A header (the session's own line) is kept once, so the copies are one session.
_ID_KEYS = frozenset({"id", "uuid", "parentUuid", "parentId", "requestId", "call_id",
                      "toolCallId", "tool_use_id", "targetId", "firstKeptEntryId",
                      "$rewindTo", "leafUuid"})
_HEADER_TYPES = frozenset({"session", "session_meta"})


def long_log(files: list[Path], mb: float, out: Path) -> Path:
    """The fixture's longest JSONL file repeated to about `mb` megabytes (see the doc)."""
    source = max((f for f in files if f.suffix == ".jsonl"), key=lambda f: f.stat().st_size)
    lines = [json.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
    target = out / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    copy = 0
    with open(target, "w", encoding="utf-8") as handle:
        while size < mb * 1024 * 1024:
            for line in lines:
                if copy and (line.get("type") in _HEADER_TYPES or "projectHash" in line):
                    continue
                text = json.dumps(_renamed(line, copy) if copy else line, ensure_ascii=False) + "\n"
                handle.write(text)
                size += len(text.encode("utf-8"))
            copy += 1
    return target


def _renamed(value, copy: int):
    if isinstance(value, dict):
        return {k: (f"{v}-c{copy}" if k in _ID_KEYS and isinstance(v, str) and v else
                    _renamed(v, copy)) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, copy) for v in value]
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    from core import open_store
    from core.agents import registry
    from core.importing import import_paths
    from test_agent_conformance import FIXTURES, place

    work = Path(tempfile.mkdtemp(prefix="arbor-bench-agents-"))
    rows = []
    try:
        for agent in registry.agents():
            if agent.database is not None or agent.source not in FIXTURES:
                continue
            files = place(work / agent.source / "fixture", agent.source)
            log = long_log(files, args.mb, work / agent.source / "long")
            megabytes = log.stat().st_size / (1024 * 1024)
            times = []
            for n in range(args.repeat):
                db = work / agent.source / f"s{n}.db"
                store = open_store(db)
                started = time.perf_counter()
                report = import_paths(store, [log])
                times.append(time.perf_counter() - started)
                assert report.files[0].status == "imported", report.summary()
                entries = report.entries_added
                store.close()
            seconds = statistics.median(times)
            rows.append((agent.title, megabytes, entries, seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = next(s / mb for title, mb, _e, s in rows if title == "Claude Code")
    print(f"{'agent':<14}{'MB':>7}{'entries':>9}{'seconds':>9}{'MB/s':>8}{'s/MB vs Claude Code':>22}")
    for title, mb, entries, seconds in rows:
        print(f"{title:<14}{mb:>7.1f}{entries:>9}{seconds:>9.2f}{mb / seconds:>8.2f}"
              f"{(seconds / mb) / base:>21.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
