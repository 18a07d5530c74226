"""A no-change `arbor import` is told from `stat` and the records' columns alone: no file is
opened, no JSON is read, and neither the store's API, an importer nor Rich is loaded
(issue 11: a no-change `--discover` over 3,000 files under 200 ms; bench/bench_import.py
measures it). Every way a file can change sends it to the ordinary import."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.importing import import_paths, state
from core.importing import unchanged as unchanged_module
from core.importing.files import AGENT_FOLDERS, FOLDER_SUFFIXES, agent_rule, scan
from core.importing.unchanged import look

from test_import_robust import CC_FIXTURE, CODEX_FIXTURE, PI_FIXTURE

REPO = Path(__file__).resolve().parent.parent

# Runs `arbor import` and reports what it loaded and which files under the tree it opened.
WATCHED_RUN = r"""
import builtins, io, json, os, sys
tree, out = sys.argv[1], sys.argv[2]
opened = []
real_open, real_os_open = builtins.open, os.open
def watch(path, *args, **kwargs):
    if str(path).startswith(tree):
        opened.append(str(path))
    return real_open(path, *args, **kwargs)
def watch_os(path, *args, **kwargs):
    if str(path).startswith(tree):
        opened.append(str(path))
    return real_os_open(path, *args, **kwargs)
builtins.open = io.open = watch
os.open = watch_os
from tui.cli import main
code = main(sys.argv[3:])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("rich", "textual")
                or m in ("core.store.store", "core.importing.driver", "core.agents.claude_code.importer",
                         "core.agents.codex.importer", "core.agents.pi.importer", "orjson"))
with real_open(out, "w") as f:
    json.dump({"code": code, "opened": opened, "loaded": loaded}, f)
"""


def watched_import(tmp_path: Path, home: Path, db: Path, *flags: str) -> dict:
    out = tmp_path / "watched.json"
    done = subprocess.run(
        [sys.executable, "-c", WATCHED_RUN, str(home), str(out), "import", *flags, "--discover",
         "--db", str(db)],
        capture_output=True, text=True, cwd=str(REPO),
        env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    result["stdout"], result["stderr"] = done.stdout, done.stderr
    return result


def agent_home(tmp_path: Path) -> Path:
    """A home with logs of each agent in its usual place (and a file of another tool)."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-w"
    claude.mkdir(parents=True)
    shutil.copy(CC_FIXTURE, claude / CC_FIXTURE.name)
    (claude / "claude-code-log-cache.db").write_bytes(b"not ours")
    codex = home / ".codex" / "sessions" / "2026" / "01" / "02"
    codex.mkdir(parents=True)
    shutil.copy(CODEX_FIXTURE, codex / CODEX_FIXTURE.name)
    pi = home / ".pi" / "agent" / "sessions" / "--w--"
    pi.mkdir(parents=True)
    shutil.copy(PI_FIXTURE, pi / PI_FIXTURE.name)
    return home


@pytest.mark.parametrize("flags", [("-q",), ()])
def test_a_no_change_import_opens_no_log_and_loads_neither_the_api_nor_rich(tmp_path, flags):
    home = agent_home(tmp_path)
    db = tmp_path / "arbor.db"
    first = watched_import(tmp_path, home, db, *flags)
    assert first["opened"], "the first import reads the logs"
    again = watched_import(tmp_path, home, db, *flags)
    assert again["opened"] == []
    assert again["loaded"] == []
    if flags:
        assert again["stdout"] == ""
    else:
        assert "all 3 files are unchanged since the last import" in again["stdout"]


def test_a_quiet_import_of_a_grown_file_does_not_load_rich(tmp_path):
    """-q prints only failures: an import that reads only what was appended to a file
    needs no Rich (its import was ~10% of such a run's CPU)."""
    home = agent_home(tmp_path)
    db = tmp_path / "arbor.db"
    watched_import(tmp_path, home, db, "-q")
    log = next((home / ".claude" / "projects").rglob("*.jsonl"))
    lines = log.read_bytes().splitlines()
    last = json.loads(lines[-1])
    last.update(uuid="b7c4d0e2-0000-4000-8000-00000000abcd", parentUuid=last.get("uuid"))
    log.write_bytes(log.read_bytes().rstrip(b"\n") + b"\n" + json.dumps(last).encode() + b"\n")
    grown = watched_import(tmp_path, home, db, "-q")
    assert grown["opened"], "the grown log is read"
    assert grown["stdout"] == "" and grown["stderr"] == ""
    assert not [m for m in grown["loaded"] if m.split(".")[0] in ("rich", "textual")]


def test_look_agrees_with_the_import_for_every_kind_of_change(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    files = [Path(shutil.copy(source, logs / source.name))
             for source in (CC_FIXTURE, CODEX_FIXTURE, PI_FIXTURE)]
    db = tmp_path / "arbor.db"
    assert look(db, [logs]).unchanged is None          # no store yet
    store = open_store(db)
    try:
        import_paths(store, [logs])
    finally:
        store.close()

    def both() -> tuple[int | None, list[str]]:
        """look(...).unchanged, and the import's status of each file (in `files` order)."""
        quick = look(db, [logs]).unchanged
        with_store = open_store(db)
        try:
            status = {f.path: f.status for f in import_paths(with_store, [logs]).files}
        finally:
            with_store.close()
        return quick, [status[str(path)] for path in files]

    assert both() == (3, ["unchanged"] * 3)
    cc = files[0]
    st = cc.stat()
    os.utime(cc, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))      # touched
    quick, statuses = both()
    assert quick is None and statuses[0] == "imported"
    assert both() == (3, ["unchanged"] * 3)
    replaced = cc.with_suffix(".tmp")                              # same bytes and time,
    shutil.copy2(cc, replaced)                                     # another inode
    os.replace(replaced, cc)
    quick, statuses = both()
    assert quick is None and statuses[0] == "imported"
    with open(files[2], "a") as handle:                           # grown
        handle.write("\n")
    quick, statuses = both()
    assert quick is None and statuses[2] == "imported"
    assert both()[0] == 3
    # an interrupted import leaves a record that is not complete: read again
    conn = sqlite3.connect(db)
    conn.execute("UPDATE import_sources SET complete = 0, state = json_set(state, '$.complete',"
                 " json('false')) WHERE format = 'codex'")
    conn.commit()
    conn.close()
    quick, statuses = both()
    assert quick is None and statuses[1] == "imported"
    # a file that is not a log beside them is reported by the import: not "all unchanged"
    (logs / "notes.db").write_bytes(b"x")
    assert look(db, [logs]).unchanged is None


def test_an_import_given_the_look_plans_as_one_that_looks_again(tmp_path):
    """`arbor import` hands what `unchanged.look` saw (the files, their stat, the records'
    stamps) to the import instead of walking the folders and reading the records again:
    the plan must be the one the import makes on its own, whatever changed."""
    from core.importing.driver import plan_paths
    from core.importing.base import ImportReport

    logs = tmp_path / "logs"
    logs.mkdir()
    files = [Path(shutil.copy(source, logs / source.name))
             for source in (CC_FIXTURE, CODEX_FIXTURE, PI_FIXTURE)]
    db = tmp_path / "arbor.db"
    missing = tmp_path / "gone.jsonl"

    def plans() -> tuple:
        seen = unchanged_module.look(db, [logs, missing])      # before the store is opened
        store = open_store(db)
        try:
            given, alone = ImportReport(), ImportReport()
            with_look = plan_paths(store, [logs, missing], given, scanned=seen)
            by_itself = plan_paths(store, [logs, missing], alone)
            import_paths(store, [logs])
        finally:
            store.close()

        def shown(planned, report):
            return ([(str(path), fmt, problem if not hasattr(problem, "status") else
                      (problem.status, problem.lines)) for path, fmt, problem in planned],
                    [(f.path, f.status, f.error) for f in report.files])
        assert shown(with_look, given) == shown(by_itself, alone)
        return shown(with_look, given)

    first = plans()                                                # no store yet
    assert sorted(fmt for _p, fmt, _x in first[0]) == ["claude_code", "codex", "pi"]
    assert [status for _p, status, _e in first[1]] == ["failed"]   # the missing path
    assert [x[0] for _p, _f, x in plans()[0]] == ["unchanged"] * 3

    def planned_for(path: Path):
        return next(x for p, _f, x in plans()[0] if p == str(path))

    st = files[0].stat()
    os.utime(files[0], ns=(st.st_atime_ns, st.st_mtime_ns + 1000))  # touched
    assert planned_for(files[0]) is None
    with open(files[2], "a") as handle:                           # grown
        handle.write("\n")
    assert planned_for(files[2]) is None
    (logs / "notes.db").write_bytes(b"x")                         # not a log
    assert any(fmt is None for _p, fmt, _x in plans()[0])


def test_migration_7_fills_the_stamp_columns_from_the_records(tmp_path):
    db = tmp_path / "arbor.db"
    store = open_store(db)
    try:
        import_paths(store, [CC_FIXTURE, PI_FIXTURE])
        before = store.imports.stamps()
    finally:
        store.close()
    assert before and all(stamp[1] == 1 and stamp[3] for stamp in before.values())
    from core.store.sqlite import migrations

    # a store as migration 7 found it (the migrations after it are left as they are)
    conn = sqlite3.connect(db)
    conn.execute("DROP INDEX idx_import_stamps")     # (migration 10's, on these columns)
    for column in ("record_version", "complete", "mtime_ns", "inode", "device", "lines"):
        conn.execute(f"ALTER TABLE import_sources DROP COLUMN {column}")
    migrations._v7(conn)
    conn.commit()
    conn.close()
    store = open_store(db)
    try:
        assert store.imports.stamps() == before
    finally:
        store.close()


def test_the_stamp_reader_knows_the_record_version_and_formats():
    from core.importing import detect

    assert unchanged_module.STATE_VERSION == state.STATE_VERSION
    assert unchanged_module.FORMATS == detect.FORMATS
    assert unchanged_module.LANGGRAPH == detect.LANGGRAPH


def reference_listing(top: Path) -> list[str]:
    """What the import listed before it scanned with one stat a file: os.walk, sorted,
    each file once (by its resolved path)."""
    found, seen = [], set()
    for root, dirs, files in os.walk(top):
        dirs.sort()
        rule = agent_rule(Path(root))
        for name in sorted(files):
            if rule(name) if rule is not None else name.endswith(FOLDER_SUFFIXES):
                path = os.path.join(root, name)
                if os.path.realpath(path) not in seen:
                    seen.add(os.path.realpath(path))
                    found.append(path)
    return found


def test_the_scan_lists_what_os_walk_listed_with_the_agent_rules(tmp_path, monkeypatch):
    top = tmp_path / "top"
    # an agent's folder moved by its variable (core.importing.files.agent_places)
    monkeypatch.setenv("CODEX_HOME", str(top / "elsewhere" / "moved"))
    for folder in [".claude/projects/a", ".claude/projects/a/sub", ".codex/sessions/2026",
                   ".pi/agent/sessions/x", "elsewhere/deep", "elsewhere/.codex/sessions",
                   ".pi/agent/sessions/x/.claude/projects/inner", "elsewhere/moved/sessions/1",
                   "elsewhere/moved/.claude/projects"]:
        (top / folder).mkdir(parents=True, exist_ok=True)
    names = ["b.jsonl", "a.jsonl", "rollout-1.jsonl", "c.db", "notes.txt", "x.sqlite",
             "claude-code-log-cache.db"]
    for folder in [p for p in top.rglob("*") if p.is_dir()] + [top]:
        for name in names:
            (folder / name).write_text("{}\n")
    (top / "elsewhere" / "link").symlink_to(top / ".claude", target_is_directory=True)
    (top / "elsewhere" / "filelink.jsonl").symlink_to(top / "elsewhere" / "a.jsonl")
    found = scan([top], lambda *problem: None)
    listed = [item.name for item in found]
    assert listed == reference_listing(top)
    assert [item.key for item in found] == [os.path.realpath(name) for name in listed]
    # each rule applies where it should
    assert all(agent_rule(Path(p).parent) is not None or p.endswith(FOLDER_SUFFIXES)
               for p in listed)
    assert str(top / ".codex" / "sessions" / "2026" / "a.jsonl") not in listed
    assert str(top / ".codex" / "sessions" / "2026" / "rollout-1.jsonl") in listed
    assert str(top / ".pi/agent/sessions/x/.claude/projects/inner/c.db") not in listed
    assert str(top / "elsewhere/moved/sessions/1/a.jsonl") not in listed
    assert str(top / "elsewhere/moved/sessions/1/rollout-1.jsonl") in listed
    assert str(top / "elsewhere/moved/sessions/c.db") not in listed
    assert str(top / "elsewhere/moved/c.db") in listed
    from core.agents import registry   # (each agent's folders: one or more a place)
    assert len(AGENT_FOLDERS) == sum(len(agent.places) for agent in registry.agents()) >= 4


def test_the_scan_resolves_the_folder_it_is_given_and_no_folder_below(tmp_path, monkeypatch):
    """A subfolder found by the scan is never a link (links to folders are not followed),
    so its resolved path is its parent's and its name: only the folder given is resolved
    (one lstat a folder less; 800 folders in a tree of 3,000 logs). The keys stay the
    files' real paths, through a link above the folder given too."""
    from core.importing import files

    real_top = tmp_path / "real" / ".claude" / "projects"
    for folder in ["p1", "p1/s1/subagents", "p2", "p2/s2/subagents"]:
        (real_top / folder).mkdir(parents=True)
        (real_top / folder / "x.jsonl").write_text("{}\n")
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    top = tmp_path / "link" / ".claude" / "projects"
    files.real_folder.cache_clear()
    resolved: list[str] = []
    real_folder = files.real_folder

    def recorded(folder: str) -> str:
        resolved.append(folder)
        return real_folder(folder)

    monkeypatch.setattr(files, "real_folder", recorded)
    found = scan([top], lambda *problem: None)
    assert len(found) == 4
    assert [item.key for item in found] == [os.path.realpath(item.name) for item in found]
    assert all(item.key.startswith(str(real_top)) for item in found)
    assert resolved and all(not folder.startswith(str(top) + os.sep) for folder in resolved), \
        resolved
