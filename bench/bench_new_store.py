"""Making a new SQLite store: from fresh_schema's statements in one transaction (what arbor
does) against running every migration (what it did), in turns.

    .venv/bin/python bench/bench_new_store.py [--runs 15]

Each run is a process of its own (the same interpreter, with a bytecode cache) that makes
one new store ("first": what `arbor` on a new store pays, module loads included) and then
five more ("later": the statements alone), and prints the CPU and wall time of each
`open_store`. The two ways take turns, run by run; medians of all runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
if sys.argv[1] == "migrations":
    from core.store.sqlite import fresh_schema
    fresh_schema.VERSION = -1   # (out of date: the migrations run)
from core import open_store
folder = Path(tempfile.mkdtemp(prefix="arbor-bench-new-store-"))
times = []
for number in range(6):
    wall, cpu = time.perf_counter(), time.process_time()
    store = open_store(folder / f"store{number}.db")
    times.append((time.process_time() - cpu, time.perf_counter() - wall))
    store.close()
for path in folder.iterdir():
    path.unlink()
folder.rmdir()
print(json.dumps(times))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    script = Path(tempfile.mkdtemp(prefix="arbor-bench-new-store-")) / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache",
           "PYTHONDONTWRITEBYTECODE": ""}
    results: dict[str, dict[str, list[float]]] = {
        way: {"first cpu": [], "first wall": [], "later cpu": [], "later wall": []}
        for way in ("fresh", "migrations")}
    for way in ("fresh", "migrations"):   # (warm-up: the bytecode cache)
        subprocess.run([sys.executable, str(script), way, str(REPO)], env=env, check=True,
                       capture_output=True)
    for number in range(args.runs):
        for way in ("fresh", "migrations") if number % 2 == 0 else ("migrations", "fresh"):
            out = subprocess.run([sys.executable, str(script), way, str(REPO)], env=env,
                                 check=True, capture_output=True, text=True).stdout
            times = json.loads(out)
            figures = results[way]
            figures["first cpu"].append(times[0][0])
            figures["first wall"].append(times[0][1])
            figures["later cpu"] += [cpu for cpu, _wall in times[1:]]
            figures["later wall"] += [wall for _cpu, wall in times[1:]]
    script.unlink()
    script.parent.rmdir()
    print(f"new store, {args.runs} runs each, in turns; load average {os.getloadavg()[0]:.1f}")
    print(f"{'':34}{'first cpu':>10}{'first wall':>11}{'later cpu':>10}{'later wall':>11}  (ms, median)")
    for way, label in (("migrations", "every migration in turn (before)"),
                       ("fresh", "fresh_schema, one transaction")):
        figures = results[way]
        print(f"{label:34}" + "".join(
            f"{statistics.median(figures[key]) * 1000:>{10 if 'cpu' in key else 11}.1f}"
            for key in ("first cpu", "first wall", "later cpu", "later wall")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
