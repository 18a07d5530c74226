"""Benchmark: importing real-shaped Claude Code trees, next to the tools a user would
otherwise run on the same files, in one run (the machine is shared: compare the ratios).

    .venv/bin/python bench/bench_import.py [--mb 100] [--scale-mb 1000] [--repeat 3]

The tree comes from `bench/claude_tree.py` (see its docstring for what it makes); it is
generated once into --cache (default /tmp/arbor-bench-trees) and reused. Every
measurement runs in a child process, so its wall time, CPU time (user + system, with that
of the worker processes it waits for) and peak memory are its own; the memory is the
larger of the child's max RSS and the peak of the RSS of it and its workers together
(sampled every 20 ms). Tables:

1. Cold import of the tree: the parse-only floor (orjson over every line, one core),
   ccusage (`ccusage claude daily --offline --json`, what a user runs to read these
   files), claude-code-log (`--all-projects -f json`, on a copy of the tree: it writes its
   cache beside the logs; slow, so run once), and `arbor import --discover` into a new
   store (by default with a worker process a CPU, up to four; --workers 0,1 also with
   ARBOR_IMPORT_WORKERS=0 and =1, 0 being one process). Ratios are to ccusage and to the
   floor, of medians of the same run.
2. The growing session: `arbor import` again with nothing changed, and after appending 10
   lines to the active (31%) session, and to the smallest main session over 64 KB (what
   an append costs apart from the size of the file: the same, when only new bytes are read).
3. A no-change `arbor import --discover` over a tree of 3,000 files (--discover-files):
   the whole command, and the import call alone (in-process, without interpreter start).
4. --scale-mb (0: skip): the parse floor, ccusage and arbor's cold import on a bigger tree.

Ratios are given in wall time and in CPU time (user + system): on a shared machine the wall
times of a Python program with two threads and of a compiled one suffer differently from
the load, so both are shown. Python children run with a bytecode cache (see PYCACHE).

The other tools are found on PATH or given with --ccusage / --claude-code-log. Install them
outside the repository, for example:
    npm install --prefix /tmp/engine-npm ccusage@20.0.24      (pulls its linux-x64 binary)
    python3 -m venv /tmp/engine-ccl && /tmp/engine-ccl/bin/pip install claude-code-log
A tool that is not there is reported as such; arbor's rows are measured anyway.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
ARBOR = REPO   # the checkout whose arbor is measured (--repo: another one, e.g. before a change)

import claude_tree  # noqa: E402

FLOOR = r"""
import os, sys, orjson
lines = 0
for folder, _dirs, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".jsonl"):
            with open(os.path.join(folder, name), "rb") as handle:
                for line in handle:
                    if line.strip():
                        orjson.loads(line)
                        lines += 1
print(lines)
"""

IN_PROCESS_DISCOVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from core import open_store
from core.importing import discover, import_paths
store = open_store(sys.argv[1])
start = time.perf_counter()
report = import_paths(store, discover(Path(sys.argv[3])))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "files": len(report.files),
                  "unchanged": sum(f.status == "unchanged" for f in report.files)}))
"""


def _tree_rss(root: int) -> int:
    """Resident bytes of a process and all its descendants now (Linux /proc; 0 elsewhere)."""
    try:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        page = os.sysconf("SC_PAGE_SIZE")
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            parents[int(name)] = int(fields[1])
            rss[int(name)] = int(fields[21]) * page
    except OSError:
        return 0
    total, wanted = 0, {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in wanted and pid not in wanted:
                wanted.add(pid)
                changed = True
    return sum(rss.get(pid, 0) for pid in wanted)


class Run:
    """One child process: wall seconds, CPU seconds (user + system; its worker processes'
    included, which it waits for) and peak memory in MB: the child's own peak RSS from wait4,
    and the peak of the RSS of it and all its descendants together, sampled every 20 ms."""

    def __init__(self, argv: list[str], *, env: dict | None = None):
        environ = {**os.environ, **(env or {})}
        environ = {key: value for key, value in environ.items() if value is not None}
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            child = subprocess.Popen(argv, env=environ, stdout=out, stderr=err, cwd=str(ARBOR))
            peak = [0]
            done = threading.Event()

            def sample() -> None:
                while not done.wait(0.02):
                    peak[0] = max(peak[0], _tree_rss(child.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            _pid, status, usage = os.wait4(child.pid, 0)
            done.set()
            sampler.join()
            self.tree_rss = peak[0] / 1048576
            self.wall = time.perf_counter() - started
            child.returncode = self.code = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            self.out = out.read().decode("utf-8", "replace")
            self.err = err.read().decode("utf-8", "replace")
        self.cpu = usage.ru_utime + usage.ru_stime
        self.rss = usage.ru_maxrss / 1024

    def check(self, what: str) -> "Run":
        if self.code != 0:
            raise SystemExit(f"{what} failed ({self.code}):\n{self.err[-2000:]}\n{self.out[-2000:]}")
        return self


def tree(cache: Path, mb: float, files: int | None = None) -> tuple[Path, dict]:
    """A generated tree (made once, then reused): (its root, what it holds)."""
    name = f"claude-{mb:g}mb" + (f"-{files}f" if files else "")
    root = cache / name
    facts_file = root / "facts.json"
    if not facts_file.exists():
        if root.exists():
            shutil.rmtree(root)
        started = time.perf_counter()
        made = claude_tree.generate(root, mb=mb, files=files)
        made_facts = {k: v for k, v in made.items() if k != "sizes"}
        made_facts["description"] = claude_tree.describe(made)
        facts_file.write_text(json.dumps(made_facts))
        print(f"generated {root} in {time.perf_counter() - started:.1f} s", flush=True)
    facts = json.loads(facts_file.read_text())
    active = Path(facts.get("active") or root)
    if ".claude" in active.parts and root not in active.parents:   # a tree copied from elsewhere
        facts["active"] = str(root.joinpath(*active.parts[active.parts.index(".claude"):]))
    return root, facts


def fresh_db(folder: Path, name: str) -> Path:
    db = folder / name
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(db) + suffix)
        except FileNotFoundError:
            pass
    return db


# arbor runs with a bytecode cache, as after `pip install` (which compiles every module);
# this sandbox sets PYTHONDONTWRITEBYTECODE, which would make every run compile the modules
# it imports (the price table's among them: ~0.3 s). `warm_up()` writes the cache first.
PYCACHE = "/tmp/arbor-bench-pycache"


def python_env(**more: str) -> dict:
    return {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": PYCACHE,
            "PYTHONPATH": str(ARBOR), **more}


def arbor(*args: str, home: Path) -> list[str]:
    return [sys.executable, "-m", "tui", "import", "-q", *args], python_env(HOME=str(home))


def warm_up(cache: Path, work: Path) -> None:
    """One import of a small tree, so every module the import uses is in the bytecode cache."""
    root, _facts = tree(cache, 0.5)
    argv, env = arbor("--discover", "--db", str(fresh_db(work, "warm.db")), home=root)
    Run(argv, env=env).check("arbor import (warm-up)")
    Run(argv, env=env).check("arbor import (warm-up, no change)")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(title: str, header: tuple, rows: list[tuple]) -> None:
    print()
    print(title)
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w)
                    for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def find_tool(given: str | None, name: str, fallbacks: list[str]) -> str | None:
    for candidate in [given, shutil.which(name), *fallbacks]:
        if candidate and Path(candidate).exists():
            return candidate
    return None


def cold_import(root: Path, facts: dict, work: Path, *, repeat: int, ccusage: str | None,
                ccl: str | None, label: str, workers: tuple[str, ...] = ()) -> dict:
    projects = root / ".claude" / "projects"
    results: dict[str, list[Run]] = {"floor": [], "ccusage": [], "arbor": [],
                                     **{f"workers={n}": [] for n in workers}}
    for index in range(repeat):
        results["floor"].append(Run([sys.executable, "-c", FLOOR, str(projects)],
                                    env=python_env()).check("parse floor"))
        if ccusage:
            run = Run([ccusage, "claude", "daily", "--offline", "--json"],
                               env={"CLAUDE_CONFIG_DIR": str(root / ".claude"),
                                    "HOME": str(root)}).check("ccusage")
            totals = json.loads(run.out).get("totals", {})
            if not totals.get("totalTokens"):
                raise SystemExit(f"ccusage read no tokens from {root}: {run.out[:500]}")
            results["ccusage"].append(run)
        db = fresh_db(work, f"cold-{label}.db")
        argv, env = arbor("--discover", "--db", str(db), home=root)
        results["arbor"].append(Run(argv, env=env).check("arbor import"))
        for count in workers:
            db = fresh_db(work, f"cold-{label}-{count}.db")
            argv, env = arbor("--discover", "--db", str(db), home=root)
            results[f"workers={count}"].append(
                Run(argv, env={**env, "ARBOR_IMPORT_WORKERS": count})
                .check(f"arbor import (ARBOR_IMPORT_WORKERS={count})"))
    ccl_run = None
    if ccl:
        copy = work / f"ccl-{label}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(root / ".claude", copy / ".claude")
        out = work / f"ccl-out-{label}"
        shutil.rmtree(out, ignore_errors=True)
        ccl_run = Run([ccl, "--projects-dir", str(copy / ".claude" / "projects"),
                                "--all-projects", "-f", "json", "-o", str(out)]).check("claude-code-log")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
    base_cc = median([r.wall for r in results["ccusage"]])
    base_floor = median([r.wall for r in results["floor"]])
    cpu_cc = median([r.cpu for r in results["ccusage"]])
    cpu_floor = median([r.cpu for r in results["floor"]])
    rows = []
    names = {"floor": "parse-only floor (orjson, 1 core)", "ccusage": "ccusage 20 --offline",
             "arbor": "arbor import --discover (new store)",
             **{f"workers={n}": f"  the same, ARBOR_IMPORT_WORKERS={n}" for n in workers}}
    out = {}
    for key in results:
        runs = results[key]
        if not runs:
            rows.append((names[key], "not installed", "", "", "", "", "", ""))
            continue
        wall = median([r.wall for r in runs])
        cpu = median([r.cpu for r in runs])
        out[key] = wall
        rows.append((names[key], f"{wall:.2f}", f"{cpu:.2f}",
                     f"{max(max(r.rss, r.tree_rss) for r in runs):.0f}",
                     f"{wall / base_cc:.2f}x" if results["ccusage"] else "—",
                     f"{wall / base_floor:.2f}x",
                     f"{cpu / cpu_cc:.2f}x" if results["ccusage"] else "—",
                     f"{cpu / cpu_floor:.2f}x"))
    if ccl_run is not None:
        rows.append(("claude-code-log -f json (once)", f"{ccl_run.wall:.2f}", f"{ccl_run.cpu:.2f}",
                     f"{ccl_run.rss:.0f}",
                     f"{ccl_run.wall / base_cc:.2f}x" if results["ccusage"] else "—",
                     f"{ccl_run.wall / base_floor:.2f}x",
                     f"{ccl_run.cpu / cpu_cc:.2f}x" if results["ccusage"] else "—",
                     f"{ccl_run.cpu / cpu_floor:.2f}x"))
        out["ccl"] = ccl_run.wall
    table(f"Cold import of {facts['bytes'] / 1048576:.0f} MB, {facts['files']} files, "
          f"{facts['lines']:,} lines (median of {repeat}; wall and CPU seconds, peak RSS MB of all its processes together)",
          ("", "wall s", "CPU s", "peak MB", "wall vs ccusage", "wall vs floor",
           "CPU vs ccusage", "CPU vs floor"), rows)
    out["arbor_rss"] = max(max(r.rss, r.tree_rss) for r in results["arbor"])
    out["arbor_cpu"] = median([r.cpu for r in results["arbor"]])
    return out


def growing(root: Path, facts: dict, work: Path, *, repeat: int) -> dict:
    """No-change import, and imports after appending 10 lines to the active session and to
    a small one (of a copy of the tree: the cached tree stays as generated, for the next
    run)."""
    copy = work / "growing-tree"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root / ".claude", copy / ".claude", copy_function=os.link)
    active = copy / Path(facts["active"]).relative_to(root)
    # and a small main session, grown the same way: what an append costs apart from the
    # size of the file it grows (the same, if only the new bytes are read)
    small = min((p for p in copy.rglob("*.jsonl") if "subagents" not in p.parts
                 and p.stat().st_size > 64 * 1024 and p != active), key=lambda p: p.stat().st_size)
    for grows in (active, small):   # the files that grow: real copies
        grows.unlink()
        shutil.copy2(root / grows.relative_to(copy), grows)
    root = copy
    sizes = {grows: grows.stat().st_size for grows in (active, small)}   # before they grow
    db = fresh_db(work, "growing.db")
    argv, env = arbor("--discover", "--db", str(db), home=root)
    Run(argv, env=env).check("arbor import (first)")
    same, grown, grown_small = [], [], []
    for index in range(repeat):   # (alternating, so that the machine's load falls on all)
        same.append(Run(argv, env=env).check("arbor import (no change)"))
        claude_tree.append_lines(active, 10, seed=1000 + index)
        grown.append(Run(argv, env=env).check("arbor import (10 lines more)"))
        claude_tree.append_lines(small, 10, seed=2000 + index)
        grown_small.append(Run(argv, env=env).check("arbor import (10 lines more, small)"))
    base = median([r.wall for r in same])

    def row(label: str, runs: list) -> tuple:
        wall = median([r.wall for r in runs])
        return (label, f"{wall:.3f}", f"{median([r.cpu for r in runs]):.3f}", f"{wall / base:.2f}x")

    rows = [row("no change", same),
            row(f"10 lines appended to the active session ({sizes[active] >> 20} MB)", grown),
            row(f"10 lines appended to a small session ({sizes[small] >> 10} KB)", grown_small)]
    table(f"Re-import of the same tree (active session {sizes[active] / 1048576:.1f} MB; "
          f"median of {repeat})", ("", "wall s", "CPU s", "vs no change"), rows)
    return {"same": base, "grown": median([r.wall for r in grown])}


def many_files(cache: Path, work: Path, files: int, *, repeat: int) -> dict:
    root, facts = tree(cache, max(1.0, files * 0.02), files=files)
    db = fresh_db(work, "many.db")
    argv, env = arbor("--discover", "--db", str(db), home=root)
    Run(argv, env=env).check("arbor import (first)")
    whole, alone = [], []
    for _ in range(repeat):
        whole.append(Run(argv, env=env).check("arbor import --discover (no change)"))
        run = Run([sys.executable, "-c", IN_PROCESS_DISCOVER, str(db), str(ARBOR),
                   str(root)], env=python_env()).check("import_paths")
        alone.append(json.loads(run.out.strip().splitlines()[-1]))
    bare = [Run([sys.executable, "-c", "pass"], env=python_env()) for _ in range(repeat)]
    startup = [Run([sys.executable, "-c", "import tui.cli"], env=python_env()).check("start")
               for _ in range(repeat)]

    def ms(runs, field):
        return f"{median([getattr(r, field) for r in runs]) * 1000:.0f}"

    rows = [("the whole command", ms(whole, "wall"), ms(whole, "cpu")),
            ("import_paths(discover()) alone, in-process",
             f"{median([a['seconds'] for a in alone]) * 1000:.0f}", ""),
            ("python -c pass", ms(bare, "wall"), ms(bare, "cpu")),
            ("python -c 'import tui.cli'", ms(startup, "wall"), ms(startup, "cpu"))]
    table(f"No-change `arbor import --discover` over {facts['files']} files "
          f"({facts['bytes'] / 1048576:.0f} MB; median of {repeat})", ("", "wall ms", "CPU ms"),
          rows)
    return {"whole": median([r.wall for r in whole]),
            "alone": median([a["seconds"] for a in alone])}


def _commit(repo: Path) -> str:
    done = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%h %s"],
                          capture_output=True, text=True)
    return done.stdout.strip()[:80] or "not a git checkout"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the tree")
    parser.add_argument("--scale-mb", type=float, default=0, help="a bigger tree too (0: skip)")
    parser.add_argument("--discover-files", type=int, default=3000, help="0: skip")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repo", help="measure the arbor of this checkout (default: this one)")
    parser.add_argument("--cache", default="/tmp/arbor-bench-trees", help="where trees are kept")
    parser.add_argument("--ccusage", help="the ccusage command (default: on PATH)")
    parser.add_argument("--claude-code-log", dest="ccl", help="the claude-code-log command")
    parser.add_argument("--no-claude-code-log", action="store_true",
                        help="skip it (it takes minutes on 100 MB)")
    parser.add_argument("--workers", default="",
                        help="the cold import also with these ARBOR_IMPORT_WORKERS, e.g. 0,1"
                             " (0: in one process)")
    parser.add_argument("--skip-growing", action="store_true", help="no re-import table")
    args = parser.parse_args(argv)
    workers = tuple(n.strip() for n in args.workers.split(",") if n.strip())
    global ARBOR
    if args.repo:
        ARBOR = Path(args.repo).resolve()
    print(f"arbor measured: {ARBOR} ({_commit(ARBOR)})")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    ccusage = find_tool(args.ccusage, "ccusage", ["/tmp/engine-npm/node_modules/.bin/ccusage"])
    ccl = None if args.no_claude_code_log else \
        find_tool(args.ccl, "claude-code-log", ["/tmp/engine-ccl/bin/claude-code-log"])
    work = Path(tempfile.mkdtemp(prefix="arbor-bench-"))
    try:
        warm_up(cache, work)
        root, facts = tree(cache, args.mb)
        print(facts["description"])
        cold_import(root, facts, work, repeat=args.repeat, ccusage=ccusage, ccl=ccl,
                    label=f"{args.mb:g}", workers=workers)
        if not args.skip_growing:
            growing(root, facts, work, repeat=args.repeat)
        if args.discover_files:
            many_files(cache, work, args.discover_files, repeat=args.repeat)
        if args.scale_mb:
            big, big_facts = tree(cache, args.scale_mb)
            print(big_facts["description"])
            cold_import(big, big_facts, work, repeat=1, ccusage=ccusage, ccl=None,
                        label=f"{args.scale_mb:g}", workers=workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.path.insert(0, str(REPO))
    from core.util.fastjson import ACCELERATED

    print(f"\npython {sys.version.split()[0]}, sqlite {__import__('sqlite3').sqlite_version}, "
          f"JSON: {'orjson' if ACCELERATED else 'standard library'}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end; ccusage: {ccusage or 'absent'}; "
          f"claude-code-log: {ccl or 'absent'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
