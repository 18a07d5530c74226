"""`arbor watch`: agents append while it runs; killed with SIGKILL and started again, it
loses nothing and stores nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from agent_writers import agent_home
from core import open_store
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
LINES = 40           # per agent


def _watch(db: Path, home: Path) -> subprocess.Popen:
    env = dict(os.environ, HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "tui", "watch", "--db", str(db)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait_following(process: subprocess.Popen, deadline: float = 60) -> None:
    """Until the watcher says it follows (it printed its first line on stderr)."""
    started = time.monotonic()
    line = process.stderr.readline()
    assert "following" in line, line
    assert time.monotonic() - started < deadline


def _contents(db: Path) -> dict[str, tuple]:
    """Per session: its entry ids, its message count and its usage rows."""
    store = open_store(db, create=False)
    try:
        out = {}
        for session in store.sessions.list(include_archived=True):
            ids = sorted(e.id for e in store.entries.of_session(session.id))
            out[session.uid] = (ids, session.message_count, len(store.usage.of_session(session.id)))
        return out
    finally:
        store.close()


def test_watch_killed_and_restarted_loses_and_duplicates_nothing(tmp_path):
    home = tmp_path / "home"
    writers = agent_home(home)
    for name, writer in writers.items():
        writer.start(f"{name} starts")
    db = tmp_path / "store.db"
    store = open_store(db)
    import_paths(store, [w.path for w in writers.values()])
    store.close()

    done = threading.Event()

    def write_all() -> None:
        for n in range(LINES):
            for name, writer in writers.items():
                role = "assistant" if n % 2 else "user"
                if n % 7 == 3:                          # now and then a torn line
                    rest = writer.torn(role, f"{name} line {n}", cut=25)
                    time.sleep(0.03)
                    writer.finish(rest)
                else:
                    writer.append(role, f"{name} line {n}")
            time.sleep(0.04)
        done.set()

    watcher = _watch(db, home)
    try:
        _wait_following(watcher)
        writing = threading.Thread(target=write_all)
        writing.start()
        time.sleep(1.2)                                  # mid-stream
        watcher.send_signal(signal.SIGKILL)
        watcher.wait(10)
        time.sleep(0.5)                                  # lines written while nobody watches
        watcher = _watch(db, home)
        _wait_following(watcher)
        writing.join(60)
        assert done.is_set()
        expected = LINES + 1

        def complete() -> bool:
            return all(count == expected for _ids, count, _u in _contents(db).values())

        started = time.monotonic()
        while not complete():
            if time.monotonic() - started > 60:
                watcher.send_signal(signal.SIGTERM)
                _out, err = watcher.communicate(timeout=20)
                counts = {uid: (count, usage) for uid, (_ids, count, usage) in _contents(db).items()}
                raise AssertionError(f"not all {expected} messages after 60 s: {counts}; "
                                     f"the watcher said: {err}")
            time.sleep(0.2)
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(20) == 0
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait(10)
    fresh = tmp_path / "fresh.db"
    store = open_store(fresh)
    import_paths(store, [w.path for w in writers.values()])
    store.close()
    followed, imported = _contents(db), _contents(fresh)
    assert followed == imported
    assert len(followed) == 3
