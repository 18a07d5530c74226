"""Live follow (core.importing.follow): how long a check of unchanged files takes, and how long from
an agent's append to the entry in the store, in one run.

    python bench/bench_follow.py [--files 3000] [--appends 40]

1. 3,000 imported Claude Code / Codex / pi files (a few lines each, in the agents' own
   folders), then `Follower.catch_up()` with nothing changed: the check a follower makes
   when it starts (and the one polling makes): one stat per file, no file opened. Also the
   StatPoller's pass over the same tree (what polling costs every half second).
2. A follower running (notify, then polling): an agent appends a line every 100 ms; the
   time from the write to the entry in the store, median and worst.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from agent_writers import ClaudeWriter, CodexWriter, PiWriter  # noqa: E402
from core import open_store  # noqa: E402
from core.importing.follow import Follower, StatPoller  # noqa: E402
from core.importing import import_paths  # noqa: E402


def make_tree(home: Path, count: int) -> list[Path]:
    files = []
    for i in range(count):
        kind = i % 3
        uid = f"{i:08x}-0000-4000-8000-{i:012x}"
        if kind == 0:
            w = ClaudeWriter(home / ".claude" / "projects" / f"-work-p{i % 40}" / f"{uid}.jsonl", uid)
        elif kind == 1:
            w = CodexWriter(home / ".codex" / "sessions" / "2026" / "11" / f"{i % 28 + 1:02d}" /
                            f"rollout-2026-11-01T00-00-00-{uid}.jsonl", uid)
        else:
            w = PiWriter(home / ".pi" / "agent" / "sessions" / f"--work-p{i % 40}--" /
                         f"2026-11-01T00-00-00-000Z_{uid}.jsonl", uid)
        w.start(f"session {i}")
        w.append("assistant", f"reply {i}")
        files.append(w.path)
    return files


def check_unchanged(home: Path, store, repeat: int = 5) -> tuple[float, float]:
    follower = Follower(store, home=home)
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        report = follower.catch_up()
        samples.append((time.perf_counter() - started) * 1000)
        assert report is None, "something was imported although nothing changed"
    roots = [r.path for r in follower.roots()]
    poll = []
    poller = StatPoller(roots, True, 500, follower._is_log)
    for _ in range(repeat):
        started = time.perf_counter()
        poller.snapshot()
        poll.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), statistics.median(poll)


def latency(home: Path, store, appends: int, poll: bool) -> list[float]:
    writer = ClaudeWriter(home / ".claude" / "projects" / "-work-live" /
                          ("live-poll.jsonl" if poll else "live-notify.jsonl"),
                          "11111111-2222-4333-8444-55555555555" + ("6" if poll else "7"))
    writer.start("live session")
    import_paths(store, [writer.path])
    seen: dict[int, float] = {}
    arrived = threading.Event()

    def on_import(_report) -> None:
        seen[len(seen)] = time.perf_counter()
        arrived.set()

    follower = Follower(store, home=home, poll=poll, on_import=on_import)
    stop = threading.Event()
    thread = threading.Thread(target=follower.run, args=(stop,), daemon=True)
    thread.start()
    while follower.stats.mode not in ("notify", "polling"):
        time.sleep(0.05)
    time.sleep(1.5)
    out = []
    for n in range(appends):
        arrived.clear()
        started = time.perf_counter()
        writer.append("assistant" if n % 2 else "user", f"live line {n}")
        if not arrived.wait(10):
            raise SystemExit(f"line {n} was not imported in 10 s ({follower.stats})")
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(0.1)
    stop.set()
    thread.join(5)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--appends", type=int, default=40)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-follow-"))
    home = folder / "home"
    started = time.perf_counter()
    files = make_tree(home, args.files)
    store = open_store(folder / "bench.db")
    import_paths(store, files)
    print(f"setup: {len(files):,} files imported in {time.perf_counter() - started:.1f} s")
    check_ms, poll_ms = check_unchanged(home, store)
    notify = latency(home, store, args.appends, poll=False)
    polling = latency(home, store, args.appends, poll=True)
    print()
    print(f"{'what':<52} {'median':>10} {'worst':>10}")
    print(f"{'check of ' + format(len(files), ',') + ' unchanged files (catch_up)':<52} "
          f"{check_ms:>8.1f}ms {'':>10}")
    print(f"{'one polling pass over them (StatPoller.snapshot)':<52} {poll_ms:>8.1f}ms {'':>10}")
    print(f"{'append -> in the store, notify (inotify)':<52} "
          f"{statistics.median(notify):>8.1f}ms {max(notify):>8.1f}ms")
    print(f"{'append -> in the store, polling (500 ms)':<52} "
          f"{statistics.median(polling):>8.1f}ms {max(polling):>8.1f}ms")
    store.close()


if __name__ == "__main__":
    main()
