"""`arbor --help` names every option of the app and what each command does, truthfully."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _help(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tui", *args, "--help"], capture_output=True,
                          text=True, cwd=REPO, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_usage_line_names_every_option_of_the_app():
    text = _help()
    usage = text.split("\n\n", 1)[0]
    for option in ("--db", "--demo", "--archived", "--no-follow"):
        assert option in usage, option


def test_export_is_summarised_with_every_format_it_writes():
    line = next(line for line in _help().splitlines() if line.strip().startswith("export "))
    export = _help("export")
    assert "html" in export.lower()
    assert "HTML" in line
