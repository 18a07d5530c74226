"""`arbor push`: sessions copied from a local store to a team store, only what is new."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core import open_store
from core.demo import build_demo
from core.export.push import push_sessions


def _picture(store) -> dict:
    """What each session holds, independent of ids and seqs."""
    out = {}
    for summary in store.sessions.list(include_archived=True):
        session = store.sessions.get(summary.id)
        branches = {}
        for branch in store.branches.of_session(session.id, newest_first=False):
            path = store.paths.entries(branch.head_seq) if branch.head_seq else []
            branches[branch.langgraph_session_id] = (branch.name, branch.is_current,
                                                     [e.id for e in path])
        entries = sorted((e.id, e.type, e.timestamp, repr(e.data))
                         for e in store.entries.of_session(session.id))
        labels = sorted(store.annotations.entry_labels(session.id).values())
        out[session.uid] = (session.session_name, session.kind, session.is_active,
                            session.message_count, branches, entries, labels)
    return out


def test_push_copies_the_demo_and_a_second_push_adds_nothing(tmp_path, store_location):
    local = open_store(build_demo(tmp_path / "demo.db"), create=False)
    team = open_store(store_location)
    ids = [s.id for s in reversed(local.sessions.list(include_archived=True))]
    report = push_sessions(local, team, ids)
    assert report.entries_added == sum(len(local.entries.of_session(i)) for i in ids)
    assert _picture(team) == _picture(local)
    assert team.search.messages("login") and \
        {h.entry_id for h in team.search.messages("login")} == {h.entry_id for h in local.search.messages("login")}
    assert team.usage.report("session").as_json() == local.usage.report("session").as_json()
    again = push_sessions(local, team, ids)
    assert again.entries_added == 0 and not any(s.changed for s in again.sessions)
    # more work offline: the next push copies just that, and moves the branch head
    session = local.sessions.get(ids[-1])
    branch = local.branches.current(session.id)
    local.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "later"}})
    more = push_sessions(local, team, [session.id])
    assert more.entries_added == 1 and more.sessions[0].heads_moved == 1
    assert _picture(team) == _picture(local)
    local.close()
    team.close()


def test_arbor_push_command(tmp_path, store_location):
    demo = build_demo(tmp_path / "demo.db")
    arbor = str(Path(sys.executable).parent / "arbor")
    result = subprocess.run([arbor, "push", "--all", "--to", str(store_location), "--db", str(demo)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "pushed 7 of 7 sessions" in result.stderr
    result = subprocess.run([arbor, "push", "Fix flaky login test", "--to", str(store_location),
                             "--db", str(demo)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "pushed 0 of 1 sessions" in result.stderr
    result = subprocess.run([arbor, "push", "--to", str(store_location), "--db", str(demo)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "--all" in result.stderr
    result = subprocess.run([arbor, "push", "no such", "--to", str(store_location),
                             "--db", str(demo)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "no session" in result.stderr
