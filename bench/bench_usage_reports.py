"""Benchmark: a usage report from arbor's store against ccusage's report of the same logs
(issue 29, "Keep": usage reports faster than ccusage's), in one run.

    .venv/bin/python bench/bench_usage_reports.py [--mb 100] [--rounds 7]
        [--cache /tmp/arbor-bench-trees] [--ccusage PATH]

The tree is bench/claude_tree.py's, imported once into a new store (not timed). Then each
round runs, one after the other in child processes, `ccusage claude <report> --offline
--json` (reading the logs, as it always does) and `arbor usage --by <group> --json`
(reading the store) for the day, month and session reports; the ratio is of the medians
of one run, in wall and in CPU time (user + system).
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_import  # noqa: E402
from bench_import import Run, arbor, find_tool, fresh_db, python_env, table, tree  # noqa: E402

# (ccusage's report, arbor usage's --by)
REPORTS = (("daily", "day"), ("monthly", "month"), ("session", "session"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the tree")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--cache", default="/tmp/arbor-bench-trees", help="where trees are kept")
    parser.add_argument("--ccusage", help="the ccusage command (default: on PATH)")
    args = parser.parse_args(argv)
    ccusage = find_tool(args.ccusage, "ccusage", ["/tmp/engine-npm/node_modules/.bin/ccusage"])
    if not ccusage:
        print("ccusage is not installed (npm install --prefix DIR ccusage@20.0.24; --ccusage"
              " DIR/node_modules/.bin/ccusage)", file=sys.stderr)
        return 2
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="arbor-usage-reports-"))
    atexit.register(shutil.rmtree, work, True)   # (the stores made: GBs for 1 GB of logs)
    bench_import.warm_up(cache, work)
    root, facts = tree(cache, args.mb)
    db = fresh_db(work, "usage.db")
    argv, env = arbor("--discover", "--db", str(db), home=root)
    Run(argv, env=env).check("arbor import")
    theirs: dict[str, list[Run]] = {report: [] for report, _by in REPORTS}
    ours: dict[str, list[Run]] = {report: [] for report, _by in REPORTS}
    cc_env = {"CLAUDE_CONFIG_DIR": str(root / ".claude"), "HOME": str(root), "TZ": "UTC"}
    for _ in range(args.rounds):   # alternating: the load falls on both alike
        for report, by in REPORTS:
            theirs[report].append(Run([ccusage, "claude", report, "--offline", "--json"],
                                      env=cc_env).check(f"ccusage {report}"))
            ours[report].append(Run([sys.executable, "-m", "tui", "usage", "--by", by, "--json",
                                     "--timezone", "UTC", "--db", str(db)],
                                    env=python_env(HOME=str(root))).check(f"arbor usage {by}"))
    rows = []
    for report, by in REPORTS:
        cc_wall = statistics.median(r.wall for r in theirs[report])
        cc_cpu = statistics.median(r.cpu for r in theirs[report])
        wall = statistics.median(r.wall for r in ours[report])
        cpu = statistics.median(r.cpu for r in ours[report])
        rows.append((f"ccusage claude {report} / arbor usage --by {by}",
                     f"{cc_wall * 1000:.0f}", f"{cc_cpu * 1000:.0f}", f"{wall * 1000:.0f}",
                     f"{cpu * 1000:.0f}", f"{wall / cc_wall:.2f}x", f"{cpu / cc_cpu:.2f}x"))
    table(f"Usage reports of {facts['bytes'] / 1048576:.0f} MB of Claude Code logs, "
          f"{facts['files']} files (median of {args.rounds}, milliseconds)",
          ("", "ccusage wall", "CPU", "arbor wall", "CPU", "arbor / ccusage wall", "CPU"), rows)
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
          f"ccusage: {ccusage}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
