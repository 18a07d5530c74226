"""The command palette's Screenshot, written where it can be and said where.

Textual saves it in the Downloads folder and fails with "Failed to save screenshot" when
that folder does not exist (a server, a fresh account, a container). arbor tries, in
order, the Downloads folder, the pictures folder, the home folder, the current folder and
the temporary folder, and names the file it wrote in full.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Callable, Iterator


def screenshot_folders() -> Iterator[Path]:
    """Where a screenshot may go, best first: only folders that exist (none is made)."""
    import platformdirs

    seen: set[Path] = set()
    candidates: list[Callable[[], Path | str]] = [
        platformdirs.user_downloads_path, platformdirs.user_pictures_path, Path.home,
        Path.cwd, tempfile.gettempdir]
    for candidate in candidates:
        try:
            folder = Path(candidate()).expanduser()
            if not folder.is_dir() or folder in seen:
                continue
        except (OSError, RuntimeError, KeyError):   # (no home, a cwd that was deleted)
            continue
        seen.add(folder)
        yield folder


def screenshot_name(title: str, now: datetime) -> str:
    """`arbor 2026-03-01 14.05.09.svg`: sorts by time, no characters a shell or a file
    manager minds but the spaces (no colons, which some file systems refuse)."""
    return f"{title} {now:%Y-%m-%d %H.%M.%S}.svg"


def write_screenshot(svg: str, filename: str, folder: str | os.PathLike | None = None
                     ) -> tuple[Path | None, list[str]]:
    """Write `svg` as `filename` into `folder`, or into the first of `screenshot_folders()`
    that takes it, never over a file that is there (`name 2.svg` then). Returns the file
    written (None: nowhere) and why each folder refused."""
    refused: list[str] = []
    folders = [Path(folder).expanduser()] if folder is not None else screenshot_folders()
    stem, suffix = os.path.splitext(filename)
    for place in folders:
        for number in range(1, 100):
            name = filename if number == 1 else f"{stem} {number}{suffix}"
            path = (place / name).absolute()
            try:
                with open(path, "x", encoding="utf-8") as out:
                    out.write(svg)
            except FileExistsError:
                continue
            except OSError as error:
                refused.append(f"{place}: {error.strerror or error}")
                break
            return path, refused
    return None, refused


class ScreenshotActions:
    """Mixed into ArborApp: the palette's Screenshot (and `action_screenshot`)."""

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        driver = getattr(self, "_driver", None)
        if driver is not None and getattr(driver, "is_web", False):
            return super().deliver_screenshot(filename, path, time_format)  # (a browser download)
        name = filename or screenshot_name(self.title, datetime.now())
        written, refused = write_screenshot(self.export_screenshot(), name, path)
        if written is None:
            self.say("The screenshot could not be saved: " + "; ".join(refused),
                     title="Screenshot", severity="error", timeout=10)
            return None
        self.say(f"Screenshot saved to {written}", title="Screenshot", timeout=8)
        return str(written)
