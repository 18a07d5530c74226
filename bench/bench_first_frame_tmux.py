"""First frame WITH session rows, in a real terminal (tmux), beside an empty Textual app.

    .venv/bin/python bench/bench_first_frame_tmux.py [--db /tmp/arbor-big.db] [--runs 7]

Each run starts the program in a new tmux window (120x40) and polls the pane (`tmux
capture-pane`, about every 5 ms) until it shows what we wait for: for arbor, the first
session row's name (read from the store beforehand); for the empty app (a Textual `App`
with one `Static` so its first frame can be seen), that word. Runs alternate between the
two programs, so load changes hit both; the ratio is of the medians of one run. The time
includes the interpreter's start and imports (with a bytecode cache, as after `pip
install`), opening the store and the polling delay (the same for both). `--no-follow`:
arbor starts no file follower (it would add a thread watching agents' folders, which
this store does not have). For arbor also: until the highlighted session's messages are
on screen too (the messages pane's title names the branch), the first screen complete
(the first frame has the rows; the messages come a frame or more later). `--also DIR`: another arbor checkout (e.g. /work/main, to
compare a change with what it changes) measured in the same run, alternating with the two
others (the same interpreter; its code from DIR through PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MESSAGES = "Messages · "   # the messages pane's title once a branch is shown
SOCKET = f"arbor-bench-ff-{os.getpid()}"
EMPTY = ("from textual.app import App\nfrom textual.widgets import Static\n"
         "class Empty(App):\n    def compose(self):\n        yield Static('EMPTYREADY')\n"
         "Empty().run()\n")


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True).stdout


def time_until(command: list[str], marker: str, env: dict, timeout: float = 60.0,
               then: str | None = None) -> tuple[float, float | None]:
    """Seconds from starting `command` in a new tmux session (in the folder PYTHONPATH
    names: `python -m tui` imports from its current folder first) to `marker` on screen,
    and (with `then`) to `then` on screen too."""
    name = "w"
    tmux("kill-session", "-t", name)
    for attempt in range(3):
        started = time.perf_counter()
        # (killing the last session stops the server; a new session started while it is
        # still stopping fails with "server exited unexpectedly": start it again)
        done = subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", name, "-x", "120",
                               "-y", "40", "-c", env["PYTHONPATH"],
                               *[f"-e{k}={v}" for k, v in env.items()],
                               " ".join(command)], capture_output=True, text=True)
        if done.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise SystemExit(f"tmux could not start {command[0]}: {done.stderr.strip()}")
    try:
        first = None
        while time.perf_counter() - started < timeout:
            screen = tmux("capture-pane", "-p", "-t", name)
            if first is None and marker in screen:
                first = time.perf_counter() - started
            if first is not None and (then is None or then in screen):
                return first, (time.perf_counter() - started) if then else None
            time.sleep(0.005)
        raise SystemExit(f"{command[0]}: {marker!r} not on screen after {timeout} s")
    finally:
        tmux("kill-session", "-t", name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="/tmp/arbor-big.db")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--also", metavar="DIR", help="another arbor checkout, measured alike")
    args = parser.parse_args()
    if args.also and not (Path(args.also) / "tui" / "app.py").is_file():
        raise SystemExit(f"--also: {args.also} is not an arbor checkout (no tui/app.py)")
    if not shutil.which("tmux"):
        raise SystemExit("tmux is not installed")
    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as conn:
        sessions, = conn.execute("SELECT COUNT(*) FROM external_sessions").fetchone()
        entries, = conn.execute("SELECT MAX(seq) FROM entries").fetchone()
    env = {"PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache", "PYTHONDONTWRITEBYTECODE": "",
           "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    py = sys.executable
    arbor = [py, "-m", "tui", "--db", args.db, "--no-follow"]
    script = Path(tempfile.mkdtemp(prefix="arbor-bench-ff-")) / "empty_app.py"
    script.write_text(EMPTY)
    empty = [py, str(script)]
    # the first row arbor lists: take it from a warm-up run's screen
    tmux("kill-server")
    first_row = None
    started = time.perf_counter()
    subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "w", "-x", "120", "-y", "40",
                    "-c", str(REPO), *[f"-e{k}={v}" for k, v in env.items()], " ".join(arbor)],
                   check=True)
    while time.perf_counter() - started < 120 and first_row is None:
        for line in tmux("capture-pane", "-p", "-t", "w").splitlines():
            if "Session 0" in line:
                first_row = line[line.index("Session 0"):][:13]
                break
        time.sleep(0.05)
    tmux("kill-session", "-t", "w")
    if first_row is None:
        raise SystemExit("no session row seen in the warm-up run")
    time_until(empty, "EMPTYREADY", env)   # warm-up: bytecode cache
    also_env = {**env, "PYTHONPATH": str(Path(args.also).resolve())} if args.also else None
    if also_env:
        time_until(arbor, first_row, also_env)   # warm-up: bytecode cache
    times: dict[str, list[float]] = {key: [] for key in ("empty", "arbor", "arbor+", "also",
                                                         "also+")}
    for _ in range(args.runs):
        times["empty"].append(time_until(empty, "EMPTYREADY", env)[0])
        for key, run_env in (("arbor", env), ("also", also_env)):
            if run_env:
                row, messages = time_until(arbor, first_row, run_env, then=MESSAGES)
                times[key].append(row)
                times[key + "+"].append(messages)
    tmux("kill-server")
    shutil.rmtree(script.parent, ignore_errors=True)
    base = statistics.median(times["empty"])
    print(f"store: {args.db} ({sessions:,} sessions, {entries:,} entries); tmux 120x40; "
          f"median of {args.runs} alternating runs; load average {os.getloadavg()[0]:.1f}")
    print(f"{'':44}{'median ms':>10}{'min ms':>9}{'x empty':>9}")
    for key, label in (("empty", "empty Textual app: its word on screen"),
                       ("arbor", f"arbor: first session row ({first_row.strip()})"),
                       ("arbor+", "arbor: + the session's messages"),
                       ("also", f"arbor at {args.also}: the same row"),
                       ("also+", f"arbor at {args.also}: + messages")):
        values = times[key]
        if not values:
            continue
        print(f"{label:44}{statistics.median(values) * 1000:>10.0f}{min(values) * 1000:>9.0f}"
              f"{statistics.median(values) / base:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
