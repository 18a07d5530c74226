"""Names, models, folders and file names come from agents' logs: the command line prints
them literally, and no control character (ESC of an OSC 52 clipboard write or of a screen
clear, BEL, C1 codes) reaches the terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import build_hostile_store
from core import open_store
from tui import cli

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d")
OSC52 = "\x1b]52;c;eA==\x07"


def assert_clean(text: str) -> None:
    assert not [c for c in CONTROLS if c in text], repr(text[:2000])


@pytest.mark.parametrize("by", ["session", "day", "model", "project"])
def test_usage_prints_hostile_names_and_models_literally(tmp_path, capsys, by):
    path = build_hostile_store(tmp_path / "h.db")
    store = open_store(path)
    session = store.sessions.find()[0]
    branch = store.branches.of_session(session.id)[0]
    store.entries.append_to_branch(branch.id, "message", {"message": {
        "role": "assistant", "model": f"[/x] {OSC52}model", "content": "hi",
        "usage": {"input": 10, "output": 5, "totalTokens": 15}}})
    store.close()
    assert cli.main(["usage", "--db", str(path), "--by", by]) == 0
    out = capsys.readouterr().out
    assert_clean(out)
    assert "[/x] ␛]52;c;eA==" in out                 # the model, shown, not run
    if by == "session":   # markup shown as text (the long name cut with "…" to fit)
        assert "[bold red]x[/] ␛]52;c;aGVsbG8=␇" in out


@pytest.mark.skipif(not (FIXTURES / "codex").exists(), reason="shared fixtures are beside the repository")
@pytest.mark.parametrize("quiet", [False, True], ids=["table", "quiet"])
def test_import_report_prints_hostile_file_names_literally(tmp_path, capsys, quiet):
    logs = tmp_path / "logs"
    logs.mkdir()
    malformed = next((FIXTURES / "codex").glob("*.malformed.jsonl"))
    shutil.copy(malformed, logs / f"[bold]x {OSC52} [@click=app.quit].jsonl")
    (logs / f"not a log \x1b[2J \x9b31m.jsonl").write_bytes(b"\x00\x01 binary\n")
    argv = ["import", "--db", str(tmp_path / "s.db"), str(logs)] + (["-q"] if quiet else [])
    cli.main(argv)
    captured = capsys.readouterr()
    assert_clean(captured.out)
    assert_clean(captured.err)
    if not quiet:
        assert "[bold]x ␛]52;c;eA==" in captured.out     # the skipped line's file, literally



@pytest.mark.skipif(not (FIXTURES / "claude_code").exists(), reason="shared fixtures are beside the repository")
def test_the_import_progress_line_on_a_terminal_writes_no_control_of_a_file_name(tmp_path, monkeypatch):
    """The progress line counts sessions and bytes; a hostile file name never reaches it."""
    import io

    from rich.console import Console

    from tui.commands import import_logs

    screen = io.StringIO()
    monkeypatch.setattr(import_logs, "stderr_console",
                        lambda: Console(file=screen, force_terminal=True, width=200))
    logs = tmp_path / "logs"
    logs.mkdir()
    source = max((FIXTURES / "claude_code").rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    shutil.copy(source, logs / f"[bold]x {OSC52} [red]y.jsonl")
    with open_store(tmp_path / "s.db") as store:
        report = import_logs._run(store, [logs], show_progress=True, describe_unchanged=False)
    shown = screen.getvalue()
    assert report.entries_added > 0
    assert "sessions" in shown and "MB" in shown          # the line was drawn
    assert "\x1b]52" not in shown and "\x07" not in shown and "eA==" not in shown
