"""`o` at the end of a session an agent wrote itself resumes the agent's own session, with
nothing written; but a branch whose newest entry was made in arbor (a compaction, `c`) does
not end where the agent's file ends, though that entry is the session's newest: the branch
is written as a new session, holding the compaction (core.agents.native.own_end, shared by
the writers of Gemini CLI, droid, Kimi CLI, Copilot CLI and opencode)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from agent_logs import NOW, fixed_ids
from handoff_cases import AGENT_FIXTURES, import_agent_source
from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.importing import import_paths

SUMMARY = "Made in arbor: the files were listed."


def imported(agent: str, tmp_path: Path):
    """(store, the agent's own session, the environment its writer writes in)."""
    store = open_store(tmp_path / "arbor.db")
    if agent in ("gemini", "droid", "kimi"):
        cwd = tmp_path / "work"
        cwd.mkdir()
        session, _answer = import_agent_source(store, agent, tmp_path, str(cwd))
        home = tmp_path / f"source-{agent}" if agent in ("gemini", "kimi") else tmp_path / "home"
        return store, session, {"HOME": str(home), "PATH": ""}
    home = tmp_path / "home"
    if agent == "copilot":
        state = home / ".copilot" / "session-state"
        shutil.copytree(AGENT_FIXTURES / "copilot" / "session-state", state)
        import_paths(store, [state])
        uid = "fd8ec7af-de2c-46f5-8d2f-101d6e2af536"
    else:
        database = home / ".local" / "share" / "opencode" / "opencode.db"
        database.parent.mkdir(parents=True)
        with sqlite3.connect(f"file:{AGENT_FIXTURES / 'opencode' / 'opencode.db'}?mode=ro",
                             uri=True) as source:
            source.execute("VACUUM INTO ?", (str(database),))
        import_paths(store, [database])
        uid = "ses_db28d291affeBWJ51SDDts5ac9"
    return store, store.sessions.get(store.sessions.by_uid(uid).id), {"HOME": str(home), "PATH": ""}


@pytest.mark.parametrize("agent", ["gemini", "droid", "kimi", "copilot", "opencode"])
def test_a_compaction_made_in_arbor_at_the_end_is_written_not_the_agents_own_end(tmp_path, agent):
    store, session, env = imported(agent, tmp_path)
    try:
        branch = store.branches.current(session.id)
        _low, high, _count = store.entries.span(session.id)
        assert branch.head_seq == high            # the branch is the whole of the agent's file
        own = prepare_resume(store, session, branch, env=env, now=NOW, ids=fixed_ids(700))
        assert own.file is None and own.native_id == session.metadata["sessionId"]
        operations.compact(store, branch.id, summary=SUMMARY, keep_recent_tokens=20)
        branch = store.branches.get(branch.id)
        assert store.entries.span(session.id)[1] == branch.head_seq     # newest of the session
        plan = prepare_resume(store, session, branch, env=env, now=NOW, ids=fixed_ids(800))
        assert plan.file is not None and plan.file.is_file()
        assert plan.native_id != session.metadata["sessionId"]
        files = plan.file.parent.iterdir() if agent == "kimi" else [plan.file]  # (context.jsonl)
        written = "".join(f.read_text(encoding="utf-8") for f in files if f.is_file())
        assert json.dumps(SUMMARY)[1:-1] in written      # the compaction is in what was written
    finally:
        store.close()
