"""The status line at every width: counts and view mode whole, the store path cut in the
middle (keeping its file name) or left out, never run into the counts."""

from __future__ import annotations

import pytest

from tui.components.status_line import middle_cut, status_text
from tui.render.safe_text import safe_line

LONG = "~/.local/share/arbor/stores/team/arbor.db"
EXTRAS = ["", "following", "archived shown · following (polling)"]


def parts(width: int, extra: str, path: str = LONG, **kw) -> tuple[str, str, str]:
    """(path shown, counts and what follows, the whole line) of a status line."""
    line = status_text(path, 5, 3060, "replayed context (v)", width, extra, **kw).plain
    assert line.startswith(" arbor  ")
    rest = line[len(" arbor  "):]
    at = rest.index("5 sessions")
    return rest[:at], rest[at:], line


@pytest.mark.parametrize("extra", EXTRAS)
@pytest.mark.parametrize("width", range(60, 161, 4))
def test_the_path_never_runs_into_the_counts(width, extra):
    shown, right, line = parts(width, extra)
    shortest = len(" arbor  5 sessions · 3,060 msgs │ context (v) │ ") + len(
        extra.replace("archived shown", "archived").replace("following (polling)", "polling")) + 1
    if shortest <= width:
        assert len(line) == width
    path = shown.rstrip(" ")
    if path:
        assert shown.endswith("  ")              # two spaces at least before the counts
        assert path == LONG or ("…" in path and path.endswith("arbor.db") and path.startswith("~/"))
    assert right.startswith("5 sessions · 3,060 ")
    assert "context (v)" in right


def test_the_whole_wording_and_path_when_there_is_room():
    shown, right, _ = parts(120, "following")
    assert shown.rstrip() == LONG
    assert right.rstrip() == "5 sessions · 3,060 messages  │  replayed context (v)  │  following"


def test_at_sixty_columns_the_counts_are_short_and_the_path_is_cut_in_the_middle():
    shown, right, line = parts(60, "")
    assert line == " arbor  ~/…/arbor.db  5 sessions · 3,060 msgs │ context (v) "
    shown, right, line = parts(60, "following")
    assert shown.strip() == ""                   # no room left for any of it: left out
    assert right.rstrip() == "5 sessions · 3,060 msgs │ context (v) │ following"


def test_a_short_path_is_shown_whole_even_in_little_room():
    shown, _, _ = parts(60, "", path="x.db")
    assert shown.rstrip() == "x.db"


def test_middle_cut_keeps_wide_characters_within_the_width():
    text = safe_line("/データ/とても長いフォルダの名前/ストア.db")
    for width in range(8, 40):
        cut = middle_cut(text, width)
        assert cut.cell_len <= width
        assert "…" in cut.plain or cut.plain == text.plain


def test_a_hostile_path_stays_sanitised_when_cut():
    shown, _, line = parts(80, "", path="/tmp/\x1b]52;c;aGk=\x07/" + "x" * 80 + "/arbor.db")
    assert "\x1b" not in line and "\x07" not in line


@pytest.mark.parametrize("alert", ["server unreachable, retrying", "saving… (waiting for the store)",
                                   "saving…"])
@pytest.mark.parametrize("width", range(60, 161, 4))
def test_an_alert_comes_first_and_whole_and_the_line_still_fits(width, alert):
    """The store's server unreachable, a write under way: said first, in a short form where
    the line is short, and the counts stay whole (the view and the live indicator give way
    before they do)."""
    line = status_text(LONG, 5, 3060, "replayed context (v)", width,
                       "archived shown · following (polling)", alert=alert).plain
    assert len(line) == width
    shown = line[len(" arbor  "):].split("  ")[0].strip()
    assert shown in (alert, {"server unreachable, retrying": "unreachable",
                             "saving… (waiting for the store)": "saving…"}.get(alert, alert))
    assert "5 sessions · 3,060 m" in line
