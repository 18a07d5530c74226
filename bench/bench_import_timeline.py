"""The timeline of one cold `arbor import --discover`: what the importing process and each
worker did when, and how much of a core each used, to see where cores stand idle.

    .venv/bin/python bench/bench_import_timeline.py [--mb 100] [--cache /tmp/arbor-bench-trees]
        [--out FOLDER] [--bin 0.5] [--all]

Runs the import once (a new store) with `bench/timeline_hooks/` on PYTHONPATH (its
sitecustomize logs events in every process of the import), samples the CPU time of every
thread of the import's processes from /proc every 50 ms (Linux), then prints each
process's events (seconds from the start, that process's CPU seconds) and, for each
`--bin` seconds, the cores each process used. `--all`: every file read and batch moved in
too. The hooks and the sampling cost a little CPU themselves: compare runs of this tool
with each other, not with `bench_import_floor.py`.
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from bench_import import tree  # noqa: E402


def _children(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        kids.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def _sample(pid: int) -> dict[str, int]:
    """'pid/tid' -> CPU ticks of every thread of `pid` and its descendants."""
    row = {}
    for each in _children(pid):
        try:
            for tid in os.listdir(f"/proc/{each}/task"):
                with open(f"/proc/{each}/task/{tid}/stat") as handle:
                    stat = handle.read()
                fields = stat[stat.rindex(")") + 2:].split()
                row[f"{each}/{tid}"] = int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/arbor-bench-trees"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--bin", type=float, default=0.5)
    parser.add_argument("--all", action="store_true")
    args = parser.parse_args()
    root, _facts = tree(args.cache, args.mb)
    out = args.out or Path(tempfile.mkdtemp(prefix="arbor-timeline-"))
    out.mkdir(parents=True, exist_ok=True)
    for old in glob.glob(str(out / "*.log")) + glob.glob(str(out / "store.db*")):
        os.unlink(old)
    env = {**os.environ, "HOME": str(root), "ARBOR_TL": str(out),
           "PYTHONPATH": os.pathsep.join([str(REPO / "bench" / "timeline_hooks"), str(REPO)])}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "tui", "import", "-q", "--discover", "--db",
                             str(out / "store.db")], env=env)
    samples = []
    while proc.poll() is None:
        samples.append((time.time(), _sample(proc.pid)))
        time.sleep(0.05)
    wall = time.time() - started
    logs = {int(Path(path).stem): [line.split(" ", 3) for line in open(path).read().splitlines()]
            for path in glob.glob(str(out / "*.log"))}
    zero = min(float(lines[0][0]) for lines in logs.values() if lines)
    names = {}
    for pid, lines in logs.items():
        names[pid] = "importing" if any("import_paths" in line[3] for line in lines) else f"worker {pid}"
    busy = ("import_file", "_move_in", "take", "link_lineage")
    for pid, lines in sorted(logs.items(), key=lambda item: float(item[1][0][0])):
        print(f"== {names[pid]} (pid {pid})")
        for stamp, cpu, thread, what in lines:
            if not args.all and any(word in what for word in busy) and names[pid] == "importing":
                if not ("take" in what and what.startswith("<")):
                    continue
            if not args.all and "import_file" in what:
                continue
            print(f"{float(stamp) - zero:8.3f}  cpu {float(cpu):7.3f}  {what}")
    # waits of the importing process for batches
    for pid, lines in logs.items():
        if names[pid] != "importing":
            continue
        waits, since = [], None
        for stamp, _cpu, _thread, what in lines:
            if what.startswith("> take"):
                since = float(stamp)
            elif what.startswith("< take") and since is not None:
                waits.append((since - zero, float(stamp) - since, what.split()[-1]))
        print(f"\nthe importing process waited for batches {sum(w for _t, w, _j in waits):.2f} s:"
              + "".join(f" job {j} at {t:.1f} s {w:.2f} s;" for t, w, j in waits if w > 0.05))
    bins: dict[int, dict[str, float]] = collections.defaultdict(lambda: collections.defaultdict(float))
    before: dict[str, int] = {}
    for now, row in samples:
        number = int((now - zero) // args.bin)
        for key, ticks in row.items():
            pid, tid = map(int, key.split("/"))
            label = names.get(pid, "other")
            if label == "importing" and pid != tid:
                label = "importing, its threads"
            if key in before:
                bins[number][label] += (ticks - before[key]) / os.sysconf("SC_CLK_TCK")
            before[key] = ticks
    labels = sorted({label for row in bins.values() for label in row})
    print(f"\ncores used, every {args.bin:g} s (wall {wall:.2f} s; load average "
          f"{os.getloadavg()[0]:.1f} at the end)")
    print("     s  " + "  ".join(f"{label[:22]:>22}" for label in labels) + "   all")
    for number in sorted(bins):
        row = bins[number]
        print(f"{number * args.bin:6.1f}  " + "  ".join(f"{row.get(label, 0) / args.bin:22.2f}"
                                                    for label in labels)
              + f"  {sum(row.values()) / args.bin:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
