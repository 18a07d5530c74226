"""The launcher: stores that cannot be opened give one sentence and status 2, before any screen."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.store.sqlite.migrations import CURRENT_VERSION
from tui import cli

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=str(REPO), timeout=60)


def assert_refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2
    assert done.stdout == ""  # no screen was drawn
    # one sentence: on one line, or wrapped between words to $COLUMNS (set in a terminal,
    # and by the test runner), its following lines indented under it
    first, *rest = done.stderr.rstrip("\n").splitlines()
    assert first.startswith("arbor: ") and all(line.startswith("  ") for line in rest)
    assert "Traceback" not in done.stderr
    sentence = " ".join(" ".join([first, *rest]).split())
    for word in words:
        assert word in sentence


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
    store.sessions.create("my work")
    store.close()
    before = path.read_bytes()
    assert_refused(run("--demo", "--db", str(path)), "not a demo store")
    assert path.read_bytes() == before


def test_demo_builds_then_opens(tmp_path, monkeypatch):
    opened = {}

    class FakeApp:
        def __init__(self, store, show_archived=False, **_options):
            opened["sessions"] = len(store.sessions.list())
            opened["archived"] = show_archived
            self.return_code = 0

        def run(self):
            pass

    import tui.app

    monkeypatch.setattr(tui.app, "ArborApp", FakeApp)
    assert cli.main(["--demo", "--db", str(tmp_path / "d.db"), "--archived"]) == 0
    assert opened == {"sessions": 6, "archived": True}
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
    import core.importing

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.importing, "import_paths", interrupted)
    log = tmp_path / "x.jsonl"
    log.write_text("{}\n")
    code = cli.main(["import", str(log), "--db", str(tmp_path / "s.db"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 130
    assert ("arbor import: interrupted; what it had read up to its last save is kept; run it "
            "again to go on from there.") in err
    assert "Traceback" not in err


def test_every_registered_command_has_a_module_with_help():
    """Adding a command is a module in tui/commands/ and one line in COMMANDS."""
    for command in cli.COMMANDS:
        done = run(command.name, "--help")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"usage: arbor {command.name}")
        listed = run("--help").stdout
        assert f"  {command.name}  " in listed and command.summary in listed


def test_help_loads_no_command_module_nor_heavy_library():
    script = ("import sys; from tui.cli import main; code = main(['--help']); "
              "heavy = [m for m in ('textual', 'rich', 'sqlite3', 'core.store', "
              "'tui.commands.import_logs', 'tui.commands.export_session') if m in sys.modules]; "
              "print(heavy, file=sys.stderr); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=str(REPO))
    assert done.returncode == 0 and done.stderr.strip() == "[]"


def test_an_unknown_command_is_one_sentence_with_a_suggestion():
    assert_refused(run("imprt", "x.jsonl"), "no command 'imprt'", "arbor import")


def test_command_modules_never_import_the_launcher():
    """The launcher imports the commands, never the other way round (no import circle)."""
    import ast

    for module in (REPO / "tui" / "commands").glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = "." * node.level + (node.module or "")
                assert target not in ("..cli", "tui.cli"), f"{module.name} imports {target}"


URL = "postgresql://user@/db?host=/tmp"


@pytest.mark.parametrize("argv, env", [
    (["import", "x.jsonl"], {"ARBOR_DB": URL}),
    (["import", "x.jsonl", "--db", URL], {}),
    (["export", "s", "--db", URL], {}),
    (["--db", URL], {}),
    (["--demo", "--db", URL], {}),
    ([], {"ARBOR_DB": "postgres://u:secret@h/db"}),
])
def test_the_cli_never_makes_a_folder_of_a_url(tmp_path, argv, env):
    (tmp_path / "x.jsonl").write_text('{"type":"session","version":3,"id":"s"}\n')
    full = {k: v for k, v in os.environ.items() if k != "ARBOR_DB"} | env
    done = subprocess.run([sys.executable, "-m", "tui", *argv], capture_output=True, text=True,
                          cwd=str(tmp_path), env=full, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arbor: ") and "PostgreSQL" in lines[0]
    assert "secret" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.jsonl"]


def test_the_console_script_exits_with_mains_status_without_the_last_collections(monkeypatch):
    import gc

    frozen = []
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    with pytest.raises(SystemExit) as exit_:
        cli.run()
    assert exit_.value.code == 3 and frozen == [True]


def test_python_m_tui_is_the_console_script():
    done = run("import")          # no paths: status 1 and one sentence
    assert done.returncode == 1 and "give files or folders" in done.stderr
    assert (REPO / "tui" / "__main__.py").read_text().strip().endswith("run()")
