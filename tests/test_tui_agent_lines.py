"""The other agents' bookkeeping records (Aider's run headers and output lines, Gemini CLI's
info records, Qwen Code's telemetry, Copilot CLI's system prompts, resumes and shutdowns, a
compaction's own model request) get a name and one line of what they say
(tui.render.agent_lines), as Claude Code's lines do, instead of a line of JSON; the filters
leave them out with the other bookkeeping. The records are the ones the agents wrote
(tests/fixtures/agents/, imported)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from rich.console import Console

from core import open_store
from core.importing import import_paths
from core.model.entries import Entry
from tui.entry_tree import FILTERS, shows
from tui.message_source import Item
from tui.render.agent_lines import is_bookkeeping_line, name_of, says
from tui.render.message_render import body, header
from tui.render.message_text import whole_message
from test_agent_conformance import place

NOW = datetime(2026, 12, 7, 8, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, Entry]:
    """The first entry of each bookkeeping kind the fixtures of these agents hold."""
    root = tmp_path_factory.mktemp("agent-lines")
    store = open_store(root / "arbor.db")
    found: dict[str, Entry] = {}
    try:
        for source in ("aider", "qwen", "copilot"):
            import_paths(store, place(root / source, source))
        for session in store.sessions.list(include_archived=True):
            for entry in store.entries.of_session(session.id):
                if is_bookkeeping_line(entry.type):
                    found.setdefault(name_of(entry.type, entry.data), entry)
    finally:
        store.close()
    return found


@pytest.mark.parametrize("name, said", [
    ("aider · run", "Aider v0.86.2 · openai/fake-model with diff edit format · "
                    "started 2026-12-06 22:39:38"),
    ("aider · output", "Commit 0c4a2d4 Add a second line to notes.txt"),
    ("qwen · telemetry · api response", "qwen3-coder-plus · 108 in · 18 out · 540 ms"),
    ("qwen · telemetry · tool call", "agent · success · 126 ms"),
    ("qwen · attribution snapshot", "1 prompt · 0 files"),
    ("model request", "compaction · qwen3-coder-plus · 105 in · 15 out"),
    ("copilot · run ended", "2 requests · ↑ 203 ↓ 23 · 25 ms · routine"),
    ("copilot · resumed", "gpt-4.1 · /tmp/arbor-lab/copilot/project · after 14 events"),
])
def test_each_record_the_agents_wrote_says_what_it_is(records, name, said):
    entry = records[name]
    assert says(entry.type, entry.data) == said


def test_a_system_prompt_is_its_opening_words_and_its_length(records):
    entry = records["copilot · system prompt"]
    said = says(entry.type, entry.data)
    assert said.startswith("You are the GitHub Copilot CLI") and said.endswith(" characters")
    assert len(said) < 120


def test_gemini_cli_info_and_error_records_say_their_text():
    info = {"id": "a1", "timestamp": "2026-12-06T22:20:07.582Z", "type": "info",
            "content": "Request cancelled."}
    assert (name_of("gemini:info", info), says("gemini:info", info)) == \
        ("gemini · info", "Request cancelled.")
    error = {"id": "a2", "type": "error", "content": [{"text": "Quota  exceeded\nfor model"}]}
    assert says("gemini:error", error) == "Quota exceeded for model"


def test_what_is_not_recognised_is_its_json_less_what_the_name_says():
    odd = {"copilot": {"type": "session.something_new", "data": {"x": 1}}}
    assert name_of("copilot:session.something_new", odd) == "copilot · session something new"
    assert says("copilot:session.something_new", odd) == '{"x": 1}'
    assert says("qwen:rewind", {"qwen": {"subtype": "rewind", "type": "system",
                                         "systemPayload": {"targetTurnIndex": 0}}}) == \
        '{"targetTurnIndex": 0}'
    for bad in (None, [], "x", {"qwen": "x"}, {"copilot": {"data": [1]}}):
        for kind in ("qwen:ui_telemetry", "copilot:session.shutdown", "aider:run", "model_request"):
            assert isinstance(says(kind, bad), str)


def _plain(renderables) -> list[str]:
    console = Console(width=80, color_system=None, legacy_windows=False)
    out = []
    for part, _cut in renderables:
        with console.capture() as captured:
            console.print(part)
        out += captured.get().rstrip("\n").split("\n")
    return out


def test_the_pane_shows_the_name_and_one_line_then_the_record_when_opened(records):
    entry = records["qwen · telemetry · api response"]
    item = Item("entry", entry)
    head = header(item, None, NOW, 80).plain
    assert head.startswith("qwen · telemetry · api response")
    folded = body(item, False, 80)
    assert _plain(folded.parts) == ["qwen3-coder-plus · 108 in · 18 out · 540 ms"]
    assert folded.foldable
    opened = "\n".join(_plain(body(item, True, 80).parts))
    assert '"input_token_count": 108' in opened
    lines = [text for text, _style in whole_message([entry])]
    assert lines[0].startswith("qwen · telemetry · api response · ")
    assert "qwen3-coder-plus · 108 in · 18 out · 540 ms" in lines


def test_hostile_text_in_a_record_is_shown_not_run():
    data = {"text": "[/bold] [@click=app.quit]x[/] \x1b]52;c;aGk=\x07 \x1b[2J done"}
    entry = Entry(1, "L3-x", 1, None, "aider:output", "2026-12-06T22:39:38.000+00:00", 1, 1, 0,
                  None, data)
    shown = "\n".join(_plain(body(Item("entry", entry), False, 80).parts))
    assert "\x1b" not in shown and "[@click=app.quit]" in shown and "done" in shown


@pytest.mark.parametrize("mode", FILTERS)
def test_the_filters_leave_them_out_with_the_other_bookkeeping(records, mode):
    for entry in records.values():
        assert shows(mode, entry.type, None, tool=False, labelled=False) == (mode == "everything")
