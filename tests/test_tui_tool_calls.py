"""Tool calls people can read: one reply is one message, each call drawn with its result
and in its own shape, long messages scroll line by line, and `f` shows all of one."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conftest import BIG_OUTPUT_BYTES, open_fixed, settle
from core import open_store
from core.demo import DEMO_NOW
from tool_store import HOSTILE_DIFF_NEW, build_tool_store
from tui.app import ArborApp
from tui.components.whole_message import (WholeMessageScreen, WholeText, pager_command,
                                          run_pager)
from tui.message_source import MessageSource
from tui.render.message_text import as_text, whole_message

SIZE = (120, 40)
CLAUDE = "Tool calls people can read"
CODEX = "Cap the retry delay"
# every character a terminal could act on: C0 but \n, DEL, C1, bidi controls
UNSAFE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def tool_db(tmp_path) -> Path:
    return build_tool_store(tmp_path / "tools.db")


def make_app(path: Path) -> ArborApp:
    return ArborApp(open_fixed(path), clock=lambda: DEMO_NOW, poll_interval=None,
                    store_label=path.name)


async def open_messages(pilot, name: str) -> None:
    app = pilot.app
    app.sessions_pane.move_cursor(next(i for i, s in enumerate(app.sessions) if s.name == name))
    await settle(pilot)
    app.set_focus(app.messages_pane)
    await pilot.press("home")
    await settle(pilot)


def source_of(path: Path, name: str, raw: bool = False) -> MessageSource:
    store = open_store(path, create=False)
    session = next(s for s in store.sessions.list() if s.name == name)
    return MessageSource(store, store.branches.current(session.id), raw=raw)


def test_a_response_written_as_several_entries_is_one_message(tool_db):
    source = source_of(tool_db, CLAUDE)
    # user prompt, then thinking + text + TodoWrite + Read lines, a progress line, two results
    assert source.group_span(0) == (0, 0)
    assert source.group_span(1) == (1, 7) == source.group_span(5)
    assert [source.item(i).entry.type for i in range(1, 8)].count("claude:progress") == 1
    assert source.group_span(8) == (8, 9)          # Bash and its output


def test_the_raw_view_shows_every_entry_on_its_own(tool_db):
    source = source_of(tool_db, CLAUDE, raw=True)
    assert all(source.group_span(i) == (i, i) for i in range(source.count))


async def test_the_cursor_moves_a_message_at_a_time_and_actions_apply_to_its_end(tool_db):
    app = make_app(tool_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_messages(pilot, CLAUDE)
        pane = app.messages_pane
        await pilot.press("j")
        assert pane.cursor == 1
        assert pane.cursor_item.entry.message["role"] == "assistant"
        # what b, r, l and o act on: the response's last entry (its Read result)
        assert pane.highlighted.entry.message["toolName"] == "Read"
        await pilot.press("j")
        assert pane.cursor == 8                      # the next message, past the results
        await pilot.press("k")
        assert pane.cursor == 1
        await pilot.press("b")
        await settle(pilot)
        await pilot.press("enter")                   # the suggested branch name
        await settle(pilot)
        head = app.store.entries.get(app.branch.head_seq)
        assert head.message["toolName"] == "Read"   # the branch keeps the whole response


async def test_a_long_message_scrolls_line_by_line_and_pages(tmp_path):
    """The 565-line tool result of the issue: PageDown pages through it (it used to jump
    from its start to its end), j and k move one line."""
    path = tmp_path / "long.db"
    store = open_store(path)
    session = store.sessions.create("long output", source="claude_code")
    branch = store.branches.create(session.id, name="main")
    output = "\n".join(f"line {n:03d}" for n in range(1, 566))
    for message in ({"role": "user", "content": "run it"},
                    {"role": "assistant", "responseId": "r1", "content": [
                        {"type": "toolCall", "id": "c1", "name": "Bash",
                         "arguments": {"command": "seq 565"}}]},
                    {"role": "toolResult", "toolCallId": "c1", "toolName": "Bash",
                     "content": [{"type": "text", "text": output}], "isError": False},
                    {"role": "assistant", "responseId": "r2", "content": "done"}):
        store.entries.append_to_branch(branch.id, "message", {"message": message})
    store.close()
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        app.set_focus(pane)
        await pilot.press("home", "j", "space")
        await settle(pilot)
        assert pane.cursor == 1
        height = pane.size.height

        seen: set[str] = set()

        def shown() -> str:
            text = "\n".join(strip.text for strip in (pane.render_line(y) for y in range(height)))
            seen.update(re.findall(r"line \d{3}", text))
            return text

        assert "line 001" in shown()
        await pilot.press("pagedown")
        assert pane.cursor == 1 and pane.top == 1
        first_page = pane.top_line
        assert first_page == height - 1
        assert "line 001" not in shown() and "line 565" not in shown()
        await pilot.press("j")
        assert pane.top_line == first_page + 1
        await pilot.press("k", "k")
        assert pane.top_line == first_page - 1
        pages = 0
        while "f shows the whole message" not in shown():   # the pane shows 400 lines of it
            await pilot.press("pagedown")
            pages += 1
            assert pane.cursor == 1 and pages < 30
        assert pages >= 10
        assert seen == {f"line {n:03d}" for n in range(1, 401)}   # every one of them, in turn
        await pilot.press("pagedown")            # the end of it: on to the next message
        assert pane.cursor == 3
        await pilot.press("k")                   # back up: the end of the long one, then
        assert pane.cursor == 1 and "line 400" in shown()
        before = pane.top_line
        await pilot.press("k")                   # line by line through it
        assert pane.cursor == 1 and pane.top_line == before - 1


async def test_f_shows_the_whole_message_and_escape_comes_back(hostile_db):
    app = make_app(hostile_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.messages_pane
        app.set_focus(pane)
        await pilot.press("home", "j")
        await settle(pilot)
        # the hostile store's assistant reply and its 10 MB result: one message, cut in the
        # pane (opened) with a note that says how to see it all
        await pilot.press("space")
        await settle(pilot)
        cut = " ".join(" ".join(strip.text for strip in pane.item_strips(pane.cursor)).split())
        assert "more bytes · f shows the whole message" in cut
        await pilot.press("f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, WholeMessageScreen)
        view = screen.query_one(WholeText)
        text = as_text(view.lines)
        assert text.count("A") >= BIG_OUTPUT_BYTES - 4       # nothing cut
        assert not UNSAFE.search(text)
        await pilot.press("G")
        await settle(pilot)
        last = view.render_line(view.size.height - 1).text
        assert "A" in last
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not screen and app.focused is pane


def test_the_pager_gets_the_whole_message_made_safe(tool_db, tmp_path, monkeypatch):
    source = source_of(tool_db, CLAUDE)
    first, last = source.group_span(source.count - 2)
    lines = whole_message([source.item(i).entry for i in range(first, last + 1)])
    out = tmp_path / "paged.txt"
    pager = tmp_path / "pager.py"
    pager.write_text(f"import sys\nopen({str(out)!r}, 'w').write(sys.stdin.read())\n")
    monkeypatch.setenv("PAGER", f"{sys.executable} {pager}")
    assert run_pager(pager_command(), as_text(lines)) is None
    paged = out.read_text()
    assert "[@click=app.quit]gone[/]" in paged          # markup shown, not read
    assert "␛]8;;https://evil.example" in paged and "\x1b" not in paged
    assert not UNSAFE.search(paged)
    monkeypatch.setenv("PAGER", "/nonexistent/pager --flag")
    assert "cannot run /nonexistent/pager" in run_pager(pager_command(), "x")
    monkeypatch.delenv("PAGER")
    assert pager_command() == ["less"]


def test_hostile_diffs_and_json_are_drawn_literally(tool_db):
    from tui.render.message_render import render_item

    source = source_of(tool_db, CLAUDE)
    first, last = source.group_span(source.count - 2)
    group = [source.item(i) for i in range(first, last + 1)]
    console = Console(width=100, color_system="truecolor")
    strips, _ = render_item(console, group[0], width=100, expanded=True, label=None,
                            now=DEMO_NOW, group=group)
    text = "\n".join(strip.text for strip in strips)
    assert not UNSAFE.search(text)
    assert "+title = '[@click=app.quit]gone[/]'" in text
    assert "-print('␛]52;c;aGVsbG8=␇')" in text
    assert "x_tool[@click=app.quit]" in text
    assert '"payload": "[red]raw[/] \\u001b[2J' in text
    assert "␛]0;pwned␇[bold]out[/bold]␛[2J" in text
    for strip in strips:
        for segment in strip:
            assert segment.style is None or not (segment.style.link or segment.style.meta)
            assert not segment.control
    assert HOSTILE_DIFF_NEW.count("\x1b") == 3


def test_each_tool_is_drawn_in_its_own_shape(tool_db):
    from tui.render.message_render import render_item

    console = Console(width=120, color_system="truecolor")

    def drawn(name: str, index: int) -> str:
        source = source_of(tool_db, name)
        first, last = source.group_span(index)
        group = [source.item(i) for i in range(first, last + 1)]
        strips, _ = render_item(console, group[0], width=110, expanded=True, label=None,
                                now=DEMO_NOW, group=group)
        return "\n".join(strip.text.rstrip() for strip in strips)

    plan = drawn(CLAUDE, 1)
    assert "☑ Read the login test" in plan and "◐ Reproduce the failure" in plan
    assert "☐ Fix the race" in plan
    assert re.search(r"7 │ {3}expect\(await page.title\(\)\)", plan)       # Read, numbered
    bash = drawn(CLAUDE, 8)
    assert "$ npx playwright test tests/login.spec.ts --repeat-each 10" in bash
    assert "2 failed" in bash
    edit = drawn(CLAUDE, 10)
    assert "@@ -5,4 +5,4 @@" in edit                    # Claude Code's structuredPatch
    assert "-  expect(await page.title()).toBe('Dashboard');" in edit
    assert "+  await expect(page).toHaveTitle('Dashboard');" in edit
    multi = drawn(CLAUDE, 13)
    assert "2 edits" in multi and "+export async function login(user: string, password: string) {" in multi
    assert "+export { logout } from './session';" in multi             # Write: all added
    task = drawn(CLAUDE, 17)
    assert "Explore" in task and "asked" in task and "tests/signup.spec.ts:14" in task
    issue = drawn(CLAUDE, 19)
    assert '"labels": [' in issue and '"number": 128,' in issue         # formatted JSON
    plan = drawn(CODEX, 1)                              # reasoning and the plan: one reply
    assert "Cap it at 30 s" in plan and "☑ Find the backoff" in plan and "∴ thinking" in plan
    patch = drawn(CODEX, 4)
    assert "+    return min(30, 2 ** attempt)" in patch
    assert "*** Add File: shop/payments/limits.py" in patch
    shell = drawn(CODEX, 6)
    assert "$ pytest -q tests/test_retry.py" in shell and "4 passed" in shell
