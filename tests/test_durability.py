"""Several processes at once, and writers killed mid-write."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from core import SessionManager, open_store
from core.seed.manager import close_root_dbs

REPO = Path(__file__).resolve().parent.parent

APPENDER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from core import SessionManager
    session_dir, session_id, worker = sys.argv[1], sys.argv[2], sys.argv[3]
    manager = SessionManager.open_by_id_exact(session_dir, session_id)
    for i in range(100):
        manager.append_message({{"role": "user", "content": f"worker {{worker}} message {{i}}"}})
""")

KILLED_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    from core import open_store
    store = open_store(sys.argv[1])
    branch_id, start = int(sys.argv[2]), int(sys.argv[3])
    i = start
    while True:
        # one transaction per message; some large, so that a kill lands inside a write
        text = f"message {{i}} " + ("x" * (i % 7) * 20000)
        store.entries.append_to_branch(branch_id, "message", {{"message": {{"role": "user", "content": text}}}})
        print(i, flush=True)
        i += 1
""")


def test_eight_processes_append_to_one_session(tmp_path):
    session_dir = tmp_path / "sessions"
    manager = SessionManager.new("/p", session_dir)
    manager.init()
    script = APPENDER.format(repo=str(REPO))
    workers = [subprocess.Popen([sys.executable, "-c", script, str(session_dir), manager.session_id, str(w)],
                                stderr=subprocess.PIPE, text=True) for w in range(8)]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    messages = manager.get_messages()
    assert len(messages) == 800
    expected = {f"worker {w} message {i}" for w in range(8) for i in range(100)}
    assert {m["content"] for m in messages} == expected
    # each worker's own messages keep their order on the one linear branch
    for w in range(8):
        mine = [m["content"] for m in messages if m["content"].startswith(f"worker {w} ")]
        assert mine == [f"worker {w} message {i}" for i in range(100)]
    assert manager.store.integrity_check() == "ok"
    close_root_dbs()


def test_writer_killed_twenty_times(tmp_path):
    path = tmp_path / "killed.db"
    store = open_store(path)
    ext = store.sessions.create("crash test")
    branch = store.branches.create(ext.id)
    store.close()
    script = KILLED_WRITER.format(repo=str(REPO))
    rng = random.Random(20)
    confirmed: list[int] = []
    next_index = 0
    for _ in range(20):
        writer = subprocess.Popen([sys.executable, "-c", script, str(path), str(branch.id), str(next_index)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # let it start and write for a while, then kill it without warning
        first = writer.stdout.readline()
        assert first, writer.stderr.read()
        time.sleep(rng.uniform(0.01, 0.15))
        os.kill(writer.pid, signal.SIGKILL)
        out, _ = writer.communicate()
        lines = [first] + out.splitlines()
        printed = [int(line) for line in lines if line.strip()]
        confirmed += printed
        next_index = (printed[-1] + 1) if printed else next_index
        # the next writer may have to recover a WAL left behind by a killed one
    store = open_store(path)
    assert store.integrity_check() == "ok"
    head = store.branches.get(branch.id).head_seq
    contents = [e.message["content"].split(" ")[1] for e in store.paths.entries(head)]
    present = {int(c) for c in contents}
    missing = [i for i in confirmed if i not in present]
    assert not missing, f"{len(missing)} confirmed writes lost"
    assert len(confirmed) >= 20
    # FTS5's own check raises "database disk image is malformed" when the index disagrees
    store.connection.execute("INSERT INTO entries_fts(entries_fts) VALUES ('integrity-check')")
    store.close()
