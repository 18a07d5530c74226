"""Timestamps as stored: UTC, ISO 8601, millisecond precision, so text order is time order."""

from __future__ import annotations

import re
from datetime import datetime, timezone

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Callable

    Clock = Callable[[], datetime]
_STORED_PATTERN = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00\Z"
_stored = None   # compiled on first use (an import of a few lines may never ask)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def to_text(moment: datetime | str | None) -> str:
    if type(moment) is str and _stored_form(moment) and parse(moment) is not None:
        return moment  # already stored text (parse() checks it is a real time)
    if moment is None:
        moment = utc_now()
    if isinstance(moment, (str, int, float)):
        parsed = parse(moment)
        if parsed is None:
            raise ValueError(f"unreadable timestamp {moment!r}")
        moment = parsed
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


def _stored_form(text: str) -> bool:
    global _stored
    if _stored is None:
        _stored = re.compile(_STORED_PATTERN)
    return _stored.match(text) is not None


def parse(text: str | int | float | None) -> datetime | None:
    """Read a stored or imported timestamp; None when there is none or it cannot be read."""
    if text is None or text == "":
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        seconds = text / 1000 if text > 1e11 else text
        try:
            return datetime.fromtimestamp(seconds, timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    value = str(text).strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment
