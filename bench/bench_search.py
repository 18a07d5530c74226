"""Search on a big store: what `/` costs per query, and what an upgrade of the index costs.

    python bench/make_big_store.py /tmp/big.db
    python bench/bench_search.py /tmp/big.db [--repo CHECKOUT] [--repeat 5] [--catch-up]
        [--typing] [--commands N]

Opens the store (an older store is migrated: the time of the open is printed, which is
how long the upgrade holds the store), optionally brings the search index up to date
(`--catch-up`: the batches the app's background indexer runs, timed one by one: each is a
write transaction, so the longest is the longest an agent's append may wait), then times
each query (median of `--repeat`, wall and CPU) through the calls the search screen makes:
session names, labels, message text. `--repo` imports `core` from another checkout (the
code before a change), so before and after run the same queries. `--typing`: search as
you type, key by key, as the app's `/` runs it. `--commands N`: the whole `arbor search
WORDS --json` command (a child process: start, open, search, print), N runs of each query,
with `--project` and `--source` too (issue 29: under 100 ms on the 1M-entry store).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

QUERIES = (
    ("common word", "handler"),
    ("in every entry", "the"),
    ("two words", "backoff retry"),
    ("word prefix", "hand"),
    ("stem of a word", "retries"),
    ("rare word", "99999"),
    ("exact phrase", '"cache is warm"'),
    ("no match", "migration"),
)
NAMES = (
    ("name, exact words", "Session 04242"),
    ("name, a typo", "Big sesion"),
    ("name, a word inside", "ession"),
)


def timed(call, repeat: int) -> tuple[float, float, object]:
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = call()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent),
                        help="the checkout whose core is measured (default: this one)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--typing", action="store_true",
                        help="also time search as you type, key by key (the app's `/`)")
    parser.add_argument("--commands", type=int, default=0, metavar="N",
                        help="also time the whole `arbor search --json` command, N runs a query")
    parser.add_argument("--catch-up", action="store_true",
                        help="index what the index does not cover yet, timing each batch")
    args = parser.parse_args()
    sys.path.insert(0, args.repo)
    from core import open_store

    started = time.perf_counter()
    store = open_store(args.store, create=False)
    print(f"open (with any migration): {(time.perf_counter() - started) * 1000:.0f} ms")
    print(f"search index covers: {store.search.coverage().describe()}")
    if args.catch_up:
        catch_up(store)

    print(f"\n{'query':<22}{'text':<20}{'hits':>6}{'wall ms':>10}{'CPU ms':>9}  first hit")
    for name, query in QUERIES:
        wall, cpu, hits = timed(lambda: store.search.messages(query, limit=200), args.repeat)
        first = hits[0].snippet[:40] if hits else ""
        print(f"{name:<22}{query:<20}{len(hits):>6}{wall:>10.1f}{cpu:>9.1f}  {first}")
    for name, query in NAMES:
        wall, cpu, found = timed(lambda: names(store, query), args.repeat)
        first = found[0].name[:40] if found else ""
        print(f"{name:<22}{query:<20}{len(found):>6}{wall:>10.1f}{cpu:>9.1f}  {first}")
    wall, cpu, found = timed(lambda: store.search.labels("idea"), args.repeat)
    print(f"{'labels':<22}{'idea':<20}{len(found):>6}{wall:>10.1f}{cpu:>9.1f}")
    if args.typing:
        typing(store, args.repeat)
    store.close()
    if args.commands:
        commands(args.store, args.repo, args.commands)


# `arbor search` as scripts and agents run it: (what, arguments)
COMMANDS = tuple((name, [query]) for name, query in QUERIES) + (
    ("a project (250 sessions)", ["handler", "--project", "project7"]),
    ("a project, phrase", ['"cache is warm"', "--project", "project7"]),
    ("a project, no match", ["migration", "--project", "project7"]),
    ("an agent (2,500 sessions)", ["handler", "--source", "codex"]),
    ("project and agent", ["retries", "--project", "project7", "--source", "claude_code"]),
)


def commands(store: str, repo: str, runs: int) -> None:
    """The whole command in a child process, `runs` times a query, the queries taking turns
    (so the machine's load falls on all alike): median and worst wall time, and the
    child's CPU time (user + system)."""
    import os
    import resource
    import subprocess

    env = {**os.environ, "PYTHONPATH": repo, "PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-m", "tui", "search", "--json", "--db", store]
    # (in the checkout measured: `python -m` puts the working folder first on the path)
    subprocess.run(argv + ["warm"], env=env, capture_output=True, cwd=repo)   # (bytecode cache)
    times: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in COMMANDS}
    for _ in range(runs):
        for name, words in COMMANDS:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(argv + words, env=env, capture_output=True, text=True, cwd=repo)
            wall = (time.perf_counter() - started) * 1000
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
            if done.returncode not in (0, 1):
                raise SystemExit(f"arbor search {' '.join(words)}: {done.stderr}")
            import json

            hits = len(json.loads(done.stdout)["hits"])
            times[name].append((wall, cpu, hits))
    print(f"\n`arbor search WORDS --json` on the store, whole command (ms, {runs} runs each)")
    print(f"{'query':<28}{'words':<42}{'hits':>5}{'median':>8}{'worst':>8}{'CPU':>7}")
    medians = []
    for name, words in COMMANDS:
        walls = [t[0] for t in times[name]]
        cpus = [t[1] for t in times[name]]
        medians.append(statistics.median(walls))
        print(f"{name:<28}{' '.join(words):<42}{times[name][0][2]:>5}"
              f"{statistics.median(walls):>8.0f}{max(walls):>8.0f}{statistics.median(cpus):>7.0f}")
    print(f"every query: median of medians {statistics.median(medians):.0f} ms, worst median "
          f"{max(medians):.0f} ms; load average {os.getloadavg()[0]:.1f}")


TYPED = ("handler", "backoff retry", "Session 0424", "the cache", "retries")


def typing(store, repeat: int) -> None:
    """`/` as a person types: each prefix of each query, as the search screen runs it at
    each key (core/store/live_search.py: names, labels, message text and coverage), timed
    from the key to the results; then a slow query stopped by the next key."""
    import threading

    from core.store.live_search import LiveSearch

    live = LiveSearch(store)
    print(f"\nsearch as you type (median of {repeat} per key; names, labels, messages, coverage)")
    print(f"{'typed':<18}{'names':>6}{'hits':>6}{'wall ms':>10}{'CPU ms':>9}")
    walls, cpus = [], []
    for text in TYPED:
        keys = [text[:end] for end in range(1, len(text) + 1) if not text[:end].endswith(" ")]
        runs: dict[str, list] = {typed: [] for typed in keys}
        for _ in range(repeat):
            # each time typed afresh, key after key, as on a screen just opened (whatever
            # a search keeps from one key to the next is only what typing these keys made)
            live.forget_names()
            live.run("warm up")   # (the names made ready, as when the screen opens)
            for typed in keys:
                runs[typed].append(timed(lambda: live.run(typed, quick=True), 1))
        for typed in keys:
            wall = statistics.median(r[0] for r in runs[typed])
            cpu = statistics.median(r[1] for r in runs[typed])
            found = runs[typed][-1][2]
            walls.append(wall)
            cpus.append(cpu)
            print(f"{typed:<18}{len(found.sessions):>6}{len(found.hits):>6}{wall:>10.1f}{cpu:>9.1f}")
    walls.sort()
    print(f"every key: median {statistics.median(walls):.1f} ms, 90th percentile "
          f"{walls[int(len(walls) * 0.9)]:.1f} ms, worst {walls[-1]:.1f} ms")
    cpus.sort()
    print(f"every key, CPU: median {statistics.median(cpus):.1f} ms, 90th percentile "
          f"{cpus[int(len(cpus) * 0.9)]:.1f} ms, worst {cpus[-1]:.1f} ms")
    # a stale query (a common word over every entry) stopped by the next key
    stopped = []
    for _ in range(repeat):
        outcome: list = []
        worker = threading.Thread(target=lambda: _catch(live, "th", outcome))
        worker.start()
        time.sleep(0.005)
        moment = time.perf_counter()
        live.stop()
        worker.join()
        stopped.append((time.perf_counter() - moment) * 1000)
    print(f"a running search stopped by the next key: median {statistics.median(stopped):.1f} ms"
          f" until its thread is free ({outcome[0] if outcome else '?'})")
    live.close()


def _catch(live, query: str, outcome: list) -> None:
    try:
        live.run(query)
        outcome.append("it had finished")
    except live.errors as error:
        outcome.append(f"stopped: {error}")


def names(store, query: str) -> list:
    """The first 50 sessions by name, as the search screen asks (before: all, then cut)."""
    try:
        return store.search.session_names(query, limit=50)
    except TypeError:
        return store.search.session_names(query)[:50]


def catch_up(store) -> None:
    batches, longest, started = [], 0.0, time.perf_counter()
    cpu = time.process_time()
    while True:
        moment = time.perf_counter()
        step = store.search.index_backlog()
        took = (time.perf_counter() - moment) * 1000
        if step.indexed == 0 and step.done:
            break
        batches.append((took, step.indexed, step.write_ms))
        longest = max(longest, step.write_ms)
        if step.done:
            break
    wall = time.perf_counter() - started
    entries = sum(b[1] for b in batches)
    print(f"catch-up: {entries:,} entries in {len(batches)} batches, {wall:.1f} s wall, "
          f"{time.process_time() - cpu:.1f} s CPU; write transaction: median "
          f"{statistics.median([b[2] for b in batches]) if batches else 0:.0f} ms, "
          f"longest {longest:.0f} ms")
    print(f"search index covers: {store.search.coverage().describe()}")


if __name__ == "__main__":
    main()
