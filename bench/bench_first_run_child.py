"""The first import's process alone (core/importing/first_run/process.py), without the app:
from its spawn to the first session row in the store, and on to the newest 20 sessions
complete.

    .venv/bin/python bench/bench_first_run_child.py --tree /tmp/tree [--runs 5] [--also /tmp/main]

`--tree` is a HOME holding `.claude/projects` (bench/claude_tree.py makes one). Each run
makes a new SQLite store, spawns the child as `arbor` does (the same interpreter, the same
stdin line: the store and the home), and reads the store with SQLite, read-only, every 5
ms: the first session row (an external session with a message), the first usage row (the
tokens the list shows) and the moment no usage row of it waits for its price
(`price_basis` 0 and no logged cost) any more, then the newest 20 sessions (the 20 newest
files by mtime that are not a sub-agent's) complete (their import records say they were
read to their end), with and without the long one(s) (over the first import's
HEAD_SLICE: read on in slices while the others are read; only with `--all`). The child is then asked to stop
and waited for. `--also DIR`: another arbor checkout (e.g. an export of main) measured in
the same run, alternating; its code from DIR, the same interpreter. Medians and minimums
of one run, in ms from the spawn (the newest 20: from the first row).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from core.importing.driver import HEAD_SLICE  # noqa: E402


def newest_sessions(tree: Path, count: int = 20) -> list[tuple[str, int]]:
    files = sorted(((p.stat().st_mtime_ns, str(p), p.stat().st_size)
                    for p in (tree / ".claude" / "projects").rglob("*.jsonl")
                    if "subagents" not in p.parts), reverse=True)
    return [(path, size) for _mtime, path, size in files[:count]]


def _look(conn, wanted):
    """(a session with a message, a usage row, usage rows waiting for a price, complete)."""
    try:
        row = conn.execute("SELECT 1 FROM external_sessions WHERE message_count > 0"
                           " LIMIT 1").fetchone() is not None
        usage = conn.execute("SELECT 1 FROM usage LIMIT 1").fetchone() is not None
        waiting = conn.execute("SELECT COUNT(*) FROM usage WHERE cost_logged = 0"
                               " AND price_basis = 0").fetchone()[0]
        records = {path: (size, done) for path, size, done in conn.execute(
            "SELECT path, size, complete FROM import_sources")}
    except sqlite3.Error:
        return False, False, 0, set()
    done = {path for path, size in wanted if records.get(path, (0, 0)) == (size, 1)}
    return row, usage, waiting, done


def one_run(code_dir: Path, tree: Path, timeout: float, every: bool = False
            ) -> dict[str, float | None]:
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-child-", dir="/tmp/h-child"
                                   if Path("/tmp/h-child").is_dir() else None))
    db = folder / "store.db"
    subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(code_dir)!r});"
                    f" from core import open_store; open_store({str(db)!r}).close()"],
                   check=True)
    wanted = newest_sessions(tree)
    small = [(path, size) for path, size in wanted if size <= HEAD_SLICE]
    code = (f"import sys; sys.path.insert(0, {str(code_dir)!r}); "
            "from core.importing.first_run.process import main; sys.exit(main())")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HOME": str(tree),
           "PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache"}
    times: dict[str, float | None] = dict.fromkeys(("row", "usage", "priced", "most", "every"))
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    child.stdin.write(json.dumps({"store": str(db), "home": str(tree)}).encode() + b"\n")
    child.stdin.flush()
    conn = None
    try:
        while time.perf_counter() - started < timeout:
            if conn is None:
                try:
                    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                except sqlite3.Error:
                    time.sleep(0.005)
                    continue
            row, usage, waiting, done = _look(conn, wanted)
            now = time.perf_counter() - started
            if row and times["row"] is None:
                times["row"] = now
            if usage and times["usage"] is None:
                times["usage"] = now
            if usage and not waiting and times["priced"] is None:
                times["priced"] = now
            if times["most"] is None and all(path in done for path, _ in small):
                times["most"] = now
            if len(done) == len(wanted):
                times["every"] = now
                break
            if not every and times["most"] is not None and times["priced"] is not None:
                break
            if child.poll() is not None:
                break
            time.sleep(0.005)
    finally:
        if conn is not None:
            conn.close()
        try:
            child.stdin.write(b"stop\n")
            child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        shutil.rmtree(folder, ignore_errors=True)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", required=True, help="a HOME holding .claude/projects")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--also", metavar="DIR", help="another arbor checkout, alternating")
    parser.add_argument("--all", action="store_true",
                        help="wait for all the newest 20, the long one(s) too")
    args = parser.parse_args()
    tree = Path(args.tree).resolve()
    if not (tree / ".claude" / "projects").is_dir():
        raise SystemExit(f"--tree: {tree} holds no .claude/projects")
    checkouts = {"this": REPO}
    if args.also:
        checkouts["also"] = Path(args.also).resolve()
    for code_dir in checkouts.values():
        one_run(code_dir, tree, 20)   # warm-up: the bytecode cache, the page cache
    results = {name: [] for name in checkouts}
    for _ in range(args.runs):
        for name, code_dir in checkouts.items():
            results[name].append(one_run(code_dir, tree, args.timeout, args.all))
    wanted = newest_sessions(tree)
    big = [size for _path, size in wanted if size > HEAD_SLICE]
    print(f"tree: {tree}; newest 20 sessions {sum(s for _p, s in wanted) / 1e6:,.0f} MB, "
          f"{len(big)} over {HEAD_SLICE >> 20} MB: "
          f"{', '.join(f'{b / 1e6:,.0f} MB' for b in big) or 'none'}; {args.runs} alternating"
          f" runs; load average {os.getloadavg()[0]:.1f}")
    labels = (("row", "spawn -> first session row", False),
              ("usage", "spawn -> first usage row (tokens)", False),
              ("priced", "spawn -> no usage row waiting for its price", False),
              ("most", "first row -> newest 20 complete but the long one(s)", True),
              ("every", "first row -> all the newest 20 complete", True))
    print(f"{'':52}" + "".join(f"{name + ' med':>11}{'min':>7}" for name in checkouts))
    for key, label, after_row in labels:
        line = f"{label:52}"
        for name in checkouts:
            values = [r[key] - (r["row"] if after_row else 0) for r in results[name]
                      if r[key] is not None and r["row"] is not None]
            if not values:
                line += f"{'-':>11}{'-':>7}"
            else:
                line += f"{statistics.median(values) * 1000:>11.0f}{min(values) * 1000:>7.0f}"
        print(line)
    if args.also:
        ratios = [a["row"] / b["row"] for a, b in zip(results["this"], results["also"])
                  if a["row"] and b["row"]]
        if ratios:
            print(f"first row, this / also, pair by pair: min {min(ratios):.2f},"
                  f" median {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
