"""Every role and entry type of the four formats has a readable form in the messages pane,
the full-screen view (f) and the Markdown export; none is drawn as "(empty)" (issue 26,
item 4): pi's `!command` runs (bashExecution) as the shell tool is drawn, an aborted or
failed reply says how it ended, pi's summaries written as messages show their summary."""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from rich.console import Console

from core import open_store
from core.export.formats import export_session
from core.importing import import_paths
from tui.render.message_render import render_item
from tui.message_source import MessageSource
from tui.render.message_text import whole_message

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
CONSOLE = Console(width=100, color_system=None, force_terminal=False)


def drawn(item, group=None, *, expanded: bool, width: int = 90) -> list[str]:
    strips, _ = render_item(CONSOLE, item, width=width, expanded=expanded, label=None, now=NOW,
                            group=group)
    return [strip.text.rstrip() for strip in strips]


def messages(store, session_id: int, raw: bool = False):
    """(first item, its group) of every message of every branch of a session."""
    for branch in store.branches.of_session(session_id):
        source = MessageSource(store, branch, raw=raw)
        for index in range(source.count):
            first, last = source.group_span(index)
            item = source.item(index)
            if first != index or item is None or item.kind == "spawn":
                continue
            group = [source.item(i) for i in range(first, last + 1)]
            yield item, group if len(group) > 1 else None


def test_no_entry_of_any_fixture_is_drawn_without_a_body(tmp_path):
    store = open_store(tmp_path / "arbor.db")
    paths = sorted(FIXTURES.rglob("*.jsonl")) + [FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"]
    import_paths(store, paths)
    bare = []
    for session in store.sessions.list(include_archived=True):
        for raw in (False, True):
            for item, group in messages(store, session.id, raw):
                for expanded in (False, True):
                    lines = drawn(item, group, expanded=expanded)
                    body = [line for line in lines[1:] if line.strip()]
                    if item.entry.type.startswith("langgraph:") and not expanded:
                        continue    # a checkpoint's marker is one line until opened
                    if not body or any("(empty)" in line for line in lines):
                        bare.append((session.name, item.entry.id, lines))
                whole = whole_message([member.entry for member in group or [item]])
                if not [text for text, _ in whole[1:] if text.strip()]:
                    bare.append((session.name, item.entry.id, "f: " + whole[0][0]))
    store.close()
    assert bare == []


def pi_session(tmp_path: Path, messages: list[dict]) -> Path:
    lines = [{"type": "session", "version": 3, "id": "forms", "timestamp": "2026-07-09T10:00:00Z",
              "cwd": "/work"}]
    parent = None
    for number, message in enumerate(messages, 1):
        lines.append({"type": "message", "id": f"m{number}", "parentId": parent,
                      "timestamp": f"2026-07-09T10:00:{number:02d}Z", "message": message})
        parent = f"m{number}"
    path = tmp_path / "forms.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


SHELL_RUNS = [
    {"role": "bashExecution", "command": "ls src", "output": "app.py\nutil.py", "exitCode": 0,
     "cancelled": False, "truncated": False},
    {"role": "bashExecution", "command": "pytest -x", "output": "1 failed", "exitCode": 1,
     "cancelled": False, "truncated": False},
    {"role": "bashExecution", "command": "sleep 100", "output": "", "exitCode": None,
     "cancelled": True, "truncated": False},
    {"role": "bashExecution", "command": "cat big.log", "output": "…the end", "exitCode": 0,
     "cancelled": False, "truncated": True, "fullOutputPath": "/tmp/pi-out-1.log",
     "excludeFromContext": True},
]
REPLIES = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": [], "stopReason": "aborted",
     "errorMessage": "Request was aborted"},
    {"role": "assistant", "content": [{"type": "text", "text": "Half an ans"}],
     "stopReason": "aborted", "errorMessage": "the user pressed escape"},
    {"role": "assistant", "content": [{"type": "text", "text": "done"}], "stopReason": "error",
     "errorMessage": "rate limited"},
    {"role": "assistant", "content": [{"type": "text", "text": "A long ans"}],
     "stopReason": "length"},
    {"role": "assistant", "content": [{"type": "text", "text": "  "}], "stopReason": "stop"},
    {"role": "branchSummary", "summary": "Tried **approach A**: too slow.", "fromId": "m1"},
    {"role": "compactionSummary", "summary": "", "tokensBefore": 5000},
    {"role": "newRole", "weight": 3, "colour": "blue"},
]


@pytest.fixture
def forms(tmp_path):
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [pi_session(tmp_path, SHELL_RUNS + REPLIES)])
    session = store.sessions.list()[0]
    shown = {item.entry.id: (item, group) for item, group in messages(store, session.id)}
    yield store, session, shown
    store.close()


def texts(shown, entry_id: str, expanded: bool) -> list[str]:
    item, group = shown[entry_id]
    return drawn(item, group, expanded=expanded)


def test_a_command_the_user_ran_is_drawn_as_the_shell_tool(forms):
    store, session, shown = forms
    ok = texts(shown, "m1", False)
    assert ok[0].startswith("shell")
    assert ok[1].startswith("$ ls src") and ok[1].endswith("✓ 2 lines"), ok
    opened = texts(shown, "m1", True)
    assert ["  ↳ output", "    app.py", "    util.py", "  exit 0"] == opened[3:7], opened
    assert texts(shown, "m2", False)[1].endswith("✗ exit 1")
    assert texts(shown, "m3", False)[1].endswith("✗ cancelled")
    last = texts(shown, "m4", True)
    assert "  exit 0 · output cut (all of it in /tmp/pi-out-1.log) · not sent to the model (!!)" in last
    whole = [text for text, _ in whole_message([shown["m2"][0].entry])]
    assert whole[0].startswith("shell · ")
    assert whole[2:] == ["$ pytest -x", "  ↳ output", "    1 failed", "  exit 1"]


def test_a_reply_says_how_it_ended(forms):
    store, session, shown = forms
    assert texts(shown, "m6", False)[1:3] == ["⊘ aborted", ""]
    assert texts(shown, "m7", False)[1:3] == ["Half an ans", "⊘ aborted: the user pressed escape"]
    assert texts(shown, "m8", False)[1:3] == ["done", "✗ error: rate limited"]
    assert texts(shown, "m9", False)[1:3] == ["A long ans", "… cut off at the output limit"]
    assert texts(shown, "m10", False)[1] == "(an empty reply)"
    assert [text for text, _ in whole_message([shown["m6"][0].entry])][2:] == ["⊘ aborted"]


def test_summaries_written_as_messages_and_unknown_roles(forms):
    store, session, shown = forms
    branch = texts(shown, "m11", False)
    assert branch[0].startswith("◇ branch summary   of m1") and "Tried approach A: too slow." in branch
    compaction = texts(shown, "m12", False)
    assert compaction[0].startswith("◆ compaction summary  5,000 tokens before")
    assert compaction[1] == "(no summary was written)"
    unknown = texts(shown, "m13", False)
    assert unknown[0].startswith("newRole") and unknown[1].startswith('{"weight": 3, "colour": "blue"')


def test_the_markdown_export_says_the_same(forms):
    store, session, shown = forms
    out = io.StringIO()
    export_session(store, session.uid, "markdown", out)
    text = out.getvalue()
    assert "$ pytest -x\n1 failed\n```\n\n*exit 1*" in text
    assert "*⊘ aborted*" in text and "*✗ error: rate limited*" in text
    assert "*(an empty reply)*" in text and "(empty)" not in text


def test_an_extensions_message_shows_its_kind_and_text(tmp_path):
    """pi's custom_message entry and its `custom` role: what an extension put in the context."""
    store = open_store(tmp_path / "arbor.db")
    import_paths(store, [FIXTURES / "pi" / "specstory_full_format_v3_synthetic.jsonl"])
    session = store.sessions.list()[0]
    shown = {item.entry.id: (item, group) for raw in (False, True)
             for item, group in messages(store, session.id, raw)}
    assert texts(shown, "cm1", False)[:2] == [texts(shown, "cm1", False)[0],
                                              "Injected context from extension"]
    assert texts(shown, "cm1", False)[0].startswith("extension message · injected")
    assert texts(shown, "cm2", False)[0].startswith("extension message · ext-msg")
    whole = [text for text, _ in whole_message([shown["cm1"][0].entry])]
    assert whole[0].startswith("extension message · ") and whole[2] == "Injected context from extension"
    store.close()


def test_the_html_export_draws_them_the_same_way(forms, tmp_path):
    from tui.render.html_export import export_html

    store, session, shown = forms
    out = io.StringIO()
    export_html(store, store.sessions.get(session.id), out,
                branch=store.branches.current(session.id))
    page = out.getvalue()
    assert '<span class="glyph">$</span> <span class="arg">pytest -x</span>' in page
    assert '<span class="bad">exit 1</span>' in page
    assert '<div class="note">⊘ aborted</div>' in page and "✗ error: rate limited" in page
    assert "(no summary was written)" in page and "(an empty reply)" in page
