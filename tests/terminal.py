"""The real `arbor` in a real terminal: tmux, for tests that must see what a user sees.

Each `Terminal` runs its own tmux server (`tmux -L <unique socket>`, no user config), so a
test never touches anyone's sessions, at a fixed size with Textual's animations off. The
pane is kept when the app exits (`remain-on-exit`), so a crash leaves its traceback to read.

    with Terminal([*arbor_command(), "--db", str(path)]) as term:
        term.wait_for("Sessions")
        term.keys("Tab", "Tab", "b")     # one send-keys: the keys arrive in one burst
        term.wait_for(lambda screen: "New branch" in screen)

`tmux_or_skip()` skips a test, with the reason, where tmux is not installed.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

_numbers = itertools.count(1)
CONFIG = "set -g remain-on-exit on\nset -g history-limit 5000\n"


def _server_env() -> dict[str, str]:
    """The environment the tmux server (and so the app) starts with: without COLUMNS and
    LINES, which pytest's Textual plugins set to 80x24 and which would fix the app's size
    whatever the terminal's, and without an enclosing tmux's TMUX."""
    drop = {"COLUMNS", "LINES", "TMUX", "TMUX_PANE"}
    return {key: value for key, value in os.environ.items() if key not in drop}


def tmux_or_skip() -> str:
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed: the real-terminal tests need it (apt-get install tmux)")
    return tmux


def arbor_command() -> list[str]:
    """The installed `arbor` script next to this Python, else `python -m tui`."""
    script = Path(sys.executable).with_name("arbor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui"]


class Terminal:
    def __init__(self, argv: list[str], *, size: tuple[int, int] = (120, 40), cwd: Path | None = None,
                 env: dict[str, str] | None = None, config_dir: Path | None = None) -> None:
        self.tmux = tmux_or_skip()
        self.argv = argv
        self.size = size
        self.cwd = cwd
        self.env = {"TEXTUAL_ANIMATIONS": "none", "COLORTERM": "truecolor", **(env or {})}
        self.socket = f"arbor-test-{os.getpid()}-{next(_numbers)}"
        self.target = "arbor"
        self._config = (config_dir or Path("/tmp")) / f"{self.socket}.conf"

    # ------------------------------------------------------------- tmux calls
    def _tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([self.tmux, "-L", self.socket, "-f", str(self._config), *args],
                              capture_output=True, text=True, timeout=30, env=_server_env())
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> "Terminal":
        self._config.write_text(CONFIG)
        width, height = self.size
        env_args = [arg for key, value in self.env.items() for arg in ("-e", f"{key}={value}")]
        self._tmux("new-session", "-d", "-s", self.target, "-x", str(width), "-y", str(height),
                   *(["-c", str(self.cwd)] if self.cwd else []), *env_args, "--", *self.argv)
        self._socket_path = self._tmux("display-message", "-p", "#{socket_path}").strip()
        return self

    def close(self) -> None:
        self._tmux("kill-server", check=False)
        self._config.unlink(missing_ok=True)
        if getattr(self, "_socket_path", ""):  # tmux 3.3 may leave it behind
            Path(self._socket_path).unlink(missing_ok=True)

    def __enter__(self) -> "Terminal":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ using
    def keys(self, *keys: str) -> None:
        """Send keys in tmux's names (`Tab`, `Up`, `Enter`, `b`) in ONE send-keys: the app
        reads them in one burst, as from the fastest typist."""
        self._tmux("send-keys", "-t", self.target, *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.target)

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", self.target, "-x", str(width), "-y", str(height))
        self.size = (width, height)

    def exited(self) -> int | None:
        """The app's exit status once it has exited, else None."""
        out = self._tmux("display-message", "-p", "-t", self.target,
                         "#{pane_dead} #{pane_dead_status}").split()
        if out and out[0] == "1":
            return int(out[1]) if len(out) > 1 else -1
        return None

    def wait_for(self, what: str | Callable[[str], bool], timeout: float = 20.0) -> str:
        """The screen, once it shows `what` (text, or a test on the screen's text)."""
        test = (lambda screen: what in screen) if isinstance(what, str) else what
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            status = self.exited()
            if status is not None:
                raise AssertionError(f"arbor exited with status {status}:\n{self.history()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not on screen after {timeout:.0f} s: {what!r}\n{screen}")
            time.sleep(0.05)

    def history(self) -> str:
        """Everything the pane printed, scrollback included (a traceback after a crash)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.target)

    def footer(self) -> str:
        lines = [line for line in self.screen().splitlines() if line.strip()]
        return lines[-1] if lines else ""
