"""The real `arbor` in tmux, as a user runs it (see tests/terminal.py).

Few and fast: what only a real terminal and real processes show. The terminal survives
resizing and keys in one burst (issue 8, item 5), and the open app and other processes
see each other's writes, with a plain `sqlite3` reader coming and going in between
(issue 8, item 1: a process that dropped its locks wrote to a WAL nobody else read).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from terminal import Terminal, arbor_command, tmux_or_skip

REPO = Path(__file__).resolve().parent.parent
TRIP = "Trip planner agent (LangGraph)"  # the demo's newest session: shown first


@pytest.fixture
def demo(tmp_path):
    """The demo store as `sessions.db` (the file an agent's `SessionManager` keeps in its
    session dir), opened by the real app in tmux."""
    tmux_or_skip()
    path = tmp_path / "sessions.db"
    with Terminal([*arbor_command(), "--demo", "--db", str(path)], cwd=tmp_path,
                  config_dir=tmp_path) as term:
        term.wait_for(TRIP[:20])
        term.wait_for(lambda screen: "of 6 ─" in screen)  # its branch's messages, at the end
        yield term, path


def other_process(code: str, path: Path) -> object:
    """Run `code` in a fresh Python process with `db` (the store's path) defined; what it
    assigns to `out` comes back (as JSON)."""
    script = ("import json, sys\nsys.path.insert(0, %r)\ndb = %r\nout = None\n%s\n"
              "print(json.dumps(out))\n" % (str(REPO), str(path), code))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def branches_seen_by_another_process(path: Path, name: str) -> list[dict]:
    return other_process(
        "from core import open_store\n"
        "s = open_store(db, create=False)\n"
        "sid = next(x.id for x in s.sessions.list() if x.name == %r)\n"
        "out = [{'id': b.id, 'head': b.head_seq, 'current': b.is_current, 'parent': b.parent_session_id}"
        " for b in s.branches.of_session(sid)]\n"
        "s.close()\n" % name, path)


def sqlite_select_1(path: Path) -> None:
    """Another process opens the store, reads, and closes it: the sqlite3 shell if there is
    one, else Python's sqlite3 (either way SQLite's own locking, nothing of arbor's)."""
    if shutil.which("sqlite3"):
        done = subprocess.run(["sqlite3", str(path), "select 1"], capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    else:
        other_process("import sqlite3\nc = sqlite3.connect(db)\nout = c.execute('select 1').fetchone()[0]\n"
                      "c.close()\n", path)


def pane_pid(term: Terminal) -> int:
    return int(term._tmux("display-message", "-p", "-t", term.target, "#{pane_pid}").strip())


def deleted_store_files(pid: int, path: Path) -> list[str]:
    """The store's files that the process holds open although they were deleted."""
    fds = Path(f"/proc/{pid}/fd")
    if not fds.exists():
        return []
    out = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith(str(path)) and target.endswith("(deleted)"):
            out.append(target)
    return out


# ------------------------------------------------------------------ item 5
def test_resizing_the_real_terminal_both_ways_with_messages_open(demo):
    term, _ = demo
    term.keys("Tab")  # (one at a time: this test is about resizing, not about bursts)
    term.wait_for(lambda screen: "Make current" in term.footer())
    term.keys("Tab")
    term.wait_for(lambda screen: "v Raw" in term.footer())
    term.keys("Space", "Up", "Space", "Up", "Space", "Up", "Space")
    term.wait_for(lambda screen: '"city": "Lisbon"' in screen)  # a tool call, opened
    for _ in range(3):
        for width, height in [(200, 60), (120, 40), (80, 24), (240, 70), (120, 40)]:
            term.resize(width, height)
            # drawn at the new size: the panes' bottom border reaches the right edge
            term.wait_for(lambda screen: any(len(line) == width and line.endswith("╯")
                                             for line in screen.splitlines()), timeout=10)
    assert term.exited() is None
    assert "Traceback" not in term.history()
    # the messages pane's text and its cursor's position in its border, in one frame (a capture
    # taken mid-redraw after the last resize can hold the one without the other)
    term.wait_for(lambda screen: "Plan three days in Lisbon" in screen and "of 6 ─" in screen)


def pane_titles(screen: str) -> list[str]:
    """The panes drawn, left to right, by their border titles on the top line."""
    top = screen.splitlines()[0]
    return [name for name in ("Sessions", "Branches", "Entries", "Messages") if f"─ {name}" in top]


def test_narrow_terminals_give_the_focused_pane_the_room(demo):
    """Issue 26, part 6: below 100 columns the pane with focus and the one it drives, the
    messages alone; below 70 one pane; z zooms and unzooms; every frame fills the width."""
    term, _ = demo

    def at(width: int, height: int) -> None:
        term.resize(width, height)
        term.wait_for(lambda screen: screen.splitlines()[0].endswith("╮")
                      and len(screen.splitlines()[0]) == width, timeout=10)

    def shows(*panes: str) -> str:
        return term.wait_for(lambda screen: pane_titles(screen) == list(panes), timeout=10)

    shows("Sessions", "Branches", "Messages")
    term.keys("Tab")
    term.wait_for(lambda screen: "Make current" in term.footer())
    term.keys("Tab")
    term.wait_for(lambda screen: "v Raw" in term.footer())
    at(80, 24)
    screen = shows("Messages")   # reading: the whole width
    assert "Plan three days in Lisbon." in screen
    at(60, 20)
    shows("Messages")
    term.keys("BTab")
    shows("Branches")
    at(80, 24)
    shows("Branches", "Messages")
    term.keys("BTab")
    screen = shows("Sessions", "Branches")
    # the names whole, with their costs (cut to 8-14 cells, some costs lost, before)
    for text in ("Migrate orders table to new schema", "$81.82", "Trip planner agent (LangGraph)",
                 "claude_code"):
        assert text in screen
    term.wait_for(lambda screen: "z Zoom" in term.footer())
    term.keys("z")
    shows("Sessions")
    term.keys("z")
    shows("Sessions", "Branches")
    at(120, 40)
    shows("Sessions", "Branches", "Messages")
    # z works; the footer keeps its room for the pane's keys
    term.wait_for(lambda screen: "z Zoom" not in term.footer() and "q Quit" in term.footer())
    term.keys("z")
    shows("Sessions")
    term.keys("z")
    shows("Sessions", "Branches", "Messages")
    assert term.exited() is None and "Traceback" not in term.history()


def test_keys_in_one_burst_act_in_the_pane_the_keys_before_them_focused(demo):
    term, path = demo
    before = branches_seen_by_another_process(path, TRIP)
    # to the messages pane, up two messages, branch (enter accepts the suggested name)
    term.keys("Tab", "Tab", "Up", "Up", "b", "Enter")
    screen = term.wait_for("Branched")
    assert "at message" in " ".join(screen.split())  # not "at the head of …" (the branches pane's b)
    after = branches_seen_by_another_process(path, TRIP)
    new = [b for b in after if b["id"] not in {old["id"] for old in before}]
    assert len(new) == 1 and new[0]["current"]
    parent = next(b for b in before if b["id"] == new[0]["parent"])
    assert new[0]["head"] != parent["head"]  # a message above the head, not the head
    assert "v Raw" in term.footer()  # the messages pane kept the focus


# ------------------------------------------------------------------ item 1
def test_app_and_other_processes_see_each_others_writes_with_sqlite3_in_between(demo):
    term, path = demo
    pid = pane_pid(term)
    sqlite_select_1(path)
    # a branch made by key in the app is seen by another process
    before = branches_seen_by_another_process(path, TRIP)
    term.keys("Tab", "b", "Enter")
    term.wait_for("Branched")
    after = branches_seen_by_another_process(path, TRIP)
    assert len(after) == len(before) + 1
    sqlite_select_1(path)
    # another process's append (an agent's SessionManager) is shown by the app
    started = time.monotonic()
    other_process(
        "from core import SessionManager, open_store\n"
        "s = open_store(db, create=False)\n"
        "uid = next(x.uid for x in s.sessions.list() if x.name == %r)\n"
        "s.close()\n"
        "m = SessionManager.open_by_id_exact(%r, uid)\n"
        "out = m.append_message({'role': 'user', 'content': 'Written by another process'})\n"
        % (TRIP, str(path.parent)), path)
    term.wait_for("Written by another process", timeout=10)
    shown_after = time.monotonic() - started
    sqlite_select_1(path)
    # and the app's next write is still seen outside, on top of the agent's
    term.keys("b", "Enter")
    term.wait_for(lambda screen: screen.count("New branch") >= 1 and len(
        branches_seen_by_another_process(path, TRIP)) == len(after) + 1, timeout=10)
    assert other_process("import sqlite3\nc = sqlite3.connect(db)\n"
                         "out = c.execute('pragma integrity_check').fetchone()[0]\n", path) == "ok"
    assert deleted_store_files(pid, path) == []
    assert term.exited() is None
    assert shown_after < 5, f"the app showed another process's append after {shown_after:.1f} s"
