"""Benchmark: what the check against the open store's files costs (`core/store/held_files.py`).

    .venv/bin/python bench/bench_held_files.py [--files 2000] [--repeat 3]

Every file an import opens is first compared, by device and inode, with the store this
process has open and its -wal, -shm and -journal (a few `stat`s). Printed: the cost of one
`held_files()` and of `open_unless_held` against a plain open, and the CPU time of an
import of --files new small pi logs with the check and with it switched off (the same
process, alternating runs; the best of --repeat each).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("ARBOR_IMPORT_WORKERS", "0")

from core.store import held_files as held  # noqa: E402
from core import open_store  # noqa: E402
from core.importing import import_paths  # noqa: E402


def make_logs(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    for i in range(count):
        rows = [{"type": "session", "version": 3, "id": f"s{i}", "cwd": "/w",
                 "timestamp": "2026-01-01T00:00:00.000Z"}]
        rows += [{"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None,
                  "timestamp": "2026-01-01T00:00:01.000Z",
                  "message": {"role": "user", "content": [{"type": "text", "text": f"hi {n}"}]}}
                 for n in range(5)]
        (folder / f"f{i}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def per_call(function, calls: int = 10_000) -> float:
    started = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - started) / calls * 1e6


def import_cpu(logs: Path) -> float:
    folder = Path(tempfile.mkdtemp())
    store = open_store(folder / "arbor.db")
    try:
        started = time.process_time()
        import_paths(store, [logs])
        return time.process_time() - started
    finally:
        store.close()
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arbor-bench-held-"))
    try:
        store = open_store(work / "arbor.db")
        store.sessions.list()
        log = work / "x.jsonl"
        log.write_text("x\n")
        print(f"held_files():               {per_call(held.held_files):6.1f} us")
        print(f"open_unless_held + close:   {per_call(lambda: held.open_unless_held(log).close()):6.1f} us")
        print(f"open + close:               {per_call(lambda: open(log, 'rb').close()):6.1f} us")
        store.close()
        logs = work / "logs"
        make_logs(logs, args.files)
        real = held.held_files
        with_check, without = [], []
        for _ in range(args.repeat):
            with_check.append(import_cpu(logs))
            held.held_files = lambda: {}
            try:
                without.append(import_cpu(logs))
            finally:
                held.held_files = real
        best, base = min(with_check), min(without)
        print(f"import of {args.files} new files, CPU: {best:.3f} s with the check, "
              f"{base:.3f} s without ({best / base:.3f}x)")
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
