"""Benchmark: import a generated Claude Code transcript; print lines/s and peak RSS.

    /work/venv/bin/python bench/bench_import.py [--lines 200000] [--big-mb 200] [--repeat 5]

Generates, in a temp dir, a realistic Claude Code file (user prompts; assistant replies
split over several lines that share `message.id`; parallel tool calls whose results
point at their own tool_use line; progress and file-history-snapshot lines; a rewind now
and then), imports it into a fresh store in a CHILD process (so peak RSS is that
import's alone, via resource.getrusage), and prints a table. A second run imports a file
of about --big-mb megabytes (same shape, more lines) to show that peak memory does not grow
with the file's size.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid as uuidlib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORDS = ("the build fails because the import path is wrong so we move the module and rerun "
         "tests then check the coverage report and update the docs before the release").split()


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def generate(path: Path, lines: int | None, *, output_bytes: int, target_bytes: int | None = None,
             seed: int = 7) -> dict:
    """Write `lines` lines (or lines until the file has `target_bytes`); returns facts."""
    rng = random.Random(seed)
    session = str(uuidlib.UUID(int=rng.getrandbits(128)))
    clock = [1_751_364_000.0]
    count = 0
    written = 0
    rewinds = 0
    limit_lines = lines if lines is not None else 1 << 62
    limit_bytes = target_bytes if target_bytes is not None else 1 << 62

    def more() -> bool:
        return count < limit_lines and written < limit_bytes

    def stamp() -> str:
        clock[0] += rng.random() * 3
        t = time.gmtime(clock[0])
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{int(clock[0] * 1000) % 1000:03d}Z"

    def new_id() -> str:
        return str(uuidlib.UUID(int=rng.getrandbits(128)))

    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/project",
            "sessionId": session, "version": "2.1.97", "gitBranch": "main"}
    prompts: list[str] = []       # uuids of assistant entries that a prompt followed (rewind targets)
    with open(path, "w", encoding="utf-8") as out:
        def emit(line: dict) -> None:
            nonlocal count, written
            text = json.dumps(line, separators=(",", ":")) + "\n"
            out.write(text)
            written += len(text)
            count += 1

        parent = None
        request = 0
        while more():
            if rng.random() < 0.3:
                emit({"type": "file-history-snapshot", "messageId": new_id(),
                      "snapshot": {"trackedFileBackups": {}, "timestamp": stamp()},
                      "isSnapshotUpdate": False})
            # A rewind now and then: a new prompt under an earlier assistant entry.
            prompt_parent = parent
            if prompts and rng.random() < 0.02:
                prompt_parent = rng.choice(prompts[-20:])
                rewinds += 1
            user = new_id()
            emit({**base, "type": "user", "parentUuid": prompt_parent, "uuid": user,
                  "timestamp": stamp(),
                  "message": {"role": "user", "content": sentence(rng, rng.randint(5, 40))}})
            parent = user
            for _step in range(rng.randint(1, 4)):
                request += 1
                msg_id = f"msg_{request:08d}"
                req_id = f"req_{request:08d}"
                usage = {"input_tokens": rng.randint(5, 500), "output_tokens": rng.randint(5, 900),
                         "cache_read_input_tokens": rng.randint(0, 90000),
                         "cache_creation_input_tokens": rng.randint(0, 3000)}
                # The reply, split over lines sharing message.id: thinking, text, tool calls.
                blocks = [{"type": "thinking", "thinking": sentence(rng, rng.randint(10, 60)),
                           "signature": "sig" * 10},
                          {"type": "text", "text": sentence(rng, rng.randint(5, 80))}]
                calls = [{"type": "tool_use", "id": f"toolu_{request:08d}_{k}",
                          "name": rng.choice(["Bash", "Read", "Edit", "Grep"]),
                          "input": {"command": sentence(rng, 6)}}
                         for k in range(rng.choice([0, 1, 1, 2, 3]))]
                tool_lines = []
                for block in blocks + calls:
                    line_id = new_id()
                    emit({**base, "type": "assistant", "parentUuid": parent, "uuid": line_id,
                          "requestId": req_id, "timestamp": stamp(),
                          "message": {"id": msg_id, "type": "message", "role": "assistant",
                                      "model": "claude-sonnet-4-5", "content": [block],
                                      "stop_reason": None, "stop_sequence": None, "usage": usage}})
                    parent = line_id
                    if block["type"] == "tool_use":
                        tool_lines.append((line_id, block["id"]))
                if not calls:
                    prompts.append(parent)
                    break
                if rng.random() < 0.5:
                    progress = new_id()
                    emit({**base, "type": "progress", "parentUuid": tool_lines[0][0],
                          "uuid": progress, "timestamp": stamp(), "toolUseID": tool_lines[0][1],
                          "data": {"type": "hook_progress", "hookName": "PostToolUse"}})
                # Parallel calls: each result points at its own tool_use line.
                for line_id, tool_id in tool_lines:
                    size = max(20, int(rng.expovariate(1 / output_bytes)))
                    result_id = new_id()
                    emit({**base, "type": "user", "parentUuid": line_id, "uuid": result_id,
                          "timestamp": stamp(),
                          "message": {"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": tool_id,
                               "content": (sentence(rng, 12) + "\n") * (size // 80 + 1)}]},
                          "toolUseResult": {"stdout": "(see content)", "interrupted": False}})
                    parent = result_id
                if not more():
                    break
    return {"lines": count, "bytes": path.stat().st_size, "rewinds": rewinds}


CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
from core import open_store
from core.importers import import_paths
store = open_store(sys.argv[2])
start = time.perf_counter()
report = import_paths(store, [sys.argv[1]])
seconds = time.perf_counter() - start
f = report.files[0]
row = store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
print(json.dumps({"seconds": seconds, "status": f.status, "error": f.error,
                  "entries": row, "branches": f.branches_added, "skipped": len(f.skipped),
                  "lines": f.lines,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_import(path: Path, folder: Path) -> dict:
    db = folder / f"{path.stem}.db"
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(db) + suffix)
        except FileNotFoundError:
            pass
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(db), str(REPO)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--big-mb", type=int, default=200, help="size of the second file (0: skip)")
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep the files")
    parser.add_argument("--repeat", type=int, default=5,
                        help="imports of each file (the machine is shared: the median is quoted)")
    args = parser.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="arbor-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    runs = []
    small = folder / "claude-200k.jsonl"
    facts = generate(small, args.lines, output_bytes=400)
    runs.append(("realistic", small, facts))
    if args.big_mb:
        big = folder / "claude-big.jsonl"
        # Same shape and line sizes, as many lines as make --big-mb megabytes.
        big_facts = generate(big, None, output_bytes=400, target_bytes=args.big_mb * 1024 * 1024,
                             seed=11)
        runs.append((f"{args.big_mb} MB", big, big_facts))
    rows = []
    for label, path, facts in runs:
        results = []
        for _ in range(args.repeat):
            result = run_import(path, folder)
            assert result["status"] == "imported", result
            results.append(result)
        results.sort(key=lambda r: r["seconds"])
        middle = results[len(results) // 2]
        rates = [facts["lines"] / r["seconds"] for r in results]
        rows.append((label, facts["lines"], facts["bytes"] / 1024 / 1024, facts["rewinds"],
                     middle["entries"], middle["branches"], middle["seconds"],
                     facts["lines"] / middle["seconds"], min(rates), max(rates),
                     max(r["peak_rss_mb"] for r in results)))
    header = ("file", "lines", "MB", "rewinds", "entries", "branches", "seconds", "lines/s",
              "slowest", "fastest", "peak RSS MB")
    widths = [max(len(header[i]), 14 if i == 0 else 9) for i in range(len(header))]
    print(f"median of {args.repeat} imports of each file (seconds and lines/s); slowest and "
          "fastest in lines/s; the highest peak RSS")
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        cells = [row[0], f"{row[1]:,}", f"{row[2]:.1f}", str(row[3]), f"{row[4]:,}", str(row[5]),
                 f"{row[6]:.2f}", f"{row[7]:,.0f}", f"{row[8]:,.0f}", f"{row[9]:,.0f}",
                 f"{row[10]:.0f}"]
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    sys.path.insert(0, str(REPO))
    from core.fastjson import ACCELERATED

    print(f"python {sys.version.split()[0]}, sqlite {__import__('sqlite3').sqlite_version}, "
          f"JSON: {'orjson' if ACCELERATED else 'standard library'}, {os.cpu_count()} CPUs; "
          f"files in {folder}")
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
