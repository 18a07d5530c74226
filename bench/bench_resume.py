"""Benchmark: how long `arbor resume` / `o` takes to write a long branch for its agent.

    .venv/bin/python bench/bench_resume.py [--lines 20000 100000] [--repeat 3]

For each size, generates a realistic Claude Code transcript (bench_import's generator:
split replies, parallel tool calls, progress lines, rewinds), imports it into a fresh store,
then writes the current branch as a new Claude Code transcript, as a new pi session (the
same branch, written by the pi writer as if the session were pi's) and as a new Codex rollout
(ditto), each --repeat times in this process; prints the best time and the written size.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_import import generate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from core import open_store
    from core.agents.claude_code import writer as claude_code
    from core.agents.codex import writer as codex
    from core.agents.pi import writer as pi
    from core.agents.native import BranchToWrite, Ids
    from core.model.clock import utc_now
    from core.importing import import_paths

    rows = []
    with tempfile.TemporaryDirectory(prefix="arbor-bench-resume-") as folder:
        root = Path(folder)
        env = {"HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "claude"),
               "CODEX_HOME": str(root / "codex"), "PI_CODING_AGENT_DIR": str(root / "pi")}
        for lines in args.lines:
            source = root / f"{lines}.jsonl"
            generate(source, lines, output_bytes=2000)
            store = open_store(root / f"{lines}.db")
            import_paths(store, [source])
            session = store.sessions.get(store.sessions.list()[0].id)
            branch = store.branches.current(session.id)
            entries = store.paths.length(branch.head_seq)
            for name, write in (("claude", claude_code.write), ("pi", pi.write),
                                ("codex", lambda job: codex.write(job, session.uid))):
                best = None
                size = 0
                for _ in range(args.repeat):
                    job = BranchToWrite(store, session, branch, branch.head_seq, "/tmp/project",
                                        env, utc_now(), Ids())
                    start = time.perf_counter()
                    path, _ = write(job)
                    took = time.perf_counter() - start
                    best = took if best is None else min(best, took)
                    size = path.stat().st_size
                    path.unlink()
                rows.append((lines, entries, name, best, size))
            store.close()
    print(f"{'file lines':>10} {'path entries':>12} {'writer':>7} {'best s':>8} "
          f"{'entries/s':>10} {'MB written':>10}")
    for lines, entries, name, best, size in rows:
        print(f"{lines:>10,} {entries:>12,} {name:>7} {best:>8.3f} {entries / best:>10,.0f} "
              f"{size / 1e6:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
