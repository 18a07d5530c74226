"""Benchmark: one step of a LangGraph agent on ArborSaver and on SqliteSaver, as a thread grows.

    .venv/bin/python bench/bench_langgraph.py [--sizes 1000 100000] [--steps 200]

A step is what a LangGraph run does per super-step: `put_writes` of the task's write,
`put` of the next checkpoint (parent: the thread's latest) and `get_tuple` of the thread
(no checkpoint id: for arbor, its current branch's checkpoint). The state is the same for
every step (a counter and a message) so that only the thread's length changes. For each
saver, a fresh store grows one thread by plain puts to each size in turn; at each size
--steps steps are timed one by one; the table gives the median and 95th percentile per
step and the ratio of each size's median to the first size's. One run, both savers, so
the figures compare on this machine's load of the moment. SqliteSaver's database gets the
durability arbor's store has (WAL, `synchronous = NORMAL`); with its default (a sync per
commit) its steps take several milliseconds more.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def checkpoint_for(step: int) -> dict:
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"counter": step,
                                    "last": AIMessage(f"step {step} done", id=f"m{step}")}
    checkpoint["channel_versions"] = {"counter": step + 1, "last": step + 1}
    checkpoint["versions_seen"] = {"agent": {"counter": step}}
    return checkpoint


def grow(saver, thread: str, config: dict | None, start: int, stop: int) -> dict | None:
    for step in range(start, stop):
        base = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        if config is not None:
            base["configurable"]["checkpoint_id"] = config["configurable"]["checkpoint_id"]
        config = saver.put(base, checkpoint_for(step), {"source": "loop", "step": step,
                                                        "parents": {}}, {"counter": step + 1})
    return config


def timed_steps(saver, thread: str, config: dict, first: int, count: int
                ) -> tuple[list[float], dict]:
    times = []
    for step in range(first, first + count):
        start = time.perf_counter()
        saver.put_writes(config, [("counter", step + 1)], f"task-{step}")
        base = {"configurable": {"thread_id": thread, "checkpoint_ns": "",
                                 "checkpoint_id": config["configurable"]["checkpoint_id"]}}
        config = saver.put(base, checkpoint_for(step), {"source": "loop", "step": step,
                                                        "parents": {}}, {"counter": step + 1})
        got = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        times.append(time.perf_counter() - start)
        assert got.checkpoint["id"] == config["configurable"]["checkpoint_id"]
    return times, config


def run(name: str, saver, sizes: list[int], steps: int) -> list[tuple]:
    rows = []
    config, written = None, 0
    for size in sizes:
        started = time.perf_counter()
        config = grow(saver, "bench", config, written, size)
        filled = time.perf_counter() - started
        times, config = timed_steps(saver, "bench", config, size, steps)
        written = size + steps
        ordered = sorted(times)
        rows.append((name, size, statistics.median(times) * 1000,
                     ordered[int(len(ordered) * 0.95) - 1] * 1000, filled))
        print(f"  {name}: {size:,} checkpoints, median {rows[-1][2]:.2f} ms "
              f"(filled in {filled:.0f} s)", file=sys.stderr)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    from langgraph.checkpoint.sqlite import SqliteSaver

    from core.langgraph import ArborSaver
    from core.store import open_store

    rows = []
    with tempfile.TemporaryDirectory(prefix="arbor-bench-langgraph-") as folder:
        store = open_store(Path(folder) / "arbor.db")
        try:
            rows += run("ArborSaver", ArborSaver(store), args.sizes, args.steps)
        finally:
            store.close()
        conn = sqlite3.connect(Path(folder) / "sqlitesaver.db", check_same_thread=False)
        try:
            # the durability arbor's store has: WAL, synced at checkpoints (a killed process
            # loses nothing; a power cut may lose the last commits)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            rows += run("SqliteSaver", SqliteSaver(conn), args.sizes, args.steps)
        finally:
            conn.close()

    print(f"\nput_writes + put + get_tuple per step ({args.steps} steps per size, one run)\n")
    print(f"{'saver':<12} {'checkpoints':>12} {'median ms':>10} {'p95 ms':>8} {'vs first':>9}")
    first: dict[str, float] = {}
    for name, size, median, p95, _filled in rows:
        base = first.setdefault(name, median)
        print(f"{name:<12} {size:>12,} {median:>10.2f} {p95:>8.2f} {median / base:>8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
