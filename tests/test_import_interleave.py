"""Agents keep writing while a big file is imported into their store (issue 8, item 2).

Three agent processes append through `core.SessionManager` every 50 ms while another
process imports a large Claude Code file into the same store. Every append must succeed,
and appends must keep landing all through the import: the import commits in short
transactions and a waiting writer gets in at the first gap. An import that held the write
lock for long would leave a quarter of its run with no append at all.

How long an append waits is a figure, not a test (a loaded machine stretches it): the
full-size measurement, 300k lines, with the under-a-second bound, is
bench/bench_interleave.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from core import open_store

from test_import_robust import cc_line, write_lines

REPO = Path(__file__).resolve().parent.parent

AGENT = r"""
import json, os, sys, time
from core.seed.manager import SessionManager
session_dir, stop = sys.argv[1], sys.argv[2]
manager = SessionManager.new("/home/dev/agent", session_dir)
manager.init()
waits, landed, errors = [], [], []
index = 0
next_at = time.monotonic()
while not os.path.exists(stop):
    index += 1
    started = time.monotonic()
    try:
        manager.append_message({"role": "user", "content": f"agent line {index}"})
    except Exception as error:
        errors.append(f"{type(error).__name__}: {error}")
    waits.append(time.monotonic() - started)
    landed.append(time.monotonic())
    next_at += 0.05
    time.sleep(max(0.0, next_at - time.monotonic()))
print(json.dumps({"waits": waits, "landed": landed, "errors": errors,
                  "session": manager.session_id}))
"""

IMPORT = r"""
import json, sys, time
from core import open_store
from core.importing import import_paths
store = open_store(sys.argv[1])
started = time.monotonic()
report = import_paths(store, [sys.argv[2]])
ended = time.monotonic()
print(json.dumps({"started": started, "ended": ended, "seconds": ended - started,
                  "status": report.files[0].status, "entries": report.entries_added}))
"""


def test_agents_append_while_a_big_file_is_imported(tmp_path):
    lines = [cc_line("u0", None, text="start")]
    for n in range(1, 40_000):
        lines.append(cc_line(f"u{n}", f"u{n - 1}", kind="assistant" if n % 2 else "user",
                             msg_id=f"m{n}", text=f"line {n} " + "words " * 40))
    log = write_lines(tmp_path / "big.jsonl", lines)
    session_dir = tmp_path / "agents"
    session_dir.mkdir()
    db = session_dir / "sessions.db"
    open_store(db).close()
    stop = tmp_path / "stop"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    agents = [subprocess.Popen([sys.executable, "-c", AGENT, str(session_dir), str(stop)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(3)]
    try:
        time.sleep(1.0)
        done = subprocess.run([sys.executable, "-c", IMPORT, str(db), str(log)], env=env,
                              capture_output=True, text=True, timeout=600)
        time.sleep(0.3)
    finally:
        stop.touch()
    results = []
    for agent in agents:
        out, err = agent.communicate(timeout=60)
        assert agent.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert done.returncode == 0, done.stderr
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert imported["status"] == "imported" and imported["entries"] == 40_000
    assert imported["seconds"] > 1.0, "the import was too short to overlap the agents"
    waits = [w for r in results for w in r["waits"]]
    errors = [e for r in results for e in r["errors"]]
    assert errors == []
    assert len(waits) >= 3 * 20
    # CLOCK_MONOTONIC is one clock for every process of the machine
    start, span = imported["started"], imported["seconds"]
    quarters = [0, 0, 0, 0]
    for result in results:
        for at in result["landed"]:
            if start <= at < start + span:
                quarters[int(4 * (at - start) / span)] += 1
    assert all(count >= 3 for count in quarters), (
        f"appends that landed in each quarter of the import: {quarters}")
    assert max(waits) < span / 2, f"an append waited {max(waits):.2f} s of {span:.2f} s"
    with open_store(db) as store:
        assert store.integrity_check() == "ok"
        for result in results:
            session = store.sessions.by_uid(result["session"])
            assert session.message_count == len(result["waits"])
