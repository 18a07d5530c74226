"""The real app in a terminal (tmux) while agents write: each new line is shown within a
second or two, a torn line once it is whole, and the cursor and the view stay put."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_writers import agent_home
from core import open_store
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
DEADLINE = 30.0          # generous for a loaded machine; bench/bench_follow.py measures the latency

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class App:
    """`arbor` in a detached tmux session of 120x40."""

    def __init__(self, name: str, db: Path, home: Path):
        self.name = name
        # (COLUMNS/LINES from the test process would override the terminal's size)
        command = (f"env -u COLUMNS -u LINES HOME={shlex.quote(str(home))} TEXTUAL_ANIMATIONS=none "
                   f"{shlex.quote(sys.executable)} -m tui --db {shlex.quote(str(db))}")
        subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "120", "-y", "40",
                        "-c", str(REPO), command], check=True)

    def screen(self) -> str:
        done = subprocess.run(["tmux", "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True)
        return done.stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def wait_for(self, text: str, deadline: float = DEADLINE) -> float:
        started = time.monotonic()
        while text not in self.screen():
            if time.monotonic() - started > deadline:
                size = subprocess.run(["tmux", "display", "-p", "-t", self.name,
                                       "#{window_width}x#{window_height}"],
                                      capture_output=True, text=True).stdout.strip()
                raise AssertionError(f"{text!r} not shown in {deadline} s ({size}):\n"
                                     f"{self.screen()}")
            time.sleep(0.05)
        return time.monotonic() - started

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.mark.parametrize("agent", ["claude_code", "codex", "pi"])
def test_the_open_app_shows_what_an_agent_appends(tmp_path, agent):
    home = tmp_path / "home"
    writer = agent_home(home)[agent]
    writer.start(f"first words of the {agent} session")
    writer.append("assistant", "an earlier reply")
    db = tmp_path / "store.db"
    store = open_store(db)
    import_paths(store, [writer.path])
    store.close()
    app = App(f"follow-test-{os.getpid()}-{agent}", db, home)
    try:
        app.wait_for("an earlier reply")
        # the messages pane, the cursor one row up: neither it nor the view may move
        app.keys("Tab", "Tab")
        time.sleep(0.3)
        app.keys("Up")
        app.wait_for("entry 1 of 2")
        top_before = _messages_top(app.screen())
        writer.append("user", f"a new {agent} line")
        seconds = app.wait_for(f"a new {agent} line")
        print(f"{agent}: shown {seconds:.2f} s after the append")
        screen = app.screen()
        assert "entry 1 of 3" in screen                      # the cursor stayed on its message
        assert _messages_top(screen) == top_before    # and the view did not scroll
        # a torn line waits for its end, then shows
        rest = writer.torn("assistant", f"the {agent} reply in two parts", cut=30)
        time.sleep(1.5)
        assert "reply in two parts" not in app.screen()
        writer.finish(rest)
        app.wait_for("reply in two parts")
        assert "entry 1 of 4" in app.screen()
    finally:
        app.close()


def _messages_top(screen: str) -> str:
    """The first row of the messages pane (right of the branches pane), as drawn."""
    lines = screen.splitlines()
    return lines[1][len(lines[1]) // 2:] if len(lines) > 1 else ""
