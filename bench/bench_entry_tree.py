"""The entry tree (t) on a long session: what opening it costs, step by step.

One session of N entries (user, then assistant tool calls answered by tool results, a
worded reply, and a roll back every REWIND entries: a split), built once in a temporary
store. Printed: the outline read (SQL), the check of which tool calls also have words
(one read per call), the layout per filter, and a fold. CPU seconds of this process.

    .venv/bin/python bench/bench_entry_tree.py [--entries 100000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import open_store  # noqa: E402
from tui.entry_tree import FILTERS, EntryTree, OutlineEntry  # noqa: E402

REWIND = 500


def build(path: Path, count: int) -> int:
    store = open_store(path)
    session = store.sessions.create("long")
    parent = None
    with store.transaction():
        writer = store.entries.writer(session.id)
        for number in range(count):
            step = number % 6
            if number and number % REWIND == 0:
                # a roll back: the next entry hangs under the entry 10 before
                parent = max(1, parent - 10) if parent else None
            if step == 0:
                data = {"role": "user", "content": f"step {number}"}
            elif step in (1, 3):
                data = {"role": "assistant", "content": [
                    {"type": "toolCall", "id": f"c{number}", "name": "bash",
                     "arguments": {"command": "ls"}}]}
            elif step in (2, 4):
                data = {"role": "toolResult", "toolCallId": f"c{number - 1}",
                        "toolName": "bash", "content": "ok"}
            else:
                data = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
            parent = writer.add_row(parent, "message", {"message": data})
        writer.flush()
    store.close()
    return session.id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tree-") as folder:
        path = Path(folder) / "tree.db"
        session_id = build(path, args.entries)
        store = open_store(path)
        rows: list[tuple[str, float, str]] = []

        def timed(name, call, note=lambda result: ""):
            started = time.process_time()
            result = call()
            rows.append((name, time.process_time() - started, note(result)))
            return result

        outline = timed("outline read (SQL)", lambda: store.entries.outline(session_id),
                        lambda r: f"{len(r):,} entries")
        entries = [OutlineEntry(*row) for row in outline]
        calls = EntryTree.answered_calls(entries)

        def worded():
            out = set()
            for seq in calls:
                message = store.entries.get(seq).message or {}
                content = message.get("content")
                if isinstance(content, list) and any(
                        isinstance(b, dict) and b.get("type") == "text" for b in content):
                    out.add(seq)
            return out

        found = timed("tool calls with words (one read each)", worded,
                      lambda r: f"{len(calls):,} calls read")
        tree = timed("EntryTree built", lambda: EntryTree(entries, {}, found))
        for mode in FILTERS:
            timed(f"layout: {mode}", lambda: tree.rows(mode), lambda r: f"{len(r):,} rows")
        laid = tree.rows()
        first_run = next(row.run_start for row in laid if row.run_start is not None)
        timed("layout with a run folded", lambda: tree.rows(folded_runs={first_run}),
              lambda r: f"{len(r):,} rows")
        store.close()
    print(f"entry tree, one session of {args.entries:,} entries (a split every {REWIND}):")
    print(f"{'step':<40} {'CPU s':>8}  note")
    for name, seconds, note in rows:
        print(f"{name:<40} {seconds:>8.3f}  {note}")


if __name__ == "__main__":
    main()
