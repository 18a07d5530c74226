"""Files an import must leave alone or must not hang on (issue 8, items 1 and 4; issue 11's
other tools' files in the agents' folders).

SQLite's locks are POSIX locks: closing any descriptor of a database file drops all of this
process's locks on it. The import decides "is this SQLite / an arbor store" through SQLite
and never opens a possible store, its -wal, -shm or -journal with plain file I/O.
"""

from __future__ import annotations

import builtins
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core import open_store
from core.importing import discover, import_paths

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "fixtures"
PI_FIXTURE = FIXTURES / "pi" / "pi_v3_generated.jsonl"
CC_FIXTURE = FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl"
LG_FIXTURE = FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"
REPO = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------ plain opens, audited
# Every open() / os.open() of this process raises the "open" audit event (SQLite's own
# opens, in C, do not): the hook records those of watched paths. Hooks cannot be removed,
# so it is installed once and only records while a test has put paths in WATCHED.
WATCHED: set[str] = set()
OPENED: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if event == "open" and WATCHED and args and isinstance(args[0], (str, bytes, os.PathLike)):
        name = os.path.abspath(os.fsdecode(args[0]))
        if name in WATCHED:
            OPENED.append(name)


sys.addaudithook(_audit)


@pytest.fixture
def watch():
    def start(*paths: Path) -> list[str]:
        WATCHED.update(os.path.abspath(p) for p in paths)
        return OPENED

    OPENED.clear()
    yield start
    WATCHED.clear()
    OPENED.clear()


def sqlite_family(db: Path) -> list[Path]:
    return [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-journal")]


def test_importing_the_stores_own_folder_never_opens_a_database_with_plain_io(tmp_path, watch):
    folder = tmp_path / "agent"
    folder.mkdir()
    store = open_store(folder / "sessions.db")
    try:
        with store.transaction():
            session = store.sessions.create("live", source="core")
            branch = store.branches.create(session.id, name="main")
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "hi"}})
        assert Path(f"{store.path}-wal").exists() and Path(f"{store.path}-shm").exists()
        Path(f"{store.path}-journal").write_bytes(b"")    # a stale rollback journal
        shutil.copy(PI_FIXTURE, folder / "pi.jsonl")
        shutil.copy(LG_FIXTURE, folder / "graph.sqlite")
        other = folder / "notes.db"
        sqlite3.connect(other).execute("CREATE TABLE t(x)").connection.close()
        databases = [*sqlite_family(store.path), *sqlite_family(folder / "graph.sqlite"),
                     *sqlite_family(other)]
        opened = watch(*databases)
        # The folder, then every file in it named directly (as a shell's D/* does).
        report = import_paths(store, [folder])
        named = import_paths(store, sorted(folder.iterdir()))
        assert opened == []
        status = {Path(f.path).name: (f.status, f.error) for f in report.files}
        assert status["sessions.db"] == ("skipped", "an arbor store, not an agent log")
        assert status["pi.jsonl"][0] == "imported"
        assert status["graph.sqlite"][0] == "imported"
        assert status["notes.db"][0] == "not-a-log"
        assert status["notes.db"][1].startswith("a SQLite database of no agent arbor reads (LangGraph")
        assert "sessions.db-wal" not in status     # not a candidate in a folder walk
        named_status = {Path(f.path).name: (f.status, f.error) for f in named.files}
        assert named_status["sessions.db"][0] == "skipped"
        for side, what in (("-wal", "write-ahead log"), ("-shm", "shared-memory index"),
                           ("-journal", "rollback journal")):
            state, reason = named_status[f"sessions.db{side}"]
            assert state == "skipped" and what in reason, (side, reason)
        assert named_status["pi.jsonl"][0] == "unchanged"
        assert named_status["graph.sqlite"][0] == "unchanged"
        # the store is intact and still holds its session
        assert store.connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        store.close()


HOLDER_CHECK = textwrap.dedent("""
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1])
    conn.execute("select count(*) from entries").fetchone()
    conn.close()
""")

COUNT = textwrap.dedent("""
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1])
    print(conn.execute("select count(*) from entries").fetchone()[0])
    conn.close()
""")


def deleted_descriptors(folder: Path) -> list[str]:
    """This process's descriptors of files in `folder` that were deleted."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(folder)) and target.endswith(" (deleted)"):
            out.append(target)
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_store_imported_into_keeps_its_locks_while_others_come_and_go(tmp_path):
    """The measured failure: after the import read the store with plain I/O, another
    process opening and closing it believed it was the last connection, checkpointed and
    deleted the -wal and -shm under the holder; the holder's writes vanished for others."""
    folder = tmp_path / "agent"
    folder.mkdir()
    store = open_store(folder / "sessions.db")
    try:
        with store.transaction():
            session = store.sessions.create("live", source="core")
            branch = store.branches.create(session.id, name="main")
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "0"}})
        shutil.copy(CC_FIXTURE, folder / "cc.jsonl")
        import_paths(store, [folder])
        import_paths(store, sorted(folder.iterdir()))
        for _ in range(2):
            subprocess.run([sys.executable, "-c", HOLDER_CHECK, str(store.path)], check=True)
        for i in range(3):
            store.entries.append_to_branch(branch.id, "message",
                                   {"message": {"role": "user", "content": str(i + 1)}})
        assert deleted_descriptors(folder) == []
        mine = store.connection.execute("select count(*) from entries").fetchone()[0]
        theirs = subprocess.run([sys.executable, "-c", COUNT, str(store.path)], check=True,
                                capture_output=True, text=True).stdout.strip()
        assert int(theirs) == mine
    finally:
        store.close()


# ----------------------------------------------------- other tools in agents' folders
def test_discover_considers_only_what_the_agents_write(tmp_path, watch):
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-w-proj"
    project.mkdir(parents=True)
    shutil.copy(CC_FIXTURE, project / "11111111-2222-4333-8444-555555555555.jsonl")
    cache = home / ".claude" / "projects" / "claude-code-log-cache.db"
    sqlite3.connect(cache).execute("CREATE TABLE cached(x)").connection.close()
    (project / "notes.sqlite").write_bytes(b"")
    codex = home / ".codex" / "sessions" / "2026" / "01" / "02"
    codex.mkdir(parents=True)
    (codex / "history.jsonl").write_text('{"not": "a rollout"}\n')
    store = open_store(tmp_path / "arbor.db")
    try:
        opened = watch(cache)
        report = import_paths(store, discover(home))
        assert opened == []
        assert [(Path(f.path).name, f.status) for f in report.files] == [
            ("11111111-2222-4333-8444-555555555555.jsonl", "imported")]
    finally:
        store.close()


def test_discover_quietly_is_quiet_about_other_tools_files(tmp_path, monkeypatch, capsys):
    from tui import cli

    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-w-proj"
    project.mkdir(parents=True)
    shutil.copy(CC_FIXTURE, project / "s.jsonl")
    sqlite3.connect(home / ".claude" / "projects" / "claude-code-log-cache.db").execute(
        "CREATE TABLE cached(x)").connection.close()
    monkeypatch.setenv("HOME", str(home))
    # the first run imports; the second takes the no-change path (core.importing.unchanged)
    for _ in range(2):
        code = cli.main(["import", "--discover", "-q", "--db", str(tmp_path / "arbor.db")])
        captured = capsys.readouterr()
        assert code == 0
        assert captured.err == "" and captured.out == ""
    # without -q the report names the agent's file and never the other tool's
    (project / "s.jsonl").write_bytes((project / "s.jsonl").read_bytes() + b"\n")
    for _ in range(2):
        code = cli.main(["import", "--discover", "--db", str(tmp_path / "arbor.db")])
        captured = capsys.readouterr()
        assert code == 0
        assert "claude-code-log-cache" not in captured.out + captured.err
        assert "Not imported" not in captured.out + captured.err


# --------------------------------------------------------------- not plain files
def test_symlink_loop_is_one_line_and_the_rest_imports(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(PI_FIXTURE, folder / "good.jsonl")
    os.symlink("loop.jsonl", folder / "loop.jsonl")
    os.symlink("nowhere.jsonl", folder / "dangling.jsonl")
    store = open_store(tmp_path / "arbor.db")
    try:
        for given in ([folder], [folder / "loop.jsonl", folder / "good.jsonl"]):
            report = import_paths(store, given)
            status = {Path(f.path).name: (f.status, f.error) for f in report.files}
            assert status["loop.jsonl"] == (
                "unreadable", "a symbolic link that loops (it points back to itself)")
            assert status["good.jsonl"][0] in ("imported", "unchanged")
        first = {Path(f.path).name: f for f in import_paths(store, [folder]).files}
        assert first["dangling.jsonl"].status == "unreadable"
        assert "nowhere.jsonl" in first["dangling.jsonl"].error
        assert len(store.sessions.list()) == 1
    finally:
        store.close()


SPECIAL_IMPORT = textwrap.dedent("""
    import json, os, socket, sys
    sys.path.insert(0, {repo!r})
    from core import open_store
    from core.importing import import_paths
    folder = sys.argv[1]
    os.mkfifo(os.path.join(folder, "pipe.jsonl"))
    server = socket.socket(socket.AF_UNIX)
    server.bind(os.path.join(folder, "sock.jsonl"))
    store = open_store(sys.argv[2])
    out = []
    for given in ([folder], sorted(os.path.join(folder, n) for n in os.listdir(folder))):
        report = import_paths(store, given)
        out.append({{os.path.basename(f.path): [f.status, f.error] for f in report.files}})
    store.close()
    print(json.dumps(out))
""")


def test_fifo_and_socket_are_one_line_each_and_never_block(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(PI_FIXTURE, folder / "good.jsonl")
    script = SPECIAL_IMPORT.format(repo=str(REPO))
    done = subprocess.run([sys.executable, "-c", script, str(folder), str(tmp_path / "arbor.db")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    for status in json.loads(done.stdout):
        assert status["pipe.jsonl"][0] == "skipped" and "named pipe" in status["pipe.jsonl"][1]
        assert status["sock.jsonl"][0] == "skipped" and "socket" in status["sock.jsonl"][1]
        assert status["good.jsonl"][0] in ("imported", "unchanged")


def test_unreadable_file_says_unreadable(tmp_path, monkeypatch):
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(PI_FIXTURE, folder / "good.jsonl")
    secret = folder / "secret.jsonl"
    shutil.copy(CC_FIXTURE, secret)
    real_open = builtins.open

    def guarded(file, *args, **kwargs):  # root reads anything: refuse this one file
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(file) == str(secret):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    store = open_store(tmp_path / "arbor.db")
    try:
        report = import_paths(store, [folder])
    finally:
        store.close()
    status = {Path(f.path).name: (f.status, f.error) for f in report.files}
    assert status["secret.jsonl"] == ("unreadable", "cannot read: Permission denied")
    assert status["good.jsonl"][0] == "imported"
    assert "1 unreadable" in report.summary()


def test_report_table_says_unreadable_and_left_alone(tmp_path):
    from rich.console import Console

    from core.importing import FileResult, ImportReport
    from tui.commands.import_report import print_report

    report = ImportReport(files=[
        FileResult("/x/secret.jsonl", status="unreadable", error="cannot read: Permission denied"),
        FileResult("/x/sessions.db", status="skipped", error="an arbor store, not an agent log")])
    console = Console(record=True, width=160)
    print_report(report, console)
    text = console.export_text()
    assert "unreadable" in text and "left alone" in text and "not a log" not in text


def test_discover_honours_the_agents_folder_variables(tmp_path, monkeypatch):
    home = tmp_path / "home"
    claude = tmp_path / "claude-config"
    (claude / "projects" / "-w").mkdir(parents=True)
    shutil.copy(CC_FIXTURE, claude / "projects" / "-w" / "s.jsonl")
    sqlite3.connect(claude / "projects" / "claude-code-log-cache.db").execute(
        "CREATE TABLE cached(x)").connection.close()
    codex = tmp_path / "codex-home"
    (codex / "sessions").mkdir(parents=True)
    (codex / "sessions" / "history.jsonl").write_text('{"not": "a rollout"}\n')
    pi = tmp_path / "pi-agent"
    (pi / "sessions").mkdir(parents=True)
    shutil.copy(PI_FIXTURE, pi / "sessions" / "p.jsonl")
    (home / ".claude" / "projects").mkdir(parents=True)     # not used: the variable moves it
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(pi))
    places = discover(home)
    assert places == [claude / "projects", codex / "sessions", pi / "sessions"]
    store = open_store(tmp_path / "arbor.db")
    try:
        report = import_paths(store, places)
    finally:
        store.close()
    assert sorted((Path(f.path).name, f.status) for f in report.files) == [
        ("p.jsonl", "imported"), ("s.jsonl", "imported")]


def test_import_file_named_directly_never_opens_a_pipe(tmp_path):
    """`import_file` (what a caller with one path uses) screens the path as `import_paths`
    does: a FIFO is reported, not opened (opening one blocks until a writer comes)."""
    os.mkfifo(tmp_path / "pipe.jsonl")
    os.symlink("loop.jsonl", tmp_path / "loop.jsonl")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from core import open_store
        from core.importing import import_file
        store = open_store(sys.argv[1])
        for name in ("pipe.jsonl", "loop.jsonl"):
            result = import_file(store, Path(sys.argv[2]) / name)
            print(result.status, result.error)
        store.close()
    """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "arbor.db"),
                           str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    pipe, loop = done.stdout.splitlines()
    assert pipe.startswith("skipped a named pipe")
    assert loop.startswith("unreadable a symbolic link that loops")


def test_a_store_named_like_a_log_is_asked_about_through_sqlite(tmp_path, watch):
    """A name ending in .jsonl does not make a file a log: a store named so (held open by
    this process) is recognised by SQLite before any plain open could drop its locks."""
    store = open_store(tmp_path / "sessions.jsonl")
    try:
        with store.transaction():
            session = store.sessions.create("live", source="core")
            branch = store.branches.create(session.id, name="main")
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "hi"}})
        opened = watch(*sqlite_family(store.path))
        report = import_paths(store, [store.path])
        assert opened == []
        assert [(f.status, f.error) for f in report.files] == \
            [("skipped", "an arbor store, not an agent log")]
    finally:
        store.close()
