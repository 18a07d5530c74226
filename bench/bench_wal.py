"""What one append writes: WAL bytes and pages per appended message, and which tables and
indexes those pages belong to, for the store as it was (schema 3, 16 KiB pages) and as it
is (schema 4; 16 KiB pages for stores made meanwhile, 4 KiB for new ones), in one run.

    .venv/bin/python bench/bench_wal.py [--appends 40] [--import-mb 10] [--repeat 2]

Each variant builds the same store (30 sessions of 300 messages, then the session an
agent appends to), empties the WAL, and appends short messages (about 40 bytes) one
transaction each, as `SessionManager.append_message` does. The WAL's growth is read with
`os.stat`. Which b-tree each written page belongs to comes from the WAL's frame headers,
read by a child process that never opens the database with SQLite (SQLite's locks are
per process, so its reading cannot drop anyone's), and from SQLite's `dbstat` table.

--import-mb: also import a generated Claude Code tree of that many MB into stores of each
page size (child processes, alternating, median of --repeat), since page size is a trade
between appends and imports.
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
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core import open_store  # noqa: E402

# the indexes schema 3 had and schema 4 does not (put back for the "before" variant)
SCHEMA_3_INDEXES = (
    "CREATE INDEX idx_entries_first_user ON entries(external_session_id, seq) WHERE role = 'user'",
    "DROP INDEX idx_external_sessions_cwd",
    "CREATE INDEX idx_external_sessions_cwd ON external_sessions(cwd, updated_at)",
)
VARIANTS = (
    ("before: schema 3, 16 KiB pages", 16384, SCHEMA_3_INDEXES),
    ("schema 4, 16 KiB pages (stores made since cb66a42)", 16384, ()),
    ("schema 4, 4 KiB pages (new stores)", 4096, ()),
)

FRAME_READER = r"""
import json, struct, sys
with open(sys.argv[1], "rb") as wal:
    data = wal.read()
page = struct.unpack(">I", data[8:12])[0]
offset, start, pages = 32, int(sys.argv[2]), []
while offset + 24 + page <= len(data):
    if offset >= start:
        pages.append(struct.unpack(">I", data[offset:offset + 4])[0])
    offset += 24 + page
print(json.dumps(pages))
"""


def new_store(path: Path, page_size: int, statements: tuple[str, ...]):
    raw = sqlite3.connect(path)  # a page size is chosen before the first table exists
    raw.execute(f"PRAGMA page_size = {page_size}")
    raw.execute("PRAGMA journal_mode = WAL")
    raw.close()
    store = open_store(path)
    for statement in statements:
        store.connection.execute(statement)
    for s in range(30):
        session = store.sessions.create(f"s{s}", cwd=f"/work/p{s % 5}")
        branch = store.branches.create(session.id)
        store.entries.append_messages(branch.id, [
            {"role": "user" if i % 2 == 0 else "assistant",
             "content": f"message {i} of session {s}: " + "lorem ipsum dolor " * 20}
            for i in range(300)])
    return store


def measure(label: str, page_size: int, statements: tuple[str, ...], appends: int,
            folder: Path) -> dict:
    path = folder / f"{page_size}-{len(statements)}.db"
    store = new_store(path, page_size, statements)
    agent = store.sessions.create("agent", cwd="/work/p1")
    branch = store.branches.create(agent.id)
    store.entries.append_messages(branch.id, [{"role": "user", "content": f"earlier {i}"} for i in range(100)])
    store.checkpoint_log()
    wal = f"{path}-wal"
    grown, pages = [], []
    for n in range(appends):
        before = os.stat(wal).st_size
        role = "user" if n % 2 == 0 else "assistant"
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": role, "content": "please run the tests again, then commit"}})
        grown.append(os.stat(wal).st_size - before)
        read = subprocess.run([sys.executable, "-c", FRAME_READER, wal, str(max(before, 32))],
                              capture_output=True, text=True, check=True)
        pages.extend(json.loads(read.stdout))
    owner = dict(store.connection.execute("SELECT pageno, name FROM dbstat"))
    store.close()
    by_tree = Counter(owner.get(p, "(freed since)") for p in pages)
    return {"label": label, "page_size": page_size, "bytes": statistics.mean(grown),
            "pages": len(pages) / appends,
            "by_tree": {name: count / appends for name, count in by_tree.items()}}


IMPORT_CHILD = r"""
import json, sqlite3, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
db, size = sys.argv[2], int(sys.argv[3])
raw = sqlite3.connect(db); raw.execute(f"PRAGMA page_size = {size}")
raw.execute("PRAGMA journal_mode = WAL"); raw.close()
from core import open_store
from core.importing import import_paths
store = open_store(db)
start = time.perf_counter()
import_paths(store, [Path(p) for p in sys.argv[4:]])
seconds = time.perf_counter() - start
store.close()
print(json.dumps({"seconds": seconds}))
"""


def import_times(mb: float, repeat: int, folder: Path) -> dict[int, list[float]]:
    sys.path.insert(0, str(REPO / "bench"))
    import claude_tree

    claude_tree.generate(folder / "tree", mb=mb, seed=3)
    files = sorted(str(p) for p in (folder / "tree").rglob("*.jsonl"))
    times: dict[int, list[float]] = {}
    for run in range(repeat):
        for size in (16384, 4096):
            db = folder / f"import-{size}-{run}.db"
            done = subprocess.run([sys.executable, "-c", IMPORT_CHILD, str(REPO), str(db),
                                   str(size), *files], capture_output=True, text=True, check=True)
            times.setdefault(size, []).append(json.loads(done.stdout.splitlines()[-1])["seconds"])
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=40)
    parser.add_argument("--import-mb", type=float, default=10, help="0: skip the import table")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-wal-"))
    try:
        results = [measure(label, size, statements, args.appends, folder)
                   for label, size, statements in VARIANTS]
        print(f"WAL written per append of a ~40-byte message (mean of {args.appends} appends,"
              f" one transaction each; sqlite {sqlite3.sqlite_version})")
        width = max(len(r["label"]) for r in results)
        print(f"{'store':{width}}  {'page':>6}  {'pages':>6}  {'WAL bytes':>10}  {'vs before':>9}")
        for r in results:
            print(f"{r['label']:{width}}  {r['page_size']:>6}  {r['pages']:>6.1f}  "
                  f"{r['bytes']:>10,.0f}  {r['bytes'] / results[0]['bytes']:>8.2f}x")
        print()
        trees = sorted({name for r in results for name in r["by_tree"]},
                       key=lambda name: -results[0]["by_tree"].get(name, 0))
        print("pages per append by table or index (the same three stores)")
        print(f"{'b-tree':32}" + "".join(f"{n:>10}" for n in ("before", "16 KiB", "4 KiB")))
        for name in trees:
            print(f"{name:32}" + "".join(f"{r['by_tree'].get(name, 0):>10.2f}" for r in results))
        if args.import_mb:
            times = import_times(args.import_mb, args.repeat, folder)
            print()
            print(f"importing a generated {args.import_mb:g} MB Claude Code tree (median of "
                  f"{args.repeat}, alternating)")
            for size, samples in times.items():
                print(f"  {size:>5} B pages: {statistics.median(samples):6.2f} s  "
                      f"({', '.join(f'{s:.2f}' for s in samples)})")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
