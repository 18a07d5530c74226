"""Search as a person types (issue 29): `LiveSearch` answers each key on a connection of its
own, stops the stale search there, and its quick answer holds what the full one does
(newest first, short words whole); `arbor search` gives the same hits to scripts."""

from __future__ import annotations

import json
import threading

import pytest

from core import open_store
from core.store.live_search import LiveSearch

MIGRATE = "Migrate orders table to new schema"
FIRST_ASK = "Migrate the orders data to the v2 schema"

ENDLESS = ("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)"
           " SELECT count(*) FROM n")


def test_a_running_search_is_stopped_on_its_own_connection_only(demo_location):
    if str(demo_location).startswith("postgres"):
        endless = "SELECT pg_sleep(60)"
    else:
        endless = ENDLESS
    with open_store(demo_location, create=False) as store:
        live = LiveSearch(store)
        outcome: list = []

        def run() -> None:
            try:
                live.store._all(endless)
                outcome.append("finished")
            except live.errors as error:
                outcome.append(error)

        worker = threading.Thread(target=run)
        worker.start()
        # the app's own connection answers meanwhile, and is not stopped by `stop`
        assert store.sessions.count() > 0
        for _ in range(200):
            live.stop()
            worker.join(0.05)
            if not worker.is_alive():
                break
        assert not worker.is_alive() and outcome and outcome[0] != "finished", outcome
        assert store.sessions.count() > 0
        # and the searcher goes on answering after it was stopped
        assert any(h.snippet.startswith(FIRST_ASK) for h in live.run("migrate").hits)
        live.close()


@pytest.mark.parametrize("typed", ["mi", "migr", "migrate orders", "or", "orders"])
def test_the_quick_answer_finds_what_the_full_one_finds_among_the_newest(demo_location, typed):
    with open_store(demo_location, create=False) as store:
        live = LiveSearch(store)
        quick, full = live.run(typed, quick=True, messages=10**6), live.run(typed, messages=10**6)
        assert [s.name for s in quick.sessions] == [s.name for s in full.sessions]
        quick_seqs = [h.seq for h in quick.hits]
        assert quick_seqs == sorted(quick_seqs, reverse=True)   # newest first
        words = [w for w in typed.split() if len(w) >= 3]
        if words:   # every word typed in full is matched as a prefix at once
            assert set(quick_seqs) == {h.seq for h in full.hits}
        else:       # a short word matches whole words only, until typing pauses
            assert set(quick_seqs) <= {h.seq for h in full.hits}
        live.close()


def test_names_ranked_at_each_key_are_the_names_search_finds(demo_location):
    with open_store(demo_location, create=False) as store:
        live = LiveSearch(store)
        for typed in ("m", "mig", "migrat", "flaky logn", "ession"):
            assert [s.id for s in live.run(typed, quick=True).sessions] == \
                [s.id for s in store.search.session_names(typed, limit=50)]
        live.close()


# ------------------------------------------------------------------ arbor search
def _arbor(capsys, *argv) -> tuple[int, str, str]:
    from tui.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_arbor_search_json_shape(demo_db, capsys):
    code, out, _err = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"query", "coverage", "hits"}
    assert data["query"] == "migrate" and data["coverage"] == {"percent": 100, "complete": True}
    first = data["hits"][0]
    assert set(first) == {"rank", "session_uid", "session_name", "source", "project", "branch",
                          "entry_id", "role", "type", "timestamp", "snippet"}
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))
    hit = next(h for h in data["hits"] if h["snippet"].startswith(FIRST_ASK))
    with open_store(demo_db, create=False) as store:
        session = store.sessions.by_uid(hit["session_uid"])
        assert session.session_name == MIGRATE == hit["session_name"]
        branch_names = {b.name for b in store.branches.of_session(session.id)}
    assert hit["branch"] in branch_names and hit["role"] == "user"


def test_arbor_search_exit_status_and_filters(demo_db, capsys):
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "zzyzxnothing")
    assert code == 1 and "No messages found" in out
    code, _, err = _arbor(capsys, "search", "--db", str(demo_db), "--", "!!!")
    assert code == 2 and "nothing to search for" in err
    code, _, err = _arbor(capsys, "search", "--db", str(demo_db.parent / "none" / "x.db"), "a")
    assert code == 2
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--json")
    sources = {h["source"] for h in json.loads(out)["hits"]}
    for source in sources:
        code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--json",
                              "--source", source)
        assert code == 0 and {h["source"] for h in json.loads(out)["hits"]} == {source}
    other = next(s for s in ("claude_code", "codex", "pi", "langgraph", "arbor") if s not in sources)
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--source", other)
    assert code == 1


def test_arbor_search_project_filter_and_plain_output(demo_db, capsys):
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--json")
    projects = {h["project"] for h in json.loads(out)["hits"]}
    project = sorted(p for p in projects if p)[0]
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "--json",
                          "--project", project.rstrip("/").rsplit("/", 1)[-1])
    assert code == 0 and {h["project"] for h in json.loads(out)["hits"]} == {project}
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "migrate", "-n", "2")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 4 and MIGRATE in out
    assert "\x1b" not in out   # not a terminal: no styling


def test_arbor_search_shows_hostile_text_cleaned(hostile_db, capsys):
    code, out, _ = _arbor(capsys, "search", "--db", str(hostile_db), "clipboard")
    assert "\x1b" not in out and "\x07" not in out


def test_arbor_search_names_roles_as_the_app_does(demo_db, capsys):
    """(seen: "toolResult in …" where the app says "tool result"; --json keeps the role)"""
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "passed", "--limit", "50")
    assert code == 0
    roles = {line.split(" in ", 1)[0] for line in out.splitlines() if not line.startswith(" ")}
    assert "tool result" in roles and "toolResult" not in roles, roles
    code, out, _ = _arbor(capsys, "search", "--db", str(demo_db), "passed", "--json")
    assert "toolResult" in {h["role"] for h in json.loads(out)["hits"]}
