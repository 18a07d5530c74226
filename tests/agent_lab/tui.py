"""Driving an agent's own interactive TUI in tmux, as a user would (for the fixtures of
features that only the TUI reaches: `/chat save`, rewinds, forks, compactions).

The agent runs in its own tmux server (`-L <socket>`), at a fixed size, with the lab's
environment; `type_line` types text then Enter, `wait_for` polls capture-pane."""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path


class Tui:
    def __init__(self, socket: str, name: str, *, width: int = 120, height: int = 40):
        self.socket, self.name, self.width, self.height = socket, name, width, height
        self.log: list[str] = []           # the steps, for SOURCES.md

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True).stdout

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.tmux("kill-session", "-t", self.name)
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"cd {shlex.quote(str(cwd))} && env -i {exports} " + " ".join(
            shlex.quote(str(a)) for a in argv) + "; sleep 3"
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(self.width),
                  "-y", str(self.height), command)
        self.log.append("start: " + " ".join(Path(str(argv[0])).name if i == 0 else str(a)
                                             for i, a in enumerate(argv)))

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def alive(self) -> bool:
        return self.name in self.tmux("list-sessions", "-F", "#{session_name}").split()

    def wait_for(self, text: str, timeout: float = 60, *, gone: bool = False) -> str:
        end = time.time() + timeout
        while time.time() < end:
            screen = self.screen()
            if (text in screen) != gone:
                return screen
            time.sleep(0.3)
        raise TimeoutError(f"{'still' if gone else 'never'} saw {text!r} on:\n{self.screen()}")

    def keys(self, *keys: str, note: str = "") -> None:
        self.tmux("send-keys", "-t", self.name, *keys)
        self.log.append(f"keys: {' '.join(keys)}" + (f"  ({note})" if note else ""))

    def type_line(self, text: str, *, enter_delay: float = 0.6) -> None:
        self.tmux("send-keys", "-t", self.name, "-l", text)
        time.sleep(enter_delay)
        self.tmux("send-keys", "-t", self.name, "Enter")
        self.log.append(f"type: {text}⏎")

    def stop(self) -> None:
        self.tmux("kill-session", "-t", self.name)
