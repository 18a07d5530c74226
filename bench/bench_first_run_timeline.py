"""Where the first run's time goes: a timeline of the app and its first import's process.

    .venv/bin/python bench/bench_first_run_timeline.py --tree /tmp/tree-1000 --runs 7 [--also /work/main]

Runs in turn, in tmux (120x40) as bench_first_run.py does: the empty Textual app, arbor on a
small store made here with two of the tree's sessions (`--no-follow`: no import, a normal
start), arbor's first run on a new store (HOME=TREE), and with `--also`, the first run of
another checkout. Every process is timed by bench/timeline_probe (sitecustomize: marks with
wall clock and CPU, see there). Prints, for each: the first row (the empty app: its word)
on screen, median and min, x the empty app; the app's CPU at its first frame, the child's
CPU then, the child's first commit; and the app's steps as median wall/CPU ms from the step
before (a step whose wall is far above its CPU waited: on the other core's work, the disk,
the scheduler). `--show N`: also print every mark of the last N runs of each first run.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_first_frame_tmux as frames  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PROBE = Path(__file__).resolve().parent / "timeline_probe"
STEPS = ["interp-up", "browse-run", "open-end", "tell-store", "textual.app-imported",
         "tui.app-imported", "app-run", "first-page", "display-1"]


def small_store(tree: Path, folder: Path) -> Path:
    """A store holding two of the tree's newest small sessions (made by this checkout)."""
    db = folder / "small.db"
    code = ("import sys; from core import open_store; from core.importing import import_paths; "
            "s = open_store(sys.argv[1]); import_paths(s, sys.argv[2:]); s.close()")
    logs = sorted(glob.glob(str(tree / ".claude" / "projects" / "*" / "*.jsonl")),
                  key=os.path.getmtime, reverse=True)
    two = [log for log in logs if os.path.getsize(log) < 4 << 20][:2]
    subprocess.run([sys.executable, "-c", code, str(db), *two], check=True, cwd=REPO)
    return db


LINGER = [0.3]   # seconds kept running after the row is seen (--linger)


def one(command: str, repo: Path, tree: Path, marker: str, copy: Path | None = None) -> list:
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-timeline-"))
    log = folder / "marks"
    if copy is not None:   # (SQLite's backup: never a store copied as a file)
        source = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        target = sqlite3.connect(folder / "store.db")
        source.backup(target)
        target.close()
        source.close()
    env = {"PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache", "PYTHONDONTWRITEBYTECODE": "",
           "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": f"{PROBE}:{repo}",
           "TERM": "xterm-256color", "ARBOR_TL": str(log), "HOME": str(tree)}
    frames.tmux("kill-session", "-t", "w")
    started = time.time()
    subprocess.run(["tmux", "-L", frames.SOCKET, "new-session", "-d", "-s", "w", "-x", "120",
                    "-y", "40", "-c", str(repo), *[f"-e{k}={v}" for k, v in env.items()],
                    command.format(db=folder / "store.db")], check=True)
    seen = None
    while time.time() - started < 20:
        if marker in frames.tmux("capture-pane", "-p", "-t", "w"):
            seen = time.time()
            break
        time.sleep(0.005)
    time.sleep(LINGER[0] if marker != "EMPTYREADY" else 0.3)
    frames.tmux("kill-session", "-t", "w")
    time.sleep(0.5)
    marks = []
    pids: list[str] = []
    for line in (log.read_text().splitlines() if log.exists() else []):
        pid, *name, wall, cpu = line.split()
        if pid not in pids:
            pids.append(pid)
        who = "app" if pid == pids[0] else "child" if pid == pids[1] else pid
        marks.append((float(wall) - started, who, " ".join(name), float(cpu)))
    marks.append((seen - started if seen else None, "screen", "row", 0.0))
    shutil.rmtree(folder, ignore_errors=True)
    return marks


def mark(marks: list, name: str, who: str | None = None):
    return next(((t, cpu) for t, w, n, cpu in marks
                 if n.startswith(name) and (who is None or w == who)), (None, None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", required=True, help="a HOME holding .claude/projects")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--also", metavar="DIR", help="another arbor checkout's first run")
    parser.add_argument("--show", type=int, default=0, metavar="N")
    parser.add_argument("--linger", type=float, default=0.3, metavar="S",
                        help="keep arbor running S seconds after its first row (the marks "
                             "of what follows: --show)")
    args = parser.parse_args()
    LINGER[0] = args.linger
    tree = Path(args.tree).resolve()
    work = Path(tempfile.mkdtemp(prefix="arbor-bench-timeline-"))
    empty = work / "empty_app.py"
    empty.write_text(frames.EMPTY)
    small = small_store(tree, work)
    python = sys.executable
    arbor = f"{python} -m tui --db {{db}}"
    kinds = [("empty app", lambda: one(f"{python} {empty}", REPO, tree, "EMPTYREADY")),
             ("normal start (small store)",
              lambda: one(arbor + " --no-follow", REPO, tree, "claude_code", copy=small)),
             ("first run", lambda: one(arbor, REPO, tree, "claude_code"))]
    if args.also:
        also = Path(args.also).resolve()
        kinds.append((f"first run, {also}", lambda: one(arbor, also, tree, "claude_code")))
    frames.tmux("kill-server")
    for _name, run in kinds:   # (warm-up: the bytecode cache)
        run()
    results: dict[str, list] = {name: [] for name, _run in kinds}
    loads = []
    for number in range(args.runs):
        loads.append(os.getloadavg()[0])
        for name, run in kinds[::-1] if number % 2 else kinds:
            results[name].append(run())
    frames.tmux("kill-server")
    shutil.rmtree(work, ignore_errors=True)
    print(f"tree {tree}; {args.runs} alternating runs; load average "
          f"{min(loads):.1f}-{max(loads):.1f}")
    base = statistics.median(mark(m, "row")[0] or mark(m, "display-1")[0]
                             for m in results["empty app"])
    print(f"{'':34}{'row med':>8}{'min':>6}{'x empty':>8}{'app cpu':>8}{'child cpu':>10}"
          f"{'commit':>8}  (ms, at the app's first frame)")
    for name, runs in results.items():
        rows = [mark(m, "row")[0] for m in runs if mark(m, "row")[0] is not None]
        cpu = [mark(m, "display-1")[1] for m in runs if mark(m, "display-1")[1] is not None]
        child = []
        for m in runs:
            frame = next((n for _t, _w, n, _c in m if n.startswith("display-1")), "")
            if "childcpu=[" in frame:
                figures = frame.split("childcpu=[")[1].split("]")[0]
                child.append(int(figures.split(",")[0]) if figures[:1].isdigit() else 0)
        commits = [mark(m, "child-commit-1")[0] for m in runs if mark(m, "child-commit-1")[0]]
        median = statistics.median
        print(f"{name[:33]:34}{median(rows) * 1000:>8.0f}{min(rows) * 1000:>6.0f}"
              f"{median(rows) / base:>8.2f}{median(cpu) * 1000 if cpu else 0:>8.0f}"
              f"{median(child) if child else 0:>10.0f}"
              f"{median(commits) * 1000 if commits else 0:>8.0f}")
    for name, runs in results.items():
        if name == "empty app":
            continue
        steps = []
        for step in STEPS:
            pairs = []
            for m in runs:
                before = (0.0, 0.0)
                for previous in STEPS[:STEPS.index(step)][::-1]:
                    if mark(m, previous, "app")[0] is not None:
                        before = mark(m, previous, "app")
                        break
                now = mark(m, step, "app")
                if now[0] is not None:
                    pairs.append(((now[0] - before[0]) * 1000, (now[1] - before[1]) * 1000))
            if pairs:
                steps.append(f"{step} {statistics.median(p[0] for p in pairs):.0f}/"
                             f"{statistics.median(p[1] for p in pairs):.0f}")
        print(f"{name}: " + ", ".join(steps))
    shown = [(name, m) for name in results if name.startswith("first run")
             for m in (results[name][-args.show:] if args.show else [])]
    for name, m in shown:
        print(f"--- {name}")
        for t, who, name, cpu in sorted(m, key=lambda e: (e[0] is None, e[0] or 0)):
            print(f"  {who:<6} {(t or 0) * 1000:7.0f} ms  {name:<40} cpu {cpu * 1000:6.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
