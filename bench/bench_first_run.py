"""The first run, in a real terminal (tmux): `arbor` on a new store, with agents' logs in
their usual folders, beside an empty Textual app's first frame.

    .venv/bin/python bench/bench_first_run.py --tree /tmp/tree-1000 [--runs 3]

`--tree` is a HOME holding `.claude/projects` (bench/claude_tree.py makes one:
`python bench/claude_tree.py /tmp/tree-1000 --mb 1000`). Each run starts, in a new tmux
window of 120x40 and in turn: the empty Textual app (until its word is on screen), and
`arbor --db NEW` with HOME=TREE on a store that does not exist yet (until the first session
row is on screen, then until the newest 20 sessions are complete: their files' import
records say they were read to their end, so each has its branches and is browsable). The
newest 20 sessions are the first import's own head (core/importing/newest.py: by file
mtime, each sub-agent's file with its session, which it does not count as one); "but the
long one" leaves out the file of the longest of them when it is over the import's
HEAD_SLICE (the session an agent is writing, read on in slices while the others are read:
325 MB cannot be whole within a second). (Until 7 Dec 2026 this counted the newest 20
files, sub-agents' too, and left out every one over HEAD_SLICE: 18 sessions of the 1 GB
tree, without its 11 MB one.) The store is read with SQLite, read-only, every 20 ms.
Ratios are of the medians of one run.

`--rows-only`: stop each run at the first row (the newest 20 are not waited for).
`--also DIR`: another arbor checkout (e.g. /work/main), measured in the same run, its runs
interleaved with this checkout's (its code from DIR through PYTHONPATH, the same
interpreter), to compare a change with what it changes.
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
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_first_frame_tmux as frames  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.importing.driver import HEAD_FILES, HEAD_SLICE  # noqa: E402
from core.importing.newest import head_length, is_subagent, parents_first  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
ROW = "claude_code"     # the second line of every session row of these trees
FRAME = "context (v)"   # the status line, drawn with the first frame


class _Found(NamedTuple):   # (what core.importing.newest reads of a found file)
    name: str
    path: Path


def newest(tree: Path, count: int = HEAD_FILES) -> list[tuple[str, int]]:
    """The files of the newest `count` sessions, as the first import orders them."""
    files = sorted(((p.stat().st_mtime_ns, str(p), p.stat().st_size)
                    for p in (tree / ".claude" / "projects").rglob("*.jsonl")), reverse=True)
    found = parents_first([_Found(path, Path(path)) for _mtime, path, _size in files])
    sizes = {path: size for _mtime, path, size in files}
    head = found[:head_length([item.name for item in found], count)]
    return [(item.name, sizes[item.name]) for item in head]


def but_the_long_one(wanted: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """`wanted` without the longest session's file, when it is over HEAD_SLICE."""
    sessions = [(size, path) for path, size in wanted if not is_subagent(path)]
    size, longest = max(sessions, default=(0, ""))
    return [item for item in wanted if item[0] != longest] if size > HEAD_SLICE else wanted


def complete(db: Path, wanted: list[tuple[str, int]]) -> int:
    """How many of `wanted` (path, size) the store's records say were read to their end."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
    except sqlite3.Error:
        return 0
    try:
        rows = dict(((path, (size, done)) for path, size, done in conn.execute(
            "SELECT path, size, complete FROM import_sources")))
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
    return sum(1 for path, size in wanted if rows.get(path, (0, 0)) == (size, 1))


def first_run(tree: Path, env: dict, timeout: float, rows_only: bool = False
              ) -> tuple[float | None, float, float | None, float | None]:
    """Seconds to arbor's first frame, to the first row, to the newest 20 complete but the
    long one, to all 20 (`rows_only`: to the first row)."""
    folder = Path(tempfile.mkdtemp(prefix="arbor-bench-first-run-"))
    db = folder / "store.db"
    wanted = newest(tree)
    small = but_the_long_one(wanted)
    command = [sys.executable, "-m", "tui", "--db", str(db)]
    name = "w"
    frames.tmux("kill-session", "-t", name)
    for _attempt in range(3):
        started = time.perf_counter()
        done = subprocess.run(["tmux", "-L", frames.SOCKET, "new-session", "-d", "-s", name,
                               "-x", "120", "-y", "40", "-c", env["PYTHONPATH"],
                               *[f"-e{k}={v}" for k, v in {**env, "HOME": str(tree)}.items()],
                               " ".join(command)], capture_output=True, text=True)
        if done.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise SystemExit(f"tmux could not start arbor: {done.stderr.strip()}")
    frame = first = most = every = None
    try:
        while time.perf_counter() - started < timeout:
            if first is None:
                screen = frames.tmux("capture-pane", "-p", "-t", name)
                if frame is None and FRAME in screen:
                    frame = time.perf_counter() - started
                if ROW in screen:
                    first = time.perf_counter() - started
                    if rows_only:
                        break
                time.sleep(0.005)
                continue
            have = complete(db, wanted)
            now = time.perf_counter() - started
            if most is None and complete(db, small) == len(small):
                most = now
            if have == len(wanted):
                every = now
                break
            time.sleep(0.02)
    finally:
        frames.tmux("kill-session", "-t", name)
        time.sleep(0.5)   # (the app stops its import at a commit and closes the store)
        shutil.rmtree(folder, ignore_errors=True)
    if first is None:
        raise SystemExit(f"arbor: no session row on screen after {timeout} s")
    return frame, first, most, every


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", required=True, help="a HOME holding .claude/projects")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--rows-only", action="store_true",
                        help="stop each run at the first row (not waiting for the newest 20)")
    parser.add_argument("--also", metavar="DIR",
                        help="another arbor checkout, measured alike in the same run")
    args = parser.parse_args()
    if args.also and not (Path(args.also) / "tui" / "app.py").is_file():
        raise SystemExit(f"--also: {args.also} is not an arbor checkout (no tui/app.py)")
    tree = Path(args.tree).resolve()
    if not (tree / ".claude" / "projects").is_dir():
        raise SystemExit(f"--tree: {tree} holds no .claude/projects")
    if not shutil.which("tmux"):
        raise SystemExit("tmux is not installed")
    files = list((tree / ".claude" / "projects").rglob("*.jsonl"))
    size = sum(p.stat().st_size for p in files)
    wanted = newest(tree)
    env = {"PYTHONPYCACHEPREFIX": "/tmp/arbor-bench-pycache", "PYTHONDONTWRITEBYTECODE": "",
           "TEXTUAL_ANIMATIONS": "none", "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    script = Path(tempfile.mkdtemp(prefix="arbor-bench-ff-")) / "empty_app.py"
    script.write_text(frames.EMPTY)
    empty = [sys.executable, str(script)]
    frames.tmux("kill-server")
    frames.time_until(empty, "EMPTYREADY", env)                 # warm-up: bytecode cache
    also_env = {**env, "PYTHONPATH": str(Path(args.also).resolve())} if args.also else None
    checkouts = [("", env)] + ([("also ", also_env)] if also_env else [])
    for _prefix, run_env in checkouts:
        first_run(tree, run_env, 20, rows_only=True)             # warm-up (and the cache)
    times: dict[str, list[float]] = {f"{prefix}{key}": [] for prefix, _env in checkouts
                                     for key in ("frame", "first", "most", "every")}
    times["empty"] = []
    for number in range(args.runs):
        times["empty"].append(frames.time_until(empty, "EMPTYREADY", env)[0])
        # (the checkouts take turns going first: what runs after what is the same for both)
        for prefix, run_env in checkouts[::-1] if number % 2 else checkouts:
            frame, first, most, every = first_run(tree, run_env, args.timeout, args.rows_only)
            if frame is not None:
                times[prefix + "frame"].append(frame)
            times[prefix + "first"].append(first)
            if most is not None:
                times[prefix + "most"].append(most - first)
            if every is not None:
                times[prefix + "every"].append(every - first)
    frames.tmux("kill-server")
    shutil.rmtree(script.parent, ignore_errors=True)
    base = statistics.median(times["empty"])
    big = [size_ for _path, size_ in wanted if size_ > HEAD_SLICE]
    left = [size_ for item in wanted if item not in but_the_long_one(wanted)
            for size_ in [item[1]]]
    print(f"tree: {tree} ({len(files):,} files, {size / 1e6:,.0f} MB; the newest 20 sessions in "
          f"{len(wanted)} files, {len(big)} over {HEAD_SLICE >> 20} MB: "
          f"{', '.join(f'{b / 1e6:,.0f} MB' for b in big) or 'none'}; the long one: "
          f"{', '.join(f'{b / 1e6:,.0f} MB' for b in left) or 'none'}); "
          f"tmux 120x40; median of {args.runs} alternating runs; load average "
          f"{os.getloadavg()[0]:.1f}")
    rows = [("empty", "empty Textual app: its word on screen", True)]
    for prefix, _env in checkouts:
        who = f"arbor at {args.also}" if prefix else "arbor"
        rows += [(prefix + "frame", f"{who}, new store: its first frame (the status line)", True),
                 (prefix + "first", f"{who}, new store: the first session row on screen", True)]
        if not args.rows_only:
            rows += [(prefix + "most", "then: the newest 20 complete, but the long one(s)", False),
                     (prefix + "every", "then: all the newest 20 complete", False)]
    width = max(58, max(len(label) for _key, label, _ratio in rows) + 2)
    print(f"{'':{width}}{'median ms':>10}{'min ms':>9}{'x empty':>9}")
    for key, label, ratio in rows:
        values = times[key]
        if not values:
            print(f"{label:{width}}{'not within the timeout':>28}")
            continue
        print(f"{label:{width}}{statistics.median(values) * 1000:>10.0f}{min(values) * 1000:>9.0f}"
              + (f"{statistics.median(values) / base:>9.2f}" if ratio else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
