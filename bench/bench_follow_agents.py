"""Live follow, per agent: from an agent's write to the entry in the store, with the
follower running as the app runs it (core.importing.follow defaults: notify, 150 ms debounce).

    python bench/bench_follow_agents.py [--appends 8] [--agent copilot ...]

For every registered agent (the 11 formats), its conformance fixtures (files the agent
itself wrote, tests/test_agent_conformance.py) are laid out in a temp home with its main
log cut in half: a JSONL log to its first half of lines, a database (opencode's,
LangGraph's) to its first half of rows, imported. A follower runs on the home; the rest is written back as the agent writes it, one piece at a time:
a JSONL line appended (and flushed), or a database's next message or checkpoint with its
parts or writes inserted in one transaction through SQLite. For each piece that adds
entries (the count a whole import of the file up to that piece gives, measured first),
the time from the write to the first new entry in the store (read on a connection of its
own, every 5 ms) is recorded. Median and worst per agent; the follow's end is compared
with a whole import of the file.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from core import open_store  # noqa: E402
from core.agents import registry  # noqa: E402
from core.importing import import_paths  # noqa: E402
from core.importing.follow import Follower  # noqa: E402
from test_agent_conformance import DatabaseFeed, entry_count, logs, place  # noqa: E402

DEADLINE = 20.0


class JsonlFeed:
    """The main log's lines: the first `cut` written, the rest appended one by one."""

    def __init__(self, path: Path):
        self.path = path
        self.pieces = path.read_bytes().splitlines(keepends=True)

    def write_prefix(self, target: Path, k: int) -> None:
        target.write_bytes(b"".join(self.pieces[:k]))

    def append(self, target: Path, k: int) -> None:
        with open(target, "ab") as out:
            out.write(self.pieces[k - 1])
            out.flush()


def lay_out(source: str, work: Path):
    """The fixtures in `work/staged`, and (main log, its feed, the other files)."""
    staged = work / "staged"
    files = place(staged, source)
    agent = registry.get(source)
    if agent.database is not None:
        main = next(f for f in files if f.suffix in (".db", ".sqlite"))
        feed = DatabaseFeed(main, source)
    else:
        main = max(logs(files, source), key=lambda f: f.stat().st_size)
        feed = JsonlFeed(main)
    return staged, main, feed, [f for f in files if f != main]


def expected_counts(staged: Path, main: Path, feed, others, ks, work: Path) -> dict[int, int]:
    out = {}
    for k in ks:
        scratch = work / f"prefix-{k}"
        target = scratch / main.relative_to(staged)
        for other in others:
            copy = scratch / other.relative_to(staged)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(other, copy)
        target.parent.mkdir(parents=True, exist_ok=True)
        feed.write_prefix(target, k)
        store = open_store(work / f"prefix-{k}.db")
        try:
            import_paths(store, [scratch])
            out[k] = entry_count(store)
        finally:
            store.close()
        shutil.rmtree(scratch)
    return out


def bench_agent(source: str, appends: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix=f"follow-{source}-") as tmp:
        work = Path(tmp)
        staged, main, feed, others = lay_out(source, work)
        n = len(feed.pieces)
        cut = max(1, n // 2)
        counts = expected_counts(staged, main, feed, others, range(cut, n + 1), work)
        measured = [k for k in range(cut + 1, n + 1) if counts[k] > counts[k - 1]][:appends]
        home = work / "home"
        for other in others:
            copy = home / other.relative_to(staged)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(other, copy)
        live = home / main.relative_to(staged)
        live.parent.mkdir(parents=True, exist_ok=True)
        feed.write_prefix(live, cut)
        store = open_store(work / "arbor.db")
        import_paths(store, [home])        # (imported before, as the app has)
        reader = open_store(work / "arbor.db")
        follower = Follower(store, places=[home], discover=False)
        stop = threading.Event()
        thread = threading.Thread(target=follower.run, args=(stop,), daemon=True)
        thread.start()
        samples = []
        try:
            wait(lambda: entry_count(reader) == counts[cut])
            last = cut
            for k in measured:
                for j in range(last + 1, k):        # pieces that add nothing, written first
                    feed.append(live, j)
                if k - 1 > last:
                    time.sleep(0.5)
                before = entry_count(reader)
                started = time.perf_counter()
                feed.append(live, k)
                wait(lambda: entry_count(reader) > before, poll=0.005)
                samples.append((time.perf_counter() - started) * 1000)
                last = k
                time.sleep(0.3)       # (the agent thinks between two writes)
            for j in range(last + 1, n + 1):
                feed.append(live, j)
            try:
                wait(lambda: entry_count(reader) == counts[n], poll=0.05, deadline=5)
                same = True
            except TimeoutError:
                same = False
        finally:
            stop.set()
            thread.join(10)
            final = entry_count(reader)
            reader.close()
            store.close()
        if not same:
            print(f"  ({registry.title(source)}: followed to the end, {final} entries; a whole "
                  f"import of the same file makes {counts[n]})", flush=True)
        return samples


def wait(condition, poll: float = 0.02, deadline: float = DEADLINE) -> None:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > deadline:
            raise TimeoutError("not followed within %.0f s" % deadline)
        time.sleep(poll)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--appends", type=int, default=8, help="writes measured per agent")
    parser.add_argument("--agent", action="append", help="only these (source keys)")
    args = parser.parse_args()
    chosen = args.agent or [a.source for a in registry.agents()]
    print(f"{'agent':<14} {'writes':>6} {'median ms':>10} {'worst ms':>9}")
    worst_all = 0.0
    for source in chosen:
        try:
            samples = bench_agent(source, args.appends)
        except TimeoutError as error:
            print(f"{registry.title(source):<14} {'-':>6} {str(error):>20}")
            worst_all = float("inf")
            continue
        worst = max(samples) if samples else float("nan")
        worst_all = max(worst_all, worst)
        median = statistics.median(samples) if samples else float("nan")
        print(f"{registry.title(source):<14} {len(samples):>6} {median:>10.0f} {worst:>9.0f}",
              flush=True)
    print(f"\nworst of all: {worst_all:.0f} ms (target: under 1000 ms)")
    return 0 if worst_all < 1000 else 1


if __name__ == "__main__":
    raise SystemExit(main())
