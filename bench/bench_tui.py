"""Benchmark the session browser on a big store, beside an empty Textual app, in one run.

    /work/venv/bin/python bench/bench_tui.py [--db /tmp/arbor-big.db] [--runs 7]

The store (10,000 sessions, 1,000,000 entries, one branch of 100,000 messages) is made
by bench/make_big_store.py when it is missing. Measured:

1. time to first frame, from process start (interpreter, imports, opening the store) to
   the first frame the compositor renders, for an empty Textual app and for arbor
   (median of --runs fresh processes each); for arbor also when the session list and the
   first session's messages are on screen;
2. cursor moves in each pane: the time from the key to the next rendered frame (the
   repaint), and to the last frame of that key (everything it causes, such as loading
   the newly highlighted session), over 40 moves each;
3. switching to the session with the 100,000-message branch: from the key to the frame
   that shows its last page;
4. the compaction (`c`) and rollback (`r`, to the first message) dialogs on that branch:
   from the key to the first frame that shows the dialog, and to the first frame that shows
   it filled (the plan and the summary; for `r`, what is left behind and its summary).

Frames are timed where the compositor hands a finished frame to the driver (`App._display`);
the apps run headless, so writing to a real terminal (about a millisecond) is not included.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tui import headless  # noqa: E402

CHILD = r"""
import sys, time
start = float(sys.argv[2])
mode, db = sys.argv[1], sys.argv[3]
from textual.app import App
frames = []
original = App._display
def display(self, screen, renderable):
    original(self, screen, renderable)
    if renderable is None:
        return
    now = time.time()
    if not frames:
        frames.append(now)
        if mode == "empty":
            self.exit()
    if mode == "arbor" and len(frames) == 1 and getattr(self, "loaded", False) \
            and self.messages_pane.source is not None:
        frames.append(now)
        self.exit()
App._display = display
if mode == "empty":
    class Empty(App):
        pass
    app = Empty()
else:
    from core import open_store
    from tui.app import ArborApp
    app = ArborApp(open_store(db, create=False))
app.run(headless=True, size=(120, 40))
print(" ".join(f"{(f - start) * 1000:.1f}" for f in frames))
"""


def child_env(bytecode: bool) -> dict[str, str]:
    """The children's environment: with a bytecode cache (as after `pip install`, which
    compiles every module) or without one (PYTHONDONTWRITEBYTECODE, as this sandbox runs)."""
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none"}
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = "/tmp/arbor-bench-pycache"
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    return env


def first_frames(mode: str, db: Path, runs: int, bytecode: bool) -> list[list[float]]:
    out = []
    env = child_env(bytecode)
    if bytecode:  # one warm-up run writes the cache
        subprocess.run([sys.executable, "-c", CHILD, mode, repr(time.time()), str(db)],
                       capture_output=True, text=True, cwd=str(REPO), env=env)
    for _ in range(runs):
        start = time.time()
        done = subprocess.run([sys.executable, "-c", CHILD, mode, repr(start), str(db)],
                              capture_output=True, text=True, cwd=str(REPO), env=env)
        if done.returncode != 0:
            raise SystemExit(f"{mode} app failed:\n{done.stderr}")
        out.append([float(x) for x in done.stdout.split()])
    return out


async def settle(pilot) -> None:
    """Wait until the app has loaded what its cursors point at (polled finely: it is timed)."""
    await headless.settle(pilot, poll=0.005, rounds=10_000)


class FrameClock:
    """Records when each frame is rendered, and what the messages pane showed then (and,
    when `probe` is set, what it says of the screen then)."""

    def __init__(self, app) -> None:
        self.frames: list[tuple[float, int | None]] = []
        self.probe = None
        self.probed: list[tuple[float, object]] = []
        original = app._display

        def display(screen, renderable):
            original(screen, renderable)
            if renderable is not None:
                now = time.perf_counter()
                source = app.messages_pane.source
                self.frames.append((now, source.branch.external_session_id if source else None))
                if self.probe is not None:
                    self.probed.append((now, self.probe(app.screen), time.process_time()))

        app._display = display

    def first_probed(self, moment: float, wanted, cpu_moment: float | None = None) -> float | None:
        """Seconds from `moment` to the first frame whose probe is `wanted` (with
        `cpu_moment`: the process's CPU seconds spent meanwhile, all threads)."""
        for t, value, cpu in self.probed:
            if t >= moment and wanted(value):
                return (cpu - cpu_moment) if cpu_moment is not None else t - moment
        return None

    def after(self, moment: float) -> list[float]:
        return [t - moment for t, _ in self.frames if t >= moment]

    def first_showing(self, moment: float, session_id: int) -> float | None:
        for t, shown in self.frames:
            if t >= moment and shown == session_id:
                return t - moment
        return None


async def interactive(db: Path, moves: int) -> dict[str, list[tuple[float, float]]]:
    from core import open_store
    from tui.app import ArborApp

    import gc

    pauses: list[tuple[int, float]] = []
    started: list[float] = []

    def gc_clock(phase, info):
        if phase == "start":
            started[:] = [time.perf_counter()]
        elif started:
            pauses.append((info["generation"], (time.perf_counter() - started[0]) * 1000))

    gc.callbacks.append(gc_clock)
    app = ArborApp(open_store(db, create=False), poll_interval=None)
    results: dict[str, list[tuple[float, float]]] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        clock = FrameClock(app)
        await settle(pilot)

        async def measure(name: str, key: str, count: int) -> None:
            rows = []
            for _ in range(count):
                moment = time.perf_counter()
                await pilot.press(key)
                await settle(pilot)
                frames = clock.after(moment)
                if frames:
                    rows.append((frames[0] * 1000, frames[-1] * 1000))
            results[name] = rows

        # sessions pane: 10,000 rows; each move also loads the highlighted session
        app.sessions_pane.focus()
        await measure("sessions ↓", "down", moves)
        await measure("sessions pgdn", "pagedown", moves // 4)
        await measure("sessions end/home", "end", 1)
        await measure("sessions end/home", "home", 1)

        # the big session: switch to it from its neighbour
        big = next(i for i, s in enumerate(app.sessions) if s.name.startswith("Big session"))
        big_id = app.sessions[big].id
        switches = []
        for _ in range(5):
            app.sessions_pane.move_cursor(big - 1)
            await settle(pilot)
            app.messages_pane._strips.clear()  # nothing of the big branch already rendered
            moment = time.perf_counter()
            await pilot.press("down")
            await settle(pilot)
            shown = clock.first_showing(moment, big_id)
            if shown is not None:
                switches.append((shown * 1000, shown * 1000))
        results["switch to 100k-message session"] = switches
        assert app.messages_pane.count >= 100_000 and app.messages_pane.at_end
        assert app.messages_pane.source.length == 100_000

        # branches pane: the session with 41 branches; each move also shows that branch
        many = max(range(len(app.sessions)), key=lambda i: app.sessions[i].branch_count)
        app.sessions_pane.move_cursor(many)
        await settle(pilot)
        await pilot.press("tab")
        app.branches_pane.move_cursor(0)
        await pilot.pause()
        await measure(f"branches ↓ ({app.sessions[many].branch_count} branches)", "down", moves)
        await measure(f"branches ↑ ({app.sessions[many].branch_count} branches)", "up", moves)

        # messages pane on the 100,000-message branch: up from the end, pages, to the start
        app.sessions_pane.move_cursor(big)
        await settle(pilot)
        assert app.messages_pane.count >= 100_000
        await pilot.press("tab")
        await measure("messages ↑ (100k branch)", "up", moves)
        await measure("messages pgup (100k branch)", "pageup", moves // 4)
        await measure("messages home (to message 1)", "home", 1)
        assert app.messages_pane.cursor == 0
        await measure("messages ↓ (from the start)", "down", moves)
        await measure("messages end (back to 100,000)", "end", 1)
        # dialogs on the 100,000-message branch, then on a short one: shown, then filled
        await dialogs_on_both(pilot, app, clock, results)
    app.store.close()
    gc.callbacks.remove(gc_clock)
    for generation in (0, 1, 2):
        times = [t for g, t in pauses if g == generation]
        if times:
            results[f"(diagnostic: gc gen {generation} pauses)"] = [(t, t) for t in times]
    return results


async def dialogs_only(db: Path) -> dict[str, list[tuple[float, float]]]:
    from core import open_store
    from tui.app import ArborApp

    app = ArborApp(open_store(db, create=False), poll_interval=None)
    results: dict[str, list[tuple[float, float]]] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        clock = FrameClock(app)
        await settle(pilot)
        await dialogs_on_both(pilot, app, clock, results)
    app.store.close()
    return results


async def dialogs_on_both(pilot, app, clock: FrameClock, results) -> None:
    """The dialogs on the 100,000-message branch and, for comparison, on a short branch."""
    big = next(i for i, s in enumerate(app.sessions) if s.name.startswith("Big session"))
    short = next(i for i, s in enumerate(app.sessions) if not s.name.startswith("Big session"))
    for index, label in ((big, " (100k)"), (short, f" ({app.sessions[short].message_count} msgs)")):
        app.set_focus(app.sessions_pane)
        app.sessions_pane.move_cursor(index)
        await settle(pilot)
        app.set_focus(app.messages_pane)
        await measure_dialogs(pilot, app, clock, results, label=label)


def _dialog_state(screen) -> str:
    """What a frame shows: the main screen, a dialog still working, or a dialog filled."""
    name = screen.__class__.__name__
    if name == "CompactDialog":
        filled = screen.plan is not None and bool(screen.query_one("#compact-summary").text)
    elif name == "RollbackDialog":
        filled = bool(screen.query_one("#rollback-summary").text)
    else:
        return "main"
    return f"{name} filled" if filled else f"{name} working"


async def measure_dialogs(pilot, app, clock: FrameClock, results, runs: int = 5,
                          label: str = "") -> None:
    """c at the end of the shown branch, r at its first message: key → first frame with the
    dialog, key → first frame with the dialog filled (and the CPU time that took)."""
    clock.probe = _dialog_state
    for key, name, setup in (("c", "CompactDialog", "end"), ("r", "RollbackDialog", "home")):
        rows, cpus = [], []
        for _ in range(runs):
            await pilot.press(setup)
            await settle(pilot)
            moment, cpu_moment = time.perf_counter(), time.process_time()
            await pilot.press(key)
            await settle(pilot)
            shown = clock.first_probed(moment, lambda state: str(state).startswith(name))
            filled = clock.first_probed(moment, lambda state: state == f"{name} filled")
            cpu = clock.first_probed(moment, lambda state: state == f"{name} filled", cpu_moment)
            if shown is not None and filled is not None:
                rows.append((shown * 1000, filled * 1000))
                cpus.append((cpu * 1000, cpu * 1000))
            await pilot.press("escape")
            await settle(pilot)
        results[f"{key}{label}: dialog shown → filled"] = rows
        results[f"{key}{label}: (CPU time to filled)"] = cpus
    clock.probe = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="/tmp/arbor-big.db")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--dialogs", action="store_true",
                        help="only the c/r dialogs on the big branch (section 4)")
    parser.add_argument("--startup", action="store_true", help="only the start-up figures (section 1)")
    args = parser.parse_args()
    db = Path(args.db)
    if not db.exists():
        from bench.make_big_store import build

        print(f"building {db} …", flush=True)
        build(db)
    from core import open_store

    with open_store(db, create=False) as store:
        sessions = store.connection.execute("SELECT COUNT(*) FROM external_sessions").fetchone()[0]
        entries = store.connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    print(f"store: {db}  ({sessions:,} sessions, {entries:,} entries)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, headless 120x40, "
          f"{args.runs} fresh processes per start-up figure\n")
    if args.dialogs:
        print_results(asyncio.run(dialogs_only(db)))
        return

    print(f"{'start-up (median of ' + str(args.runs) + ')':<44}{'ms':>8}{'× empty':>10}"
          f"{'ms':>10}{'× empty':>10}")
    print(f"{'':<44}{'bytecode cached':>18}{'no bytecode cache':>20}")
    print("-" * 82)
    figures = {}
    for bytecode in (True, False):
        empty = first_frames("empty", db, args.runs, bytecode)
        arbor = first_frames("arbor", db, args.runs, bytecode)
        figures[bytecode] = (statistics.median(r[0] for r in empty),
                             statistics.median(r[0] for r in arbor),
                             statistics.median(r[-1] for r in arbor))
    for label, index in (("empty Textual app: first frame", 0), ("arbor: first frame", 1),
                         ("arbor: sessions + messages on screen", 2)):
        row = f"{label:<44}"
        for bytecode in (True, False):
            value, base = figures[bytecode][index], figures[bytecode][0]
            row += f"{value:>8.0f}{value / base:>10.2f}"
        print(row)
    print()
    if args.startup:
        return

    print_results(asyncio.run(interactive(db, args.moves)))


def print_results(results: dict[str, list[tuple[float, float]]]) -> None:
    print(f"{'interaction':<36}{'n':>4}{'repaint med':>13}{'repaint max':>13}{'settled med':>13}{'settled max':>13}")
    print("-" * 92)
    for name, rows in results.items():
        if not rows:
            print(f"{name:<36}{0:>4}   (no frame)")
            continue
        first = [r[0] for r in rows]
        last = [r[1] for r in rows]
        print(f"{name:<36}{len(rows):>4}{statistics.median(first):>11.1f}ms{max(first):>11.1f}ms"
              f"{statistics.median(last):>11.1f}ms{max(last):>11.1f}ms")
    print("\nrepaint: key → next rendered frame; settled: key → last frame the key caused "
          "(e.g. the newly highlighted session's branches and messages).")
    print("c/r dialogs: 'repaint' is key → the dialog's first frame, 'settled' key → its "
          "first frame filled (plan and summary).")
    print("targets: first frame ≤ 1.5 × empty app; cursor repaint ≤ 50 ms; "
          "switch to the 100k session ≤ 200 ms; c/r dialogs filled ≤ 300 ms.")


if __name__ == "__main__":
    main()
