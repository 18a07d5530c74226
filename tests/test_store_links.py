"""Links (symbolic or hard, of any name) to a store this process has open, or to its -wal,
-shm or -journal, are never opened: closing any descriptor of them would drop the
process's POSIX locks on the store (`core.store.held_files`). Each test checks in /proc/locks
that the process still holds its lock on the -shm after the code passed over the link."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core import open_store
from core.store.held_files import HeldFile, held_files, open_unless_held
from core.importing import import_paths
from core.store.sqlite_probe import HELD, probe

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs /proc/locks")

TARGETS = ("", "-wal", "-shm", "-journal")
WHAT = {"": "the store", "-wal": "write-ahead log (-wal)", "-shm": "shared-memory index (-shm)",
        "-journal": "rollback journal (-journal)"}


def locks_held(path: Path, pid: int | None = None) -> int:
    """How many POSIX locks process `pid` (this one by default) holds on the file `path`."""
    pid = os.getpid() if pid is None else pid
    inode = os.stat(path).st_ino
    count = 0
    with open("/proc/locks") as table:
        for line in table:
            fields = line.split()
            if "->" in fields[1] or len(fields) < 8:
                continue   # a lock being waited for
            if fields[4] == str(pid) and fields[5].rsplit(":", 1)[-1] == str(inode):
                count += 1
    return count


def pi_log(path: Path, lines: int = 3) -> Path:
    rows = [{"type": "session", "version": 3, "id": f"s-{path.stem}", "cwd": "/w",
             "timestamp": "2026-01-01T00:00:00.000Z"}]
    for n in range(lines):
        rows.append({"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n else None,
                     "timestamp": "2026-01-01T00:00:01.000Z",
                     "message": {"role": "user", "content": [{"type": "text", "text": f"hi {n}"}]}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def held_store(tmp_path):
    """A store this process has open (its -wal and -shm exist and the -shm is locked), and a
    stray empty -journal beside it (which SQLite leaves alone: an empty journal is not hot)."""
    path = tmp_path / "store" / "arbor.db"
    path.parent.mkdir()
    store = open_store(path)
    store.sessions.create("already here")
    (path.parent / "arbor.db-journal").touch()
    assert locks_held(Path(f"{path}-shm")) >= 1
    yield store, path
    store.close()


def make_link(kind: str, target: Path, link: Path) -> Path:
    if kind == "symlink":
        link.symlink_to(target)
    else:
        os.link(target, link)
    return link


def test_held_files_are_the_store_and_its_side_files(held_store):
    store, path = held_store
    files = held_files()
    for suffix in TARGETS:
        st = os.stat(f"{path}{suffix}")
        found = files[st.st_dev, st.st_ino]
        assert found[0] == suffix and WHAT[suffix] in found[1] and str(path) in found[1]
    keys = set(files) & {(os.stat(f"{path}{suffix}").st_dev, os.stat(f"{path}{suffix}").st_ino)
                         for suffix in TARGETS}
    store.close()
    assert len(keys) == 4 and not keys & set(held_files())


@pytest.mark.parametrize("suffix", TARGETS)
@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_import_leaves_links_to_the_open_store_alone(held_store, tmp_path, kind, suffix):
    store, path = held_store
    logs = tmp_path / "logs"
    logs.mkdir()
    pi_log(logs / "agent.jsonl")
    make_link(kind, Path(f"{path}{suffix}"), logs / "notes.jsonl")
    if suffix:
        assert probe(logs / "notes.jsonl").kind == HELD

    for given in ([logs], [logs / "notes.jsonl"]):   # a folder walked, a file named
        report = import_paths(store, given)
        [link] = [f for f in report.files if f.path.endswith("notes.jsonl")]
        assert link.status == "skipped", link
        assert (WHAT[suffix] in link.error and "this arbor has open" in link.error) if suffix \
            else link.error == "an arbor store, not an agent log"
        assert locks_held(Path(f"{path}-shm")) >= 1
    assert len(store.sessions.list()) == 2   # the agent's log was imported beside it
    assert locks_held(Path(f"{path}-shm")) >= 1


@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_recorded_log_replaced_by_a_link_is_left_alone(held_store, tmp_path, kind):
    """A file the store imported, since replaced by a link to the -shm: the import goes by
    its record (no detection), and still does not open it."""
    store, path = held_store
    log = pi_log(tmp_path / "agent.jsonl")
    assert import_paths(store, [log]).files[0].status == "imported"
    log.unlink()
    make_link(kind, Path(f"{path}-shm"), log)
    from core.importing import import_file

    result = import_file(store, log, "pi")
    assert result.status == "skipped" and "shared-memory index" in result.error
    assert import_paths(store, [log]).files[0].status == "skipped"
    assert locks_held(Path(f"{path}-shm")) >= 1


@pytest.mark.parametrize("suffix", TARGETS)
def test_watch_passes_over_links_and_keeps_its_lock(held_store, tmp_path, suffix):
    from core.importing.follow import Follower

    store, path = held_store
    logs = tmp_path / "logs"
    logs.mkdir()
    log = pi_log(logs / "agent.jsonl")
    follower = Follower(store, places=[logs], discover=False)
    follower.handle([log])
    for kind in ("symlink", "hardlink"):
        link = make_link(kind, Path(f"{path}{suffix}"), logs / f"{kind}.jsonl")
        with log.open("a") as out:
            out.write(json.dumps({"type": "message", "id": f"more-{kind}", "parentId": "m2",
                                  "timestamp": "2026-01-01T00:00:02.000Z",
                                  "message": {"role": "user", "content": "more"}}) + "\n")
        report = follower.handle([link, log])
        assert {Path(f.path).name: f.status for f in report.files} == {
            f"{kind}.jsonl": "skipped", "agent.jsonl": "imported"}
        assert locks_held(Path(f"{path}-shm")) >= 1
    follower.retry()   # the catch-up of recorded files passes over them too
    assert locks_held(Path(f"{path}-shm")) >= 1


def test_a_link_swapped_in_after_the_check_is_kept_open(held_store, tmp_path, monkeypatch):
    """Between the check and the open the file became a link to the -shm: the descriptor
    is found out by fstat and kept open (closing it is the harm), not read."""
    import core.store.held_files as module

    store, path = held_store
    link = make_link("hardlink", Path(f"{path}-shm"), tmp_path / "late.jsonl")
    monkeypatch.setattr(module, "check_path", lambda _path, _files=None: None)
    kept = len(module._kept_open)
    with pytest.raises(HeldFile, match="shared-memory index"):
        open_unless_held(link)
    assert len(module._kept_open) == kept + 1
    assert locks_held(Path(f"{path}-shm")) >= 1


def test_other_opens_leave_the_store_files_alone(held_store, tmp_path, monkeypatch):
    """A Claude Code sub-agent's .meta.json, the prices file ARBOR_PRICES names, and the
    rollout `arbor resume` checks: each a link to the -shm here, none opened."""
    from core.usage import pricing
    from core.agents.codex import writer as codex
    from core.agents.claude_code.importer import subagent_meta

    store, path = held_store
    shm = Path(f"{path}-shm")
    make_link("symlink", shm, tmp_path / "agent-a1.meta.json")
    assert subagent_meta(tmp_path / "agent-a1.jsonl") == {}
    make_link("hardlink", shm, tmp_path / "prices.json")
    monkeypatch.setenv(pricing.PRICES_ENV, str(tmp_path / "prices.json"))
    with pytest.raises(pricing.PricesError, match="shared-memory index"):
        pricing._overrides_bytes(pricing.overrides_path())
    make_link("symlink", shm, tmp_path / "rollout.jsonl")
    assert codex._nothing_new_after(tmp_path / "rollout.jsonl", 1, []) is False
    assert locks_held(shm) >= 1


def test_langgraph_importer_does_not_open_a_link_to_the_wal(held_store, tmp_path):
    from core.agents.langgraph import importer as langgraph

    store, path = held_store
    link = make_link("symlink", Path(f"{path}-wal"), tmp_path / "checkpoints.sqlite")
    with pytest.raises(HeldFile):
        langgraph.open_readonly(link)
    report = import_paths(store, [link])
    assert report.files[0].status == "skipped" and "write-ahead log" in report.files[0].error
    assert locks_held(Path(f"{path}-shm")) >= 1


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_export_refuses_a_link_to_a_side_file_of_its_store(held_store, tmp_path, kind, suffix):
    from tui.commands.export_session import _refusal

    store, path = held_store
    link = make_link(kind, Path(f"{path}{suffix}"), tmp_path / "out.jsonl")
    refusal = _refusal(link, store.path)
    assert refusal is not None and WHAT[suffix] in refusal and "will not write over it" in refusal
    assert locks_held(Path(f"{path}-shm")) >= 1


def test_export_command_refuses_a_link_to_the_shm(tmp_path, capsys):
    from tui.cli import main

    db = tmp_path / "arbor.db"
    store = open_store(db)
    session = store.sessions.create("exported")
    store.close()
    keeper = open_store(db)     # holds the store, so that its -wal and -shm exist
    try:
        link = make_link("symlink", Path(f"{db}-shm"), tmp_path / "out.md")
        before = os.stat(f"{db}-shm")
        assert main(["export", session.uid, "-o", str(link), "--db", str(db)]) == 1
        assert "shared-memory index (-shm)" in capsys.readouterr().err
        assert link.is_symlink() and os.stat(f"{db}-shm").st_ino == before.st_ino
        assert locks_held(Path(f"{db}-shm")) >= 1
    finally:
        keeper.close()


def test_the_same_links_elsewhere_are_still_imported_after_the_store_closes(tmp_path):
    """The check is by the stores this process has open, not by name: once the store is
    closed (its -wal and -shm gone), a file of the same name is read like any other."""
    path = tmp_path / "arbor.db"
    store = open_store(path)
    store.close()
    logs = tmp_path / "logs"
    logs.mkdir()
    pi_log(logs / "agent.jsonl")
    os.link(logs / "agent.jsonl", logs / "same.jsonl")   # two names of one log: one import
    store = open_store(path)
    try:
        report = import_paths(store, [logs])
        assert [f.status for f in report.files].count("imported") >= 1
        assert not any(f.status == "skipped" for f in report.files)
    finally:
        store.close()
