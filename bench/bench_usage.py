"""`arbor usage` over a store of 1,000,000 entries (issue 10: "answers in under 1 s").

Builds the store of bench/make_big_store.py with usage on every assistant message (a third
of the entries: ~333,000 responses over four models, priced as they are written), then runs
the real command, `arbor usage --by X --json`, once per grouping in a subprocess, and prints
its wall and CPU time (the process's own: Python's start, the imports, the query, the JSON).

    .venv/bin/python bench/bench_usage.py [/tmp/usage-big.db] [--rebuild]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

GROUPINGS = ("day", "week", "month", "model", "project", "session")


def run_once(db: Path, args: list[str]) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tui", "usage", "--db", str(db), "--json", *args],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC"})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"arbor usage {' '.join(args)} failed: {done.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="/tmp/usage-big.db")
    parser.add_argument("--rebuild", action="store_true", help="build the store again")
    args = parser.parse_args()
    db = Path(args.path)
    if args.rebuild or not db.exists():
        from bench.make_big_store import build

        build(db, usage=True)
    # an empty command: what Python and the CLI's start cost on this machine now
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tui", "--help"], capture_output=True)
    floor = time.perf_counter() - started
    print(f"store: {db}  ({db.stat().st_size / 1e6:,.0f} MB)")
    print(f"'arbor --help' (start of Python + the CLI): {floor:.2f} s wall")
    print(f"{'command':<48}{'wall s':>8}{'CPU s':>8}{'rows':>8}{'total tokens':>16}{'cost $':>12}")
    cases = [["--by", by] for by in GROUPINGS]
    cases.append(["--by", "day", "--since", "2026-01-10", "--until", "2026-01-20"])
    for case in cases:
        wall, cpu, report = run_once(db, case)
        totals = report["totals"]
        print(f"{'arbor usage ' + ' '.join(case):<48}{wall:>8.2f}{cpu:>8.2f}{len(report['rows']):>8}"
              f"{totals['total_tokens']:>16,}{totals['cost_usd']:>12,.2f}")
    in_process(db)


def in_process(db: Path) -> None:
    """The report alone (no Python start), from the hourly buckets and from every response
    (what arbor read before migration 9), in the same run: CPU seconds, best of 3."""
    from core import open_store

    store = open_store(db)
    sql = store._sql
    buckets = sql.usage_bucket_report
    print(f"\n{'store.usage.report (in process)':<40}{'buckets CPU s':>15}{'responses CPU s':>17}{'ratio':>8}")
    for by in GROUPINGS:
        times = []
        for source in (buckets, sql.usage_report):
            sql.usage_bucket_report = source
            best = min(_cpu(lambda: store.usage.report(by)) for _ in range(3))
            times.append(best)
        sql.usage_bucket_report = buckets
        print(f"{'--by ' + by:<40}{times[0]:>15.3f}{times[1]:>17.3f}{times[1] / times[0]:>7.1f}x")
    store.close()


def _cpu(call) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


if __name__ == "__main__":
    main()
