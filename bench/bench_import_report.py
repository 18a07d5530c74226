"""Benchmark: printing `arbor import`'s report after a first import of many files, a row a
file (`--files`) against the default (a row a folder once more than 25 files changed).

The files are made up (a Claude Code project each 20 files, one session each, as a first
import reports them); the report goes to a 120-column console in memory, as into a pipe.

    python bench/bench_import_report.py [--files 160,1600,5000]
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402

from core.importing.base import FileResult, ImportReport, SessionResult  # noqa: E402
from tui.commands.import_report import print_report  # noqa: E402


def report_of(files: int) -> ImportReport:
    report = ImportReport(seconds=1.0)
    for n in range(files):
        uid = f"{n:08d}-0000-4000-8000-000000000000"
        result = FileResult(f"/home/dev/.claude/projects/-home-dev-project-{n // 20:04d}/{uid}.jsonl",
                            format="claude_code", lines=400)
        result.sessions.append(SessionResult(uid, "fix the flaky importer test", "claude_code", True,
                                             entries_added=300, messages_added=200,
                                             branches_added=2))
        report.files.append(result)
    return report


def printed(report: ImportReport, every_file: bool) -> tuple[float, int]:
    console = Console(file=io.StringIO(), width=120, highlight=False, soft_wrap=False)
    start = time.perf_counter()
    print_report(report, console, store_path="/tmp/store.db", every_file=every_file)
    return time.perf_counter() - start, console.file.getvalue().count("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="160,1600,5000")
    args = parser.parse_args()
    printed(report_of(10), False)      # Rich's modules loaded before the first timing
    print(f"{'files':>6} {'every file: s':>14} {'lines':>7} {'default: s':>11} {'lines':>6}")
    for files in (int(n) for n in args.files.split(",")):
        report = report_of(files)
        every, every_lines = printed(report, True)
        default, default_lines = printed(report, False)
        print(f"{files:>6,} {every:>14.2f} {every_lines:>7,} {default:>11.3f} {default_lines:>6,}")


if __name__ == "__main__":
    main()
