"""Core store speed, side by side with the seed's pattern, in one run.

    python bench/bench_core.py [--depth 100000]

The seed's pattern (001_41213a324929fdaf.txt) opens a connection per call and stores a JSON
copy of the whole conversation per internal session; it is rebuilt here in a few lines so
both are measured on the same machine at the same moment.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import open_store  # noqa: E402
from core.actions import operations as ops  # noqa: E402


def message(i: int) -> dict:
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"message {i}: " + "lorem ipsum dolor sit amet " * 4}


def timed(fn, repeat: int) -> float:
    """Median milliseconds of `repeat` calls."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


class SeedPattern:
    """A connection per call and a JSON copy of the history per branch, as in the seed."""

    def __init__(self, path: Path):
        self.path = str(path)
        conn = sqlite3.connect(self.path)
        conn.execute("CREATE TABLE internal_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                     " external_session_id INTEGER, langgraph_session_id TEXT UNIQUE, state_data TEXT,"
                     " conversation_history TEXT, created_at TEXT, is_current INTEGER DEFAULT 0,"
                     " parent_session_id INTEGER, metadata TEXT)")
        conn.commit()
        conn.close()
        self.counter = 0

    def create(self, history: list, parent: int | None = None) -> int:
        self.counter += 1
        conn = sqlite3.connect(self.path)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("UPDATE internal_sessions SET is_current = 0 WHERE external_session_id = 1")
            cursor = conn.execute(
                "INSERT INTO internal_sessions (external_session_id, langgraph_session_id, state_data,"
                " conversation_history, created_at, is_current, parent_session_id, metadata)"
                " VALUES (1, ?, '{}', ?, '2026-01-01', 1, ?, NULL)",
                (f"lg{self.counter}", json.dumps(history), parent))
            conn.commit()
            return cursor.lastrowid
        finally:
            conn.close()

    def get_history(self, session_id: int) -> list:
        conn = sqlite3.connect(self.path)
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            row = conn.execute("SELECT conversation_history FROM internal_sessions WHERE id = ?",
                               (session_id,)).fetchone()
            return json.loads(row[0])
        finally:
            conn.close()

    def branch(self, session_id: int) -> int:
        return self.create(self.get_history(session_id), parent=session_id)


def file_size(store) -> int:
    busy = store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    assert not busy, "the WAL could not be checkpointed"
    # used pages, not the file size: FTS5 merges leave free pages that new rows would reuse
    conn = store.connection
    used = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    return used * conn.execute("PRAGMA page_size").fetchone()[0]


def naive_walk_last(store, head: int, count: int) -> list:
    """A plain recursive walk of the whole path (parent by parent), then the last `count`."""
    rows = store.connection.execute(
        "WITH RECURSIVE walk(seq, parent, n) AS ("
        " SELECT seq, parent_seq, 0 FROM entries WHERE seq = ?"
        " UNION ALL SELECT e.seq, e.parent_seq, walk.n + 1 FROM entries e JOIN walk ON e.seq = walk.parent)"
        " SELECT e.seq, e.data FROM walk JOIN entries e ON e.seq = walk.seq ORDER BY walk.n DESC",
        (head,)).fetchall()
    return [json.loads(data) for _, data in rows[-count:]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    deep, shallow, repeat = args.depth, 100, args.repeat
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-"))
    store = open_store(folder / "bench.db")
    rows: list[tuple[str, str, str, str]] = []

    # appending: one transaction for many, one transaction each
    ext = store.sessions.create("deep")
    main_branch = store.branches.create(ext.id, name="main")
    history = [message(i) for i in range(deep)]
    start = time.perf_counter()
    store.entries.append_messages(main_branch.id, history)
    bulk_rate = deep / (time.perf_counter() - start)
    rows.append(("append, one transaction", f"{bulk_rate:,.0f} msg/s", "", ">= 20,000 msg/s"))
    other_ext = store.sessions.create("one by one")
    other = store.branches.create(other_ext.id)
    start = time.perf_counter()
    for i in range(1000):
        store.entries.append_to_branch(other.id, "message", {"message": message(i)})
    single_rate = 1000 / (time.perf_counter() - start)
    rows.append(("append, a transaction each", f"{single_rate:,.0f} msg/s", "", ">= 1,000 msg/s"))

    small_ext = store.sessions.create("shallow")
    small = store.branches.create(small_ext.id)
    store.entries.append_messages(small.id, history[:shallow])
    deep_head = store.branches.get(main_branch.id).head_seq
    shallow_head = store.branches.get(small.id).head_seq
    deep_rollback_to = store.paths.at_depth(deep_head, deep - 10)
    shallow_rollback_to = store.paths.at_depth(shallow_head, shallow - 10)

    # branch and rollback, O(1) in depth
    t_branch_deep = timed(lambda: ops.branch(store, main_branch.id), repeat)
    t_branch_shallow = timed(lambda: ops.branch(store, small.id), repeat)
    t_roll_deep = timed(lambda: ops.rollback(store, main_branch.id, entry_id=deep_rollback_to), repeat)
    t_roll_shallow = timed(lambda: ops.rollback(store, small.id, entry_id=shallow_rollback_to), repeat)

    seed = SeedPattern(folder / "seed.db")
    seed_deep = seed.create(history)
    seed_small = seed.create(history[:shallow])
    seed_before = os.path.getsize(seed.path)
    t_seed_deep = timed(lambda: seed.branch(seed_deep), max(3, repeat // 10))
    seed_growth = (os.path.getsize(seed.path) - seed_before) / max(3, repeat // 10)
    t_seed_shallow = timed(lambda: seed.branch(seed_small), repeat)

    rows.append((f"branch at depth {deep:,}", f"{t_branch_deep:.2f} ms", f"{t_seed_deep:.1f} ms", "<= 5 ms"))
    rows.append((f"branch at depth {shallow}", f"{t_branch_shallow:.2f} ms", f"{t_seed_shallow:.2f} ms", ""))
    rows.append((f"  ratio depth {deep:,} / {shallow}", f"{t_branch_deep / t_branch_shallow:.2f} x",
                 f"{t_seed_deep / t_seed_shallow:.0f} x", "<= 2 x"))
    rows.append((f"rollback at depth {deep:,}", f"{t_roll_deep:.2f} ms", "", "<= 5 ms"))
    rows.append((f"rollback at depth {shallow}", f"{t_roll_shallow:.2f} ms", "", ""))
    rows.append((f"  ratio depth {deep:,} / {shallow}", f"{t_roll_deep / t_roll_shallow:.2f} x", "", "<= 2 x"))

    # file growth per branch
    before = file_size(store)
    for _ in range(200):
        ops.branch(store, main_branch.id)
    growth = (file_size(store) - before) / 200
    rows.append(("file growth per branch", f"{growth:,.0f} B", f"{seed_growth / 1e6:,.1f} MB", "< 1 KB"))

    # the last 200 messages of the deep branch
    def window():
        store._segments_cache.clear()
        return store.paths.entries(deep_head, deep - 200, deep)
    assert [e.message["content"] for e in window()] == [m["content"] for m in history[-200:]]
    t_window = timed(window, repeat)
    t_walk = timed(lambda: naive_walk_last(store, deep_head, 200), 3)
    t_seed_window = timed(lambda: seed.get_history(seed_deep)[-200:], 3)
    rows.append((f"last 200 of {deep:,} (cold)", f"{t_window:.2f} ms",
                 f"walk {t_walk:.0f} ms / seed {t_seed_window:.0f} ms", "<= 20 ms"))
    t_first = timed(lambda: store.paths.entries(deep_head, 0, 200), repeat)
    rows.append((f"first 200 of {deep:,}", f"{t_first:.2f} ms", "", ""))

    widths = [max(len(r[i]) for r in rows + [("measure", "arbor", "seed pattern / naive", "target")])
              for i in range(4)]
    header = ("measure", "arbor", "seed pattern / naive", "target")
    print(f"arbor core benchmark (depth {deep:,}, median of {repeat}; sqlite {sqlite3.sqlite_version})")
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    store.close()


if __name__ == "__main__":
    main()
