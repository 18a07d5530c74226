"""The first import as a user meets it, in a real terminal (tmux, tests/terminal.py): `arbor`
on a new store with agents' logs in their usual folders imports them by itself, says how far
it is in the status line and that x stops it; started again it goes on. `arbor import
--discover` shows one progress line (sessions, MB, time left) and stops on Ctrl-C, saying
how to go on."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from terminal import Terminal, arbor_command, tmux_or_skip

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import claude_tree  # noqa: E402

DEADLINE = 60.0   # a loaded machine; bench/bench_first_run.py measures the times


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    tmux_or_skip()
    home = tmp_path_factory.mktemp("home")
    claude_tree.generate(home, mb=40, files=120, seed=53)
    return home


def status_line(screen: str) -> str:
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-2] if len(lines) > 1 else ""


def test_arbor_imports_a_new_store_by_itself_and_x_stops_it(tmp_path, home):
    db = tmp_path / "store.db"
    env = {"HOME": str(home)}
    with Terminal([*arbor_command(), "--db", str(db)], env=env, config_dir=tmp_path) as term:
        screen = term.wait_for(lambda s: "x stops" in status_line(s), timeout=DEADLINE)
        assert re.search(r"importing [\d,]+/[\d,]+ sessions · [\d,.]+/[\d,.]+ MB · ",
                         status_line(screen)), status_line(screen)
        term.wait_for("claude_code", timeout=DEADLINE)            # rows as they land
        # (the footer follows the focus the rows bring a frame or two after them)
        term.wait_for(lambda s: "Stop import" in term.footer())
        term.keys("x")
        screen = term.wait_for("Import stopped", timeout=DEADLINE)
        assert "importing" not in status_line(screen)
        term.wait_for(lambda s: "Stop import" not in term.footer())
        term.keys("q")
    with Terminal([*arbor_command(), "--db", str(db)], env=env, config_dir=tmp_path) as term:
        term.wait_for(lambda s: "x stops" in status_line(s), timeout=DEADLINE)   # goes on
        screen = term.wait_for("files imported", timeout=300)   # its summary
        assert "importing" not in status_line(screen)
        term.wait_for(lambda s: "Stop import" not in term.footer())
        # (the summary covers the end of the status line for a while)
        term.wait_for(lambda s: "following" in status_line(s), timeout=DEADLINE)


def test_import_discover_shows_progress_and_stops_on_ctrl_c(tmp_path, home):
    db = tmp_path / "store.db"
    argv = ["sh", "-c", f"trap true INT; {' '.join(arbor_command())} import --discover --db {db}; "
                        "echo EXIT=$?; sleep 600"]
    with Terminal(argv, size=(100, 30), env={"HOME": str(home)}, config_dir=tmp_path) as term:
        screen = term.wait_for(lambda s: "ctrl+c stops" in s, timeout=DEADLINE)
        line = next(line for line in screen.splitlines() if "ctrl+c stops" in line)
        assert re.search(r"[\d,]+/[\d,]+ sessions .* [\d,.]+/[\d,.]+ MB (.* left|estimating…) · ctrl\+c stops",
                         line), line
        assert len(line.rstrip()) <= 100
        term.keys("C-c")
        screen = term.wait_for("EXIT=", timeout=DEADLINE)
        assert "EXIT=130" in screen
        # (the terminal wraps the sentence where its counts put it, within a word too)
        assert "runitagaintogoon" in re.sub(r"\s+", "", screen)
        assert "Traceback" not in term.history()
