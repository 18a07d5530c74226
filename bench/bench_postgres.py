"""arbor on PostgreSQL, in one run: branch and roll back at depth 100,000 vs 100, import
throughput as a ratio to SQLite's, and the app's first frame on a 1M-entry store as a
ratio to an empty Textual app.

    python bench/bench_postgres.py [--url postgresql://…] [--mb 20] [--skip-big|--skip-small]

Without --url it starts a throw-away PostgreSQL server (tests/pg_server.py: initdb and
pg_ctl on a Unix socket, fsync off) and each part uses a schema of its own in it. With
--url, each part makes a schema in that database (it must allow CREATE SCHEMA).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from core import open_store  # noqa: E402
from core.actions import operations as ops  # noqa: E402


def new_schema(url: str, prefix: str) -> str:
    import psycopg

    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in url else "?"
    return f"{url}{joiner}options=" + quote(f"-csearch_path={schema}", safe="")


def timed(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def statements_per_call(calls) -> list[int]:
    """How many statements each call sends to the server (its round trips): what the
    depth must not change; the time per round trip is the machine's."""
    from core.store.postgres import backend as postgres

    count = [0]
    original = postgres.Connection.execute

    def counting(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    postgres.Connection.execute = counting
    try:
        out = []
        for call in calls:
            count[0] = 0
            call()
            out.append(count[0])
        return out
    finally:
        postgres.Connection.execute = original


def round_trips_of(store, call) -> tuple[int, int]:
    """(statements, round trips) the store's connection carries during `call`, from any
    thread: statements as the store asks for them (each execute or executemany, BEGIN,
    COMMIT, ROLLBACK; the COPY of the writer thread), round trips as they go to the server
    (what psycopg sends and then waits for: an execute, an executemany, a COPY; several
    statements sent at once are one)."""
    import psycopg

    from core.store.postgres import backend as postgres

    raw = store.connection.raw
    statements, trips = [0], [0]
    conn_execute, conn_many = postgres.Connection.execute, postgres.Connection.executemany
    # (BEGIN, COMMIT, ROLLBACK: through execute, or apart where the connection has them)
    ends = {name: getattr(postgres.Connection, name)
            for name in ("begin", "commit", "rollback") if hasattr(postgres.Connection, name)}
    cur_execute, cur_many, cur_copy = psycopg.Cursor.execute, psycopg.Cursor.executemany, \
        psycopg.Cursor.copy

    def counted(original, tallies, mine):
        def run(self, *args, **kwargs):
            if mine(self):
                for tally in tallies:
                    tally[0] += 1
            return original(self, *args, **kwargs)
        return run

    on_store = lambda self: self.raw is raw   # noqa: E731
    on_raw = lambda cursor: cursor.connection is raw   # noqa: E731
    postgres.Connection.execute = counted(conn_execute, [statements], on_store)
    postgres.Connection.executemany = counted(conn_many, [statements], on_store)
    for name, original in ends.items():
        setattr(postgres.Connection, name, counted(original, [statements], on_store))
    psycopg.Cursor.execute = counted(cur_execute, [trips], on_raw)
    psycopg.Cursor.executemany = counted(cur_many, [trips], on_raw)
    psycopg.Cursor.copy = counted(cur_copy, [statements, trips], on_raw)
    try:
        call()
    finally:
        postgres.Connection.execute, postgres.Connection.executemany = conn_execute, conn_many
        for name, original in ends.items():
            setattr(postgres.Connection, name, original)
        psycopg.Cursor.execute, psycopg.Cursor.executemany = cur_execute, cur_many
        psycopg.Cursor.copy = cur_copy
    return statements[0], trips[0]


def import_round_trips(url: str, work: Path) -> list[tuple]:
    """Statements and round trips of the import of one small Claude Code file (a store
    that has imported one file before, so that what is read once per store is read)."""
    from bench.claude_tree import generate
    from core.importing import import_paths

    tree = work / "small"
    generate(tree, mb=0.3)
    files = sorted(tree.rglob("*.jsonl"))
    store = open_store(new_schema(url, "trips"))
    import_paths(store, [files[0]])
    size = files[1].stat().st_size
    counts = round_trips_of(store, lambda: import_paths(store, [files[1]]))
    store.close()
    return [(f"statements / round trips: import of one {size / 1000:.0f} KB file",
             f"{counts[0]} / {counts[1]}", "")]


def message(i: int) -> dict:
    role = "user" if i % 2 == 0 else "assistant"
    return {"role": role, "content": f"message {i}: " + "lorem ipsum dolor sit amet " * 4}


def branch_and_rollback(url: str, deep: int, repeat: int) -> list[tuple]:
    store = open_store(new_schema(url, "depth"))
    history = [message(i) for i in range(deep)]
    rows = []
    ext = store.sessions.create("deep")
    main_branch = store.branches.create(ext.id, name="main")
    start = time.perf_counter()
    store.entries.append_messages(main_branch.id, history)
    rows.append(("append, one transaction", f"{deep / (time.perf_counter() - start):,.0f} msg/s", ""))
    small_ext = store.sessions.create("shallow")
    small = store.branches.create(small_ext.id)
    store.entries.append_messages(small.id, history[:100])
    other = store.branches.create(store.sessions.create("each").id)
    start = time.perf_counter()
    for i in range(500):
        store.entries.append_to_branch(other.id, "message", {"message": message(i)})
    rows.append(("append, a transaction each", f"{500 / (time.perf_counter() - start):,.0f} msg/s", ""))
    deep_head = store.branches.get(main_branch.id).head_seq
    small_head = store.branches.get(small.id).head_seq
    deep_to = store.paths.at_depth(deep_head, deep - 10)
    small_to = store.paths.at_depth(small_head, 90)
    b_deep = timed(lambda: ops.branch(store, main_branch.id), repeat)
    b_small = timed(lambda: ops.branch(store, small.id), repeat)
    r_deep = timed(lambda: ops.rollback(store, main_branch.id, entry_id=deep_to), repeat)
    r_small = timed(lambda: ops.rollback(store, small.id, entry_id=small_to), repeat)
    counts = statements_per_call([
        lambda: ops.branch(store, main_branch.id), lambda: ops.branch(store, small.id),
        lambda: ops.rollback(store, main_branch.id, entry_id=deep_to),
        lambda: ops.rollback(store, small.id, entry_id=small_to)])
    rows += [
        ("statements (round trips): branch at depth 100,000 / 100",
         f"{counts[0]} / {counts[1]}", "the same"),
        ("statements (round trips): roll back at depth 100,000 / 100",
         f"{counts[2]} / {counts[3]}", "the same"),
        (f"branch at depth {deep:,}", f"{b_deep:.2f} ms", "<= 10 ms"),
        ("branch at depth 100", f"{b_small:.2f} ms", ""),
        (f"  ratio {deep:,} / 100", f"{b_deep / b_small:.2f} x", "<= 2 x"),
        (f"roll back at depth {deep:,}", f"{r_deep:.2f} ms", "<= 10 ms"),
        ("roll back at depth 100", f"{r_small:.2f} ms", ""),
        (f"  ratio {deep:,} / 100", f"{r_deep / r_small:.2f} x", "<= 2 x"),
    ]

    def window():
        store._segments_cache.clear()
        return store.paths.entries(deep_head, deep - 200, deep)
    rows.append(("last 200 messages of the deep branch", f"{timed(window, repeat):.2f} ms", ""))
    store.close()
    return rows


def import_ratio(url: str, mb: float, work: Path, repeat: int) -> list[tuple]:
    from bench.claude_tree import generate
    from core.importing import import_paths

    tree = work / "logs"
    made = generate(tree, mb=mb)
    size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file()) / 1e6
    times: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    entries = {}
    for attempt in range(repeat):
        for kind in ("sqlite", "postgresql"):
            location = work / f"import-{attempt}.db" if kind == "sqlite" else new_schema(url, "import")
            store = open_store(location)
            start = time.perf_counter()
            report = import_paths(store, [tree])
            times[kind].append(time.perf_counter() - start)
            entries[kind] = report.entries_added
            store.close()
    assert entries["sqlite"] == entries["postgresql"], entries
    s, p = statistics.median(times["sqlite"]), statistics.median(times["postgresql"])
    del made
    return [
        (f"import {size:.1f} MB of Claude Code logs ({entries['sqlite']:,} entries), SQLite",
         f"{size / s:.1f} MB/s", ""),
        ("  the same into PostgreSQL", f"{size / p:.1f} MB/s", ""),
        ("  PostgreSQL / SQLite throughput", f"{s / p:.2f} x", ">= 0.5 x"),
    ]


def first_frame(url: str, runs: int) -> list[tuple]:
    from bench.bench_tui import first_frames
    from bench.make_big_store import build

    big = new_schema(url, "big")
    print("building a 1M-entry PostgreSQL store (10,000 sessions) …", flush=True)
    build(big)
    # What a user opens is a store in use, not one the server is still busy with: right
    # after a bulk load, autovacuum scans and analyzes the new million rows for minutes,
    # on the cores the app runs on (a run measured during it: 2.2x; after it: 1.6-1.75x).
    import psycopg

    with psycopg.connect(big, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        try:
            conn.execute("CHECKPOINT")
        except psycopg.Error:   # (a --url role without the right: its server's own time)
            pass
    rows = []
    empty = first_frames("empty", big, runs, True)
    arbor = first_frames("arbor", big, runs, True)
    e = statistics.median(r[0] for r in empty)
    a = statistics.median(r[0] for r in arbor)
    shown = statistics.median(r[-1] for r in arbor)
    rows += [("empty Textual app: first frame", f"{e:.0f} ms", ""),
             ("arbor on 1M entries in PostgreSQL: first frame", f"{a:.0f} ms", ""),
             ("  ratio to the empty app", f"{a / e:.2f} x", "<= 2 x"),
             ("  sessions + messages on screen", f"{shown:.0f} ms", "")]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a PostgreSQL database to make schemas in")
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-big", action="store_true", help="leave out the 1M-entry first frame")
    parser.add_argument("--skip-small", action="store_true",
                        help="only the 1M-entry first frame")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        from pg_server import PostgresServer, find_binaries

        binaries, why = find_binaries()
        if binaries is None:
            raise SystemExit(f"bench_postgres: {why}; give --url")
        server = PostgresServer(binaries).start()
        url = server.url_of()
    work = Path(tempfile.mkdtemp(prefix="arbor-bench-pg-"))
    import psycopg

    print(f"PostgreSQL {psycopg.__version__} client, python {sys.version.split()[0]},"
          f" server {'given by --url' if args.url else 'local, Unix socket, fsync off'}")
    print(f"{'':<58}{'measured':>14}  target")
    print("-" * 84, flush=True)
    parts = [] if args.skip_small else [
        lambda: branch_and_rollback(url, args.depth, args.repeat),
        lambda: import_round_trips(url, work),
        lambda: import_ratio(url, args.mb, work, 3)]
    if not args.skip_big:
        parts.append(lambda: first_frame(url, args.runs))
    try:
        for part in parts:   # each part's rows as soon as it is measured
            for label, value, target in part():
                print(f"{label:<58}{value:>14}  {target}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
