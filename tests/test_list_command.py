"""`arbor list`: the JSON rows, the filters, uids the other commands accept, hostile names,
and the CLI's shape (no command module imports the launcher)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths
from tests import usage_files as uf
from tui.commands.list_sessions import in_project, unique_prefixes

REPO = Path(__file__).resolve().parent.parent
FIELDS = ["uid", "short_uid", "name", "source", "kind", "parent_uid", "depth", "cwd", "branches",
          "messages", "messages_with_subagents", "last_activity", "archived", "cost_usd",
          "cost_incomplete", "tokens"]


def arbor(*args, cwd=REPO):
    env = {**os.environ, "COLUMNS": "160", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("list-cli")
    uf.claude_session(root / "projects" / "-work-usage-demo")
    uf.codex_rollout(root / "codex")
    uf.pi_session(root / "pi")
    path = root / "s.db"
    with open_store(path) as store:
        import_paths(store, [root / "projects", root / "codex", root / "pi"])
    return path


def listed(db, *args):
    done = arbor("list", "--db", str(db), "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_json_rows_have_every_field_newest_first_with_cost(db):
    rows = listed(db)
    assert [list(row) for row in rows] == [FIELDS] * len(rows)
    assert {row["source"] for row in rows} == {"claude_code", "codex", "pi"}
    # families newest first (a sub-agent follows its parent: core.history.lineage.family_rows)
    stamps = [row["last_activity"] for row in rows if row["depth"] == 0]
    assert stamps == sorted(stamps, reverse=True)
    with open_store(db) as store:
        usage = store.usage.by_session()
        by_uid = {s.uid: s for s in store.sessions.list(include_archived=True)}
    for row in rows:
        session = by_uid[row["uid"]]
        assert row["cwd"] == session.cwd and row["branches"] == session.branch_count
        assert row["messages"] == session.message_count
        figure = usage.get(session.id)
        assert row["cost_usd"] == pytest.approx(figure.cost_usd if figure else 0, abs=1e-6)
    claude = next(row for row in rows if row["source"] == "claude_code")
    assert claude["cwd"] == uf.CWD and claude["cost_usd"] > 0
    assert claude["cost_incomplete"] is True        # it holds a response of an unpriced model


def test_source_and_project_filters(db, tmp_path):
    assert [r["source"] for r in listed(db, "--source", "codex")] == ["codex"]
    assert [r["cwd"] for r in listed(db, "--project", "pi-demo")] == ["/work/pi-demo"]
    assert [r["cwd"] for r in listed(db, "--project", "/work/codex-demo")] == ["/work/codex-demo"]
    assert {r["cwd"] for r in listed(db, "--project", "/work")} == \
        {uf.CWD, "/work/codex-demo", "/work/pi-demo"}
    assert listed(db, "--project", "/work/codex") == []          # a folder, not a text prefix
    assert listed(db, "--project", "codex-demo", "--source", "pi") == []
    # '.' is the folder the command runs in
    here = arbor("list", "--db", str(db), "--json", "--project", ".", cwd=tmp_path)
    assert here.returncode == 0 and json.loads(here.stdout) == []


def test_in_project_rules():
    assert in_project("/a/b/webapp", "webapp") and in_project("/a/b/webapp/", "webapp")
    assert in_project("/a/b/webapp/sub", "/a/b/webapp")
    assert not in_project("/a/b/webapp2", "/a/b/webapp")
    assert not in_project("/a/b/webapp/sub", "webapp")
    assert not in_project("", "webapp") and not in_project(None, "/")
    assert in_project("/x", "/")


def test_short_uids_are_unique_and_accepted_by_export(db):
    prefixes = unique_prefixes(["abcdefgh-1", "abcdefgh-2", "abcdefxx", "zz"])
    assert prefixes == {"abcdefgh-1": "abcdefgh-1", "abcdefgh-2": "abcdefgh-2",
                        "abcdefxx": "abcdefxx", "zz": "zz"}
    row = listed(db, "--source", "pi")[0]
    assert row["uid"].startswith(row["short_uid"]) and len(row["short_uid"]) >= 8
    done = arbor("export", row["short_uid"], "--db", str(db), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session"]["uid"] == row["uid"]


def test_table_shows_every_session_with_its_columns(db):
    done = arbor("list", "--db", str(db))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["Uid", "Name", "Source", "Project", "Br", "Msg", "Last",
                                "activity", "Cost"]
    rows = listed(db)
    assert len(lines) == 1 + len(rows)
    for line, row in zip(lines[1:], rows):
        assert line.startswith(row["short_uid"] + " ") and row["source"] in line
        assert row["cwd"][:12] in line          # (cut with … where the table is too narrow)
    claude_line = next(line for line in lines if "claude_code" in line)
    assert claude_line.rstrip().endswith("+")            # incomplete cost is marked


def test_hostile_names_and_folders_are_shown_inert(hostile_db):
    from tests.conftest import HOSTILE_NAME

    done = arbor("list", "--db", str(hostile_db))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "[bold red]x[/]" in done.stdout and "/tmp/[bold]x" in done.stdout
    row = listed(hostile_db)[0]
    assert row["name"] == HOSTILE_NAME and row["cwd"] == "/tmp/[bold]x"  # JSON: exact, escaped


def test_an_empty_store_and_a_missing_store(tmp_path):
    db = tmp_path / "empty.db"
    open_store(db).close()
    done = arbor("list", "--db", str(db))
    assert done.returncode == 0 and "No sessions." in done.stdout
    assert json.loads(arbor("list", "--db", str(db), "--json").stdout) == []
    missing = arbor("list", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and missing.stderr


def test_no_command_module_imports_the_launcher():
    """The CLI's shape: tui/cli.py imports the command modules (lazily), the shared pieces
    live in tui/commands/shared.py, and importing any command module never imports tui.cli
    (checked by importing each, not by reading the source)."""
    names = sorted(p.stem for p in (REPO / "tui" / "commands").glob("*.py") if p.stem != "__init__")
    assert {"list_sessions", "export_session", "import_logs", "shared"} <= set(names)
    script = ("import importlib, sys\n"
              "bad = []\n"
              f"for name in {names!r}:\n"
              "    importlib.import_module('tui.commands.' + name)\n"
              "    if 'tui.cli' in sys.modules:\n"
              "        bad.append(name); break\n"
              "print(bad)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
