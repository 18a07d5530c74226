"""Benchmark: what a worker of a big import pays to start each batch's scratch store
(core/store/sqlite/merge.py `open_scratch` from its template), wall and CPU.

    .venv/bin/python bench/bench_scratch_open.py [--count 20] [--repo CHECKOUT]

A 100 MB import moves about 50 batches in; each worker opens a scratch store for each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    args = parser.parse_args(argv)
    sys.path.insert(0, args.repo)
    from core.store.sqlite.merge import open_scratch

    folder = tempfile.mkdtemp(prefix="arbor-scratch-open-")
    template = open_scratch(os.path.join(folder, "template.db"))
    walls, cpus = [], []
    for number in range(args.count):
        started, cpu = time.perf_counter(), time.process_time()
        store = open_scratch(os.path.join(folder, f"batch-{number}.db"), template=template)
        store.close()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    template.close()
    shutil.rmtree(folder, ignore_errors=True)
    print(f"open_scratch from the template ({args.repo}), median of {args.count}: "
          f"{statistics.median(walls) * 1000:.1f} ms wall, {statistics.median(cpus) * 1000:.1f} ms"
          f" CPU (min {min(walls) * 1000:.1f} ms wall); load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
