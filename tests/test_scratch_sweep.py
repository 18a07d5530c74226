"""Scratch folders of parallel imports that lost their lock file are swept too.

Each window in which an import can be killed is simulated in a child process that runs the
real code and is killed (os._exit) at that point: making the folder, putting its lock file
in place, deleting the folder. What is left must be swept by the next import, once it is
surely nobody's, and never while an import may still be making it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.importing.workers import parallel

pytest.importorskip("fcntl")

ROOT = Path(__file__).resolve().parent.parent


def killed_at(parent: Path, patch: str, then: str = "") -> list[Path]:
    """Run Workers (no worker process) in a child whose `patch` ends it at one point; the
    scratch folders it left."""
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from core.importing import parallel
        die = lambda *a, **k: os._exit(9)
        {patch}
        workers = parallel.Workers(0, [], {str(parent)!r})
        {then}
        os._exit(0)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    return sorted(parent.glob(parallel.FOLDER_PREFIX + "*"))


def aged(folder: Path, seconds: float = parallel.ABANDONED_AFTER + 5) -> Path:
    """Make everything in `folder` look `seconds` old (as after the kill, that long ago)."""
    then = time.time() - seconds
    for path in [*folder.iterdir(), folder]:
        os.utime(path, (then, then), follow_symlinks=False)
    return folder


def test_killed_between_making_the_folder_and_its_lock_file(tmp_path):
    [left] = killed_at(tmp_path, "parallel.own_folder = die")
    assert list(left.iterdir()) == []
    assert parallel.sweep_abandoned(str(tmp_path)) == []      # young: maybe being made
    aged(left)
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(left)]
    assert not left.exists()


def test_killed_between_making_the_lock_file_and_putting_it_in_place(tmp_path):
    [left] = killed_at(tmp_path, "import fcntl; fcntl.flock = die")
    assert [p.name for p in left.iterdir()] == [parallel.OWNER_LOCK + ".new"]
    assert parallel.sweep_abandoned(str(tmp_path)) == []
    aged(left)
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(left)]
    assert not left.exists()


def test_killed_while_its_folder_is_deleted_leaves_the_lock_file(tmp_path):
    """The folder is deleted with its lock file last: killed part-way, it still has its
    lock file, nobody's now, and the next sweep deletes it at once (whatever its age)."""
    then = textwrap.dedent("""
        for name in ("batch-0.db", "batch-0.db-journal", "worker-0.log"):
            open(os.path.join(workers.folder, name), "wb").write(b"x" * 1000)
        real_unlink = os.unlink
        def unlink(path, *a, **k):
            if path.endswith(parallel.OWNER_LOCK):
                os._exit(9)
            return real_unlink(path, *a, **k)
        os.unlink = unlink
        workers.close()
    """).replace("\n", "\n        ")
    [left] = killed_at(tmp_path, "", then)
    assert [p.name for p in left.iterdir()] == [parallel.OWNER_LOCK]
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(left)]
    assert not left.exists()


def test_killed_between_deleting_the_lock_file_and_the_folder(tmp_path):
    then = "os.rmdir = die\n        workers.close()"
    [left] = killed_at(tmp_path, "", then)
    assert list(left.iterdir()) == []
    assert parallel.sweep_abandoned(str(tmp_path)) == []
    aged(left)
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(left)]


def test_a_folder_left_without_its_lock_file_by_an_older_arbor_is_swept(tmp_path):
    """What was seen: an older arbor deleted the folder's files in any order and was killed
    after the lock file went: 1.5 MB of scratch stores left, never swept."""
    left = tmp_path / (parallel.FOLDER_PREFIX + "old1234")
    left.mkdir()
    (left / "batch-3.db").write_bytes(b"\0" * (1536 * 1024))
    (left / "worker-0.log").write_bytes(b"")
    assert parallel.sweep_abandoned(str(tmp_path)) == []
    aged(left)
    assert parallel.sweep_abandoned(str(tmp_path)) == [str(left)]
    assert not left.exists()


def test_a_folder_whose_files_are_still_written_is_not_swept(tmp_path):
    """An old folder (its own time) whose scratch store was written just now is in use."""
    left = tmp_path / (parallel.FOLDER_PREFIX + "busy")
    left.mkdir()
    (left / "batch-0.db").write_bytes(b"x")
    aged(left)
    (left / "batch-0.db").write_bytes(b"xy")   # touched now
    assert parallel.sweep_abandoned(str(tmp_path)) == []
    assert left.exists()


def test_a_live_imports_folder_is_never_swept_however_old(tmp_path):
    live = tmp_path / (parallel.FOLDER_PREFIX + "live")
    live.mkdir()
    held = parallel.own_folder(str(live))
    assert held is not None
    try:
        aged(live, 3600)
        assert parallel.sweep_abandoned(str(tmp_path)) == []
        assert (live / parallel.OWNER_LOCK).exists()
    finally:
        os.close(held)


def test_close_deletes_the_lock_file_last(tmp_path, monkeypatch):
    workers = parallel.Workers(0, [], str(tmp_path))
    for name in ("batch-0.db", "worker-0.log"):
        (Path(workers.folder) / name).write_bytes(b"x")
    order: list[str] = []
    real = os.unlink
    monkeypatch.setattr(os, "unlink", lambda path, *a, **k: (order.append(os.path.basename(path)),
                                                             real(path, *a, **k))[1])
    workers.close()
    assert order[-1] == parallel.OWNER_LOCK and sorted(order[:-1]) == ["batch-0.db", "worker-0.log"]
    assert not Path(workers.folder).exists()
