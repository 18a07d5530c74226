"""Render the main states of arbor from the demo store as SVG and PNG, into screenshots/.

    /work/venv/bin/python screenshots/make_screenshots.py

The demo store is built in a temporary folder; the clock is the demo's fixed "now", so the
pictures are the same on every run. PNGs are made from the SVGs with cairosvg.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

from core import open_store  # noqa: E402
from core.demo import DEMO_NOW, build_demo  # noqa: E402
from tui.app import ArborApp  # noqa: E402
from tui.headless import settle  # noqa: E402

SIZE = (130, 40)

# name -> (session to select, keys, description)
STATES: list[tuple[str, str | None, list[str], str]] = [
    ("01-start", None, [], "the demo store at start: sessions, branch tree, messages"),
    ("02-branches", "Fix flaky login test", ["tab"], "a session's branch tree, the branches pane focused"),
    ("03-messages", "Refactor payment module", ["tab", "tab", "up", "space", "up", "space"],
     "messages with markdown, a tool call and its result opened"),
    ("04-rollback", "Fix flaky login test", ["tab", "tab", "up", "up", "up", "r"],
     "roll back: a checkpoint or the highlighted message, with a branch summary"),
    ("05-compact", "Fix flaky login test", ["tab", "tab", "c"],
     "the compaction preview: what is summarised, tokens, an editable summary"),
    ("06-context", "Migrate orders table to new schema", ["tab", "tab", "home"],
     "the replayed context of a compacted 3,000-message branch"),
    ("07-search", None, ["slash", "w", "e", "b", "h", "o", "o", "k"], "search across all messages"),
    ("08-help", None, ["question_mark"], "every key"),
    ("09-subagent", "Fix flaky login test", ["space", "tab", "tab", "up", "up", "space"],
     "a sub-agent listed under its session, its thread opened under the tool call"),
    ("10-compare", "Fix flaky login test", ["tab", "d", "enter"],
     "two attempts at one fix compared from where they parted"),
]


async def shoot(db: Path, name: str, session: str | None, keys: list[str]) -> str:
    numbers = iter(range(0xB0000000, 0xFFFFFFFF))
    store = open_store(db, create=False, clock=lambda: DEMO_NOW,
                       id_factory=lambda: f"{next(numbers):08x}")
    app = ArborApp(store, clock=lambda: DEMO_NOW, poll_interval=None, store_label="~/.local/share/arbor/demo.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if session is not None:
            app.sessions_pane.move_cursor(next(i for i, s in enumerate(app.sessions) if s.name == session))
            await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        svg = app.export_screenshot(title=f"arbor — {name[3:]}")
    store.close()
    return svg


HTML_SHOT = "11-html-export"


def shoot_html(folder: Path) -> None:
    """`arbor export --format html` of a demo session, photographed by headless Chromium
    (the distribution's package), its tool calls opened as a reader would open them."""
    import io
    import shutil
    import subprocess

    from core.export.formats import resolve_branch, resolve_session
    from tui.render.html_export import export_html

    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    if browser is None:
        print("screenshots/11-html-export.png skipped: no Chromium (apt-get install chromium)")
        return
    db = build_demo(folder / "html.db")
    with open_store(db, create=False) as store:
        session = resolve_session(store, "Fix flaky login test")
        out = io.StringIO()
        export_html(store, session, out, branch=resolve_branch(store, session), now=DEMO_NOW)
    page = folder / "page.html"
    page.write_text(out.getvalue().replace('<details class="tool', '<details open class="tool'),
                    encoding="utf-8")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={folder / 'chromium'}", "--window-size=1000,1300",
                    f"--screenshot={HERE / '11-html-export.png'}", f"file://{page}"],
                   capture_output=True, timeout=180, check=True)
    print("screenshots/11-html-export.png  the HTML export of a session, tool calls opened")


def main(only: list[str]) -> None:
    """Every picture, or those whose names are given (`make_screenshots.py 10-compare`)."""
    import cairosvg

    with tempfile.TemporaryDirectory() as folder:
        if not only or HTML_SHOT in only:
            shoot_html(Path(folder))
        for name, session, keys, description in STATES:
            if only and name not in only:
                continue
            db = build_demo(Path(folder) / f"{name}.db")  # a fresh demo for each picture
            svg = asyncio.run(shoot(db, name, session, keys))
            (HERE / f"{name}.svg").write_text(svg, encoding="utf-8")
            cairosvg.svg2png(bytestring=svg.encode("utf-8"), write_to=str(HERE / f"{name}.png"))
            print(f"screenshots/{name}.svg + .png  {description}")


if __name__ == "__main__":
    main(sys.argv[1:])
