"""Instructions to the first frame (valgrind's callgrind), arbor beside an empty Textual app:
a measure of the start's CPU that the machine's load does not move.

    .venv/bin/python bench/bench_first_frame_ir.py --db /tmp/big.db [--also /work/main]
    .venv/bin/python bench/bench_first_frame_ir.py --new --tree /tmp/tree-1000 [--also DIR]

Each program runs under `valgrind --tool=callgrind` in a tmux window of 120x40 (a real
terminal, as bench_first_frame_tmux.py) and ends itself (os._exit) right after the first
frame is written to the terminal (Textual's App._display): for arbor, the first one with
session rows (for a new store that is the first frame: the first import's process, not
counted, has its rows in by then). Printed: instructions (Ir) to that frame, and the
ratio to the empty app's. `--db`: an existing store, opened with --no-follow; `--new`: a
store not made yet, HOME=TREE (the first run: its first import's process starts).
The bytecode cache is warmed first (a first run compiles). Each program takes about a
minute under valgrind; the counts move by well under 1% between runs.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOCKET = "arbor-bench-ir"

# Run as `python PROBE empty` or `python PROBE arbor ARGS...` (then as `arbor ARGS`).
PROBE = r'''
import os, sys
from textual.app import App

original = App._display


def display(self, screen, renderable):
    original(self, screen, renderable)
    if renderable is None:
        return
    pane = getattr(self, "sessions_pane", None) if sys.argv[1] != "empty" else None
    if sys.argv[1] == "empty" or (pane is not None and pane.rows):
        os._exit(0)   # (callgrind writes its counts as the process ends)


App._display = display
if sys.argv[1] == "empty":
    from textual.widgets import Static

    class Empty(App):
        def compose(self):
            yield Static("EMPTYREADY")

    Empty().run()
else:
    sys.argv = ["arbor", *sys.argv[2:]]
    from tui.cli import run

    run()
'''


def count(command: list[str], env: dict, out: Path, valgrind: bool = True) -> int | None:
    """Instructions `command` ran (under callgrind, in a tmux window) before it ended."""
    log = out.with_suffix(".log")
    run = (["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] if valgrind else []) + command
    subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    subprocess.run(["tmux", "-L", SOCKET, "new-session", "-d", "-s", "ir", "-x", "120", "-y", "40",
                    *[f"-e{k}={v}" for k, v in env.items()],
                    " ".join(run) + f" 2>{log}"], check=True)
    while subprocess.run(["tmux", "-L", SOCKET, "has-session", "-t", "ir"],
                         capture_output=True).returncode == 0:
        time.sleep(0.2)
    found = re.search(r"Collected : (\d+)", log.read_text(errors="replace")) if valgrind else None
    return int(found.group(1)) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--db", help="an existing store (opened with --no-follow)")
    where.add_argument("--new", action="store_true", help="a store not made yet (needs --tree)")
    parser.add_argument("--tree", help="with --new: a HOME holding .claude/projects")
    parser.add_argument("--also", metavar="DIR", help="another arbor checkout, measured alike")
    args = parser.parse_args()
    if args.new and not args.tree:
        parser.error("--new needs --tree")
    for tool in ("valgrind", "tmux"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed")
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-ir-"))
    probe = folder / "probe.py"
    probe.write_text(PROBE)
    checkouts = [REPO] + ([Path(args.also).resolve()] if args.also else [])
    base = {"PYTHONPYCACHEPREFIX": str(folder / "pycache"), "PYTHONDONTWRITEBYTECODE": "",
            "TEXTUAL_ANIMATIONS": "none", "TERM": "xterm-256color"}
    if args.tree:
        base["HOME"] = str(Path(args.tree).resolve())
    try:
        results = []
        for number, checkout in enumerate([None, *checkouts]):
            env = {**base, "PYTHONPATH": str(checkout or REPO)}
            for warm in (True, False):   # (the first run writes the bytecode cache)
                if checkout is None:
                    command = [sys.executable, str(probe), "empty"]
                elif args.new:   # (a new name each time: the store made is left as it is)
                    command = [sys.executable, str(probe), "arbor", "--db",
                               str(folder / f"new-{number}-{warm}.db")]
                else:
                    command = [sys.executable, str(probe), "arbor", "--db", args.db, "--no-follow"]
                ir = count(command, env, folder / f"cg-{number}.out", valgrind=not warm)
            results.append((checkout, ir))
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
        time.sleep(0.5)   # (a first import's process stops at its commit, as the app ends)
        shutil.rmtree(folder, ignore_errors=True)
    empty = results[0][1]
    print(f"instructions to the first frame with rows ({'a new store, the first run' if args.new else args.db}); "
          "tmux 120x40, callgrind")
    for checkout, ir in results:
        label = "empty Textual app" if checkout is None else f"arbor at {checkout}"
        if ir is None:
            print(f"{label:50}  (no count: see its log)")
            continue
        print(f"{label:50}{ir / 1e6:>10,.1f} M" + (f"{ir / empty:>8.3f}x" if empty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
