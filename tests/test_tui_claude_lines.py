"""Claude Code's bookkeeping lines get a name and one line of what they say (tui.render.claude_lines),
in the messages pane, the whole-message view and the HTML export."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest
from rich.console import Console

from core.model.entries import Entry
from tui.render.claude_lines import describe, duration
from tui.render.message_render import body, header
from tui.message_source import Item
from tui.render.message_text import whole_message

LINE = {"parentUuid": "9fc82ada-b18a-4214-9c5f-61a65c4b5400", "isSidechain": False,
        "userType": "external", "cwd": "/home/dev/src/app", "version": "2.1.121",
        "sessionId": "a4bc7977-cc02-4364-b13b-7619fd983df5", "gitBranch": "main",
        "uuid": "705497aa-0f8f-4eb7-81ea-ea5e0f317310", "timestamp": "2025-03-22T06:55:42.778Z"}


def line(**fields):
    return {**LINE, **fields}


@pytest.mark.parametrize("entry_type, data, name, said", [
    ("claude:system", line(type="system", subtype="turn_duration", durationMs=104326),
     "system · turn duration", "worked for 1m 44s"),
    ("claude:system", line(type="system", subtype="turn_duration", durationMs=2500,
                           messageCount=1204),
     "system · turn duration", "worked for 2.5 s · 1,204 messages"),
    ("claude:system", line(type="system", subtype="api_error", level="error",
                           cause={"code": "ECONNRESET", "path": "https://api.anthropic.com"},
                           retryInMs=5000.5, retryAttempt=2, maxRetries=10),
     "system · api error", "ECONNRESET · retry 2 of 10 in 5.0 s"),
    ("claude:system", line(type="system", subtype="api_error",
                           error={"cause": {"code": "FailedToOpenSocket"}}),
     "system · api error", "FailedToOpenSocket"),
    ("claude:system", line(type="system", subtype="stop_hook_summary", hookCount=2,
                           hookErrors=["boom"], preventedContinuation=True),
     "system · stop hook summary", "2 hooks ran · 1 error · stopped the turn"),
    ("claude:system", line(type="system", subtype="microcompact_boundary",
                           microcompactMetadata={"trigger": "auto", "preTokens": 150000,
                                                 "tokensSaved": 42000}),
     "system · microcompact boundary", "auto · 150,000 tokens before · 42,000 tokens saved"),
    ("claude:system", line(type="system", subtype="local_command",
                           content="<command-name>/model</command-name>\n            "
                                   "<command-message>model</command-message>\n            "
                                   "<command-args>sonnet</command-args>"),
     "system · local command", "/model sonnet"),
    ("claude:system", line(type="system", subtype="local_command",
                           content="<local-command-stdout>Set model to Sonnet 4.5"
                                   "</local-command-stdout>"),
     "system · local command", "Set model to Sonnet 4.5"),
    ("claude:system", line(type="system", subtype="bridge_status",
                           url="https://claude.ai/code/session_01"),
     "system · bridge status", "https://claude.ai/code/session_01"),
    ("claude:file-history-snapshot",
     {"type": "file-history-snapshot", "messageId": "m1", "isSnapshotUpdate": False,
      "snapshot": {"messageId": "m1", "timestamp": "2025-03-22T06:45:38.028Z",
                   "trackedFileBackups": {f"src/f{n}.py": {"version": 1} for n in range(5)}}},
     "file snapshot", "5 files: src/f0.py, src/f1.py, src/f2.py (+2)"),
    ("claude:file-history-snapshot",
     {"type": "file-history-snapshot", "messageId": "m1", "isSnapshotUpdate": True,
      "snapshot": {"messageId": "m1", "trackedFileBackups": {}}},
     "file snapshot", "updated · no files tracked"),
    ("claude:queue-operation", {"type": "queue-operation", "operation": "enqueue",
                                "timestamp": "2025-03-22T06:45:38.028Z", "sessionId": "s",
                                "content": "and run the tests"},
     "queue · enqueue", "and run the tests"),
    ("claude:queue-operation", {"type": "queue-operation", "operation": "dequeue",
                                "timestamp": "2025-03-22T06:45:38.028Z", "sessionId": "s"},
     "queue · dequeue", ""),
    ("claude:attachment", line(type="attachment", attachment={
        "type": "hook_non_blocking_error", "hookName": "PostToolUse:Edit",
        "hookEvent": "PostToolUse", "stderr": "ruff: 3 errors", "exitCode": 1,
        "durationMs": 120}),
     "attachment · hook non blocking error", "PostToolUse:Edit · ruff: 3 errors · exit 1 · 120 ms"),
    ("claude:attachment", line(type="attachment", attachment={"type": "todo_reminder",
                                                              "content": [], "itemCount": 4}),
     "attachment · todo reminder", "4 items"),
    ("claude:attachment", line(type="attachment", attachment={
        "type": "edited_text_file", "filename": "/home/dev/src/app/main.py", "snippet": "x"}),
     "attachment · edited text file", "/home/dev/src/app/main.py"),
    ("claude:attachment", line(type="attachment", attachment={
        "type": "queued_command", "prompt": [{"type": "text", "text": "also fix lint"}]}),
     "attachment · queued command", "also fix lint"),
    ("claude:attachment", line(type="attachment", attachment={"type": "a_future_kind",
                                                              "answer": 42}),
     "attachment · a future kind", '{"answer": 42}'),
    ("claude:progress", line(type="progress", data={
        "type": "hook_progress", "hookEvent": "PreToolUse", "hookName": "PreToolUse:Bash",
        "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/pretooluse.sh"}),
     "progress · hook progress",
     "PreToolUse:Bash · $CLAUDE_PROJECT_DIR/.claude/hooks/pretooluse.sh"),
    ("claude:pr-link", {"type": "pr-link", "sessionId": "s", "prNumber": 12,
                        "prUrl": "https://github.com/o/r/pull/12", "prRepository": "o/r"},
     "pull request", "#12 · o/r · https://github.com/o/r/pull/12"),
    ("claude:permission-mode", {"type": "permission-mode", "permissionMode": "plan",
                                "sessionId": "s"},
     "permission mode", "plan"),
    ("claude:some-new-line", line(type="some-new-line", answer=42),
     "some new line", '{"answer": 42}'),
])
def test_describe(entry_type, data, name, said):
    assert describe(entry_type, data) == (name, said)


@pytest.mark.parametrize("data", [
    None, [], "text", {"subtype": 3}, line(type="system", subtype="turn_duration",
                                          durationMs="soon"),
    line(type="system", subtype="turn_duration", durationMs=math.nan),
    line(type="system", subtype="api_error", cause=["odd"], retryAttempt=True),
    {"type": "attachment", "attachment": {"type": "budget_usd", "used": "lots"}},
    {"type": "attachment", "attachment": {"type": "invoked_skills", "skills": "x"}},
    {"type": "file-history-snapshot", "snapshot": {"trackedFileBackups": ["a"]}},
])
def test_odd_shapes_still_say_something_without_failing(data):
    for kind in ("system", "attachment", "progress", "file-history-snapshot"):
        name, said = describe(f"claude:{kind}", data)
        assert isinstance(name, str) and name and isinstance(said, str)


def test_durations():
    assert [duration(v) for v in (0, 999, 1000, 59_999, 60_000, 3_599_000, 3_600_000,
                                  7_384_000)] == \
        ["0 ms", "999 ms", "1.0 s", "60.0 s", "1m 00s", "59m 59s", "1h 00m", "2h 03m"]
    assert [duration(v) for v in (-1, None, "1", True, math.inf)] == [""] * 5


def _entry(entry_type, data, entry_id="705497aa"):
    return Entry(1, entry_id, 1, None, entry_type, "2025-03-22T06:55:42.778000+00:00", 1, 1, 0,
                 None, data)


def _plain(renderables) -> list[str]:
    console = Console(width=70, color_system=None, legacy_windows=False)
    out = []
    for part, _cut in renderables:
        with console.capture() as captured:
            console.print(part)
        out += captured.get().rstrip("\n").split("\n")
    return out


NOW = datetime(2025, 3, 22, 8, 0, tzinfo=timezone.utc)


def test_the_pane_shows_the_name_and_what_it_says_then_the_line_when_opened():
    data = line(type="system", subtype="turn_duration", durationMs=104326)
    item = Item("entry", _entry("claude:system", data))
    head = header(item, None, NOW, 70).plain
    assert head.startswith("system · turn duration") and head.endswith("06:55:42  705497aa")
    folded = body(item, False, 70)
    assert _plain(folded.parts) == ["worked for 1m 44s"] and folded.foldable
    opened = "\n".join(_plain(body(item, True, 70).parts))
    assert opened.startswith("worked for 1m 44s") and '"durationMs": 104326' in opened


def test_a_line_whose_name_says_all_has_no_body_line():
    item = Item("entry", _entry("claude:queue-operation",
                                {"type": "queue-operation", "operation": "dequeue"}))
    assert _plain(body(item, False, 70).parts) == []


def test_a_long_name_leaves_room_for_the_time_and_id():
    data = line(type="attachment", attachment={"type": "a_very_long_attachment_kind_name_here"})
    head = header(Item("entry", _entry("claude:attachment", data)), None, NOW, 60).plain
    assert head.endswith("06:55:42  705497aa") and "…" in head and len(head) <= 60


def test_hostile_text_in_a_bookkeeping_line_is_shown_not_run():
    data = line(type="system", subtype="informational",
                content="[/bold] [@click=app.quit]x[/] \x1b]52;c;aGk=\x07 \x1b[2J done")
    item = Item("entry", _entry("claude:system", data))
    shown = "\n".join(_plain(body(item, False, 70).parts))
    assert "\x1b" not in shown and "[@click=app.quit]" in shown and "done" in shown


def test_the_whole_message_view_names_the_line_and_says_it_before_its_json():
    data = line(type="system", subtype="turn_duration", durationMs=104326)
    lines = [text for text, _style in whole_message([_entry("claude:system", data)])]
    assert lines[0].startswith("system · turn duration · 2025-03-22 06:55:42 UTC")
    assert lines[2] == "worked for 1m 44s"
    assert any('"durationMs": 104326' in text for text in lines[3:])
