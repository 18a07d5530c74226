"""Benchmark reading one huge message: a 10 MB tool output (and a 10 MB one of 200,000
lines), opened in the messages pane and shown whole with `f`.

    .venv/bin/python bench/bench_whole_message.py [--runs 5]

Measured, from the key to the first frame that shows its effect (the apps run headless,
frames timed where the compositor hands them to the driver, as bench_tui.py does):

1. `space`: the reply and its 10 MB result opened in the pane (a bounded preview);
2. `f`: the whole-message view of every line;
3. `G` in that view: its last row; and `pagedown` there.

Medians of --runs, each from a fresh app on the same store.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tui import headless  # noqa: E402

SIZE = 10 * 1024 * 1024


def build(path: Path, output: str) -> None:
    from core import open_store

    store = open_store(path)
    session = store.sessions.create("huge output", source="claude_code")
    branch = store.branches.create(session.id, name="main")
    for message in ({"role": "user", "content": "dump it"},
                    {"role": "assistant", "responseId": "r1", "content": [
                        {"type": "toolCall", "id": "c1", "name": "Bash",
                         "arguments": {"command": "cat big.log"}}]},
                    {"role": "toolResult", "toolCallId": "c1", "toolName": "Bash",
                     "content": [{"type": "text", "text": output}], "isError": False}):
        store.entries.append_to_branch(branch.id, "message", {"message": message})
    store.close()


async def measure(path: Path) -> dict[str, float]:
    from core import open_store
    from tui.app import ArborApp
    from tui.components.whole_message import WholeMessageScreen, WholeText

    app = ArborApp(open_store(path, create=False), poll_interval=None)
    frames: list[float] = []
    original = app._display

    def display(screen, renderable):
        original(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter())

    app._display = display

    async def timed(key: str, done) -> float:
        start = time.perf_counter()
        await pilot.press(key)
        for _ in range(10_000):
            if done() and frames and frames[-1] >= start:
                break
            await pilot.pause(0.001)
        return (frames[-1] - start) * 1000

    out: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await headless.settle(pilot, poll=0.005, rounds=10_000)
        app.set_focus(app.messages_pane)
        await pilot.press("home", "j")
        await headless.settle(pilot, poll=0.005, rounds=10_000)
        out["space (open in pane)"] = await timed(
            "space", lambda: app.messages_pane.cursor_item.key in app.messages_pane.expanded)
        out["f (whole message)"] = await timed("f", lambda: isinstance(app.screen, WholeMessageScreen))
        view = app.screen.query_one(WholeText)
        out["G (its last row)"] = await timed("G", lambda: view.scroll_offset.y >= view.max_scroll_y)
        out["pageup there"] = await timed("pageup", lambda: view.scroll_offset.y < view.max_scroll_y)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cases = {"one 10 MB line": "A" * SIZE,
             "200,000 lines, 10 MB": "\n".join(f"{n:>8} " + "x" * 42 for n in range(200_000))}
    print(f"{'case':<22} {'key':<22} {'median ms':>10} {'max ms':>8}")
    with tempfile.TemporaryDirectory(prefix="arbor-bench-") as folder:
        for name, output in cases.items():
            path = Path(folder) / f"{len(output)}-{output.count(chr(10))}.db"
            build(path, output)
            runs = [asyncio.run(measure(path)) for _ in range(args.runs)]
            for key in runs[0]:
                values = [run[key] for run in runs]
                print(f"{name:<22} {key:<22} {statistics.median(values):>10.1f} {max(values):>8.1f}")


if __name__ == "__main__":
    main()
