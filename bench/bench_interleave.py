"""Benchmark: agents appending while a big file is imported into the same store.

    .venv/bin/python bench/bench_interleave.py [--lines 300000] [--agents 3] [--every 0.05]

Generates one real-shaped Claude Code session of --lines lines (bench/claude_tree.py; kept
in --cache), then starts --agents processes that each open the store with
`core.SessionManager` (the store is `sessions.db` of their session dir) and append a
message every --every seconds, timing every append. One second later `arbor import` of the
file starts into that same store; the agents stop half a second after it ends. The table
gives, per agent, the appends made, those that failed (for example "database is locked")
and the longest, 99th percentile and median time one append took; then the import's time
and what the store holds after (integrity check, entries of the file, agents' messages).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import claude_tree  # noqa: E402

AGENT = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from core.seed.manager import SessionManager
session_dir, stop, every = sys.argv[2], sys.argv[3], float(sys.argv[4])
manager = SessionManager.new("/home/dev/agent", session_dir)
manager.init()
waits, errors = [], []
index = 0
next_at = time.monotonic()
while not os.path.exists(stop):
    index += 1
    started = time.monotonic()
    try:
        manager.append_message({"role": "user", "content": f"agent line {index}"})
    except Exception as error:  # what failed is the point of the measure
        errors.append(f"{type(error).__name__}: {error}")
    waits.append(time.monotonic() - started)
    next_at += every
    time.sleep(max(0.0, next_at - time.monotonic()))
print(json.dumps({"session": manager.session_id, "waits": waits, "errors": errors}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--every", type=float, default=0.05, help="seconds between appends")
    parser.add_argument("--cache", default="/tmp/arbor-bench-trees")
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    source = cache / f"claude-{args.lines}-lines.jsonl"
    if not source.exists():
        started = time.perf_counter()
        claude_tree.generate_file(source, args.lines)
        print(f"generated {source} in {time.perf_counter() - started:.1f} s")
    work = Path(tempfile.mkdtemp(prefix="arbor-interleave-"))
    stop = work / "stop"
    session_dir = work / "agents"
    session_dir.mkdir()
    db = session_dir / "sessions.db"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # the store exists before anyone writes, so no one races to create it
    subprocess.run([sys.executable, "-c", "import sys; from core import open_store; "
                    "open_store(sys.argv[1]).close()", str(db)], env=env, check=True)
    agents = [subprocess.Popen([sys.executable, "-c", AGENT, str(REPO), str(session_dir),
                                str(stop), str(args.every)], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(args.agents)]
    try:
        time.sleep(1.0)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tui", "import", "-q", "--db", str(db),
                               str(source)], env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        time.sleep(0.5)
    finally:
        stop.touch()
    results = []
    for agent in agents:
        out, err = agent.communicate(timeout=60)
        if agent.returncode != 0:
            raise SystemExit(f"an agent failed:\n{err[-3000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    check = subprocess.run([sys.executable, "-c", r"""
import json, sys
from core import open_store
store = open_store(sys.argv[1])
conn = store.connection
print(json.dumps({"integrity": store.integrity_check(),
                  "entries": conn.execute("SELECT COUNT(*) FROM entries e JOIN external_sessions x"
                                          " ON x.id = e.external_session_id WHERE x.source = 'claude_code'").fetchone()[0],
                  "agent_messages": conn.execute("SELECT COUNT(*) FROM entries e JOIN external_sessions x"
                                                 " ON x.id = e.external_session_id WHERE x.source = 'arbor'").fetchone()[0]}))
""", str(db)], env=env, capture_output=True, text=True, check=True)
    facts = json.loads(check.stdout.strip().splitlines()[-1])
    print(f"\n{args.agents} agents appending every {args.every * 1000:.0f} ms while "
          f"`arbor import` reads {args.lines:,} lines ({source.stat().st_size / 1048576:.0f} MB)")
    header = ("agent", "appends", "failed", "longest ms", "p99 ms", "median ms")
    print("  ".join(f"{h:>10}" for h in header))
    every_wait = []
    failures = 0
    for index, result in enumerate(results):
        waits = sorted(result["waits"])
        every_wait.extend(waits)
        failures += len(result["errors"])
        print("  ".join(f"{c:>10}" for c in (
            index + 1, len(waits), len(result["errors"]), f"{waits[-1] * 1000:.0f}",
            f"{waits[min(len(waits) - 1, int(len(waits) * 0.99))] * 1000:.0f}",
            f"{statistics.median(waits) * 1000:.1f}")))
        for error in result["errors"][:3]:
            print(f"           {error}")
    print(f"longest wait of any append: {max(every_wait) * 1000:.0f} ms; failed appends: "
          f"{failures} of {len(every_wait)}")
    print(f"import: exit {done.returncode} in {seconds:.1f} s"
          + (f" ({done.stderr.strip().splitlines()[-1]})" if done.returncode and done.stderr.strip() else ""))
    print(f"store after: integrity {facts['integrity']}, {facts['entries']:,} entries from the "
          f"file, {facts['agent_messages']:,} agents' entries (appends that succeeded: "
          f"{len(every_wait) - failures:,})")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
