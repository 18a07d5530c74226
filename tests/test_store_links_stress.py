"""`arbor watch` over a folder holding links to its own store's files, under load: an agent
appends to its log every 10 ms, readers open and close the store all the time, and the
links are made again and again (each new one is a file the watcher looks at). Before the
watcher left such links alone, its SQLite probe opened and closed the -shm, the watcher
lost its lock on it, the next reader reset the -shm, and the watcher died of SIGBUS
(readers got "locking protocol"): in 2 of 2 runs.

A few seconds here; ARBOR_STRESS_SECONDS=60 for a long run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from test_store_links import locks_held

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs /proc/locks")

SECONDS = float(os.environ.get("ARBOR_STRESS_SECONDS", "3"))
READER = ("import sqlite3, sys\n"
          "c = sqlite3.connect(sys.argv[1], timeout=10)\n"
          "try:\n"
          "    print(c.execute('SELECT COUNT(*) FROM entries').fetchone()[0])\n"
          "except sqlite3.Error as e:\n"
          "    print('error:', e)\n"
          "c.close()\n")


def _line(n: int) -> str:
    return json.dumps({"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None,
                       "timestamp": "2026-01-01T00:00:01.000Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": f"n{n}"}]}})


def test_watcher_survives_links_to_its_store_files_under_load(tmp_path):
    db = tmp_path / "arbor.db"
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "agent.jsonl"
    log.write_text(json.dumps({"type": "session", "version": 3, "id": "stress", "cwd": "/w",
                               "timestamp": "2026-01-01T00:00:00.000Z"}) + "\n" + _line(0) + "\n")
    env = {**os.environ, "ARBOR_IMPORT_WORKERS": "0"}
    run = [sys.executable, "-m", "tui"]
    subprocess.run([*run, "import", "-q", "--db", str(db), str(log)], check=True, env=env,
                   capture_output=True)
    watcher = subprocess.Popen([*run, "watch", "-q", "--no-discover", "--db", str(db), str(logs)],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                               env=env)
    stop = threading.Event()
    problems: list[str] = []
    written = [1]

    def agent() -> None:
        n = 1
        while not stop.is_set():
            with log.open("a") as out:
                out.write(_line(n) + "\n")
            written[0] = n + 1
            n += 1
            time.sleep(0.01)

    def readers() -> None:
        while not stop.is_set():
            done = subprocess.run([sys.executable, "-c", READER, str(db)], capture_output=True,
                                  text=True)
            if done.returncode or "error" in done.stdout:
                problems.append(done.stdout + done.stderr)

    def links() -> None:
        round_ = 0
        while not stop.is_set():
            for suffix in ("", "-wal", "-shm"):
                target = Path(f"{db}{suffix}")
                for kind in ("sym", "hard"):
                    link = logs / f"{kind}{suffix or '-store'}-{round_ % 3}.jsonl"
                    try:
                        link.unlink(missing_ok=True)
                        link.symlink_to(target) if kind == "sym" else os.link(target, link)
                    except OSError:
                        pass   # (a -wal or -shm between two readers' lives)
            round_ += 1
            stop.wait(0.1)

    try:
        assert "following" in watcher.stderr.readline()
        threads = [threading.Thread(target=f, daemon=True) for f in (agent, readers, links)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + SECONDS
        shm = Path(f"{db}-shm")
        while time.monotonic() < deadline and watcher.poll() is None:
            time.sleep(0.2)
            assert locks_held(shm, watcher.pid) >= 1, "the watcher lost its lock on the -shm"
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        assert watcher.poll() is None, f"the watcher died ({watcher.returncode})"
        # everything the agent wrote reaches the store
        expected = written[0]
        for _ in range(100):
            with sqlite3.connect(db) as conn:
                count = conn.execute("SELECT COUNT(*) FROM entries e JOIN external_sessions s "
                                     "ON s.id = e.external_session_id WHERE s.uid = 'stress' "
                                     "AND e.type = 'message'").fetchone()[0]
            if count == expected:
                break
            time.sleep(0.1)
        assert count == expected
        assert problems == []
    finally:
        stop.set()
        watcher.terminate()
        watcher.wait(timeout=10)
