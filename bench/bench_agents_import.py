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
                      "$rewindTo", "leafUuid", "tool_call_id", "message_id", "apiCallId",
                      "usageId"})
_HEADER_TYPES = frozenset({"session", "session_meta", "session_start", "metadata",
                           "session.start"})


def long_log(files: list[Path], mb: float, out: Path) -> Path:
    """The fixture's longest log repeated to about `mb` megabytes (see the doc); a log that
    is not JSON lines (Aider's Markdown history) is repeated as it is (its entries are
    named by their lines, so each copy is new)."""
    source = max(files, key=lambda f: f.stat().st_size)
    target = out / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.suffix != ".jsonl":
        data = source.read_bytes()
        with open(target, "wb") as handle:
            for _ in range(max(1, int(mb * 1024 * 1024 / len(data)))):
                handle.write(data)
        return target
    lines = [json.loads(line) for line in source.read_bytes().splitlines() if line.strip()]
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


def long_opencode(files: list[Path], mb: float, out: Path) -> Path:
    """opencode's database with its sessions copied under new ids to about `mb` megabytes."""
    import sqlite3

    target = out / "opencode.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(f"file:{files[0]}?mode=ro", uri=True) as source:
        source.execute("VACUUM INTO ?", (str(target),))
    db = sqlite3.connect(target)
    columns = {t: [r[1] for r in db.execute(f"PRAGMA table_info({t})")]
               for t in ("session", "message", "part")}
    copy = 0
    while target.stat().st_size < mb * 1024 * 1024:
        copy += 1
        tag = f"~c{copy}"
        for table, keys in (("session", ("id", "parent_id")), ("message", ("id", "session_id")),
                            ("part", ("id", "message_id", "session_id"))):
            cols = columns[table]
            values = ", ".join(f"CASE WHEN {c} IS NULL THEN NULL ELSE {c} || '{tag}' END"
                               if c in keys else c for c in cols)
            db.execute(f"INSERT INTO {table} ({', '.join(cols)}) SELECT {values} FROM {table} "
                       "WHERE instr(id, '~') = 0")     # (the fixture's own rows only)
        db.commit()
        db.execute("VACUUM")
    db.close()
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
    parser.add_argument("--only", nargs="*", default=None, metavar="SOURCE",
                        help="measure only these agents (and Claude Code, the base)")
    args = parser.parse_args(argv)

    from core import open_store
    from core.agents import registry
    from core.importing import import_paths
    from test_agent_conformance import FIXTURES, logs, place

    work = Path(tempfile.mkdtemp(prefix="arbor-bench-agents-"))
    rows = []
    try:
        for agent in registry.agents():
            if agent.source not in FIXTURES or (agent.database is not None and
                                                agent.source != "opencode"):
                continue
            if args.only and agent.source not in (*args.only, "claude_code"):
                continue
            files = place(work / agent.source / "fixture", agent.source)
            if agent.source == "opencode":
                log = long_opencode(files, args.mb, work / agent.source / "long")
            else:
                log = long_log(logs(files, agent.source), args.mb, work / agent.source / "long")
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
