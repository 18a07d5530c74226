"""`arbor resume` for pi: the branch as a new pi session, as pi's own fork writes one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_logs import NOW, fixed_ids, path_view, pi_session
from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.agents.pi.writer import session_dir
from core.importing import import_paths

CWD = "/srv/app tests/répertoire ✓"
IDS = fixed_ids()


@pytest.fixture
def env(tmp_path):
    return {"HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi"), "PATH": ""}


def imported(tmp_path, log):
    store = open_store(tmp_path / "arbor.db")
    source = log.write(tmp_path / "source")
    report = import_paths(store, [source])
    assert report.files[0].status == "imported", report.files[0]
    return store, store.sessions.by_uid(log.session_id), source


def resume(store, session, branch, env, **options):
    return prepare_resume(store, session, branch, env=env, now=NOW, ids=IDS, **options)


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_pi_session_folder_is_pis_name_for_the_directory(tmp_path):
    env = {"HOME": "/home/u"}
    assert session_dir("/srv/app", env) == Path("/home/u/.pi/agent/sessions/--srv-app--")
    assert session_dir(CWD, env).name == "--srv-app tests-répertoire ✓--"
    assert session_dir("C:\\work\\x", env).name == "--C--work-x--"
    assert session_dir("/a", {"HOME": "/h", "PI_CODING_AGENT_DIR": "~/agent"}) == \
        Path("/h/agent/sessions/--a--")
    # pi uses PI_CODING_AGENT_SESSION_DIR as the session folder itself
    assert session_dir("/a", {"PI_CODING_AGENT_SESSION_DIR": "/s"}) == Path("/s")


def test_each_branch_is_written_as_pi_forks_one(tmp_path, env):
    store, session, source = imported(tmp_path, pi_session(CWD))
    branches = store.branches.of_session(session.id)
    assert len(branches) == 2
    for branch in branches:
        plan = resume(store, session, branch, env)
        assert plan.argv == ["pi", "--session", str(plan.file)]
        assert plan.cwd == CWD
        assert plan.file.parent == tmp_path / "pi" / "sessions" / "--srv-app tests-répertoire ✓--"
        assert plan.file.name == f"2026-03-02T12-30-00-000Z_{plan.native_id}.jsonl"
        lines = lines_of(plan.file)
        assert lines[0] == {"type": "session", "version": 3, "id": plan.native_id,
                            "timestamp": "2026-03-02T12:30:00.000Z", "cwd": CWD,
                            "parentSession": str(source)}
        path = store.paths.entries(branch.head_seq)
        body = lines[1:1 + len(path)]
        # the path's entries as they were (label entries too: pi's own fork leaves them
        # out and so cuts the chain below each), same ids, parents first
        assert [(line["id"], line["parentId"], line["type"]) for line in body] == \
            [(e.id, e.parent_id, e.type) for e in path]
        original = {line["id"]: line for line in lines_of(source)}
        assert body == [original[line["id"]] for line in body]
        # then label entries where arbor's labels differ from what the path's own label
        # entries leave, chained after the head, and the session's name as pi's /name
        # writes it, after the branch (pi's leaf is the last entry)
        extra = lines[1 + len(path):]
        parent = body[-1]["id"]
        for line in extra:
            assert line["parentId"] == parent
            parent = line["id"]
        *labels, info = extra
        assert all(line["type"] == "label" for line in labels)
        assert info == {"type": "session_info", "id": info["id"], "parentId": info["parentId"],
                        "timestamp": "2026-03-02T12:30:00.000Z", "name": TITLES[branch.name]}
        assert len(info["id"]) == 8 and info["id"] not in {line["id"] for line in lines[:-1]}
        # the label the path's own label entry set needs no second entry
        assert all(line["targetId"] != "00000004" for line in labels)


TITLES = {"main": "Rename the config module · main",
          "Wait, list the tests first.": "Rename the config module · Wait, list the tests first."}


def test_labels_set_or_cleared_in_arbor_become_pi_label_entries(tmp_path, env):
    store, session, _ = imported(tmp_path, pi_session(CWD))
    branch = store.branches.current(session.id)
    path = store.paths.entries(branch.head_seq)
    found = next(e for e in path if e.id == "00000004")
    goal = next(e for e in path if e.id == "00000002")
    operations.set_label(store, found.seq, None)              # cleared in arbor
    operations.set_label(store, goal.seq, "the goal")         # set in arbor
    plan = resume(store, session, branch, env)
    *extra, info = lines_of(plan.file)[1 + len(path):]
    assert [(line["targetId"], line.get("label")) for line in extra] == \
        [("00000002", "the goal"), ("00000004", None)]
    assert "label" not in extra[1]          # pi clears a label with a label entry without one
    assert info["type"] == "session_info" and info["parentId"] == extra[-1]["id"]


def test_the_written_file_imports_back_as_the_same_messages_tree_and_labels(tmp_path, env):
    store, session, _ = imported(tmp_path, pi_session(CWD))
    operations.set_label(store, store.paths.entries(
        store.branches.current(session.id).head_seq)[2].seq, "set in arbor")
    for branch in store.branches.of_session(session.id):
        plan = resume(store, session, branch, env)
        again = open_store(tmp_path / f"again-{plan.native_id}.db")
        report = import_paths(again, [plan.file])
        assert report.files[0].status == "imported" and not report.files[0].skipped
        copy = again.sessions.by_uid(plan.native_id)
        assert copy.parent_session == session.metadata["path"] and copy.cwd == CWD
        assert len(again.branches.of_session(copy.id)) == 1
        head = again.branches.current(copy.id).head_seq
        assert path_view(again, head) == path_view(store, branch.head_seq)
        assert again.paths.replay(head).messages == store.paths.replay(branch.head_seq).messages
        on_path = {e.seq for e in store.paths.entries(branch.head_seq)}
        assert {again.entries.get(seq).id: label for seq, label in again.annotations.entry_labels(copy.id).items()} == \
            {store.entries.get(seq).id: label for seq, label in store.annotations.entry_labels(session.id).items()
             if seq in on_path}


def test_a_message_inside_the_branch(tmp_path, env):
    store, session, _ = imported(tmp_path, pi_session(CWD))
    branch = store.branches.current(session.id)
    middle = [e for e in store.paths.entries(branch.head_seq) if e.type == "message"][3]
    plan = resume(store, session, branch, env, at_seq=middle.seq)
    lines = lines_of(plan.file)
    assert [line["id"] for line in lines if line["type"] not in ("label", "session_info")][-1] \
        == middle.id
    assert lines[-1]["name"] == f"Rename the config module · {branch.name}, up to {middle.id}"
    again = open_store(tmp_path / "again.db")
    import_paths(again, [plan.file])
    copy = again.sessions.by_uid(plan.native_id)
    assert path_view(again, again.branches.current(copy.id).head_seq) == \
        path_view(store, middle.seq)


def test_a_session_arbor_wrote_in_pi_shape_without_a_file(tmp_path, env):
    """A pi session with no file of its own (the demo's) gets no parentSession."""
    from core.demo import build_demo

    store = open_store(build_demo(tmp_path / "demo.db"))
    session = next(store.sessions.get(s.id) for s in store.sessions.list() if s.source == "pi")
    plan = resume(store, session, None, env)
    header = lines_of(plan.file)[0]
    assert "parentSession" not in header
    assert header["cwd"] == str(Path(env["HOME"]) / "src" / "cli-tool")   # "~/src/cli-tool"
    assert plan.cwd == header["cwd"]
