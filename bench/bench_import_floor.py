"""Benchmark: arbor's cold import next to the least a store of the same tree costs, and to
ccusage, all measured in one run.

    .venv/bin/python bench/bench_import_floor.py [--mb 100] [--cache /tmp/arbor-bench-trees]
        [--ccusage PATH] [--repeat 3] [--unsafe] [--also CHECKOUT]

Issue 29 asks a cold import to take at most 4x what ccusage takes to read the same tree and
at most 1.5x arbor's own SQLite floor, measured in the same run (the machine is shared: a
floor from another run is measured at another load). Each round runs, one after the other
in child processes: the parse-only floor (orjson over every line), ccusage, `arbor import
--discover` into a new store, and the two parts of the floor: SQLite writing the tree's
lines (their own bytes, as they are, not converted) into a table with the four indexes
arbor's `entries` has, a transaction about every 0.1 s as an import commits; and SQLite's
FTS5 indexing the text an import gives the search index (core.model.entries.search_text of
each entry, read from a store made once by importing the tree), with the store's own index
definition, committing as often. Whatever arbor does on top of these two, an import costs
at least their sum of CPU, and on one SQLite file they run one after the other (one writer):
their sum is the floor the import is compared with.

arbor's CPU is also given split between the importing process (which alone writes the
store) and its worker processes (which read and convert the logs), with the least wall time
these allow on idle cores: the larger of the importing process's CPU and all the CPU spread
over every core.

With --also, the arbor of another checkout (one from before a change) is measured too, in
each round right after this one's, against the same floor.

With --unsafe each SQLite part also runs with synchronous=OFF (a power cut can then corrupt
the file) and with no journal at all (no reader may share the file, and a crash corrupts
it): not settings a store may use; they show how much of the time is the durability the
store needs.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import bench_import  # noqa: E402
from bench_import import FLOOR, Run, arbor, find_tool, python_env, table, tree  # noqa: E402

INSERT = r"""
import os, sys, time, sqlite3
root, db = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute(f"PRAGMA journal_mode = {sys.argv[3]}")
conn.execute(f"PRAGMA synchronous = {sys.argv[4]}")
conn.execute("PRAGMA wal_autocheckpoint = 4096")   # 16 MiB, as a store
conn.execute("CREATE TABLE entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, session INTEGER,"
             " id TEXT, parent_seq INTEGER, type TEXT, timestamp TEXT, depth INTEGER,"
             " chain INTEGER, msg_index INTEGER, role TEXT, data TEXT, UNIQUE (session, id))")
conn.execute("CREATE INDEX p ON entries(parent_seq)")
conn.execute("CREATE INDEX c ON entries(chain, depth)")
conn.execute("CREATE INDEX u ON entries(session, seq) WHERE role = 'user'")
rows, seq, last = [], 0, time.monotonic()
conn.execute("BEGIN IMMEDIATE")
session = 0
for folder, _dirs, files in os.walk(root):
    for name in sorted(files):
        if not name.endswith(".jsonl"):
            continue
        session += 1
        with open(os.path.join(folder, name), "rb") as handle:
            for line in handle:
                line = line.rstrip(b"\n")
                if not line:
                    continue
                seq += 1
                rows.append((seq, session, str(seq), seq - 1 or None, "message",
                             "2026-01-01T00:00:00.000000+00:00", seq, seq, seq,
                             "user" if seq % 9 == 0 else None, line.decode("utf-8", "replace")))
                if len(rows) >= 256:
                    conn.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
                    rows.clear()
                    if time.monotonic() - last >= 0.1:
                        conn.execute("COMMIT"); conn.execute("BEGIN IMMEDIATE")
                        last = time.monotonic()
conn.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows)
conn.execute("COMMIT")
conn.close()
print(seq)
"""

# (journal_mode, synchronous) of each SQLite run: arbor's, then two a store must not use.
ARBOR_SETTINGS = "arbor's settings"
SETTINGS = {ARBOR_SETTINGS: ("WAL", "NORMAL"), "synchronous=OFF (unsafe)": ("WAL", "OFF"),
            "no journal (unsafe)": ("OFF", "OFF")}

INDEX = r"""
import sys, time, sqlite3
texts, db = sys.argv[1], sys.argv[2]
source = sqlite3.connect(texts)
conn = sqlite3.connect(db, isolation_level=None)
conn.execute(f"PRAGMA journal_mode = {sys.argv[3]}")
conn.execute(f"PRAGMA synchronous = {sys.argv[4]}")
conn.execute("PRAGMA wal_autocheckpoint = 4096")   # 16 MiB, as a store
conn.execute(sys.argv[5])   # the store's own CREATE of its index (core/store/sqlite/search_index.py)
last = time.monotonic()
conn.execute("BEGIN IMMEDIATE")
batch = []
for row in source.execute("SELECT seq, text FROM texts ORDER BY seq"):
    batch.append(row)
    if len(batch) >= 256:
        conn.executemany("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)", batch)
        batch.clear()
        if time.monotonic() - last >= 0.1:
            conn.execute("COMMIT"); conn.execute("BEGIN IMMEDIATE")
            last = time.monotonic()
conn.executemany("INSERT INTO entries_fts(rowid, text) VALUES (?, ?)", batch)
conn.execute("COMMIT")
conn.close()
"""

TEXTS = r"""
import sys, sqlite3
sys.path.insert(0, sys.argv[3])
from pathlib import Path
from core import open_store
from core.model.entries import search_text
from core.util.fastjson import loads
from core.importing import discover, import_paths
store = open_store(sys.argv[1])
import_paths(store, discover(Path(sys.argv[2])))
out = sqlite3.connect(sys.argv[4])
out.execute("CREATE TABLE texts (seq INTEGER PRIMARY KEY, text TEXT)")
rows = []
for seq, kind, data in store.connection.execute("SELECT seq, type, data FROM entries"):
    text = search_text(kind, loads(data.encode() if isinstance(data, str) else data))
    if text:
        rows.append((seq, text))
out.executemany("INSERT INTO texts VALUES (?, ?)", rows)
out.commit()
print(sum(len(t) for _s, t in rows))
"""


# `arbor import` run as itself (`python -m tui ...`), saying at exit the CPU of its own
# process and of its worker processes: which one the wall time waits for.
SPLIT = r"""
import os, resource, runpy, sys
sys.argv = ["tui", *sys.argv[1:]]
try:
    runpy.run_module("tui", run_name="__main__", alter_sys=True)
finally:
    own, workers = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    sys.stderr.write(f"\ncpu-split {own.ru_utime + own.ru_stime} {workers.ru_utime + workers.ru_stime}\n")
"""


def _split(argv: list[str]) -> list[str]:
    """`python -m tui ARGS` as the same command through SPLIT."""
    assert argv[1:3] == ["-m", "tui"], argv
    return [argv[0], "-c", SPLIT, *argv[3:]]


def _cpu_split(run: Run) -> tuple[float, float]:
    """(the importing process's CPU, its workers') of a run made through SPLIT."""
    for line in reversed(run.err.splitlines()):
        if line.startswith("cpu-split "):
            own, workers = line.split()[1:3]
            return float(own), float(workers)
    return float("nan"), float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", default="/tmp/arbor-bench-trees")
    parser.add_argument("--ccusage")
    parser.add_argument("--also", metavar="CHECKOUT",
                        help="also the arbor of this checkout, in the same rounds")
    parser.add_argument("--unsafe", action="store_true",
                        help="also the SQLite parts with settings a store must not use")
    args = parser.parse_args(argv)
    root, facts = tree(Path(args.cache), args.mb)
    projects = root / ".claude" / "projects"
    ccusage = find_tool(args.ccusage, "ccusage", ["/tmp/engine-npm/node_modules/.bin/ccusage"])
    work = Path(tempfile.mkdtemp(prefix="arbor-floor-"))
    atexit.register(shutil.rmtree, work, True)   # (the stores made: GBs for 1 GB of logs)
    texts = work / "texts.db"
    made = Run([sys.executable, "-c", TEXTS, str(work / "store.db"), str(root), str(REPO),
                str(texts)], env=python_env()).check("the search texts")
    chars = int(made.out.strip())
    sys.path.insert(0, str(REPO))
    from core.store.sqlite.search_index import CREATE

    runs: dict[str, list[Run]] = {"floor": [], "ccusage": [], "arbor": []}
    if args.also:
        runs["also"] = []
    runs.update({f"{key} {mode}": [] for key in ("insert", "index") for mode in SETTINGS})
    for _ in range(args.repeat):   # (each round runs everything: the load falls on all)
        runs["floor"].append(Run([sys.executable, "-c", FLOOR, str(projects)],
                                 env=python_env()).check("parse floor"))
        if ccusage:
            runs["ccusage"].append(Run([ccusage, "claude", "daily", "--offline", "--json"],
                                       env={"CLAUDE_CONFIG_DIR": str(root / ".claude"),
                                            "HOME": str(root)}).check("ccusage"))
        argv, env = arbor("--discover", "--db", str(bench_import.fresh_db(work, "arbor.db")),
                          home=root)
        runs["arbor"].append(Run(_split(argv), env=env).check("arbor import"))
        if args.also:
            here, bench_import.ARBOR = bench_import.ARBOR, Path(args.also).resolve()
            try:
                argv, env = arbor("--discover", "--db",
                                  str(bench_import.fresh_db(work, "arbor.db")), home=root)
                runs["also"].append(Run(_split(argv), env=env).check(
                    f"arbor import ({args.also})"))
            finally:
                bench_import.ARBOR = here
        for key, script, source in (("insert", INSERT, projects), ("index", INDEX, texts)):
            for mode, pragmas in SETTINGS.items():
                if mode != ARBOR_SETTINGS and not args.unsafe:
                    continue
                db = bench_import.fresh_db(work, f"{key}.db")
                runs[f"{key} {mode}"].append(Run([sys.executable, "-c", script, str(source),
                                                  str(db), *pragmas, CREATE],
                                                 env=python_env()).check(key))
    base = statistics.median([r.wall for r in runs["ccusage"]]) if runs["ccusage"] else None
    base_cpu = statistics.median([r.cpu for r in runs["ccusage"]]) if runs["ccusage"] else None
    names = {"floor": "parse-only floor (orjson, 1 core)", "ccusage": "ccusage 20 --offline",
             "arbor": "arbor import --discover (new store)",
             "also": f"the same, the arbor of {args.also}"}
    for mode in SETTINGS:
        names[f"insert {mode}"] = f"SQLite: the lines into an indexed table, {mode}"
        names[f"index {mode}"] = f"SQLite FTS5: {chars / 1e6:.1f} M characters of text, {mode}"
    rows = []
    for key, found in runs.items():
        if not found:
            if key.startswith(("insert", "index")):
                continue   # (an unsafe setting, not asked for)
            rows.append((names[key], "not installed", "", "", ""))
            continue
        wall = statistics.median([r.wall for r in found])
        cpu = statistics.median([r.cpu for r in found])
        rows.append((names[key], f"{wall:.2f}", f"{cpu:.2f}",
                     f"{wall / base:.2f}x" if base else "—", f"{cpu / base_cpu:.2f}x" if base else "—"))
    floor_wall = sum(statistics.median([r.wall for r in runs[f"{k} {ARBOR_SETTINGS}"]])
                     for k in ("insert", "index"))
    floor_cpu = sum(statistics.median([r.cpu for r in runs[f"{k} {ARBOR_SETTINGS}"]])
                    for k in ("insert", "index"))
    rows.append((f"arbor's SQLite floor: the two parts one after the other, {ARBOR_SETTINGS}",
                 f"{floor_wall:.2f}", f"{floor_cpu:.2f}",
                 f"{floor_wall / base:.2f}x" if base else "—",
                 f"{floor_cpu / base_cpu:.2f}x" if base else "—"))
    if base:
        rows.append(("issue 29's target for the whole import (4x ccusage)", f"{4 * base:.2f}", "",
                     "4.00x", ""))
    arbor_wall = statistics.median([r.wall for r in runs["arbor"]])
    arbor_cpu = statistics.median([r.cpu for r in runs["arbor"]])
    peak = max(max(r.rss, r.tree_rss) for r in runs["arbor"])
    table(f"Floors of a cold import of {facts['bytes'] / 1048576:.0f} MB, {facts['files']} files,"
          f" {facts['lines']:,} lines (median of {args.repeat})",
          ("", "wall s", "CPU s", "wall vs ccusage", "CPU vs ccusage"), rows)
    print(f"\narbor's import against its SQLite floor, same run: {arbor_wall / floor_wall:.2f}x wall,"
          f" {arbor_cpu / floor_cpu:.2f}x CPU (issue 29's target: 1.5x); peak memory {peak:.0f} MB"
          " (target: under 300 MB)")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for key in ("arbor", "also"):
        if not runs.get(key):
            continue
        own = statistics.median([_cpu_split(r)[0] for r in runs[key]])
        workers = statistics.median([_cpu_split(r)[1] for r in runs[key]])
        # the wall time can be no shorter than the importing process's CPU (it writes the
        # store: SQLite has one writer) nor than all the CPU spread over every core
        least = max(own, (own + workers) / (cores or 1))
        print(f"{'arbor' if key == 'arbor' else 'the arbor of ' + str(args.also)}: the importing"
              f" process {own:.2f} s of CPU ({own / floor_cpu:.2f}x the floor's), its workers"
              f" {workers:.2f} s; on {cores} idle cores its wall time could be no less than"
              f" {least:.2f} s ({least / floor_cpu:.2f}x the floor's CPU, the least the floor's"
              " wall time could be)")
    if args.also:
        also_wall = statistics.median([r.wall for r in runs["also"]])
        also_cpu = statistics.median([r.cpu for r in runs["also"]])
        also_peak = max(max(r.rss, r.tree_rss) for r in runs["also"])
        print(f"the arbor of {args.also}, same run: {also_wall / floor_wall:.2f}x wall,"
              f" {also_cpu / floor_cpu:.2f}x CPU; peak memory {also_peak:.0f} MB")
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
          f"ccusage: {ccusage or 'absent'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
