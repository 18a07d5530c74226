"""Every table and message of the command line fits the terminal (issue 26, part 6):
`arbor import`'s report, `arbor list`, `arbor usage` in every --by, the messages of
`arbor export` and `arbor resume`, and every --help, run as a user runs them with
COLUMNS=80, COLUMNS=60 and a wide terminal. No line is wider than the terminal, no row
wraps onto a second line, and a name or path is whole or cut with "…", never broken
inside a word across two lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from core import open_store

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"
WIDTHS = (60, 80, 200)
LONG_NAME = "Investigate the intermittent deadlock between the billing worker and the scheduler"


def arbor(*args: str, width: int, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(width), "PYTHONPATH": str(REPO)}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=120)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """The demo store, one session renamed to a long name, and the fixtures imported."""
    from core.demo import build_demo
    from core.importing import import_paths

    path = build_demo(tmp_path_factory.mktemp("widths") / "demo.db")
    with open_store(path, create=False) as opened:
        first = opened.sessions.list()[0]
        opened.sessions.rename(first.id, LONG_NAME)
        import_paths(opened, sorted(p for p in FIXTURES.glob("*/*") if p.suffix != ".json"))
    return path


def check_lines(out: str, width: int) -> list[str]:
    lines = out.splitlines()
    too_wide = [line for line in lines if cell_len(line) > width]
    assert not too_wide, f"wider than {width}:\n" + "\n".join(too_wide)
    return lines


def whole_or_cut(value: str, lines: list[str]) -> bool:
    """`value` is on a line whole, or cut with "…": its start and "…" (a name), or its start,
    "…" and its end (a path)."""
    text = "\n".join(lines)
    if value in text:
        return True
    for line in lines:
        for part in line.split("…")[:-1]:
            for head in range(1, len(value)):
                if part.endswith(value[:head]):
                    rest = line[line.index(part) + len(part) + 1:]
                    if rest.startswith(" ") or not rest or any(
                            value.endswith(rest.split()[0][:tail]) and tail
                            for tail in range(1, len(rest.split()[0]) + 1)):
                        return True
    return False


def never_broken(value: str, lines: list[str]) -> None:
    """No line ends with the start of `value` while the next begins with its rest (a name
    wrapped inside a word, as "glm-5p2-fas" / "t" was)."""
    for above, below in zip(lines, lines[1:]):
        for cut in range(1, len(value)):
            if above.rstrip().endswith(value[:cut]) and below.lstrip().startswith(value[cut:]):
                pytest.fail(f"{value!r} broken across two lines:\n{above}\n{below}")


@pytest.mark.parametrize("width", WIDTHS)
def test_list_fits_with_one_line_a_session(store, width):
    done = arbor("list", "--db", str(store), width=width)
    assert done.returncode == 0, done.stderr
    lines = check_lines(done.stdout, width)
    rows = json.loads(arbor("list", "--db", str(store), "--json", width=width).stdout)
    note = next((i for i, line in enumerate(lines) if line.startswith("(")), len(lines))
    body = lines[1:note]                                 # (the note under it may wrap)
    assert len(body) == len(rows)                         # no row wrapped onto a second line
    for line, row in zip(body, rows):
        assert line.startswith(row["short_uid"] + " ")    # the uid is never cut
        assert whole_or_cut(row["name"], [line]), (row["name"], line)
        never_broken(row["name"], lines)
    if width == 200:
        assert LONG_NAME in done.stdout and not any(line.startswith("(") for line in lines)
    else:
        assert LONG_NAME not in done.stdout and "too narrow for" in done.stdout


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("by", ["session", "day", "week", "month", "model", "project"])
def test_usage_fits_in_every_grouping(store, by, width):
    done = arbor("usage", "--db", str(store), "--by", by, "--timezone", "UTC", width=width)
    assert done.returncode == 0, done.stderr
    lines = check_lines(done.stdout, width)
    data = json.loads(arbor("usage", "--db", str(store), "--by", by, "--timezone", "UTC",
                            "--json", width=width).stdout)
    header = lines[0].split()
    assert header[0] in ("Session", "Day", "Week", "Month", "Model", "Project")
    assert "Total" in header and "Cost" in header     # never left out
    total = next(i for i, line in enumerate(lines) if line.startswith("Total"))
    rows = [line for line in lines[1:total] if not line.startswith("  sub-agents")]
    assert len(rows) == len(data["rows"])             # a line a group: nothing wrapped
    for row in data["rows"]:
        for model in row["models"]:
            never_broken(model, lines)
        if by in ("model", "project"):
            assert whole_or_cut(row["key"], lines), row["key"]
    if by == "session":
        names = [line.split("  ")[0] for line in rows]
        assert any(name.endswith("…") for name in names) == (width < 200)
        for name in names:
            never_broken(name.rstrip("…"), lines)
    if width == 200:
        assert "Cache write" in lines[0] and "too narrow" not in done.stdout


@pytest.mark.parametrize("width", WIDTHS)
def test_the_import_report_fits(tmp_path, width):
    db = tmp_path / "s.db"
    paths = [str(p) for p in sorted(FIXTURES.glob("*/*"))]
    done = arbor("import", "--db", str(db), *paths, width=width)
    assert done.returncode == 0, done.stderr
    lines = check_lines(done.stdout, width)
    assert lines[0].startswith("arbor import — ")
    header = lines[1].split()
    assert header[0] == "File" and "Result" in header and "Entries" in header
    assert ("Branches" in header) and ("Skipped" in header)   # the issue's: cut at the right
    if width == 200:
        assert "Session" in header and "Format" in header
    else:
        assert any(line.lstrip().startswith("↳ ") for line in lines)  # sessions under the path
    for name in ("dag_compact_after_rewind.jsonl", "pi_v3_generated.jsonl",
                 "langgraph_checkpoints.sqlite"):
        assert whole_or_cut(name, lines), name
        never_broken(name, lines)
    # what was not imported and the skipped line: the path whole or cut, the reason whole
    for reason in ("not valid JSON", "not a log of any agent arbor reads"):
        assert reason in " ".join(" ".join(lines).split()), reason


@pytest.mark.parametrize("width", [60, 80])
def test_the_import_report_of_many_folders_fits(tmp_path, width):
    from test_import_report import claude_lines

    root = tmp_path / "projects"
    for p, project in enumerate(("-home-dev-alpha-with-a-rather-long-project-name",
                                 "-home-dev-beta", "-home-dev-gamma")):
        folder = root / project
        folder.mkdir(parents=True)
        for n in range(10):
            (folder / f"s{n}.jsonl").write_text(
                claude_lines(f"{p}{n:07d}-0000-4000-8000-000000000000", 0, 2))
    (root / "-home-dev-beta" / "bad.jsonl").write_text("{nope\n")
    done = arbor("import", "--db", str(tmp_path / "s.db"), str(root), width=width)
    assert done.returncode == 0, done.stderr
    lines = check_lines(done.stdout, width)
    assert any(line.startswith("Folder") for line in lines)
    assert whole_or_cut("-home-dev-alpha-with-a-rather-long-project-name", lines)
    assert any(line.startswith("3 folders") for line in lines)


COMMANDS = ["", "import", "list", "export", "resume", "usage", "watch", "push"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_help_fits(command, width):
    done = arbor(*([command] if command else []), "--help", width=width)
    assert done.returncode == 0, done.stderr
    check_lines(done.stdout, width)
    for word in ("claude_code", "langgraph", "PostgreSQL", "Markdown"):
        never_broken(word, done.stdout.splitlines())


@pytest.mark.parametrize("width", [60, 80])
def test_export_and_resume_messages_wrap_between_words(store, tmp_path, width):
    """A sentence is wrapped between words, a path too long for a line stands whole on its
    own line (never cut: it is to be copied), and the command to run is one line."""
    home = tmp_path / "home"
    session = next(s for s in json.loads(arbor("list", "--db", str(store), "--json",
                                               width=width).stdout)
                   if s["source"] == "codex")
    done = arbor("resume", "--db", str(store), session["short_uid"], "--print", width=width,
                 home=home)
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    assert len(said) > 1 and said[0].startswith("arbor: Wrote the branch")
    for line in said:
        assert cell_len(line) <= width or " " not in line.strip()   # only a path is longer
    written = next(line.strip(" ().") for line in said if ".jsonl" in line)
    assert Path(written).exists()                                   # the whole path, usable
    command = done.stdout.splitlines()
    assert len(command) == 1 and command[0].startswith("cd ")       # one line to copy
    done = arbor("export", "--db", str(store), "no-such-session-anywhere", width=width)
    assert done.returncode == 1
    check_lines(done.stderr, width)
    done = arbor("export", "--db", str(store), session["short_uid"], "-o", str(store),
                 width=width)
    assert done.returncode == 1
    check_lines(done.stderr, width)
    assert "export will not write over it" in " ".join(done.stderr.split())
