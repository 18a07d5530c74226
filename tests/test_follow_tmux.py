"""The real app in a terminal (tmux) while agents write: each new line is shown within a
second or two, a torn line once it is whole, and the cursor and the view stay put."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from agent_writers import agent_home
from core import open_store
from core.importing import import_paths
from terminal import Terminal

REPO = Path(__file__).resolve().parent.parent
DEADLINE = 30.0          # generous for a loaded machine; bench/bench_follow.py measures the latency

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class App:
    """`arbor` in a detached tmux session of 120x40, on a tmux server of its own
    (tests/terminal.py: never the user's server, nor another test's or worker's)."""

    def __init__(self, db: Path, home: Path):
        self.term = Terminal([sys.executable, "-m", "tui", "--db", str(db)], cwd=REPO,
                             env={"HOME": str(home)}).start()

    def screen(self) -> str:
        return self.term.screen()

    def keys(self, *keys: str) -> None:
        self.term.keys(*keys)

    def wait_for(self, text: str, deadline: float = DEADLINE) -> float:
        started = time.monotonic()
        self.term.wait_for(text, timeout=deadline)
        return time.monotonic() - started

    def close(self) -> None:
        self.term.close()


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
    app = App(db, home)
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
