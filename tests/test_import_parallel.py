"""A big import's new Claude Code files are read by worker processes into scratch stores
and moved into the store by SQL (core.importing.workers.parallel, core.store.sqlite.merge): the
store must come out exactly as a one-process import makes it, row for row, whatever goes
wrong on the way (a worker that dies, a session the store has already, an interruption),
and nothing may be left behind (no worker process, no scratch file)."""

from __future__ import annotations

import glob
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, driver, import_paths
from core.importing.workers import parallel
from core.store.sqlite import merge as sqlite_merge

from test_import_same_store import FIXTURES, dump, plain

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A generated tree of many sessions (sub-agents among them), and every fixture of
    every format between them (other formats are imported here, in their turn)."""
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=3, files=28, seed=23)
    # a session copied whole under another id (as a resumed or forked session begins): its
    # responses are the original's, and count there, not in the copy
    first = sorted((home / ".claude" / "projects").rglob("*.jsonl"))[0]
    shutil.copy(first, first.with_name("ffffffff-0000-4000-8000-000000000001.jsonl"))
    places = {"claude_code": home / ".claude" / "projects" / "-fixtures",
              "codex": home / ".codex" / "sessions" / "2026" / "01" / "02",
              "pi": home / ".pi" / "agent" / "sessions" / "--fixtures--"}
    for fmt, folder in places.items():
        folder.mkdir(parents=True, exist_ok=True)
        for fixture in sorted((FIXTURES / fmt).glob("*.jsonl")):
            name = fixture.name
            if fmt == "codex" and not name.startswith("rollout-"):
                name = "rollout-" + name
            shutil.copy(fixture, folder / name)
    return home

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def workers(monkeypatch):
    """Workers for any import, with small batches (several per worker), and commits at
    the same points in both imports (one transaction a file)."""
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(parallel, "BATCH_BYTES", 200_000)
    monkeypatch.setattr(driver, "COMMIT_EVERY", 1e9)


def _scratch_folders(where: Path) -> set[str]:
    """The scratch folders beside a store in `where` (parallel.scratch_parent)."""
    return set(glob.glob(str(where / (parallel.FOLDER_PREFIX + "*"))))


def _import(home: Path, db: Path, **options):
    with open_store(db) as store:
        report = import_paths(store, discover(home, env={}), **options)
    assert report.files and all(f.status == "imported" for f in report.files), \
        [(f.path, f.status, f.error) for f in report.files if f.status != "imported"]
    return report


def _serial(home: Path, db: Path, monkeypatch) -> dict:
    with monkeypatch.context() as patch:
        patch.setenv("ARBOR_IMPORT_WORKERS", "0")
        report = _import(home, db)
    assert report.converted == 0
    return dump(db)


def test_workers_give_the_one_process_store_row_for_row(home, tmp_path, monkeypatch, workers):
    before = _scratch_folders(tmp_path)
    report = _import(home, tmp_path / "parallel.db")
    claude = [f for f in report.files if f.format == "claude_code"]
    assert report.converted == len(claude) > 10     # every Claude Code file came from a worker
    assert _scratch_folders(tmp_path) == before      # no scratch store left behind
    moved = dump(tmp_path / "parallel.db")
    alone = _serial(home, tmp_path / "serial.db", monkeypatch)
    assert moved.keys() == alone.keys()
    for table in moved:
        assert moved[table] == alone[table], table
    assert len(moved["entries"]) > 1500 and moved["usage"] and moved["search"]["the"]
    assert any(row[-1] == 0 for row in moved["usage"])   # the copy's responses: not counted


def test_the_plain_path_in_the_workers_gives_the_same_store(home, tmp_path, monkeypatch, workers):
    """Against the plain path (no bulk writer thread) too, as the fast-path test does."""
    report = _import(home, tmp_path / "parallel.db")
    assert report.converted > 10
    with monkeypatch.context() as patch:
        plain(patch)
        alone = _serial(home, tmp_path / "plain.db", monkeypatch)
    assert dump(tmp_path / "parallel.db") == alone


def test_a_session_the_store_has_already_is_imported_here(home, tmp_path, monkeypatch, workers):
    """A file whose session is in the store under another path (the same uid) cannot be
    moved in: it is imported here, into that session, as a one-process import does."""
    files = sorted((home / ".claude" / "projects").rglob("*.jsonl"), key=lambda p: p.name)
    copy = tmp_path / "elsewhere" / files[3].parent.name / files[3].name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(files[3].read_bytes())

    def run(db: Path) -> tuple:
        with open_store(db) as store:
            import_paths(store, [copy])
            report = import_paths(store, discover(home, env={}))
        return report, dump(db)

    report, moved = run(tmp_path / "parallel.db")
    assert 0 < report.converted < len([f for f in report.files if f.format == "claude_code"])
    with monkeypatch.context() as patch:
        patch.setenv("ARBOR_IMPORT_WORKERS", "0")
        _alone_report, alone = run(tmp_path / "serial.db")
    assert moved == alone


def test_batches_of_a_worker_that_dies_are_imported_here(home, tmp_path, monkeypatch, workers):
    started = []
    real = parallel.Workers.__init__

    def keep(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(parallel.Workers, "__init__", keep)
    killed = []

    def progress(update) -> None:
        if started and not killed:      # after the first batch is in: no worker is left
            for proc in started[0].procs:
                proc.kill()
                proc.wait()
            killed.append(update.path)

    report = _import(home, tmp_path / "parallel.db", progress=progress)
    claude = [f for f in report.files if f.format == "claude_code"]
    assert killed and 0 < report.converted < len(claude)
    assert dump(tmp_path / "parallel.db") == _serial(home, tmp_path / "serial.db", monkeypatch)


def test_an_interrupted_import_leaves_no_worker_nor_scratch_file(home, tmp_path, monkeypatch,
                                                                  workers):
    started = []
    real = parallel.Workers.__init__

    def keep(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(parallel.Workers, "__init__", keep)
    before = _scratch_folders(tmp_path)
    seen = []

    def progress(update) -> None:
        seen.append(update.path)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with open_store(tmp_path / "parallel.db") as store:
        with pytest.raises(KeyboardInterrupt):
            import_paths(store, discover(home, env={}), progress=progress)
        assert store.integrity_check() == "ok"
    assert started and all(proc.poll() is not None for proc in started[0].procs)
    assert Path(started[0].folder).parent == tmp_path    # beside the store, not in /tmp
    assert _scratch_folders(tmp_path) == before
    # what was moved in is whole: the next import adds the rest and gives the same store
    with open_store(tmp_path / "parallel.db") as store:
        statuses = {f.status for f in import_paths(store, discover(home, env={})).files}
    assert statuses == {"imported", "unchanged"}
    assert dump(tmp_path / "parallel.db") == _serial(home, tmp_path / "serial.db", monkeypatch)


def test_a_small_import_starts_no_worker(home, tmp_path, monkeypatch):
    monkeypatch.delenv("ARBOR_IMPORT_WORKERS", raising=False)
    monkeypatch.setattr(parallel.Workers, "__init__",
                        lambda *a, **k: pytest.fail("a worker was started"))
    report = _import(home, tmp_path / "small.db")     # 2.5 MB: below PARALLEL_MIN_BYTES
    assert report.converted == 0


def test_every_column_of_the_schema_is_merged_or_said_not_to_be(tmp_path):
    """A migration that adds a table or a column must say how it comes over from a
    scratch store (sqlite_merge.COLUMNS), or that it does not (DERIVED, EMPTY)."""
    with open_store(tmp_path / "new.db"):
        pass
    conn = sqlite3.connect(tmp_path / "new.db")
    try:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'entries_fts_%'")}
        assert tables == set(sqlite_merge.COLUMNS) | sqlite_merge.DERIVED | sqlite_merge.EMPTY
        assert not set(sqlite_merge.COLUMNS) & (sqlite_merge.DERIVED | sqlite_merge.EMPTY)
        for table, columns in sqlite_merge.COLUMNS.items():
            have = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            assert [name for name, _how in columns] == have, table
        assert set(sqlite_merge.ORDER) == set(sqlite_merge.COLUMNS)
    finally:
        conn.close()


def test_a_scratch_store_with_rows_it_cannot_move_is_imported_here(home, tmp_path, monkeypatch,
                                                                   workers):
    """Rows in a table that never comes over from a scratch store (here: an operation in
    its log) make the whole batch be imported here instead."""
    real = sqlite_merge.unmergeable
    seen = []

    def spy(conn):
        found = real(conn)
        seen.append(found)
        return found + ["operation_log"] if len(seen) == 1 else found

    monkeypatch.setattr(sqlite_merge, "unmergeable", spy)
    report = _import(home, tmp_path / "parallel.db")
    assert len(seen) > 1 and 0 < report.converted
    assert dump(tmp_path / "parallel.db") == _serial(home, tmp_path / "serial.db", monkeypatch)


def _to_nano(value):
    """A sum of costs depends on the order it was added in (floats): two stores that hold the
    same responses, imported in another order, agree to a billionth of a dollar."""
    return round(value, 9) if isinstance(value, float) else value


def meaning(db: Path, *, leave_out: str = "") -> dict:
    """What a store holds with its own numbering taken out: entries by their session's uid
    and their id, branches by their key, usage by its entry (for stores whose seqs differ
    only because an import was interrupted and finished by another). `leave_out`: the
    sessions of this source are not looked at."""
    conn = sqlite3.connect(db)
    try:
        for table in ("labels", "reflog", "import_sources", "spawn_points", "session_usage",
                      "usage_buckets", "usage", "internal_sessions", "entries"):
            conn.execute(f"DELETE FROM {table} WHERE external_session_id IN (SELECT id FROM"
                         " external_sessions WHERE source = ?)" if table not in ("reflog",) else
                         "DELETE FROM reflog WHERE internal_session_id IN (SELECT i.id FROM"
                         " internal_sessions i JOIN external_sessions x ON"
                         " x.id = i.external_session_id WHERE x.source = ?)", (leave_out,))
        conn.execute("DELETE FROM external_sessions WHERE source = ?", (leave_out,))
        uid = dict(conn.execute("SELECT id, uid FROM external_sessions"))
        entry = {seq: (uid[session], eid) for seq, session, eid in
                 conn.execute("SELECT seq, external_session_id, id FROM entries")}
        branch = dict(conn.execute("SELECT id, langgraph_session_id FROM internal_sessions"))
        out = {
            "sessions": sorted(conn.execute(
                "SELECT uid, session_name, created_at, is_active, metadata, cwd, source, kind,"
                " parent_session, message_count, entry_count, spawn_ref FROM external_sessions")),
            "first users": sorted((uid[i], entry.get(s)) for i, s in conn.execute(
                "SELECT id, first_user_seq FROM external_sessions")),
            "entries": sorted((entry[seq], entry.get(parent), *rest) for seq, parent, *rest in
                              conn.execute("SELECT seq, parent_seq, type, timestamp, depth,"
                                           " msg_index, role, data FROM entries")),
            "branches": sorted((key, name, entry.get(head), entry.get(fork), current,
                                branch.get(parent)) for key, name, head, fork, current, parent in
                               conn.execute("SELECT langgraph_session_id, name, head_seq,"
                                            " fork_seq, is_current, parent_session_id"
                                            " FROM internal_sessions")),
            "usage": sorted((entry.get(seq), *rest) for seq, *rest in conn.execute(
                "SELECT entry_seq, response_key, model, input_tokens, output_tokens,"
                " cache_creation_tokens, cache_read_tokens, cost_usd, counted FROM usage")),
            "session usage": sorted((uid[s], *map(_to_nano, rest)) for s, *rest in conn.execute(
                "SELECT * FROM session_usage")),
            "buckets": sorted((uid[s], *map(_to_nano, rest)) for counted, hour, s, *rest in
                              conn.execute("SELECT * FROM usage_buckets")
                              for rest in [(counted, hour, *rest)]),
            "records": sorted((key, uid[s], state) for key, s, state in conn.execute(
                "SELECT source_key, external_session_id, state FROM import_sources")),
            "spawn points": sorted((key, entry[seq]) for key, _s, seq in
                                   conn.execute("SELECT * FROM spawn_points")),
        }
        found = {}
        for term in ("the", "import*", "error", "café", "test", "agent"):
            found[term] = sorted(entry[rowid] for (rowid,) in conn.execute(
                "SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?", (term,))
                if rowid in entry)
        out["search"] = found
        return out
    finally:
        conn.rollback()
        conn.close()


@pytest.fixture
def stretches(monkeypatch):
    """Long sessions moved in stretches of 40 entries, committed after each."""
    monkeypatch.setattr(sqlite_merge, "STRETCH", 40)
    monkeypatch.setattr(parallel.ParallelImport, "__init__", _committing(
        parallel.ParallelImport.__init__))


def _committing(init):
    def every_time(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.commit_every = 0.0
    return every_time


def _commits(monkeypatch, after) -> list:
    """Calls `after(count)` after each commit of a long import, before it takes the store
    again (where a writer waiting for the store gets it); the commits made."""
    from core.store.sqlite import backend as sqlite_backend
    from core.store.store import Store

    made = []
    real_commit = Store.commit_and_continue
    real_begin = sqlite_backend.SQLiteBackend.begin_write
    between = []

    def commit(self):
        between.append(True)
        try:
            done = real_commit(self)
        finally:
            between.clear()
        return done

    def begin(conn):
        if between:
            between.clear()
            made.append(True)
            after(len(made))
        real_begin(conn)

    monkeypatch.setattr(Store, "commit_and_continue", commit)
    monkeypatch.setattr(sqlite_backend.SQLiteBackend, "begin_write", staticmethod(begin))
    return made


def test_a_session_moved_in_stretches_is_the_same_store(home, tmp_path, monkeypatch, workers,
                                                        stretches):
    made = _commits(monkeypatch, lambda count: None)
    report = _import(home, tmp_path / "parallel.db")
    assert report.converted > 10 and len(made) > 10     # commits between stretches of entries
    assert dump(tmp_path / "parallel.db") == _serial(home, tmp_path / "serial.db", monkeypatch)


def test_another_writer_between_stretches_takes_ids_after_the_moved_ones(
        home, tmp_path, monkeypatch, workers, stretches):
    """An agent that writes while a long session moves in (between two of its commits)
    gets seqs, session and branch ids after the room taken for the session's rows."""
    import subprocess
    import sys

    db = tmp_path / "parallel.db"
    agent = ("import sys; sys.path.insert(0, sys.argv[2]); from core import open_store\n"
             "store = open_store(sys.argv[1])\n"
             "with store.transaction():\n"
             "    session = store.sessions.create('agent', cwd='/agent')\n"
             "    branch = store.branches.create(session.id, name='main')\n"
             "store.entries.append_messages(branch.id, [{'role': 'user', 'content': f'agent {i}'}"
             " for i in range(3)])\n")
    root = str(Path(__file__).resolve().parent.parent)
    written = []

    def write(count: int) -> None:
        if count in (3, 12):
            subprocess.run([sys.executable, "-c", agent, str(db), root], check=True, timeout=60)
            written.append(count)

    _commits(monkeypatch, write)
    _import(home, db)
    assert written == [3, 12]
    conn = sqlite3.connect(db)
    try:
        agents = conn.execute("SELECT COUNT(*) FROM external_sessions x JOIN entries e ON"
                              " e.external_session_id = x.id WHERE x.source = 'arbor'").fetchone()
    finally:
        conn.close()
    assert agents == (6,)
    # the imported sessions are whole, and mean what a one-process import's do
    assert meaning(db, leave_out="arbor") == meaning(_serial_db(home, tmp_path, monkeypatch))


def _serial_db(home: Path, tmp_path: Path, monkeypatch) -> Path:
    db = tmp_path / "serial.db"
    _serial(home, db, monkeypatch)
    return db


def test_an_import_interrupted_inside_a_session_is_finished_by_the_next(
        home, tmp_path, monkeypatch, workers, stretches):
    """Interrupted between two stretches of a batch's entries, an import leaves the batch's
    sessions as any interrupted import does (entries with their usage and search rows, no
    branches, no record); the next import finishes them, and the store means what a
    one-process import's means."""
    db = tmp_path / "parallel.db"

    def unrecorded() -> int:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT COUNT(*) FROM external_sessions WHERE id NOT IN"
                                " (SELECT external_session_id FROM import_sources)").fetchone()[0]
        finally:
            conn.close()

    def interrupt(count: int) -> None:
        if count > 10 and unrecorded():    # some sessions in, and some half-way
            raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        _commits(patch, interrupt)
        with open_store(tmp_path / "parallel.db") as store:
            with pytest.raises(KeyboardInterrupt):
                import_paths(store, discover(home, env={}))
    assert unrecorded() >= 1   # cut inside a move (stretches of 40, a commit after each)
    with open_store(tmp_path / "parallel.db") as store:
        import_paths(store, discover(home, env={}))
    assert meaning(tmp_path / "parallel.db") == meaning(_serial_db(home, tmp_path, monkeypatch))


def test_workers_read_paths_as_given_and_use_this_arbor(home, tmp_path, monkeypatch, workers):
    """Relative paths are the user's (the workers run in the current folder, and the records
    keep the paths as given), and a `core` package in that folder is not the one the
    workers run."""
    here = tmp_path / "here"
    (here / "core").mkdir(parents=True)
    (here / "core" / "__init__.py").write_text("raise ImportError('not this core')\n")
    shutil.copytree(home / ".claude", here / "logs")
    monkeypatch.chdir(here)
    with open_store(tmp_path / "parallel.db") as store:
        report = import_paths(store, ["logs"])
    assert report.converted == len(report.files) > 10
    assert all(f.status == "imported" and not Path(f.path).is_absolute() for f in report.files)
    with monkeypatch.context() as patch:
        patch.setenv("ARBOR_IMPORT_WORKERS", "0")
        with open_store(tmp_path / "serial.db") as store:
            import_paths(store, ["logs"])
    assert dump(tmp_path / "parallel.db") == dump(tmp_path / "serial.db")


def test_each_stretch_is_found_by_its_seqs_not_by_reading_the_whole_session(
        home, tmp_path, monkeypatch, workers, stretches):
    """The rows of one stretch of a long session (its entries, search rows, totals, usage) are
    found by seq and entry seq, never through the session's index, which reads every row of
    the session for each stretch: a 310 MB session moved in 110 stretches spent 2 s of the
    importing process counting entries that way, and most of its search rows' time."""
    plans: list[tuple[str, str]] = []
    real = sqlite_merge.merge_sessions

    def merge(conn, first, last, *, pace=lambda: None, stretch=sqlite_merge.STRETCH):
        seen: list[str] = []

        def explained_then_paced():
            conn.set_trace_callback(None)
            for sql in seen:
                if sqlite_merge.SCRATCH in sql and "seq >= " in sql:
                    plan = conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
                    plans.append((sql, " | ".join(row[3] for row in plan)))
            seen.clear()
            conn.set_trace_callback(seen.append)
            pace()

        conn.set_trace_callback(seen.append)
        try:
            return real(conn, first, last, pace=explained_then_paced, stretch=stretch)
        finally:
            conn.set_trace_callback(None)

    monkeypatch.setattr(sqlite_merge, "merge_sessions", merge)
    _import(home, tmp_path / "parallel.db")
    assert len({sql for sql, _plan in plans}) >= 5   # entries, search rows, usage, totals...
    for sql, plan in plans:
        assert "sqlite_autoindex_entries_1" not in plan and "idx_usage_session" not in plan, \
            (sql, plan)


def test_a_big_import_has_the_index_merge_in_big_steps_and_a_small_one_not(
        home, tmp_path, monkeypatch, workers):
    """While the workers' sessions move in, the search index merges its segments 16 at a
    time (less work for the many segments a long import writes); after the import, and
    in an import without workers, in FTS5's usual steps of 4."""
    from core.store.sqlite import search_index

    seen = []
    merge = sqlite_merge.merge_sessions

    def watched(conn, *args, **kwargs):
        seen.append(search_index.merge_steps(conn))
        return merge(conn, *args, **kwargs)

    monkeypatch.setattr(sqlite_merge, "merge_sessions", watched)
    report = _import(home, tmp_path / "big.db")
    assert report.converted and seen and set(seen) == {16}
    conn = sqlite3.connect(tmp_path / "big.db")
    try:
        assert search_index.merge_steps(conn) == 4
    finally:
        conn.close()

    calls = []
    monkeypatch.setattr(search_index, "merge_in_big_steps", lambda *a: calls.append(a))
    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "0")
    assert _import(home, tmp_path / "small.db").converted == 0
    assert calls == []
