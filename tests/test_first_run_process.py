"""The first import's process of its own (core/importing/first_run/process.py): it stops at a
commit when asked (stop on its stdin, SIGINT) or when the app is gone (its stdin closed, the
app killed with SIGKILL: no process of it remains), and the next one goes on to the store
one uninterrupted import makes; an error reaches the app as a sentence."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from core.importing import first_run, import_paths
from core.importing.first_run.priority import NICENESS, Yielding, after_first_commit
from core.importing.first_run.process import FirstRunProcess
from core.store.store import open_store
from terminal import Terminal, arbor_command, tmux_or_skip

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402
from test_first_run import rounded  # noqa: E402
from test_import_parallel import meaning  # noqa: E402

DEADLINE = 60.0   # a loaded machine


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=40, files=120, seed=61)
    return home


@pytest.fixture(scope="module")
def whole(home, tmp_path_factory) -> tuple[int, dict]:
    db = tmp_path_factory.mktemp("whole") / "whole.db"
    with open_store(db) as store:
        import_paths(store, [home], newest_first=True)
        count = len(store.sessions.list())
    return count, rounded(meaning(db))


def fresh(path: Path) -> Path:
    open_store(path).close()
    return path


def wait(condition, timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def sessions(db: Path) -> int:
    with open_store(db, create=False) as store:
        return len(store.sessions.list())


def mark(db: Path) -> str | None:
    with open_store(db, create=False) as store:
        return store.get_meta(first_run.FIRST_IMPORT)


def run_to_the_end(db: Path, home: Path) -> FirstRunProcess:
    child = FirstRunProcess(str(db), home)
    child.start()
    assert wait(child.ended.is_set, timeout=300)
    assert child.error is None, child.error
    return child


@pytest.mark.parametrize("how", ["stop", "stdin closed", "SIGINT"])
def test_the_child_stops_at_a_commit_and_the_next_goes_on(tmp_path, home, whole, how):
    count, store_whole = whole
    db = fresh(tmp_path / "store.db")
    seen = []
    child = FirstRunProcess(str(db), home, listener=seen.append)
    child.start()
    assert wait(lambda: child.run.snapshot()[0] >= 3), "it never read three sessions"
    assert child.running, "done before it was stopped: the test proves nothing"
    if how == "stop":
        child.ask_to_stop()
    elif how == "stdin closed":            # the app gone: nobody writes to it any more
        child.process.stdin.close()
    else:
        child.process.send_signal(signal.SIGINT)
    assert wait(child.ended.is_set)
    assert child.process.returncode == 0
    assert child.error is None
    assert child.report is not None and child.report["stopped"] > 0
    assert seen[0] == "started" and seen[-1] == "ended" and "moved" in seen
    assert 0 < sessions(db) < count
    assert mark(db) == first_run.STARTED
    again = run_to_the_end(db, home)       # the next start goes on where it stopped
    assert again.report["stopped"] == 0
    assert mark(db) == first_run.DONE
    assert rounded(meaning(db)) == store_whole


def test_a_store_that_imported_before_gets_no_first_import(tmp_path, home):
    db = tmp_path / "store.db"
    with open_store(db) as store:
        import_paths(store, [sorted(home.rglob("*.jsonl"))[0]])
    child = run_to_the_end(db, home)
    assert not child.started.is_set() and child.report is None
    assert mark(db) is None


def test_an_error_reaches_the_app_as_a_sentence(tmp_path, home):
    child = FirstRunProcess(str(tmp_path / "no such folder" / "store.db"), home)
    child.start()
    assert wait(child.ended.is_set)
    assert child.error and "Traceback" not in child.error and "\n" not in child.error
    assert not child.started.is_set()


# ------------------------------------------------------------ the child's priority
def _group_nice(pid: int) -> int | None:
    """The nice of the process's Linux autogroup (None: no autogroups here)."""
    try:
        return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _threads_nice(pid: int) -> list[int]:
    """The nice of each thread of the process (Linux)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out.append(int(task.joinpath("stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (OSError, ValueError, IndexError):
            pass   # (ended meanwhile)
    return out


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here")
def test_the_child_yields_from_its_first_rows_until_the_app_has_drawn_them(tmp_path, home):
    """Until its first rows are committed the child runs at the app's priority (its start
    is on the path to the first frame with rows); then NICENESS nicer, and so is its
    scheduling group where Linux gives its session one (autogroups: there a process's own
    nice weighs only against the processes of its session, and the app's is another); once
    the app says it has drawn rows, its group's nice is 0 again (its own nice stays)."""
    db = fresh(tmp_path / "store.db")
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    child = FirstRunProcess(str(db), home)
    with open_store(db, create=False) as other:
        with other.transaction():   # (its first write waits for this: nothing committed)
            child.start()
            assert wait(child.started.is_set), child.error
            assert os.getpriority(os.PRIO_PROCESS, child.process.pid) == mine
            # (a session's new autogroup starts at 0; None where there are none, or where
            # the kernel does not show the group: the pytest process itself may sit in
            # the root group, which /proc/<pid>/autogroup leaves blank)
            its_group = _group_nice(child.process.pid)
            assert its_group in (None, 0), its_group
    try:
        assert wait(lambda: sessions(db) > 0), child.error
        pid = child.process.pid
        nicer = min(19, mine + NICENESS)
        assert wait(lambda: os.getpriority(os.PRIO_PROCESS, pid) == nicer)
        if Path(f"/proc/{pid}/task").is_dir():   # (Linux: a thread's nice is its own)
            assert wait(lambda: set(_threads_nice(pid)) == {nicer}), _threads_nice(pid)
            assert len(_threads_nice(pid)) > 1
        if its_group is not None:
            assert wait(lambda: _group_nice(pid) == NICENESS)
        child.tell_drawn()
        if its_group is not None:
            assert wait(lambda: _group_nice(pid) == 0)
        assert os.getpriority(os.PRIO_PROCESS, pid) == nicer
        assert child.running, "done before it was looked at: the test proves nothing"
        assert os.getpriority(os.PRIO_PROCESS, 0) == mine   # (the app's own: unchanged)
    finally:
        child.stop()
    assert wait(child.ended.is_set)


def test_rows_drawn_before_the_first_commit_leave_the_priority_alone(monkeypatch):
    """(rows of an import stopped before, drawn before this one's first commit) Nothing to
    yield for: the priority stays the app's; and `drawn` after `committed` sets back only
    what was set."""
    from core.importing.first_run import priority

    changed = []
    monkeypatch.setattr(priority, "nicer", lambda n: changed.append(("nice", n)))
    monkeypatch.setattr(priority, "set_group_nice",
                        lambda n: changed.append(("group", n)) or True)
    first = Yielding()
    first.drawn()
    first.committed()
    assert changed == []
    second = Yielding()
    second.committed()
    second.drawn()
    second.drawn()
    assert changed == [("nice", NICENESS), ("group", NICENESS), ("group", 0)]


def test_after_first_commit_is_told_once_the_first_rows_are_committed(tmp_path):
    """`after_first_commit`: once, after the first commit within a long write
    (commit_and_continue) or the end of an outer transaction; not for a nested one, nor
    for one rolled back."""
    told = []
    with open_store(tmp_path / "a.db") as store:
        after_first_commit(store, lambda: told.append(store.in_write_transaction))
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.set_meta("x", "1")
                raise RuntimeError("rolled back")
        assert told == []
        with store.transaction():
            with store.transaction():
                store.set_meta("x", "2")
            assert told == []          # (nested: nothing committed yet)
        assert told == [False]
        with store.transaction():
            store.set_meta("x", "3")
        assert told == [False]         # (once)
    told.clear()
    with open_store(tmp_path / "b.db") as store:
        after_first_commit(store, lambda: told.append(store.in_write_transaction))
        with store.transaction():
            store.set_meta("x", "1")
            assert store.commit_and_continue()
            assert told == [True]      # (within the long write, once committed)
            assert store.commit_and_continue()
        assert told == [True]


# ----------------------------------------------------------- the app killed (SIGKILL)
def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(p) for p in task.read_text().split()]
    return found


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in _children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")   # (a zombie has ended; its parent reaps it)


def test_the_import_does_not_outlive_a_killed_app(tmp_path, home, whole):
    tmux_or_skip()
    if not Path("/proc/self/task").exists():
        pytest.skip("needs /proc")
    count, store_whole = whole
    db = fresh(tmp_path / "store.db")
    with Terminal([*arbor_command(), "--db", str(db)], env={"HOME": str(home)},
                  config_dir=tmp_path) as term:
        term.wait_for(lambda s: "x stops" in s, timeout=DEADLINE)
        app = int(term._tmux("display-message", "-p", "-t", term.target, "#{pane_pid}"))
        family = _descendants(app)
        assert any("first_run.process" in Path(f"/proc/{pid}/cmdline").read_text()
                   for pid in family if _alive(pid)), "no import process under the app"
        os.kill(app, signal.SIGKILL)
        assert wait(lambda: not any(_alive(pid) for pid in family)), \
            f"left running: {[pid for pid in family if _alive(pid)]}"
    assert sessions(db) < count and mark(db) == first_run.STARTED
    run_to_the_end(db, home)              # nothing read was lost: the next one goes on
    assert rounded(meaning(db)) == store_whole


def test_the_child_imports_into_a_postgresql_store_too(postgres_server, tmp_path_factory):
    """The URL reaches the child on its stdin (never on its command line, where a password
    would show in ps), and it imports there as into a file."""
    small = tmp_path_factory.mktemp("pg-home")
    claude_tree.generate(small, mb=2, files=8, seed=67)
    url = postgres_server.new_store_url()
    open_store(url).close()
    child = FirstRunProcess(url, small)
    child.start()
    command = " ".join(child.process.args)
    assert url not in command and "store" not in command
    assert wait(child.ended.is_set, timeout=300)
    assert child.error is None, child.error
    assert child.report["stopped"] == 0
    with open_store(url, create=False) as store:
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.DONE
        assert len(store.sessions.list()) == 8


def test_the_child_finds_the_package_holding_core_first_on_its_path():
    import core
    from core.importing.first_run.process import folder_holding_core

    folder = folder_holding_core()
    assert folder / "core" == Path(core.__file__).resolve().parent
    assert not (folder / "mcp").exists()   # core/mcp would shadow the MCP SDK


def test_the_app_shows_the_time_left_the_child_says():
    """The child's time left counts its lanes apart (run_progress.py); the app's side shows
    it, counting down between two lines, not a guess of its own from the bytes alone."""
    from core.importing.first_run.process import RemoteRun

    now = [100.0]
    run = RemoteRun(clock=lambda: now[0])
    run.update(3, 20, 10 << 20, 100 << 20, 30.0)
    now[0] = 105.0
    assert run.snapshot() == (3, 20, 10 << 20, 100 << 20, 25.0)
    run.update(4, 20, 12 << 20, 100 << 20, None)     # the child cannot tell yet
    assert run.snapshot()[4] is None
    now[0] = 200.0
    run.update(5, 20, 14 << 20, 100 << 20, 2.0)
    now[0] = 210.0
    assert run.snapshot()[4] == 0.0                  # (never below nothing)
