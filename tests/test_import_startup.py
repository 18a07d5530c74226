"""What `arbor import` loads when a log grew by a few lines: only what reading and writing
them needs (issue 11: such an import must take at most 1.5x a no-change import; loading the
price table, the run-event and replay types, `secrets` or `decimal` is most of the gap).
Times are measured in bench/bench_import.py, never here: these tests check which modules
a run loads, in a child process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests import usage_files as uf

REPO = Path(__file__).resolve().parent.parent

# Not needed to import appended lines of a known file: each was loaded by such a run before
# (typing by most of the store's and importers' modules for their annotations, hashlib (and
# so OpenSSL) for the file's head and tail digests, base64 for lines that are not UTF-8,
# the bulk writer's thread and queue for the ten rows, orjson (and with it dataclasses,
# inspect and uuid: ~40 ms of start-up and exit) for a few kilobytes of JSON, threading for
# the store's locks, copy for the session models' deep copies; issue 29: tempfile, with
# shutil and random, for the scratch folder of workers an import of nothing new has none of,
# and pickle for the frames those workers are spoken to in; the worker pool itself, and
# fcntl, for the sweep of scratch folders left by killed imports, which has none to sweep;
# the run's totals, which only the progress line shows, and `-q` shows none; the session
# models, of which the import of a known session needs its id and metadata alone).
NOT_FOR_AN_APPEND = ("core.importing.workers.parallel", "fcntl", "genai_prices", "pydantic", "importlib.metadata", "decimal", "secrets",
                     "core.seed.session_types", "core.history.replay", "core.store.sqlite_probe", "rich", "textual",
                     "typing", "hashlib", "base64", "queue", "core.store.sqlite.bulk",
                     "orjson", "dataclasses", "inspect", "uuid", "threading", "copy",
                     "tempfile", "shutil", "random", "pickle", "core.importing.workers.frames",
                     "core.importing.run_progress", "core.seed")

LOADED_RUN = r"""
import sys
from tui.cli import main
code = main(sys.argv[2:])
modules = sorted(sys.modules)   # (before this script loads json to write them)
import re
patterns = sorted({key[1] for key in getattr(re, "_cache", {}) if isinstance(key[1], str)})
# arbor's classes made by @dataclass in the modules the run loaded (each costs ~0.5 ms to
# make; whatever loads the `dataclasses` module, the class is made by it)
made = sorted(f"{name}.{value.__qualname__}" for name, module in list(sys.modules.items())
              if name.split(".")[0] in ("core", "tui")
              for value in list(vars(module).values())
              if isinstance(value, type) and value.__module__ == name
              and "__dataclass_fields__" in value.__dict__)
import json
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": modules, "dataclasses": made, "patterns": patterns}, f)
"""


def _run(tmp_path: Path, home: Path, db: Path, script: str) -> dict:
    """`arbor import -q --discover` in a child running `script`, and what it wrote."""
    out = tmp_path / "run.json"
    done = subprocess.run(
        [sys.executable, "-c", script, str(out), "import", "-q", "--discover", "--db", str(db)],
        capture_output=True, text=True, cwd=str(REPO),
        env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result.pop("code") == 0
    return result


def _import(tmp_path: Path, home: Path, db: Path) -> set[str]:
    return set(_run(tmp_path, home, db, LOADED_RUN)["modules"])


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_an_import_of_appended_lines_loads_only_what_it_needs(tmp_path):
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    _import(tmp_path, home, db)
    uf.append_answered_question(session, 1)
    modules = _import(tmp_path, home, db)
    assert "core.agents.claude_code.importer" in modules, "the grown file was read"
    assert _loaded(modules, NOT_FOR_AN_APPEND) == []


def test_an_import_of_appended_lines_makes_no_dataclass(tmp_path):
    """The value classes an append loads (the store's rows, the import's report and
    records, usage) are written out (core/model/values.py): ~23 classes made by @dataclass were
    ~10 ms of such an import's start."""
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    _import(tmp_path, home, db)
    uf.append_answered_question(session, 1)
    run = _run(tmp_path, home, db, LOADED_RUN)
    assert "core.agents.claude_code.importer" in run["modules"], "the grown file was read"
    assert run["dataclasses"] == []


# Runs `arbor import` counting the folder walks and the reads of every import record.
COUNTED_RUN = r"""
import json, sys
import core.importing.files as files
import core.store.sqlite.backend as sqlite
from core.store.rooms.imports import ImportsRoom
calls = {"walks": 0, "record_reads": 0}

def counted(owner, name, what):
    real = getattr(owner, name)
    def call(*args, **kwargs):
        calls[what] += 1
        return real(*args, **kwargs)
    setattr(owner, name, call)

counted(files, "scan", "walks")
counted(sqlite, "peek_import_stamps", "record_reads")
counted(ImportsRoom, "stamps", "record_reads")
from tui.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, **calls}, f)
"""


def test_an_import_of_a_grown_file_walks_the_folders_and_reads_the_records_once(tmp_path):
    """The no-change check has stat'ed every file and read every record: the import that
    follows when a file grew is given both (with 3,000 files, a second walk and read cost
    as much as the whole no-change check)."""
    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    _import(tmp_path, home, db)
    with open(session, "a") as handle:
        last = json.loads(session.read_text().splitlines()[-1])
        handle.write(json.dumps(uf._user("n2", last["uuid"], "2025-10-02T12:00:00.000Z", "more"))
                     + "\n")
    assert _run(tmp_path, home, db, COUNTED_RUN) == {"walks": 1, "record_reads": 1}


# Not needed to tell that nothing changed (one stat a file, one query): each was loaded by
# such a run before (typing, json and threading with the SQLite backend's module, shutil
# by argparse for the terminal's width, dataclasses with anything of the store's API).
NOT_FOR_NO_CHANGE = ("typing", "json", "queue", "shutil", "core.model.clock",
                     "core.store.sqlite.bulk", "core.store.store", "core.importing.driver",
                     *NOT_FOR_AN_APPEND)


def test_a_no_change_import_loads_only_what_telling_it_needs(tmp_path):
    home = tmp_path / "home"
    uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    uf.codex_rollout(home / ".codex" / "sessions" / "2025" / "10" / "05")
    db = tmp_path / "arbor.db"
    _import(tmp_path, home, db)
    modules = _import(tmp_path, home, db)
    assert "core.importing.unchanged" in modules
    assert _loaded(modules, NOT_FOR_NO_CHANGE) == []


def test_the_records_stamps_are_read_from_an_index(tmp_path):
    """A no-change import reads every record's stamp: from an index holding them, not from
    the table, whose rows carry each reader's state (kilobytes) before those columns."""
    import sqlite3

    from core import open_store
    from core.store.sqlite.backend import Statements

    open_store(tmp_path / "arbor.db").close()
    conn = sqlite3.connect(tmp_path / "arbor.db")
    try:
        plan = " ".join(row[-1] for row in conn.execute(f"EXPLAIN QUERY PLAN {Statements.IMPORT_STAMPS}"))
    finally:
        conn.close()
    assert "COVERING INDEX" in plan, plan


def test_an_import_reports_the_sessions_size_from_its_kept_count(tmp_path, store_location):
    """Reporting a session's size after a few lines were added reads the count its row
    keeps instead of counting its entries (O(session) in an import of O(new lines)): the
    two must agree, after the first import and after lines were appended."""
    from core import open_store
    from core.importing import import_paths

    folder = tmp_path / "projects" / "-work-usage-demo"
    session = uf.claude_session(folder)
    store = open_store(store_location)
    try:
        for more in range(3):
            if more:
                last = json.loads(session.read_text().splitlines()[-1])
                with open(session, "a") as handle:
                    handle.write(json.dumps(uf._user(f"m{more}", last["uuid"],
                                                     "2025-10-02T12:00:00.000Z", "more")) + "\n")
            report = import_paths(store, [folder])
            told = [s for f in report.files for s in f.sessions]
            assert told
            for result in told:
                ext = store.sessions.by_uid(result.uid)
                assert (result.entries_total, result.branches_total) == store.sessions.totals(ext.id)
    finally:
        store.close()


def test_an_import_of_appended_lines_counts_no_session_whole(tmp_path):
    """No statement of an import of a few appended lines counts a session's entries or
    reads all its branches (each is O(session): 2 ms and more on a 30 MB session)."""
    from core import open_store
    from core.importing import import_paths

    folder = tmp_path / "projects" / "-work-usage-demo"
    session = uf.claude_session(folder)
    store = open_store(tmp_path / "arbor.db")
    try:
        import_paths(store, [folder])
        last = json.loads(session.read_text().splitlines()[-1])
        with open(session, "a") as handle:
            handle.write(json.dumps(uf._user("m1", last["uuid"], "2025-10-02T12:00:00.000Z",
                                             "more")) + "\n")
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        try:
            report = import_paths(store, [folder])
        finally:
            store._conn.set_trace_callback(None)
        assert [f.status for f in report.files].count("imported") == 1
        whole = [s for s in statements if "COUNT(*) FROM entries WHERE external_session_id" in s
                 or "LEFT JOIN entries h ON h.seq = i.head_seq" in s]
        assert whole == []
    finally:
        store.close()


def _append_import_statements(tmp_path) -> tuple[list[str], list[str]]:
    """The SQL an import of two appended lines runs (the store's own connection, traced),
    and the new lines' ids."""
    from core import open_store
    from core.importing import import_paths

    folder = tmp_path / "projects" / "-work-usage-demo"
    session = uf.claude_session(folder)
    store = open_store(tmp_path / "arbor.db")
    try:
        import_paths(store, [folder])
        uf.append_answered_question(session, 7)
        statements: list[str] = []
        store._conn.set_trace_callback(statements.append)
        try:
            report = import_paths(store, [folder])
        finally:
            store._conn.set_trace_callback(None)
        assert [f.status for f in report.files].count("imported") == 1
        assert sum(f.entries_added for f in report.files) == 2
    finally:
        store.close()
    return statements, ["n7-q", "n7"]


def test_an_import_of_appended_lines_asks_after_each_id_once(tmp_path):
    """A new line's id is not in the store: asked once, not again before it is written
    (it was asked three times: is it a duplicate, is it stored, before the write)."""
    statements, new_ids = _append_import_statements(tmp_path)
    asked = [s for s in statements if s.startswith("SELECT seq FROM entries WHERE "
                                                   "external_session_id =") and " AND id = " in s]
    for entry_id in new_ids:
        assert sum(s.endswith(f"id = '{entry_id}'") for s in asked) == 1, asked


def test_an_import_of_appended_lines_does_not_read_the_whole_session_row(tmp_path):
    """Whether the file's session is still there and which id it has are asked by id, and
    its metadata alone (as the read begins and as it ends): not by reading the whole
    session (its row, metadata and branch list, made into a session model) three times, as
    it once was, nor once (the session models' module is not loaded for it)."""
    statements, _ = _append_import_statements(tmp_path)
    whole = [s for s in statements if "FROM external_sessions x WHERE x.uid = " in s]
    assert whole == [], whole
    metadata = [s for s in statements if s.startswith("SELECT metadata FROM external_sessions")]
    assert len(metadata) <= 2, metadata


def test_an_id_found_missing_is_asked_again_after_a_commit_or_once_written(tmp_path):
    """StoredIds remembers an id the store does not have until this session writes it or
    the store commits and goes on (another process may have written it meanwhile)."""
    from core import open_store
    from core.importing.session import StoredIds

    def message(text: str) -> dict:
        return {"message": {"role": "user", "content": text}}

    store = open_store(tmp_path / "arbor.db")
    try:
        with store.transaction():
            session = store.sessions.create("s", uid="s1")
            ids = StoredIds(store, session.id)
            writer = store.entries.writer(session.id)
            asked: list[str] = []
            store._conn.set_trace_callback(asked.append)
            assert ids.get("e1") is None and "e1" not in ids and ids.get("e1", -1) == -1
            assert len(asked) == 1                            # remembered as missing
            seq = writer.add(None, "message", message("x"), entry_id="e1").seq
            writer.flush()
            ids.written("e1")
            assert ids.get("e1") == seq                       # asked again once written
            assert ids.get("e2") is None
            other = writer.add(None, "message", message("y"), entry_id="e2").seq
            writer.flush()                                    # (as if another writer's)
            assert ids.get("e2") is None                      # no commit: still missing
            assert store.commit_and_continue()
            assert ids.get("e2") == other                     # asked again after it
            store._conn.set_trace_callback(None)
    finally:
        store.close()


def test_an_import_of_appended_lines_compiles_no_regular_expression_it_can_do_without(tmp_path):
    """Compiling a regular expression is Python's work (~0.5 ms each): the timestamps'
    full form and the stored form are compiled once a timestamp needs them (the common
    form is read without), a session's file name is told a uuid without one."""
    from core.importing import base
    from core.model import clock

    home = tmp_path / "home"
    session = uf.claude_session(home / ".claude" / "projects" / "-work-usage-demo")
    db = tmp_path / "arbor.db"
    _import(tmp_path, home, db)
    uf.append_answered_question(session, 1)
    patterns = set(_run(tmp_path, home, db, LOADED_RUN)["patterns"])
    assert base._ISO_Z_PATTERN not in patterns
    assert clock._STORED_PATTERN not in patterns
    assert not any("[0-9a-fA-F]{8}" in pattern for pattern in patterns)
