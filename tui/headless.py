"""Running the app without a terminal (tests, benchmarks, screenshots): wait for it."""

from __future__ import annotations


async def settle(pilot, *, poll: float = 0.02, rounds: int = 200, after: int = 1) -> None:
    """Wait until the app has loaded what its cursors point at (workers, deferred loads),
    checking every `poll` seconds at most `rounds` times, then let `after` more message
    rounds pass (focus changes reach the footer a few rounds later)."""
    from textual.worker import WorkerCancelled

    for _ in range(rounds):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            pass  # an exclusive worker replaced by a newer one (a live reload): wait for that
        await pilot.pause()
        if not getattr(pilot.app, "busy", False):
            break
        await pilot.pause(poll)
    for _ in range(after):
        await pilot.pause()
