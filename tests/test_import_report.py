"""What `arbor import` prints for many files: a row a folder for a first import of many files,
a row for each file that changed when few did (the rest counted), every file with
`--files`, and "lines read" counting only what this run read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tui import cli
from tui.commands import import_report

PROJECTS = ("-home-dev-alpha", "-home-dev-beta", "-home-dev-gamma")


def claude_lines(session: str, start: int, count: int) -> str:
    """`count` alternating prompt/answer lines of a Claude Code session, numbered from `start`."""
    lines = []
    for number in range(start, start + count):
        line = {"uuid": f"{session}-{number:04d}",
                "parentUuid": f"{session}-{number - 1:04d}" if number else None,
                "sessionId": session, "cwd": "/home/dev", "version": "2.0.0",
                "timestamp": f"2026-11-30T10:{number // 60:02d}:{number % 60:02d}.000Z"}
        if number % 2 == 0:
            line.update(type="user", message={"role": "user", "content": f"question {number}"})
        else:
            line.update(type="assistant", message={
                "id": f"msg_{session}_{number}", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": f"answer {number}"}],
                "usage": {"input_tokens": 10, "output_tokens": 5}})
        lines.append(json.dumps(line))
    return "\n".join(lines) + "\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """Ten two-line sessions in each of three projects, and a sub-agent log in the first."""
    home = tmp_path / "home"
    for p, project in enumerate(PROJECTS):
        folder = home / ".claude" / "projects" / project
        folder.mkdir(parents=True)
        for n in range(10):
            session = f"{p}{n:07d}-0000-4000-8000-000000000000"
            (folder / f"s{n}.jsonl").write_text(claude_lines(session, 0, 2))
    agent = home / ".claude" / "projects" / PROJECTS[0] / "s0" / "subagents"
    agent.mkdir(parents=True)
    (agent / "agent-a1.jsonl").write_text(claude_lines("a1000000-0000-4000-8000-000000000000", 0, 2))
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home


def run_import(tmp_path, capsys, *flags: str) -> str:
    assert cli.main(["import", "--discover", "--db", str(tmp_path / "s.db"), *flags]) == 0
    return capsys.readouterr().out


def table_rows(out: str) -> list[list[str]]:
    """The body rows of the table, as their cells (two spaces or more apart): the lines
    between the header (its last line starts with File or Folder) and the totals; a
    session's line under its file (indented) is not a row."""
    import re

    rows, inside = [], False
    for line in out.splitlines():
        if re.match(r"(File|Folder)\s", line):
            inside = True
        elif inside and re.match(r"[\d,]+ (files|folders)", line):
            break
        elif inside and line and not line.startswith(" "):
            rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


def test_a_first_import_of_many_files_gets_a_row_a_folder(home, tmp_path, capsys):
    out = run_import(tmp_path, capsys)
    rows = table_rows(out)
    assert [row[0] for row in rows] == sorted(PROJECTS)     # all ties: by name
    by_name = {row[0]: row[1:] for row in rows}
    # Files, New sessions, Entries, Branches (no file unchanged, none left out, no line
    # skipped: those columns would hold only zeros)
    assert by_name[PROJECTS[0]] == ["11", "11", "22", "11"]
    assert by_name[PROJECTS[1]] == ["10", "10", "20", "10"]
    assert "Unchanged" not in out and "Skipped" not in out
    assert "3 folders" in out and "arbor import --files lists every file." in out
    assert "s3.jsonl" not in out
    assert "62 lines read" in out


def test_a_reimport_lists_the_file_that_grew_and_counts_the_rest(home, tmp_path, capsys):
    run_import(tmp_path, capsys)
    grown = home / ".claude" / "projects" / PROJECTS[1] / "s4.jsonl"
    with grown.open("a") as handle:
        handle.write(claude_lines("10000004-0000-4000-8000-000000000000", 2, 3))
    out = run_import(tmp_path, capsys)
    rows = table_rows(out)
    assert len(rows) == 1 and rows[0][0].startswith(f"{PROJECTS[1]}/s4.jsonl")
    assert rows[0][1] == "imported" and rows[0][3] == "3"      # (one format: no column for it)
    assert "· claude_code" in out
    assert "30 more files unchanged (arbor import --files lists every file)." in out
    assert "3 messages added; 3 lines read" in out       # the 3 new lines, not the file's 5


def test_files_lists_every_file(home, tmp_path, capsys):
    out = run_import(tmp_path, capsys, "--files")
    results = [row[1] for row in table_rows(out) if row[1]]    # (a folded name's lines: none)
    assert results == ["imported"] * 31
    assert "more files unchanged" not in out


def test_few_files_are_listed_each(tmp_path, capsys):
    folder = tmp_path / "logs"
    folder.mkdir()
    for n in range(3):
        (folder / f"s{n}.jsonl").write_text(
            claude_lines(f"{n:08d}-0000-4000-8000-000000000000", 0, 2))
    assert cli.main(["import", "--db", str(tmp_path / "s.db"), str(folder)]) == 0
    rows = table_rows(capsys.readouterr().out)
    assert [row[0] for row in rows] == ["s0.jsonl", "s1.jsonl", "s2.jsonl"]


def test_the_folders_with_most_added_come_first_and_the_rest_are_counted(monkeypatch):
    import io

    from rich.console import Console

    from core.importing.base import FileResult, ImportReport, SessionResult

    monkeypatch.setattr(import_report, "FOLDERS_SHOWN", 2)
    report = ImportReport()
    for project, sessions in (("small", 1), ("big", 3), ("middle", 2), ("none", 0)):
        for n in range(max(sessions, 1) * 10):
            result = FileResult(f"/logs/{project}/f{n}.jsonl", format="claude_code", lines=4)
            if sessions:
                result.sessions.append(SessionResult(f"{project}{n}", "s", "claude_code", True,
                                                     entries_added=sessions))
            else:
                result.status = "unchanged"
            report.files.append(result)
    console = Console(file=io.StringIO(), width=120)
    import_report.print_report(report, console)
    out = console.file.getvalue()
    assert [row[0] for row in table_rows(out)] == ["/logs/big", "/logs/middle"]
    assert "… and 2 more folders." in out
    assert "4 folders" in out
    assert "240 lines read" in out      # 60 imported files of 4 lines, none of the unchanged


def test_a_subagent_log_counts_under_its_sessions_project():
    assert import_report._folder_of("/p/proj/abc/subagents/agent-1.jsonl") == "/p/proj"
    assert import_report._folder_of("/p/proj/abc.jsonl") == "/p/proj"
    assert import_report._folder_of("/codex/sessions/2026/11/30/rollout.jsonl") == \
        "/codex/sessions/2026/11/30"
    assert Path(import_report._folder_of("subagents/agent.jsonl")) == Path("")


def test_the_summary_groups_thousands_as_the_status_line_does():
    from core.importing.base import FileResult, ImportReport, SessionResult

    files = [FileResult(f"/logs/{n}.jsonl", format="claude_code", sessions=[
        SessionResult(f"s{n}", "a session", "claude_code", True, entries_added=40,
                      messages_added=17, branches_added=1)]) for n in range(1200)]
    text = ImportReport(files).summary()
    assert text.startswith("1,200 files imported: 1,200 new sessions, ")
    assert "48,000 entries (20,400 messages), 1,200 new branches." in text


def test_sub_agents_threads_are_counted_apart_from_new_sessions(home, tmp_path, capsys):
    """A sub-agent's thread is listed under its session: the folder table counted it as a
    new session of its own (agents' own files, tests/fixtures/lineage)."""
    from test_lineage import CLAUDE_PROJECT

    shutil.copytree(CLAUDE_PROJECT, home / ".claude" / "projects" / CLAUDE_PROJECT.name)
    out = run_import(tmp_path, capsys)
    header = out[:out.index("Folder")] + out[out.index("Folder"):].split("\n\n")[0]
    assert "Sub-agent" in header and "threads" in header
    by_name = {row[0]: row[1:] for row in table_rows(out)}
    # Files, New sessions, Sub-agent threads, Entries, Branches
    assert by_name[CLAUDE_PROJECT.name][:3] == ["2", "1", "1"]
    assert by_name[PROJECTS[1]][:3] == ["10", "10", "0"]
    totals = next(line for line in out.splitlines() if line.startswith("4 folders"))
    assert totals.split()[2:5] == ["33", "32", "1"]


def test_watch_says_a_new_sub_agent_is_not_a_new_session(tmp_path, capsys):
    from test_lineage import CLAUDE_PROJECT

    from core import open_store
    from core.importing import import_paths
    from tui.commands.watch import _printer

    project = tmp_path / "projects" / CLAUDE_PROJECT.name
    shutil.copytree(CLAUDE_PROJECT, project)
    store = open_store(str(tmp_path / "w.db"))
    try:
        _printer(store)(import_paths(store, [project]))
    finally:
        store.close()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert sorted("new sub-agent" in line for line in lines) == [False, True]
    assert sum("1 new session" in line for line in lines) == 1
