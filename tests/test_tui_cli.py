"""The launcher: stores that cannot be opened give one sentence and status 2, before any screen."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.migrations import CURRENT_VERSION
from tui import cli

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=str(REPO), timeout=60)


def assert_refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2
    assert done.stdout == ""  # no screen was drawn
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arbor: ")
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0]


def test_damaged_store(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    assert_refused(run("--db", str(bad)), "not an arbor store")


def test_sqlite_file_that_is_not_a_store(tmp_path):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    with conn:
        conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert_refused(run("--db", str(other)), "not an arbor store")


def test_newer_store(tmp_path):
    path = tmp_path / "new.db"
    open_store(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'future', 'x')",
                     (CURRENT_VERSION + 1,))
    conn.close()
    before = path.read_bytes()
    assert_refused(run("--db", str(path)), "newer arbor")
    assert path.read_bytes() == before


def test_folder_instead_of_store(tmp_path):
    assert_refused(run("--db", str(tmp_path)), "folder")


def test_demo_refuses_to_overwrite_a_real_store(tmp_path):
    path = tmp_path / "mine.db"
    store = open_store(path)
    store.create_external_session("my work")
    store.close()
    before = path.read_bytes()
    assert_refused(run("--demo", "--db", str(path)), "not a demo store")
    assert path.read_bytes() == before


def test_demo_builds_then_opens(tmp_path, monkeypatch):
    opened = {}

    class FakeApp:
        def __init__(self, store, show_archived=False):
            opened["sessions"] = len(store.list_sessions())
            opened["archived"] = show_archived
            self.return_code = 0

        def run(self):
            pass

    import tui.app

    monkeypatch.setattr(tui.app, "ArborApp", FakeApp)
    assert cli.main(["--demo", "--db", str(tmp_path / "d.db"), "--archived"]) == 0
    assert opened == {"sessions": 5, "archived": True}
    # a second --demo on the same file rebuilds it (it is a demo store)
    assert cli.main(["--demo", "--db", str(tmp_path / "d.db")]) == 0


def test_cli_keeps_textual_lazy():
    done = subprocess.run([sys.executable, "-c", "import sys, tui.cli; print('textual' in sys.modules)"],
                          capture_output=True, text=True, cwd=str(REPO))
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("module", [["-m", "tui"]])
def test_help_runs(module):
    done = subprocess.run([sys.executable, *module, "--help"], capture_output=True, text=True,
                          cwd=str(REPO))
    assert done.returncode == 0 and "--demo" in done.stdout


def test_ctrl_c_during_an_import_is_one_sentence_and_exit_130(tmp_path, monkeypatch, capsys):
    import core.importers

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.importers, "import_paths", interrupted)
    log = tmp_path / "x.jsonl"
    log.write_text("{}\n")
    code = cli.main(["import", str(log), "--db", str(tmp_path / "s.db"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 130
    assert "arbor import: interrupted; files imported before it are kept" in err
    assert "Traceback" not in err
