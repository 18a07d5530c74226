"""Benchmark: importing a session that grew by a few lines, against an import where nothing
changed (issue 29, "Appends": at most 1.5x, in 15 alternating rounds).

    .venv/bin/python bench/bench_import_appends.py [--mb 100] [--rounds 15] [--lines 10]
        [--cache /tmp/arbor-bench-trees] [--repo CHECKOUT]

The tree is bench/claude_tree.py's (its active session holds 31% of the bytes: 31 MB of the
100 MB tree), copied with hard links except for the session that grows. It is imported
once; then each round runs `arbor import -q --discover` twice in child processes, one after
the other: once with nothing changed, and once after --lines lines were appended to the
active session. Alternating puts the machine's load on both alike; the ratio of their
medians (wall and CPU) is the figure. The last table says what the append costs more,
measured in one process with every module loaded (`import_paths` alone, no interpreter
start), so a fixed cost of the command shows apart from the reading of the new lines.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_import  # noqa: E402
import claude_tree  # noqa: E402
from bench_import import Run, arbor, fresh_db, python_env, table, tree  # noqa: E402

# One process, modules loaded: the no-change import and the append's, timed alone.
IN_PROCESS = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
sys.path.insert(0, sys.argv[5])
from pathlib import Path
from core import open_store
from core.importing import discover, import_paths
import claude_tree
store = open_store(sys.argv[1])
home, active, rounds = Path(sys.argv[3]), sys.argv[4], int(sys.argv[6])
places = discover(home)
import_paths(store, places)   # (anything left from before)
same, grown = [], []
for index in range(rounds):
    started = time.perf_counter(); cpu = time.process_time()
    import_paths(store, places, describe_unchanged=False)
    same.append((time.perf_counter() - started, time.process_time() - cpu))
    claude_tree.append_lines(active, 10, seed=5000 + index)
    started = time.perf_counter(); cpu = time.process_time()
    import_paths(store, places, describe_unchanged=False)
    grown.append((time.perf_counter() - started, time.process_time() - cpu))
print(json.dumps({"same": same, "grown": grown}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the tree")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--lines", type=int, default=10, help="lines appended a round")
    parser.add_argument("--cache", default="/tmp/arbor-bench-trees", help="where trees are kept")
    parser.add_argument("--repo", help="measure the arbor of this checkout (default: this one)")
    args = parser.parse_args(argv)
    if args.repo:
        bench_import.ARBOR = Path(args.repo).resolve()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="arbor-appends-"))
    try:
        bench_import.warm_up(cache, work)
        root, facts = tree(cache, args.mb)
        copy = work / "tree"
        shutil.copytree(root / ".claude", copy / ".claude", copy_function=os.link)
        active = copy / Path(facts["active"]).relative_to(root)
        active.unlink()                          # the file that grows: a real copy
        shutil.copy2(Path(facts["active"]), active)
        size = active.stat().st_size
        db = fresh_db(work, "appends.db")
        argv, env = arbor("--discover", "--db", str(db), home=copy)
        Run(argv, env=env).check("arbor import (first)")
        same, grown = [], []
        for index in range(args.rounds):   # alternating: the load falls on both alike
            same.append(Run(argv, env=env).check("arbor import (no change)"))
            claude_tree.append_lines(active, args.lines, seed=1000 + index)
            grown.append(Run(argv, env=env).check(f"arbor import ({args.lines} lines more)"))

        def stats(runs, field):
            values = [getattr(r, field) for r in runs]
            return statistics.median(values), min(values)

        rows = []
        base_wall, base_cpu = stats(same, "wall")[0], stats(same, "cpu")[0]
        for label, runs in (("no change", same),
                            (f"{args.lines} lines appended to the active session "
                             f"({size / 1048576:.0f} MB)", grown)):
            (wall, wall_min), (cpu, cpu_min) = stats(runs, "wall"), stats(runs, "cpu")
            rows.append((label, f"{wall * 1000:.0f}", f"{wall_min * 1000:.0f}",
                         f"{cpu * 1000:.0f}", f"{cpu_min * 1000:.0f}",
                         f"{wall / base_wall:.2f}x", f"{cpu / base_cpu:.2f}x"))
        pairs = [g.wall / s.wall for s, g in zip(same, grown)]
        table(f"`arbor import -q --discover`, {facts['files']} files, {args.rounds} alternating"
              " rounds (milliseconds: median and min)",
              ("", "wall", "min", "CPU", "min", "wall vs no change", "CPU vs no change"), rows)
        print(f"\nround by round, append / no change (wall): min {min(pairs):.2f}x, median "
              f"{statistics.median(pairs):.2f}x, max {max(pairs):.2f}x (issue 29's target: 1.5x)")

        alone = Run([sys.executable, "-c", IN_PROCESS, str(db), str(bench_import.ARBOR),
                     str(copy), str(active), str(REPO / "bench"), str(args.rounds)],
                    env=python_env()).check("in-process")
        found = json.loads(alone.out.strip().splitlines()[-1])
        rows = []
        for label, key in (("no change", "same"), (f"{args.lines} lines appended", "grown")):
            walls = [w for w, _c in found[key]]
            cpus = [c for _w, c in found[key]]
            rows.append((label, f"{statistics.median(walls) * 1000:.1f}",
                         f"{statistics.median(cpus) * 1000:.1f}"))
        table("import_paths alone, in one process with its modules loaded (milliseconds, median)",
              ("", "wall", "CPU"), rows)
        print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
