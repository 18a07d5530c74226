"""The demo store is the same every time, and never overwrites a store that is not a demo."""

import os
import subprocess
import sys

import pytest

from core import ArborError, open_store
from core.demo import LONG_SESSION_MESSAGES, build_demo


def dump(path):
    store = open_store(path)
    conn = store.connection
    out = {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
           for table in ("external_sessions", "internal_sessions", "entries", "checkpoints", "labels")}
    store.close()
    return out


def test_demo_is_deterministic(tmp_path):
    build_demo(tmp_path / "a.db")
    build_demo(tmp_path / "b.db")
    assert dump(tmp_path / "a.db") == dump(tmp_path / "b.db")
    build_demo(tmp_path / "a.db")  # rebuilding a demo in place is allowed
    assert dump(tmp_path / "a.db") == dump(tmp_path / "b.db")


def test_demo_has_what_pictures_need(tmp_path):
    store = open_store(build_demo(tmp_path / "d.db"))
    sessions = store.sessions.list(include_archived=True)
    assert len(sessions) == 7 and sum(not s.is_active for s in sessions) == 1
    sub = [s for s in sessions if s.kind == "subagent"]          # under the login session
    assert len(sub) == 1 and sub[0].parent_id == next(s.id for s in sessions
                                                        if s.name == "Fix flaky login test")
    assert {s.source for s in sessions} == {"claude_code", "codex", "pi", "langgraph", "arbor"}
    assert max(s.message_count for s in sessions) == LONG_SESSION_MESSAGES
    types = {r[0] for r in store.connection.execute("SELECT DISTINCT type FROM entries")}
    assert {"message", "compaction", "branch_summary", "model_change", "thinking_level_change"} <= types
    assert store.connection.execute("SELECT COUNT(*) FROM labels").fetchone()[0] >= 3
    assert store.connection.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] >= 4
    assert any(s.branch_count >= 2 for s in sessions)
    store.close()


def test_demo_refuses_other_stores(tmp_path):
    path = tmp_path / "mine.db"
    store = open_store(path)
    store.sessions.create("my real work")
    store.close()
    with pytest.raises(ArborError, match="not a demo store"):
        build_demo(path)
    assert open_store(path).sessions.list()[0].name == "my real work"
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ArborError):
        build_demo(other)
    assert other.read_text() == "hello"


# ------------------------------------------------ rebuilding a demo other processes use
HOLDER = r"""
import sys
from core import open_store
store = open_store(sys.argv[1], create=False)
if len(sys.argv) > 2:  # as the browser does at start
    store.reader().sessions.list()
print(len(store.sessions.list(include_archived=True)), flush=True)
sys.stdin.readline()  # the test runs arbor --demo meanwhile
session = store.sessions.create("written by the holder")
branch = store.branches.create(session.id)
for n in range(3):
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": f"m{n}"}})
print(len(store.sessions.list(include_archived=True)), flush=True)
sys.stdin.readline()
store.close()
"""


def sessions_seen_elsewhere(path) -> list[str]:
    script = ("import sys; from core import open_store; s = open_store(sys.argv[1], create=False); "
              "print('\\n'.join(x.name for x in s.sessions.list(include_archived=True))); s.close()")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def demo_cli(path, monkeypatch) -> int:
    """`arbor --demo --db PATH` in this process, with the browser replaced by nothing."""
    import tui.app
    from tui import cli

    class NoApp:
        return_code = 0

        def __init__(self, store, show_archived=False, **_options):
            pass

        def run(self):
            pass

    monkeypatch.setattr(tui.app, "ArborApp", NoApp)
    return cli.main(["--demo", "--db", str(path)])


def test_demo_is_not_rebuilt_while_another_process_has_it_open(tmp_path, monkeypatch, capsys):
    check_demo_refused_while_held(tmp_path, monkeypatch, capsys)


def test_demo_is_not_rebuilt_while_the_browser_has_it_open(tmp_path, monkeypatch, capsys):
    check_demo_refused_while_held(tmp_path, monkeypatch, capsys, "reader")


def check_demo_refused_while_held(tmp_path, monkeypatch, capsys, *how: str):
    path = build_demo(tmp_path / "demo.db")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), *how],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "7"
        assert demo_cli(path, monkeypatch) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "is open in another program" in err[0]
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "8"
        # the holder's writes went to the store everyone uses, not to a WAL unlinked under it
        assert "written by the holder" in sessions_seen_elsewhere(path)
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
    finally:
        holder.kill()
    # once nobody has it open, --demo rebuilds it (the holder's session is gone again)
    assert demo_cli(path, monkeypatch) == 0
    assert "written by the holder" not in sessions_seen_elsewhere(path)


def test_rebuilding_the_demo_replaces_its_content_not_its_file(tmp_path, monkeypatch):
    path = build_demo(tmp_path / "demo.db")
    store = open_store(path)
    store.sessions.create("made in the demo")
    store.close()
    # A second name for the same file: a rebuild that unlinked demo.db and made a new one
    # would leave this link on the old file.
    os.link(path, tmp_path / "same-file")
    assert demo_cli(path, monkeypatch) == 0
    assert os.path.samefile(path, tmp_path / "same-file")
    assert "made in the demo" not in sessions_seen_elsewhere(path)
    os.unlink(tmp_path / "same-file")
    assert dump(path) == dump(build_demo(tmp_path / "fresh.db"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.db", "fresh.db"]


def test_a_demo_with_another_page_size_is_rebuilt(tmp_path):
    import sqlite3

    from core.demo import _write_demo

    old = tmp_path / "old.db"
    _write_demo(old, page_size=4096)  # as demos were built before stores had 16 KiB pages
    build_demo(old)
    conn = sqlite3.connect(old)
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    conn.close()
    assert dump(old) == dump(build_demo(tmp_path / "new.db"))
