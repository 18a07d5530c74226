"""Export: pi JSONL round trip (same tree), Markdown transcript, JSON of the whole session;
and the `arbor import` / `arbor export` commands."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import open_store
from core.model.errors import AmbiguousId, NotFound
from core.export.formats import (
    export_json, export_markdown, export_pi, resolve_branch, resolve_session)
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO.parent / "shared" / "fixtures"
ALL = [FIXTURES / "claude_code" / "dag_compact_after_rewind.jsonl",
       FIXTURES / "claude_code" / "dag_compact_after_rewind_preserved.jsonl",
       FIXTURES / "codex" / "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl",
       FIXTURES / "pi" / "specstory_full_format_v3_synthetic.jsonl",
       FIXTURES / "pi" / "pi_v3_generated.jsonl",
       FIXTURES / "pi" / "large-session.v1.head.jsonl",
       FIXTURES / "langgraph" / "langgraph_checkpoints.sqlite"]


def tree(store, ext_id):
    entries = {e.id: (e.parent_id, e.type, json.dumps(e.data, sort_keys=True), e.timestamp)
               for e in store.entries.of_session(ext_id)}
    branches = sorted(b.head_id for b in store.branches.of_session(ext_id))
    current = store.branches.current(ext_id).head_id
    labels = sorted((store.entries.get(seq).id, label)
                    for seq, label in store.annotations.entry_labels(ext_id).items())
    return entries, branches, current, labels


@pytest.mark.parametrize("fixture", ALL, ids=lambda p: p.name)
def test_pi_export_round_trip_gives_the_same_tree(fixture, tmp_path, store_location):
    source = open_store(store_location)
    report = import_paths(source, [fixture])
    assert report.files[0].status == "imported"
    for result in report.files[0].sessions:
        session = source.sessions.by_uid(result.uid)
        out = tmp_path / f"{abs(hash(result.uid))}.jsonl"
        with open(out, "w", encoding="utf-8") as handle:
            lines = export_pi(source, session, handle)
        assert lines == 1 + len(source.entries.of_session(session.id))
        header = json.loads(out.read_text().splitlines()[0])
        assert header["type"] == "session" and header["version"] == 3 and header["id"] == session.uid
        target = open_store(tmp_path / f"b{abs(hash(result.uid))}.db")
        again = import_paths(target, [out])
        assert again.files[0].format == "pi" and again.files[0].status == "imported"
        copy = target.sessions.by_uid(session.uid)
        assert copy.session_name == session.session_name
        assert tree(target, copy.id) == tree(source, session.id)
        target.close()
    source.close()


@pytest.fixture
def store(store_location):
    s = open_store(store_location)
    import_paths(s, ALL)
    yield s
    s.close()


def test_resolve_session_by_uid_prefix_and_name(store):
    assert resolve_session(store, "01a22640").session_name == "demo session"
    assert resolve_session(store, "demo session").uid.startswith("01a22640")
    assert resolve_session(store, "DEMO SESSION").uid.startswith("01a22640")
    with pytest.raises(AmbiguousId):
        resolve_session(store, "Start")          # two Claude Code fixtures start with "Start"
    with pytest.raises(AmbiguousId):
        resolve_session(store, "langgraph:")     # t1 and t2
    with pytest.raises(NotFound):
        resolve_session(store, "no such thing")


def test_markdown_transcript_of_a_branch(store):
    session = resolve_session(store, "demo session")
    out = io.StringIO()
    shown = export_markdown(store, session, resolve_branch(store, session), out)
    text = out.getvalue()
    assert text.startswith("# demo session\n")
    assert "(current)" in text
    # The current branch: the rollback's summary, the README answer, the compaction.
    assert "### User — " in text and "Instead, show README.md" in text
    assert "⑂ Branch summary" in text and "assistant refused pending confirmation" in text
    assert "⟲ Compaction" in text and "kept from entry `f4ad2f0f`" in text
    assert "**Tool call** `bash`" in text and "> *thinking:* I should run ls." in text
    # The abandoned branch's messages are not in this transcript.
    assert "I won't delete it" not in text
    assert shown == 13
    # Another branch by name.
    other = io.StringIO()
    branches = store.branches.of_session(session.id, newest_first=False)
    export_markdown(store, session, resolve_branch(store, session, str(branches[0].id)), other)
    assert "I won't delete it without confirmation." in other.getvalue()
    assert "label `first-answer`" in other.getvalue()


def test_markdown_makes_escapes_visible(tmp_path):
    s = open_store(tmp_path / "x.db")
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps({"type": "session", "version": 3, "id": "evil", "timestamp":
                                "2026-01-01T00:00:00.000Z", "cwd": "/"}) + "\n" + json.dumps(
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "user", "content": "hi \x1b]52;c;aGk=\x07 ```` fence"}}) + "\n")
    import_paths(s, [path])
    session = resolve_session(s, "evil")
    out = io.StringIO()
    export_markdown(s, session, resolve_branch(s, session), out)
    assert "\x1b" not in out.getvalue() and "\\x1b]52" in out.getvalue()


def test_json_export_of_the_whole_session(store):
    session = resolve_session(store, "hello")       # LangGraph thread t1
    out = io.StringIO()
    count = export_json(store, session, out)
    document = json.loads(out.getvalue())
    assert document["format"] == "arbor-session"
    assert document["session"]["uid"] == session.uid
    assert count == len(document["entries"]) == 11
    assert len(document["branches"]) == 3
    assert sum(b["is_current"] for b in document["branches"]) == 1
    assert len(document["checkpoints"]) == 14
    assert {e["id"] for e in document["entries"]} >= {"h1", "ai-h1", "hB", "ai-hB"}
    pi = resolve_session(store, "demo session")
    out = io.StringIO()
    export_json(store, pi, out)
    labels = json.loads(out.getvalue())["labels"]
    assert [(l["label"], l["target_entry"]) for l in labels] == [("first-answer", "3492bce1"),
                                                                 (None, "3492bce1")]


# ------------------------------------------------------------------- commands
def run_cli(args, env=None, cwd=None):
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("ARBOR_DB", None) if env is None else None
    return subprocess.run([sys.executable, "-c",
                           "import sys; from tui.cli import main; code = main(sys.argv[1:]); "
                           "assert 'textual' not in sys.modules, 'textual imported'; sys.exit(code)",
                           *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd or REPO, timeout=120)


def test_import_and_export_commands(tmp_path):
    db = tmp_path / "cli.db"
    done = run_cli(["import", "--db", str(db), str(FIXTURES / "pi"), str(tmp_path / "missing")])
    assert done.returncode == 0, done.stderr
    assert "pi_v3_generated.jsonl" in done.stdout and "imported" in done.stdout
    assert "no such file or folder" in done.stdout
    # Nothing importable: exit 1.
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x00\x01\x02")
    done = run_cli(["import", "--db", str(db), str(junk)])
    assert done.returncode == 1 and "not a log" in done.stdout
    # A store that cannot be opened: exit 2 and one sentence.
    bad = tmp_path / "bad.db"
    bad.write_text("not a database")
    done = run_cli(["import", "--db", str(bad), str(FIXTURES / "pi")])
    assert done.returncode == 2
    assert done.stderr.strip().startswith("arbor: ") and "\n" not in done.stderr.strip()
    # ARBOR_DB is honoured; export to a file and to stdout.
    out = tmp_path / "demo.md"
    done = run_cli(["export", "demo session", "--format", "markdown", "-o", str(out)],
                   env={"ARBOR_DB": str(db)})
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("# demo session")
    done = run_cli(["export", "--db", str(db), "01a22640", "--format", "pi"])
    assert done.returncode == 0 and done.stdout.splitlines()[0].startswith('{"type":"session"')
    done = run_cli(["export", "--db", str(db), "nothing-like-it", "--format", "json"])
    assert done.returncode == 1 and "no session" in done.stderr
    done = run_cli(["export", "--db", str(tmp_path / "absent.db"), "x"])
    assert done.returncode == 2 and not (tmp_path / "absent.db").exists()


def test_import_discover(tmp_path):
    home = tmp_path / "home"
    sessions = home / ".pi" / "agent" / "sessions" / "proj"
    sessions.mkdir(parents=True)
    shutil.copy(FIXTURES / "pi" / "pi_v3_generated.jsonl", sessions / "s.jsonl")
    codex = home / ".codex" / "sessions" / "2026" / "01" / "02"
    codex.mkdir(parents=True)
    shutil.copy(ALL[2], codex / ALL[2].name)
    db = tmp_path / "d.db"
    done = run_cli(["import", "--discover", "--db", str(db)], env={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    s = open_store(db)
    assert sorted(x.source for x in s.sessions.list()) == ["codex", "pi"]
    s.close()
    empty = tmp_path / "empty-home"
    empty.mkdir()
    done = run_cli(["import", "--discover", "--db", str(db)], env={"HOME": str(empty)})
    assert done.returncode == 1 and "no agent logs" in done.stderr


def test_export_never_writes_over_a_store_or_a_database(tmp_path):
    import sqlite3

    db = tmp_path / "cli.db"
    assert run_cli(["import", "--db", str(db), str(FIXTURES / "pi")]).returncode == 0
    other = tmp_path / "other.db"
    open_store(other).close()
    plain = tmp_path / "plain.sqlite"
    conn = sqlite3.connect(plain)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    (tmp_path / "link.db").symlink_to(db)

    def sessions(path):
        store = open_store(path, create=False)
        try:
            assert store.connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            return sorted(s.uid for s in store.sessions.list(include_archived=True))
        finally:
            store.close()

    before = sessions(db)
    for target, words in ((db, "is the store being exported from"),
                          (tmp_path / "link.db", "is the store being exported from"),
                          (Path(os.path.relpath(db, REPO)), "is the store being exported from"),
                          (other, "is an arbor store"),
                          (plain, "is a SQLite database")):
        done = run_cli(["export", "--db", str(db), "demo session", "--format", "pi",
                        "-o", str(target)])
        assert done.returncode == 1, (target, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "will not write over it" in lines[0]
    assert sessions(db) == before and sessions(other) == []
    conn = sqlite3.connect(plain)
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]
    conn.close()
    # a store's -wal (while a connection has it) is part of a database too
    holder = open_store(db)
    holder.sessions.list()
    done = run_cli(["export", "--db", str(db), "demo session", "-o", f"{db}-wal"])
    assert done.returncode == 1 and "belongs to the SQLite database beside it" in done.stderr
    holder.close()
    assert sessions(db) == before
    # an ordinary file is still replaced
    text = tmp_path / "out.jsonl"
    text.write_text("old\n")
    done = run_cli(["export", "--db", str(db), "demo session", "--format", "pi", "-o", str(text)])
    assert done.returncode == 0 and text.read_text().startswith('{"type":"session"')
