"""A store's first import (core/importing/first_run/): when a store is to have one, newest
first, stopped by an Event at a commit and gone on with later to the same store, the
progress of the whole run; and `arbor import --discover` interrupted by Ctrl-C (SIGINT),
then run again."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

from core.importing import first_run
from core.importing.driver import HEAD_SLICE, import_paths
from core.importing.run_progress import RunProgress, megabytes_text, time_left_text
from core.store.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_import_parallel import meaning  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A Claude Code tree of about 12 MB in 48 files, its newest session a few MB."""
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=12, files=48, seed=29)
    return home


@pytest.fixture(scope="module")
def whole(home, tmp_path_factory) -> dict:
    """What one uninterrupted first import makes of the tree."""
    db = tmp_path_factory.mktemp("whole") / "whole.db"
    with open_store(db) as store:
        report = import_paths(store, [home], newest_first=True)
    assert not report.stopped and not report.failed_files
    return rounded(meaning(db))


def rounded(value):
    """Costs are sums of floats, added in another order when a file is read in two parts
    (1.0000000000000002 for 1.0): the same to 9 places."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, (list, tuple)):
        return type(value)(rounded(v) for v in value)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def logs(home: Path) -> list[Path]:
    return sorted((home / ".claude" / "projects").rglob("*.jsonl"))


# ------------------------------------------------------------------ the record
def test_a_store_is_to_have_its_first_import_until_one_finishes(tmp_path, home):
    with open_store(tmp_path / "fresh.db") as store:
        assert first_run.pending(store)               # never imported
        first_run.begin(store)
        assert first_run.pending(store)               # begun, not finished: goes on
        first_run.finish(store)
        assert not first_run.pending(store)
    with open_store(tmp_path / "imported.db") as store:
        import_paths(store, [logs(home)[0]])          # imported before (any import)
        assert not first_run.pending(store)
    with open_store(tmp_path / "demo.db") as store:
        from core.demo import DEMO_MARK

        assert first_run.DEMO_MARK == DEMO_MARK
        store.set_meta(DEMO_MARK, "1")
        assert not first_run.pending(store)           # the demo store never


def test_a_store_an_agent_wrote_into_is_not_filled_with_every_log_unasked(tmp_path, home):
    """Sessions written another way (here an agent through SessionManager) make the store
    someone's already: no first import, though it never imported a file."""
    from core.seed.manager import SessionManager

    folder = tmp_path / "agent"
    folder.mkdir()
    manager = SessionManager.new("/home/dev/project", folder)
    manager.init()
    manager.append_message({"role": "user", "content": "hello"})
    with open_store(folder / "sessions.db") as store:
        assert not store.imports.any_record()
        assert not first_run.pending(store)


def test_the_record_on_either_store(store_location, home):
    """SQLite and PostgreSQL keep it alike (store_meta; the import records' one query)."""
    with open_store(store_location) as store:
        assert first_run.pending(store)
        first_run.begin(store)
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.STARTED
        import_paths(store, [logs(home)[0]])
        assert first_run.pending(store)               # begun: goes on, records or not
        first_run.finish(store)
        assert not first_run.pending(store)
        store.set_meta(first_run.FIRST_IMPORT, "")    # (no record of it: the imports say)
        assert store.imports.any_record() and not first_run.pending(store)


# ------------------------------------------------------------------ the driver
def test_newest_first_reads_the_files_by_mtime_newest_first(tmp_path, home):
    files = logs(home)
    # mtimes in an order of their own, none the order the walk finds them in
    order = sorted(files, key=lambda p: zlib.crc32(p.name.encode()))   # (not hash(): salted)
    for n, path in enumerate(order):
        os.utime(path, ns=(1_700_000_000_000_000_000 + n * 10**9,) * 2)
    with open_store(tmp_path / "store.db") as store:
        report = import_paths(store, [home], newest_first=True)
    read = [Path(f.path) for f in report.files]
    small = [p for p in reversed(order) if p.stat().st_size <= HEAD_SLICE]
    # (a file over HEAD_SLICE is read in parts, its line comes when it is whole)
    # newest first, but a sub-agent's file after its session's, though it is the newer
    expected: list[Path] = []
    for path in reversed(order):
        parent = path.parent.parent.with_suffix(".jsonl")
        if "subagents" in path.parts and parent in files and parent not in expected:
            expected.append(parent)
        if path not in expected:
            expected.append(path)
    assert [p for p in read if p in small] == [p for p in expected if p in small]
    assert sorted(read) == sorted(files)
    moved = [p for p in small if "subagents" in p.parts and order.index(p) >
             order.index(p.parent.parent.with_suffix(".jsonl"))]
    assert moved, "no sub-agent newer than its session: the test proves nothing"


def test_a_first_import_links_sub_agents_to_their_sessions_as_it_goes(tmp_path, home,
                                                                     monkeypatch):
    """The list shows a sub-agent under its session once linked: a first import links the
    head's before it reads on (they were rows of their own until the whole import ended).
    (The first run's import, `price_later`, which looks at the rest after the head; `arbor
    import --discover`: tests/test_import_workers_start_end.py.)"""
    from core.importing import driver

    seen = []
    looked = driver.plan_found

    def plan_found(store, found, *args):   # (the head's files first, then the rest's)
        sessions = store.sessions.list()
        ids = {s.id for s in sessions}
        seen.append([s.parent_id in ids for s in sessions if s.kind == "subagent"])
        return looked(store, found, *args)

    monkeypatch.setattr(driver, "plan_found", plan_found)
    with open_store(tmp_path / "store.db") as store:
        import_paths(store, [home], newest_first=True, price_later=True)
    assert len(seen) == 2 and seen[1], "no sub-agent in the head: the test proves nothing"
    assert all(seen[1]), seen[1]


def test_a_stopped_import_goes_on_to_the_same_store(tmp_path, home, whole):
    db = tmp_path / "store.db"
    stops = []
    for delay in (0.05, 0.3, 0.8):
        with open_store(db) as store:
            stop = threading.Event()
            threading.Timer(delay, stop.set).start()
            report = import_paths(store, [home], newest_first=True, stop=stop)
            stops.append(report.stopped)
    assert stops[0] > 0, "the first run was not stopped part-way: the test proves nothing"
    with open_store(db) as store:
        report = import_paths(store, [home], newest_first=True)
    assert report.stopped == 0
    assert rounded(meaning(db)) == whole


def test_the_long_newest_session_is_read_to_its_first_commit_before_the_others(
        tmp_path, monkeypatch):
    """Its first rows are in at its first commit (FIRST_COMMIT after its first line): then
    the other newest sessions, not a commit more of it (0.1 s of reading at 1 GB, while
    those waited)."""
    from core.importing import driver

    home = tmp_path / "home"
    claude_tree.generate(home, mb=12, files=40, seed=7)
    longest = max(logs(home), key=lambda p: p.stat().st_size)
    os.utime(longest)   # (the newest)
    monkeypatch.setattr(driver, "HEAD_SLICE", 150 << 10)
    reads: list[tuple[str, str, int]] = []
    commits = [0]
    read = driver.import_file

    def import_file(store, path, *args, **kwargs):
        before = commits[0]
        result = read(store, path, *args, **kwargs)
        reads.append((Path(path).name, result.status, commits[0] - before))
        return result

    monkeypatch.setattr(driver, "import_file", import_file)
    with open_store(tmp_path / "store.db") as store:
        store.on_commit(lambda: commits.__setitem__(0, commits[0] + 1))
        report = import_paths(store, [home], newest_first=True, price_later=True)
    assert not report.stopped and not report.failed_files
    assert reads[0] == (longest.name, "stopped", 1), reads[:3]
    assert longest.stat().st_size > 3 << 20   # (a commit more would have read on)


def test_the_newest_sessions_read_in_slices_are_whole_after_the_head_but_the_longest(
        tmp_path, monkeypatch):
    """Of the newest sessions (the head), those over HEAD_SLICE are read in slices so that
    the others are not kept waiting; once the others are read, all but the longest are
    read to their end before any file after the head (they are among the newest 20,
    which are to be complete within a second of the first rows), and the longest is read
    on last (by a worker where there are workers). (They waited for the longest to be whole: at 1 GB, an 11 MB session was
    complete only after the 325 MB one, at the end of the import.)"""
    from core.importing import driver
    from core.importing.base import ImportReport
    from core.importing.files import expand_paths
    from core.importing.newest import head_length, parents_first

    home = tmp_path / "home"
    claude_tree.generate(home, mb=6, files=40, seed=7)
    monkeypatch.setattr(driver, "HEAD_SLICE", 150 << 10)
    monkeypatch.setattr(driver, "FIRST_SLICE", 32 << 10)
    monkeypatch.setattr(driver, "HEAD_FILES", 10)
    # (a slice ends at a commit: one after every line here, or a small file is read whole
    # before its first)
    monkeypatch.setattr(driver, "COMMIT_EVERY", 0.0)
    monkeypatch.setattr(driver, "FIRST_COMMIT", 0.0)
    monkeypatch.setattr("core.store.store.COMMIT_PAUSE", 0.0)
    found = parents_first(sorted(expand_paths([home], ImportReport()), key=lambda item: item.st.st_mtime_ns,
                                 reverse=True))
    head = [Path(item.path) for item in found[:head_length([i.name for i in found], 10)]]
    sliced = sorted((p for p in head if p.stat().st_size > 150 << 10),
                    key=lambda p: p.stat().st_size)
    assert len(sliced) >= 3 and len(found) > len(head), \
        "too few files read in slices, or none after the head: the test proves nothing"
    with open_store(tmp_path / "store.db") as store:
        report = import_paths(store, [home], newest_first=True, price_later=True)
    assert not report.stopped and not report.failed_files
    whole = [Path(f.path) for f in report.files]
    after_head = min(whole.index(p) for p in whole if p not in head)
    assert all(whole.index(p) < after_head for p in sliced[:-1]), \
        ([whole.index(p) for p in sliced], after_head)
    assert whole.index(sliced[-1]) > after_head   # (the longest: last)


def test_stopped_while_the_head_reads_its_sliced_sessions_on_it_starts_no_workers(
        tmp_path, monkeypatch):
    """Stopped as the head's end reads its sliced sessions on (`finish_all_but_the_longest`),
    the import ends there: no worker is started for the files after the head."""
    from core.importing import driver

    home = tmp_path / "home"
    claude_tree.generate(home, mb=6, files=40, seed=7)
    monkeypatch.setattr(driver, "HEAD_SLICE", 150 << 10)
    monkeypatch.setattr(driver, "HEAD_FILES", 10)
    monkeypatch.setattr(driver, "COMMIT_EVERY", 0.0)
    monkeypatch.setattr(driver, "FIRST_COMMIT", 0.0)
    monkeypatch.setattr("core.store.store.COMMIT_PAUSE", 0.0)
    stop = threading.Event()
    seen: dict[str, int] = {}
    started = []
    read = driver.import_file

    def import_file(store, path, *args, **kwargs):
        seen[path.name] = seen.get(path.name, 0) + 1
        if seen[path.name] == 2:   # (a sliced session read on: the head's end)
            stop.set()
        return read(store, path, *args, **kwargs)

    monkeypatch.setattr(driver, "import_file", import_file)
    monkeypatch.setattr(driver, "_workers", lambda *a, **k: started.append(True))
    with open_store(tmp_path / "store.db") as store:
        report = import_paths(store, [home], newest_first=True, price_later=True, stop=stop)
    assert stop.is_set(), "no sliced session was read on: the test proves nothing"
    assert report.stopped > 0 and not started


def test_the_report_counts_a_file_read_in_parts_as_one_read(tmp_path, home):
    with open_store(tmp_path / "parts.db") as store:
        parts = import_paths(store, [home], newest_first=True)
    with open_store(tmp_path / "plain.db") as store:
        plain = import_paths(store, [home])
    assert parts.entries_added == plain.entries_added > 0
    assert parts.messages_added == plain.messages_added
    assert parts.branches_added == plain.branches_added
    assert parts.sessions_added == plain.sessions_added


def test_progress_of_the_whole_run(tmp_path, home):
    """It counts the sessions the list shows: a sub-agent's file is read (its bytes count)
    but is no session of its own."""
    seen = []
    run = RunProgress(lambda r: seen.append(r.snapshot()), interval=0)
    with open_store(tmp_path / "store.db") as store:
        import_paths(store, [home], newest_first=True, run=run)
    total = sum(p.stat().st_size for p in logs(home))
    conn = sqlite3.connect(tmp_path / "store.db")
    shown = conn.execute("SELECT COUNT(*) FROM external_sessions"
                         " WHERE kind != 'subagent'").fetchone()[0]
    conn.close()
    sessions = [p for p in logs(home) if "subagents" not in p.parts]
    assert shown == len(sessions) < len(logs(home))
    files, count, done, all_bytes, left = seen[-1]
    assert (files, count, done, all_bytes, left) == (shown, shown, total, total, 0.0)
    assert seen[0][:3] == (0, shown, 0)
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    dones = [s[2] for s in seen]
    assert dones == sorted(dones)                    # never goes back
    assert time_left_text(None) == "estimating…" and time_left_text(42) == "42 s left"
    assert time_left_text(185) == "3 min left"
    assert time_left_text(3900) == "1 h 5 min left"
    assert megabytes_text(84 << 20, 1024 << 20) == "84/1,024 MB"


def test_the_time_left_waits_for_enough_to_go_on_and_follows_the_recent_pace():
    """The newest files, read first, are read slowly (the workers start after them): the
    time left is not guessed from the first second (it said minutes for a run of seconds),
    and once told it follows the bytes read a second of late, not since the start."""
    from core.importing.run_progress import TimeLeft

    now = [0.0]
    left = TimeLeft(lambda: now[0])
    total = 1000 << 20
    left.note(0, total)
    now[0] = 1.0
    left.note(4 << 20, total)                      # 4 MB in the first second
    assert left.seconds(4 << 20, total) is None    # too early to say
    now[0] = 3.0
    left.note(10 << 20, total)
    assert left.seconds(10 << 20, total) is None   # 1% read: still too little
    done = 10 << 20
    for second in range(4, 24):                    # then 40 MB/s
        now[0] = float(second)
        done += 40 << 20
        left.note(done, total)
    seconds = left.seconds(done, total)
    assert seconds is not None and abs(seconds - (total - done) / (40 << 20)) < 0.5
    assert left.seconds(total, total) == 0.0


def test_the_time_left_counts_this_process_and_the_workers_apart():
    """Every byte passes through this process (read here, or moved in once a worker has
    read it): its lane counts them all, at its pace. The workers' lane counts what they
    have read, at theirs: while they are the slower (this process moves in each batch as
    it comes, 100 MB of its own read at first), the time left is theirs; while they wait
    for this process (their window full: `held`), its own."""
    from core.importing.base import Progress

    mb = 1 << 20
    for held in (False, True):
        now = [0.0]
        run = RunProgress(clock=lambda: now[0])
        run.plan({0: 100 * mb, **{i: 10 * mb for i in range(1, 31)}})
        run.apart(range(1, 31), held=lambda: held)
        run.snapshot()
        now[0] = 1.0
        run(Progress("newest.jsonl", 0, 31, 50 * mb, 100 * mb))
        run.snapshot()
        now[0] = 2.0
        run.file_done(0)
        for second in range(2, 8):              # the workers: 10 MB/s, moved in at once
            now[0] = float(second)
            run.read_apart([second - 1])
            run.file_done(second - 1)
            run.snapshot()
        files, count, done, total, left = run.snapshot()
        assert (files, count, done, total) == (7, 31, 160 * mb, 400 * mb)
        mine = (400 - 160) / (160 / 7)          # this process: 160 MB in 7 s
        theirs = (300 - 60) / (60 / 7)          # the workers: 60 MB since they began
        assert theirs > 2 * mine
        expected = mine if held else theirs
        assert left is not None and abs(left - expected) < 1.0, (held, left, expected)


def test_a_lane_that_cannot_tell_yet_does_not_hide_the_other():
    """The workers start after the newest files: while their lane has too little to go on,
    the time left is this process's (it was "estimating…" for the whole of a short run)."""
    from core.importing.base import Progress

    mb = 1 << 20
    now = [0.0]
    run = RunProgress(clock=lambda: now[0])
    run.plan({0: 20 * mb, **{i: 10 * mb for i in range(1, 5)}})
    run.snapshot()
    for second in range(1, 5):                  # this process: 5 MB/s of the newest file
        now[0] = float(second)
        run(Progress("newest.jsonl", 0, 5, second * 5 * mb, 20 * mb))
        run.snapshot()
    run.apart(range(1, 5))                      # the workers begin at 4 s: no pace yet
    now[0] = 4.5
    left = run.snapshot()[4]
    assert left is not None and abs(left - (60 - 20) / (20 / 4.5)) < 0.5   # 20 MB in 4.5 s
    assert time_left_text(left) != time_left_text(None)


def test_the_workers_say_what_they_have_read(tmp_path, home, monkeypatch):
    """The import tells its run which files the workers read apart, and each as its
    batch's answer comes, before the batch is moved in."""
    from core.importing.workers import parallel

    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(parallel, "BATCH_BYTES", 200_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)

    class Watched(RunProgress):
        def apart(self, indexes, held=None):
            self.given = set(indexes)
            super().apart(self.given, held)

        def read_apart(self, indexes):
            self.told = getattr(self, "told", []) + [i for i in indexes if i not in self._done]
            super().read_apart(indexes)

    run = Watched()
    with open_store(tmp_path / "store.db") as store:
        report = import_paths(store, [home], newest_first=True, run=run)
    assert report.converted > 0 and run.given
    assert sorted(run.told) == sorted(run.given)   # each once, before it was moved in
    assert run.snapshot()[4] == 0.0


def test_the_workers_say_how_far_they_have_read_in_a_batch(tmp_path, home, monkeypatch):
    """A worker reading a long session says how far it has read as it goes: the bytes done
    move before its batch's answer comes (they stood still for as long as it read)."""
    from core.importing.workers import parallel

    monkeypatch.setenv("ARBOR_IMPORT_WORKERS", "2")
    monkeypatch.setattr(parallel, "BATCH_BYTES", 200_000)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel, "TELL_EVERY", 0.0)   # (each progress tick of a worker)

    class Watched(RunProgress):
        def reading_apart(self, indexes, done):
            indexes = list(indexes)
            self.heard.append((any(i in self._read_apart for i in indexes), done,
                               sum(self._sizes.get(i, 0) for i in indexes)))
            super().reading_apart(indexes, done)

    run = Watched()
    run.heard = []
    with open_store(tmp_path / "store.db") as store:
        import_paths(store, [home], newest_first=True, run=run)
    partway = [(done, size) for answered, done, size in run.heard
               if not answered and 0 < done < size]
    assert partway, run.heard
    _files, _count, done, total, _left = run.snapshot()
    assert done == total


def test_reading_apart_counts_what_a_worker_read_until_its_answer():
    now = [0.0]
    mb = 1 << 20
    run = RunProgress(clock=lambda: now[0])
    run.plan({0: 4 * mb, 1: 10 * mb, 2: 6 * mb})
    run.apart([1, 2])
    run.reading_apart([1, 2], 12 * mb)            # all of 1, 2 MB of 2
    assert run.snapshot()[2] == 12 * mb
    assert run._lanes(12 * mb)[1] == (12 * mb, 16 * mb)
    run.reading_apart([1, 2], 11 * mb)            # (an older word never takes back)
    assert run.snapshot()[2] == 12 * mb
    run.read_apart([1, 2])
    assert run._lanes(0)[1] == (16 * mb, 16 * mb)
    run.file_done(1)
    run.file_done(2)
    assert run.snapshot()[2] == 16 * mb


def test_a_file_read_in_slices_never_goes_back():
    """Each slice of a long file says its progress from 0 (its ticker's start): what was
    read of it stays counted, and so the time left can be told (it was not, for as long
    as the long one was read in slices)."""
    from core.importing.base import Progress

    now = [0.0]
    run = RunProgress(clock=lambda: now[0])
    run.plan({0: 100 << 20})
    seen = []
    for second in range(1, 9):
        now[0] = float(second)
        run(Progress("long.jsonl", 0, 1, 0, 100 << 20))              # a slice begins
        between = run.snapshot()                                     # (read meanwhile)
        run(Progress("long.jsonl", 0, 1, second * (4 << 20), 100 << 20))
        seen.append(run.snapshot())
        assert between[2] == (second - 1) * (4 << 20)
    assert [s[2] for s in seen] == [second * (4 << 20) for second in range(1, 9)]
    assert seen[-1][4] is not None and abs(seen[-1][4] - (100 - 32) / 4) < 0.5


# --------------------------------------------------------------- arbor import
def _records(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0
    try:
        return conn.execute("SELECT count(*) FROM import_sources").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _import(db: Path, home: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "tui", "import", "--discover", "--db", str(db)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO, **kwargs)


def test_import_discover_interrupted_then_run_again_is_one_uninterrupted_import(
        tmp_path, home, whole):
    db = tmp_path / "store.db"
    proc = _import(db, home)
    deadline = time.monotonic() + 60
    while _records(db) < 1:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "arbor import: stopped;" in err and "run it again to go on" in err
    assert "Traceback" not in err
    left = int(err.split(" still to read")[0].rsplit(", ", 1)[1].replace(",", ""))
    assert left > 0
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.STARTED
    proc = _import(db, home)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, (out, err)
    with open_store(db, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.DONE
    assert rounded(meaning(db)) == whole
