"""The opencode and Copilot CLI writers given a branch another agent wrote (as the hand-off,
core/handoff, gives them one): written and read back by arbor, the same branch (roles,
text, tool calls), its compactions included."""

from __future__ import annotations

import importlib

import pytest

from core import open_store
from core.agents.native import BranchToWrite, Ids
from core.importing import import_paths
from core.model.clock import utc_now
from test_agent_conformance import place, transcript


@pytest.mark.parametrize("writer", ["opencode", "copilot"])
@pytest.mark.parametrize("source", ["pi", "claude_code", "codex"])
def test_a_branch_of_another_agent_is_written_as_the_same_branch(tmp_path, source, writer):
    store = open_store(tmp_path / "source.db")
    again = open_store(tmp_path / "again.db")
    try:
        import_paths(store, place(tmp_path / "logs", source))
        session = store.sessions.get(store.sessions.list()[0].id)
        branch = store.branches.current(session.id)
        module = importlib.import_module(f"core.agents.{writer}.writer")
        job = BranchToWrite(store=store, session=session, branch=branch,
                            head_seq=branch.head_seq, cwd="/work", env={"HOME": str(tmp_path)},
                            now=utc_now(), ids=Ids())
        file, new_id = module.place(job)
        module.write(job, file, new_id)
        report = import_paths(again, [file])
        assert report.files[0].format == writer, report.summary()
        assert transcript(again, again.sessions.by_uid(new_id)) == transcript(store, session)
    finally:
        store.close()
        again.close()
