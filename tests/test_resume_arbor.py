"""`arbor resume` on a session arbor owns (written through `core`): the branch becomes current
and the snippet shown to the user is real code that continues it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from core import SessionManager, open_store
from core.agents import prepare_resume
from core.seed.manager import close_root_dbs
from core.store import store as store_api


def sessions(tmp_path):
    folder = tmp_path / "agent dir"
    first = SessionManager.new("/work/app", folder)
    first.init()
    ids = [first.append_message({"role": "user", "content": f"first {n}"}) for n in range(3)]
    first.branch(ids[0])
    first.append_message({"role": "user", "content": "first, other branch"})
    second = SessionManager.new("/work/app", folder)
    second.init()
    second.append_message({"role": "user", "content": "second session, newer"})
    return folder, first, ids


def run_snippet(snippet: str) -> dict:
    namespace: dict = {}
    exec(compile(snippet, "<snippet>", "exec"), namespace)   # the code shown to the user runs
    return namespace


def test_a_branch_of_an_arbor_session_is_made_current_and_continue_recent_finds_it(tmp_path):
    folder, first, ids = sessions(tmp_path)
    store = first.store
    session = store.sessions.by_uid(first.session_id)
    old = next(b for b in store.branches.of_session(session.id) if not b.is_current)
    assert SessionManager.continue_recent("/work/app", folder).session_id != first.session_id
    plan = prepare_resume(store, session, old)
    assert plan.argv == [] and plan.agent == "arbor" and plan.file is None
    assert plan.branch_id == old.id and store.branches.get(old.id).is_current
    assert "SessionManager.continue_recent('/work/app'," in plan.snippet
    namespace = run_snippet(plan.snippet)
    manager = namespace["manager"]
    assert manager.session_id == first.session_id
    assert [m["content"] for m in namespace["messages"]] == ["first 0", "first 1", "first 2"]
    assert manager.get_messages()[-1]["content"] == "…"     # the snippet's append went there
    close_root_dbs()


@pytest.mark.parametrize("step", [timedelta(0), timedelta(seconds=-1)], ids=["same-millisecond", "clock-set-back"])
def test_the_resumed_session_is_the_newest_even_when_the_clock_has_not_moved_on(tmp_path, monkeypatch, step):
    """Times are stored to the millisecond and a tie goes to the session made later: the
    resumed session must still come first for continue_recent (this failed now and then
    when the whole test ran inside one millisecond)."""
    moments = {"now": datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)}
    monkeypatch.setattr(store_api, "utc_now", lambda: moments["now"])
    folder, first, ids = sessions(tmp_path)
    store = first.store
    session = store.sessions.by_uid(first.session_id)
    moments["now"] += step
    prepare_resume(store, session, store.branches.of_session(session.id)[0])
    assert SessionManager.continue_recent("/work/app", folder).session_id == first.session_id
    close_root_dbs()


def test_a_message_inside_a_branch_starts_a_new_current_branch_there(tmp_path):
    folder, first, ids = sessions(tmp_path)
    store = first.store
    session = store.sessions.by_uid(first.session_id)
    branch = store.branches.current(session.id)
    at = store.entries.find(session.id, ids[0])
    count = len(store.branches.of_session(session.id))
    plan = prepare_resume(store, session, store.branches.of_session(session.id)[-1], at_seq=at.seq)
    assert len(store.branches.of_session(session.id)) == count + 1
    current = store.branches.current(session.id)
    assert current.id == plan.branch_id != branch.id and current.head_seq == at.seq
    close_root_dbs()


def test_a_store_with_another_name_gets_a_snippet_that_opens_it(tmp_path):
    store = open_store(tmp_path / "team.db")
    manager = SessionManager("/w", tmp_path, store=store)
    manager.init()
    manager.append_message({"role": "user", "content": "hello"})
    session = store.sessions.by_uid(manager.session_id)
    plan = prepare_resume(store, session)
    assert f"store=open_store({str(tmp_path / 'team.db')!r})" in plan.snippet
    namespace = run_snippet(plan.snippet)
    assert namespace["manager"].session_id == manager.session_id
    assert [m["content"] for m in namespace["messages"]] == ["hello"]


def test_a_postgresql_store_gets_a_snippet_that_opens_it_without_the_password(postgres_server):
    url = postgres_server.new_store_url()
    # the test server trusts local users, so a password in the URL is there to be left out
    with_password = url.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    store = open_store(with_password)
    manager = SessionManager("/w", ".", store=store)
    manager.init()
    manager.append_message({"role": "user", "content": "hello from the team store"})
    session = store.sessions.by_uid(manager.session_id)
    plan = prepare_resume(store, session)
    assert "hunter2" not in plan.snippet and f"store=open_store({url!r})" in plan.snippet
    namespace = run_snippet(plan.snippet)
    assert namespace["manager"].session_id == manager.session_id
    assert [m["content"] for m in namespace["messages"]] == ["hello from the team store"]
    namespace["manager"].store.close()
    store.close()
