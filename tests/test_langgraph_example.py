"""examples/langgraph_agent.py, run as docs/langgraph.md says (a separate process, offline): its
turns are a session of the store with the conversation as messages (tool call and result
included), and a second run after a roll back in the store goes on from the rolled-back
branch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.actions import operations
from core.model.entries import MESSAGE
from core.store import open_store

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "langgraph_agent.py"


def run_example(db: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLE), "--db", str(db), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def contents(store, head_seq: int) -> list:
    return [e.message["content"] for e in store.paths.entries(head_seq) if e.type == MESSAGE]


def roles(store, head_seq: int) -> list[str]:
    return [e.message["role"] for e in store.paths.entries(head_seq) if e.type == MESSAGE]


def test_example_agent_writes_a_session_and_goes_on_after_a_roll_back(tmp_path):
    db = tmp_path / "agent.db"
    out = run_example(db, "Plan a day in Lisbon", "Add a museum", "Count the stops")
    assert "tool: 4" in out and "That plan has 4 stops." in out

    store = open_store(db)
    try:
        session_id = store.langgraph.session("lisbon")
        session = store.sessions.get(session_id)
        assert session.session_name == "Plan a day in Lisbon"
        main = store.branches.current(session_id)
        said = contents(store, main.head_seq)
        assert said[0] == "Plan a day in Lisbon" and said[-1] == "That plan has 4 stops."
        # the tool call and its result are messages in arbor's shape too
        assert roles(store, main.head_seq)[-3:] == ["assistant", "toolResult", "assistant"]
        assert said[-3][1]["type"] == "toolCall" and said[-3][1]["name"] == "count_words"
        assert said[-2] == [{"type": "text", "text": "4"}]
        answer = next(e for e in store.paths.entries(main.head_seq)
                      if e.type == MESSAGE and e.message["content"].startswith("Here is a plan"))
        rolled = operations.rollback(store, main.id, entry_id=answer.seq)
    finally:
        store.close()

    out = run_example(db, "Count the stops")
    assert "human: Add a museum" not in out   # went on from the rolled-back branch

    store = open_store(db)
    try:
        current = store.branches.current(session_id)
        assert current.id == rolled.id
        said = contents(store, current.head_seq)
        assert said[:3] == ["Plan a day in Lisbon", said[1], "Count the stops"]
        assert said[1].startswith("Here is a plan")
        assert said[-1].startswith("That plan has")
        # the first branch is kept whole
        assert contents(store, store.branches.get(main.id).head_seq)[-1] == \
            "That plan has 4 stops."
    finally:
        store.close()
