"""The command palette's Screenshot writes where it can and says where (issue 26, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import open_fixed, settle
from core.demo import DEMO_NOW
from tui.app import ArborApp
from tui.actions.screenshot import write_screenshot


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder with no Downloads (nor Pictures), and a current folder elsewhere."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))   # (no user-dirs.dirs)
    for name in ("XDG_DOWNLOAD_DIR", "XDG_PICTURES_DIR"):
        monkeypatch.delenv(name, raising=False)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return home


async def _screenshot_from_palette(demo_db: Path) -> tuple[list[str], list[str]]:
    app = ArborApp(open_fixed(demo_db), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await settle(pilot)
        for key in "screenshot":
            await pilot.press(key)
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause(0.3)     # (Textual's command runs it after 0.1 s)
        await settle(pilot)
        return ([n.message for n in app._notifications],
                [n.severity for n in app._notifications])


async def test_the_screenshot_goes_home_when_there_is_no_downloads_folder(demo_db, home):
    assert not (home / "Downloads").exists()
    messages, severities = await _screenshot_from_palette(demo_db)
    written = sorted(home.glob("arbor *.svg"))
    assert len(written) == 1, list(home.iterdir())
    assert written[0].read_text(encoding="utf-8").startswith("<svg")
    assert not (home / "Downloads").exists()          # no folder made behind the user's back
    assert severities == ["information"]
    assert messages == [f"Screenshot saved to {written[0]}"]   # the full path


async def test_the_screenshot_goes_to_downloads_when_it_exists(demo_db, home):
    (home / "Downloads").mkdir()
    messages, _ = await _screenshot_from_palette(demo_db)
    written = sorted((home / "Downloads").glob("arbor *.svg"))
    assert len(written) == 1 and not list(home.glob("*.svg"))
    assert messages == [f"Screenshot saved to {written[0]}"]


def test_a_folder_that_refuses_is_passed_over(tmp_path, home, monkeypatch):
    import tui.actions.screenshot as screenshot

    gone = tmp_path / "removed after it was listed"
    monkeypatch.setattr(screenshot, "screenshot_folders", lambda: iter([gone, home]))
    path, refused = write_screenshot("<svg/>", "shot.svg")
    assert path == home / "shot.svg" and len(refused) == 1 and str(gone) in refused[0]


def test_nowhere_to_write_is_said(tmp_path):
    missing = tmp_path / "gone"
    path, refused = write_screenshot("<svg/>", "shot.svg", folder=missing)
    assert path is None and refused and str(missing) in refused[0]


def test_a_second_screenshot_in_the_same_second_does_not_replace_the_first(tmp_path):
    first, _ = write_screenshot("<svg>1</svg>", "arbor now.svg", folder=tmp_path)
    second, _ = write_screenshot("<svg>2</svg>", "arbor now.svg", folder=tmp_path)
    assert first != second and second.name == "arbor now 2.svg"
    assert first.read_text() == "<svg>1</svg>"
