"""Comparing two branches when one side is long: what opening costs, and reading it all.

One session: 1,000 shared messages, then side A of 100,000 messages (a third of them
replies with a tool call: Edit, Write, bash, apply_patch over 500 files) and side B of
2,000. Measured, in one run:

1. `core.history.branch_compare.compare` (what the screen shows at once: where they part, counts,
   usage, first ask and last reply): median of 5;
2. `scan_side` over side A (its tool calls and files, read a window of replies at a time);
3. the app: from `enter` in the branch picker to the compare screen showing both sides'
   figures, and to the files and tools of both being filled in.

Wall time, and the process's CPU time beside it (on a loaded machine the wall time is
mostly waiting for a core).

    .venv/bin/python bench/bench_compare.py [--messages 100000] [--db /tmp/compare-bench.db] [--reuse]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from core import open_store  # noqa: E402
from core.actions import operations as ops  # noqa: E402
from core.history.branch_compare import compare, scan_side  # noqa: E402

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _call(i: int) -> tuple[str, dict]:
    path = f"src/module_{i % 500}.py"
    kind = i % 4
    if kind == 0:
        return "Edit", {"file_path": path, "old_string": f"x = {i}\ny = 1", "new_string": f"x = {i + 1}\ny = 2\nz = 3"}
    if kind == 1:
        return "Write", {"file_path": path, "content": "a\nb\nc\n"}
    if kind == 2:
        return "bash", {"command": f"pytest -q tests/test_{i % 50}.py > out_{i % 7}.log 2>&1"}
    return "apply_patch", {"input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-old {i}\n+new {i}\n*** End Patch"}


def messages(count: int, tag: str) -> list[dict]:
    out = []
    for i in range(count):
        kind = i % 3
        if kind == 0:
            out.append({"role": "user", "content": f"{tag} step {i}: go on with the next module"})
        elif kind == 1:
            name, args = _call(i)
            out.append({"role": "assistant", "model": "claude-sonnet-4-5", "provider": "anthropic",
                        "usage": {"input": 1200, "output": 80},
                        "content": [{"type": "text", "text": f"{tag} {i}: changing the next file."},
                                    {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}]})
        else:
            out.append({"role": "toolResult", "toolCallId": f"c{i - 1}", "toolName": "x",
                        "content": [{"type": "text", "text": f"ok {i}\n" + "output line\n" * 5}]})
    return out


def build(path: Path, long_side: int) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    store = open_store(path, clock=lambda: START)
    with store.transaction():
        session = store.sessions.create("compare bench")
        main = store.branches.create(session.id, name="long attempt")
        store.entries.append_messages(main.id, messages(1000, "shared"))
        fork = store.branches.get(main.id).head_seq
        other = ops.branch(store, main.id, fork, name="short attempt")
        for low in range(0, long_side, 20_000):
            store.entries.append_messages(main.id, messages(min(20_000, long_side - low), "A"))
        store.entries.append_messages(other.id, messages(2000, "B"))
    store.close()


def branches(store):
    session = store.sessions.list()[0]
    found = {b.name: b for b in store.branches.of_session(session.id)}
    return found["long attempt"], found["short attempt"]


async def in_the_app(path: Path) -> tuple[float, float, float]:
    from tui.app import ArborApp
    from tui.components.compare_screen import CompareScreen
    from tui.headless import settle

    # the moment the figures reach the screen, taken where they do (the pilot's own loop
    # may look later, while the worker reading the sides holds the interpreter)
    loaded: list[float] = []
    original = CompareScreen._loaded

    def timed(screen, *args):
        original(screen, *args)
        loaded.append(time.perf_counter())

    CompareScreen._loaded = timed
    app = ArborApp(open_store(path, create=False), poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        long_branch = next(i for i, row in enumerate(app.branches_pane.rows)
                           if row.branch.name == "long attempt")
        app.branches_pane.move_cursor(long_branch)
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        started, cpu_started = time.perf_counter(), time.process_time()
        await pilot.press("enter")
        filled = None
        while filled is None:
            screen = app.screen
            if isinstance(screen, CompareScreen) and not screen.busy:
                filled = time.perf_counter() - started
                cpu = time.process_time() - cpu_started
            await pilot.pause(0.005)
    CompareScreen._loaded = original
    return loaded[0] - started, filled, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/compare-bench.db"))
    parser.add_argument("--reuse", action="store_true", help="use the store --db holds")
    options = parser.parse_args()
    began = time.perf_counter()
    if not (options.reuse and options.db.exists()):
        build(options.db, options.messages)
    print(f"store ready in {time.perf_counter() - began:.1f} s: 1,000 shared messages, "
          f"side A {options.messages:,}, side B 2,000", flush=True)
    store = open_store(options.db, create=False)
    a, b = branches(store)
    times, cpu = [], []
    for _ in range(5):
        started, cpu_started = time.perf_counter(), time.process_time()
        found = compare(store, a, b)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    started, cpu_started = time.perf_counter(), time.process_time()
    for _ in scan_side(store, found.a):
        pass
    scanned, scanned_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert found.a.counts.messages == options.messages and found.a.work.done
    store.close()
    shown, filled, app_cpu = asyncio.run(in_the_app(options.db))
    rows = [
        ("compare() (counts, usage, first ask, last reply), median of 5", statistics.median(times),
         statistics.median(cpu)),
        (f"scan_side over side A ({found.a.work.read:,} replies, "
         f"{found.a.work.call_count:,} tool calls, {len(found.a.work.files):,} files)", scanned,
         scanned_cpu),
        ("app: enter in the picker -> both sides' figures shown", shown, None),
        ("app: enter in the picker -> files and tools of both sides filled in", filled, app_cpu),
    ]
    width = max(len(row[0]) for row in rows)
    print(f"{'what':<{width}}  {'wall ms':>9}  {'CPU ms':>9}")
    for name, seconds, cpu_seconds in rows:
        cpu_text = f"{cpu_seconds * 1000:9.1f}" if cpu_seconds is not None else f"{'':9}"
        print(f"{name:<{width}}  {seconds * 1000:9.1f}  {cpu_text}")


if __name__ == "__main__":
    main()
