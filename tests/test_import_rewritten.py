"""A log rewritten by its own agent is the same conversation (issue 26, item 3).

pi migrates a session file of an older version when it opens it, in place: version 1 lines
get ids (random ones) and parent ids, the header a version, a compaction's
`firstKeptEntryIndex` becomes `firstKeptEntryId`, v2's `hookMessage` role becomes `custom`.
A file imported before, opened in pi and imported again must add nothing: no entry, no
branch, no response counted twice, the current branch and what was made in arbor (labels,
branches) kept. The migrated files are pi's own output (tests/fixtures/pi_migrations,
SOURCES.md says how they were made); `test_pi_own_migration_*` runs pi's code itself where
node and the package are present (see tests/test_agent_readers.py).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from core import open_store
from core.actions import operations
from core.model.entries import content_text
from core.importing import import_paths

FIXTURES = Path(__file__).parent / "fixtures" / "pi_migrations"
SHARED_V1 = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "pi" / \
    "large-session.v1.head.jsonl"


def picture(store) -> dict:
    """What a user sees of the store: sessions, branches (name, head, current), entries,
    messages in order, labels, and usage (responses and cost, per session and in all)."""
    out = {}
    figures = store.usage.by_session()
    for session in store.sessions.list(include_archived=True):
        entries = store.entries.of_session(session.id)
        branches = sorted((b.name, b.head_seq, b.is_current)
                          for b in store.branches.of_session(session.id))
        figure = figures.get(session.id)
        out[session.uid] = {
            "branches": branches,
            "entries": len(entries),
            "messages": [(e.message.get("role"), content_text(e.message.get("content")))
                         for e in entries if e.message],
            "labels": store.annotations.entry_labels(session.id),
            "branch labels": store.annotations.branch_labels(session.id),
            "responses": figure.responses if figure else 0,
            "cost": round(figure.cost_usd, 6) if figure else 0.0,
            "usage rows": len(store.usage.of_session(session.id)),
        }
    report = store.usage.report("day")
    out["usage report"] = (report.totals.responses, round(report.totals.cost_usd, 6))
    return out


def replay_of(store, head_seq: int) -> list[tuple]:
    """The context an agent resumes with at this head: (role, text) of each message."""
    return [(m.get("role"), content_text(m.get("content")))
            for m in store.paths.replay(head_seq).messages]


def rewrite_in_place(path: Path, migrated: Path) -> None:
    """What pi's `_rewriteFile` does: the same file (same inode), written anew."""
    path.write_bytes(migrated.read_bytes())


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "store.db")
    yield s
    s.close()


def session_file(tmp_path: Path, source: Path) -> Path:
    folder = tmp_path / "sessions" / "--home-dev-project--"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / source.name
    shutil.copyfile(source, path)
    return path


CASES = {
    "v1": (SHARED_V1, FIXTURES / "v1.migrated.jsonl"),
    "v1 with a compaction": (FIXTURES / "v1-compaction.jsonl",
                             FIXTURES / "v1-compaction.migrated.jsonl"),
    "v2": (FIXTURES / "v2.jsonl", FIXTURES / "v2.migrated.jsonl"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_file_pi_migrated_in_place_imports_as_the_same_conversation(store, tmp_path, case):
    original, migrated = CASES[case]
    path = session_file(tmp_path, original)
    first = import_paths(store, [path])
    assert first.failed_files == [] and first.entries_added > 0
    [session] = store.sessions.list()
    # what the user made in arbor: a label and a branch (made current)
    entries = store.entries.of_session(session.id)
    told = next(e for e in entries if e.message and e.message.get("role") == "assistant")
    operations.set_label(store, told.id, "kept across pi's rewrite",
                         external_session_id=session.id)
    current = store.branches.current(session.id)
    mine = operations.branch(store, current.id, entries[len(entries) // 2].id, name="my try")
    operations.set_branch_label(store, mine.id, "arbor's own")
    before = picture(store)

    rewrite_in_place(path, migrated)
    again = import_paths(store, [path])
    assert again.failed_files == []
    assert again.entries_added == 0 and again.branches_added == 0, again.summary()
    assert picture(store) == before
    assert store.branches.current(session.id).id == mine.id

    # and once more: nothing (the ids found are kept in the file's record)
    third = import_paths(store, [path])
    assert third.entries_added == 0 and picture(store) == before


@pytest.mark.parametrize("case", list(CASES))
def test_pi_goes_on_in_the_migrated_file(store, tmp_path, case):
    """After the rewrite pi appends entries whose parents are the new ids: they continue
    the conversation's own branch (no new root, no copy)."""
    original, migrated = CASES[case]
    path = session_file(tmp_path, original)
    import_paths(store, [path])
    [session] = store.sessions.list()
    branches = {b.id: b.name for b in store.branches.of_session(session.id)}
    before_heads = {b.id: b.head_seq for b in store.branches.of_session(session.id)}
    rewrite_in_place(path, migrated)
    leaf = json.loads(migrated.read_text().splitlines()[-1])["id"]
    more = [{"type": "message", "id": "f00dcafe", "parentId": leaf,
             "timestamp": "2026-12-01T10:00:00.000Z",
             "message": {"role": "user", "content": "carry on after the upgrade",
                         "timestamp": 1796119200000}},
            {"type": "label", "id": "f00dcaff", "parentId": "f00dcafe",
             "timestamp": "2026-12-01T10:00:01.000Z", "targetId": leaf, "label": "upgraded"}]
    with open(path, "a", encoding="utf-8") as handle:
        for line in more:
            handle.write(json.dumps(line) + "\n")
    report = import_paths(store, [path])
    assert report.entries_added == 2 and report.branches_added == 0, report.summary()
    after = {b.id: b.name for b in store.branches.of_session(session.id)}
    assert after == branches
    current = store.branches.current(session.id)
    path_entries = store.paths.entries(current.head_seq)
    assert [e.id for e in path_entries[-2:]] == ["f00dcafe", "f00dcaff"]
    # what they continue is the entry the store holds for the file's last line (under the
    # id it was first imported with: `L<line>` for a v1 file)
    last_before = store.paths.entries(before_heads[current.id])[-1]
    assert path_entries[-3].seq == last_before.seq
    # the label pi wrote names that entry
    assert store.annotations.entry_labels(session.id).get(last_before.seq) == "upgraded"


def test_a_compaction_keeps_the_same_entries_after_the_rewrite(store, tmp_path):
    """v1's firstKeptEntryIndex and v3's firstKeptEntryId name the same entry: the replay
    of the branch is the same before and after pi's rewrite (and a fresh import of the
    migrated file replays the same messages)."""
    original, migrated = CASES["v1 with a compaction"]
    path = session_file(tmp_path, original)
    import_paths(store, [path])
    [session] = store.sessions.list()
    current = store.branches.current(session.id)
    replayed = store.paths.replay(current.head_seq)
    assert replayed.compaction is not None and replayed.warning is None
    before = replay_of(store, current.head_seq)
    rewrite_in_place(path, migrated)
    import_paths(store, [path])
    assert replay_of(store, store.branches.current(session.id).head_seq) == before
    fresh = open_store(tmp_path / "fresh.db")
    try:
        import_paths(fresh, [migrated])
        [other] = fresh.sessions.list()
        branch = fresh.branches.current(other.id)
        assert replay_of(fresh, branch.head_seq) == before
    finally:
        fresh.close()


def test_same_content_elsewhere_in_the_tree_is_not_taken_for_the_same_entry(store, tmp_path):
    """Recognising an entry by its content needs the same place too: a line with the same
    type, time and data under another parent is a new entry (a retry, a branch)."""
    path = session_file(tmp_path, FIXTURES / "v2.migrated.jsonl")
    import_paths(store, [path])
    [session] = store.sessions.list()
    count = len(store.entries.of_session(session.id))
    lines = path.read_text().splitlines()
    header, first, second = json.loads(lines[0]), json.loads(lines[1]), json.loads(lines[2])
    # the second line again, under the first line's parent, with a new id
    copy = dict(second, id="0dd0dd0d", parentId=first["parentId"])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(copy) + "\n")
    report = import_paths(store, [path])
    assert report.entries_added == 1 and len(store.entries.of_session(session.id)) == count + 1
    assert header["version"] == 3


# ------------------------------------------------------------- pi's own migration
MODULES = Path(os.environ.get("ARBOR_AGENT_NODE_MODULES", "/nonexistent"))
NODE = shutil.which("node")
pi_present = pytest.mark.skipif(
    NODE is None or not (MODULES / "@mariozechner/pi-coding-agent").is_dir(),
    reason="set ARBOR_AGENT_NODE_MODULES to a node_modules folder with "
           "@mariozechner/pi-coding-agent (and node on PATH) to run pi's own migration")


@pi_present
@pytest.mark.parametrize("case", list(CASES))
def test_pi_own_migration_of_an_imported_file_adds_nothing(store, tmp_path, case):
    """pi's SessionManager opens (and so migrates, in place) a copy that was imported."""
    import subprocess

    original, _migrated = CASES[case]
    path = session_file(tmp_path, original)
    import_paths(store, [path])
    before = picture(store)
    inode = path.stat().st_ino
    done = subprocess.run([NODE, str(Path(__file__).parent / "agent_readers" / "pi_migrate.mjs"),
                           str(MODULES), str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text().splitlines()[0])["version"] == 3
    assert path.stat().st_ino == inode          # rewritten in place, as pi does
    report = import_paths(store, [path])
    assert report.entries_added == 0 and report.branches_added == 0, report.summary()
    assert picture(store) == before


def test_the_report_says_what_was_recognised(store, tmp_path):
    path = session_file(tmp_path, SHARED_V1)
    import_paths(store, [path])
    rewrite_in_place(path, FIXTURES / "v1.migrated.jsonl")
    report = import_paths(store, [path])
    assert report.recognised == 26
    assert "26 entries already here under other ids (a log its agent rewrote): kept once." \
        in report.summary()
    # the new ids are kept in the file's record: pi reads the file again from the start when
    # it grows, and its entries are then known by those ids, not compared again
    [record] = store.imports.records().values()
    assert len(json.loads(record)["aliases"]["d703a1a9-1b7b-4fb1-b512-c9738b1fe617"]) == 26
    leaf = json.loads((FIXTURES / "v1.migrated.jsonl").read_text().splitlines()[-1])["id"]
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "message", "id": "f00dcafe", "parentId": leaf,
                                 "timestamp": "2026-12-01T10:00:00.000Z",
                                 "message": {"role": "user", "content": "more"}}) + "\n")
    grown = import_paths(store, [path])
    assert (grown.entries_added, grown.recognised) == (1, 0)
