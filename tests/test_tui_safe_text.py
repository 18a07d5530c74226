"""Untrusted text is shown literally: no markup, no escape sequences, no links, bounded size."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st
from rich.console import Console

from conftest import BIG_OUTPUT_BYTES, HOSTILE_MARKDOWN, HOSTILE_NAME, HOSTILE_TEXT, open_fixed
from core.demo import DEMO_NOW
from core.model.entries import Entry
from tui.app import ArborApp
from tui.render.message_render import render_item
from tui.message_source import Item
from tui.render.safe_text import DISPLAY_LIMIT, clean, safe_line, safe_markdown_source, safe_text

# every character a terminal could act on: C0 but \n, DEL, C1, bidi controls, surrogates
UNSAFE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def test_markup_is_not_interpreted():
    text = safe_text("[bold red]x[/] [link=https://e.x]l[/link] [/foo] [@click=app.quit]q[/]")
    assert text.plain == "[bold red]x[/] [link=https://e.x]l[/link] [/foo] [@click=app.quit]q[/]"
    assert all(not span.style or not getattr(span.style, "link", None) for span in text.spans)


def test_escape_sequences_are_made_visible():
    shown = safe_text(HOSTILE_TEXT).plain
    assert not UNSAFE.search(shown)
    assert "␛]52;c;aGVsbG8gd29ybGQ=␇" in shown       # OSC 52 shown, not sent
    assert "␛[2J" in shown and "␛]8;;https://evil.example" in shown
    assert "\\x9b31m" in shown and "\\u202e" in shown
    assert "tab:    here" in shown                    # tabs become spaces
    assert shown.count("\n") == HOSTILE_TEXT.count("\n")  # line breaks kept


def test_huge_text_is_capped_with_a_note():
    big = "A" * BIG_OUTPUT_BYTES
    text = safe_text(big)
    assert len(text.plain) < DISPLAY_LIMIT + 100
    assert text.plain.endswith(f"… {BIG_OUTPUT_BYTES - DISPLAY_LIMIT:,} more bytes")
    many_lines = safe_text("x\n" * 100_000)
    assert many_lines.plain.count("\n") <= 401


def test_safe_line_is_one_bounded_line():
    line = safe_line(HOSTILE_TEXT, 40)
    assert "\n" not in line.plain and line.cell_len <= 40
    assert not UNSAFE.search(line.plain)


def test_markdown_source_is_cleaned():
    source, more = safe_markdown_source(HOSTILE_MARKDOWN)
    assert not UNSAFE.search(source) and more == ""


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300),
       st.integers(min_value=1, max_value=120))
def test_any_text_comes_out_safe(value, width):
    assert not UNSAFE.search(safe_text(value).plain.replace("\n", ""))
    line = safe_line(value, width)
    assert not UNSAFE.search(line.plain) and "\n" not in line.plain and line.cell_len <= width
    assert not UNSAFE.search(clean(value).replace("\n", ""))


def _entry(message: dict, seq: int = 1) -> Entry:
    return Entry(seq, "e1", 1, None, "message", "2026-11-29T10:00:00.000+00:00", 0, 1, 1,
                 message.get("role"), {"message": message})


def _segments(strips):
    for strip in strips:
        yield from strip


def test_rendered_markdown_has_no_links_actions_or_controls():
    console = Console(width=100, force_terminal=True, color_system="truecolor")
    message = {"role": "assistant", "content": [{"type": "text", "text": HOSTILE_MARKDOWN}]}
    for expanded in (False, True):
        strips, _ = render_item(console, Item("entry", _entry(message)), width=80,
                                expanded=expanded, label="[/] \x1b]52;c;eA==\x07", now=DEMO_NOW)
        for segment in _segments(strips):
            assert not UNSAFE.search(segment.text), repr(segment.text)
            assert segment.control is None
            if segment.style is not None:
                assert not segment.style.link and not segment.style.meta
        plain = "".join(segment.text for segment in _segments(strips))
        assert "https://evil.example" in plain  # the link is shown as text


def test_ten_megabyte_tool_output_renders_bounded():
    console = Console(width=100, force_terminal=True, color_system="truecolor")
    message = {"role": "toolResult", "toolName": "bash", "toolCallId": "c",
               "content": [{"type": "text", "text": "\x1b[2J" + "B" * BIG_OUTPUT_BYTES}]}
    folded, _ = render_item(console, Item("entry", _entry(message)), width=80, expanded=False,
                            label=None, now=DEMO_NOW)
    assert len(folded) == 3  # header, one line, blank
    opened, _ = render_item(console, Item("entry", _entry(message)), width=80, expanded=True,
                            label=None, now=DEMO_NOW)
    assert len(opened) < 400
    assert "more bytes" in "".join(s.text for s in _segments(opened[-3:]))


async def test_hostile_store_on_screen_is_inert(hostile_db):
    app = ArborApp(open_fixed(hostile_db), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if not app.busy:
                break
        pane = app.messages_pane
        app.messages_pane.focus()
        for index in range(pane.count):  # open everything, including the 10 MB output
            pane.move_cursor(index)
            await pilot.press("space")
        await pilot.press("v")  # and the raw view
        await pilot.pause()
        for widget in (app.sessions_pane, app.branches_pane, pane):
            for y in range(widget.size.height):
                for segment in widget.render_line(y):
                    assert not UNSAFE.search(segment.text), (widget, repr(segment.text))
                    if segment.style is not None:
                        assert not segment.style.link and not segment.style.meta
        # the names with markup were shown, literally
        assert app.sessions[0].name == HOSTILE_NAME
        row = "".join(s.text for y in range(2) for s in app.sessions_pane.render_line(y))
        assert "[bold red]x[/]" in row and "␛]52;c;" in row
        # notifications that name a hostile branch are cleaned too
        app.branches_pane.focus()
        await pilot.press("enter")  # "… is already current."
        await pilot.pause()
        assert app._notifications and all(not UNSAFE.search(n.message) for n in app._notifications)
        svg = app.export_screenshot()
        assert "\x1b" not in svg
        assert app.return_code is None  # [@click=app.quit] did not quit


async def test_a_session_named_with_ansi_colours_opens(tmp_path):
    """Pasted coloured test output as a session's first prompt (its name): the branches pane's
    subtitle was read back from the widget as markup and set on the entry tree's pane, where
    it no longer parsed (MarkupError at start-up, the app gone)."""
    from core import open_store

    name = "FAILED \x1b[1;31mtest_x\x1b[0m [/bold] \x1b]52;c;aGk=\x07"
    path = tmp_path / "ansi.db"
    store = open_store(path)
    with store.transaction():
        session = store.sessions.create(name, source="claude_code", cwd="/w/\x1b[31mred")
        branch = store.branches.create(session.id, name="main \x1b[1;31m[x]\x1b[0m")
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": name}})
    store.close()
    app = ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("t")           # the entry tree, whose pane gets the same subtitle
        await app.workers.wait_for_complete()
        await pilot.pause()
        for widget in (app.branches_pane, app.entries_pane):   # the name, literally, on both
            assert widget._border_subtitle.plain.startswith("FAILED ␛[1;31mtest_x␛[0m [/bold]")
        assert app.return_code is None
    assert app.return_code in (None, 0)
