"""`arbor` on a store that is not there yet starts its first import's process first of all,
before the store is made and Textual loaded (tui/commands/browse.py), and tells it the
store once made; a store that turns out not to be due (another process made and filled
it meanwhile, or it cannot be opened) cancels it, and it ends without touching the store."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core import open_store
from core.importing import first_run, import_paths
from core.importing.first_run.process import FirstRunProcess
from core.store.location import PostgresURL
from tui.commands import browse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402

DEADLINE = 60.0   # a loaded machine
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=2, files=8, seed=7)
    return home


def wait(condition, timeout: float = DEADLINE) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    browse.configure(parser)
    return parser.parse_args(list(argv))


@pytest.fixture
def seen(monkeypatch, home):
    """What happened in order (the child started, the store opened, the child told or
    cancelled), the children started, and the app's run replaced by a wait for the first
    import to end."""
    events: list[str] = []
    children: list[FirstRunProcess] = []
    monkeypatch.setenv("HOME", str(home))
    start, tell, cancel = FirstRunProcess.start, FirstRunProcess.tell_store, FirstRunProcess.cancel
    opened = browse._open

    def starting(self, tell: bool = True):
        events.append("child started")
        children.append(self)
        start(self, tell)

    def telling(self):
        events.append("child told")
        tell(self)

    def cancelling(self):
        events.append("child cancelled")
        cancel(self)

    def opening(args):
        events.append("store opened")
        return opened(args)

    def run(app):
        first = app.early_first_import
        if first is not None:
            assert wait(first.ended.is_set)   # (the tree is small: to its end)
        events.append("app ran")

    monkeypatch.setattr(FirstRunProcess, "start", starting)
    monkeypatch.setattr(FirstRunProcess, "tell_store", telling)
    monkeypatch.setattr(FirstRunProcess, "cancel", cancelling)
    monkeypatch.setattr(browse, "_open", opening)
    monkeypatch.setattr("tui.app.ArborApp.run", run)
    return events, children


def test_locate_names_a_store_file_not_made_yet(tmp_path):
    made = tmp_path / "made.db"
    open_store(made).close()
    assert FirstRunProcess.locate(tmp_path / "new.db") == str(tmp_path / "new.db")
    assert FirstRunProcess.locate(made) is None
    assert FirstRunProcess.locate(PostgresURL("postgresql://u@h/db")) is None


def test_a_new_store_s_first_import_starts_before_the_store_is_made(tmp_path, seen):
    events, children = seen
    db = tmp_path / "new.db"
    assert browse.run(parse("--db", str(db))) == 0
    assert events == ["child started", "store opened", "child told", "app ran"]
    child, = children
    assert wait(child.ended.is_set)
    assert child.error is None and child.places   # (it imported: the store was told)
    with open_store(db, create=False) as store:
        assert store.sessions.count() > 0
        assert store.get_meta(first_run.FIRST_IMPORT) == first_run.DONE


def test_a_new_store_is_made_off_the_main_thread_while_textual_loads(tmp_path, seen,
                                                                      monkeypatch):
    """The process's start and the new store's making wait on the system (its exec, the
    file's syncs): a thread does them while the main thread loads Textual. A store that is
    there is opened on the main thread, before."""
    threads = []
    opening = browse._open

    def opened_where(args):
        threads.append(threading.current_thread() is threading.main_thread())
        return opening(args)

    monkeypatch.setattr(browse, "_open", opened_where)
    db = tmp_path / "new.db"
    assert browse.run(parse("--db", str(db))) == 0
    assert browse.run(parse("--db", str(db))) == 0   # (there now, its first import done)
    assert threads == [False, True]


def test_the_thread_making_a_store_imports_nothing_the_app_imports(tmp_path, home):
    """What the thread imports as it makes a new store (after `_Making.preload`, on the main
    thread) and what the main thread imports meanwhile (the app) have no module in common:
    two threads importing the same modules at once can deadlock."""
    probe = (
        "import sys, argparse; from tui.commands import browse\n"
        "browse._Making.preload(); before = set(sys.modules)\n"
        "if sys.argv[1] == 'thread':\n"
        "    parser = argparse.ArgumentParser(); browse.configure(parser)\n"
        "    args = parser.parse_args(['--db', sys.argv[2]])\n"
        "    making = browse._Making(args, browse._new_store_location(args))\n"
        "    making._make(); store, child, due = making.made\n"
        "    child.stop(); store.close()\n"
        "else:\n"
        "    import tui.app\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n")
    env = {**os.environ, "HOME": str(home)}
    found = {}
    for side in ("thread", "app"):
        done = subprocess.run([sys.executable, "-c", probe, side, str(tmp_path / "new.db")],
                              capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        found[side] = set(done.stdout.split())
    assert found["thread"] and found["app"]
    assert not found["thread"] & found["app"]


def test_a_store_that_is_there_is_asked_first(tmp_path, seen):
    """A store made before (not imported into yet): no early start; the store says it is
    due, and its process starts once it is open."""
    events, children = seen
    db = tmp_path / "made.db"
    open_store(db).close()
    assert browse.run(parse("--db", str(db))) == 0
    assert events[:2] == ["store opened", "child started"]
    assert wait(children[0].ended.is_set)


def test_a_store_filled_meanwhile_cancels_the_early_child(tmp_path, seen, monkeypatch, home):
    """Between the look (no file) and the open, another process made the store and
    imported into it: not due; the child ends without a word, the store as that process
    left it."""
    events, children = seen
    db = tmp_path / "new.db"
    opening = browse._open

    def someone_else_first(args):
        with open_store(db) as other:
            import_paths(other, [sorted(home.rglob("*.jsonl"))[0]])
        return opening(args)

    monkeypatch.setattr(browse, "_open", someone_else_first)
    assert browse.run(parse("--db", str(db))) == 0
    assert events == ["child started", "store opened", "child cancelled", "app ran"]
    child, = children
    assert wait(child.ended.is_set)
    assert child.process.returncode == 0
    assert child.error is None and child.report is None and not child.started.is_set()
    with open_store(db, create=False) as store:
        assert store.sessions.count() == 1
        assert store.get_meta(first_run.FIRST_IMPORT) is None


def test_a_store_that_cannot_be_made_cancels_the_early_child(tmp_path, seen, monkeypatch):
    events, children = seen
    folder = tmp_path / "a file, not a folder"
    folder.write_text("")
    assert browse.run(parse("--db", str(folder / "new.db"))) == 2
    assert events == ["child started", "store opened", "child cancelled"]
    child, = children
    assert wait(child.ended.is_set)
    assert child.process.returncode == 0 and child.error is None


def test_no_early_start_without_following(tmp_path, seen):
    events, children = seen
    assert browse.run(parse("--db", str(tmp_path / "new.db"), "--no-follow")) == 0
    assert children == [] and "child started" not in events


def test_a_child_told_nothing_stops_when_asked(tmp_path, home, monkeypatch):
    """The app gone before it told the child its store (stop, as it closes): the child
    ends at once, without an error and without a store."""
    monkeypatch.setenv("HOME", str(home))
    db = tmp_path / "new.db"
    child = FirstRunProcess.early(db)
    assert child is not None
    child.stop()
    assert wait(child.ended.is_set)
    assert child.process.returncode == 0 and child.error is None
    assert not db.exists()
