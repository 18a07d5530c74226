"""ArborSaver under crashes and concurrency: an agent process killed (SIGKILL) in the
middle of a step resumes where it was, running only what had not finished; a process
killed while it writes checkpoints as fast as it can leaves a store LangGraph goes on
from; agents in several processes write their threads into one store at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from core.model.entries import MESSAGE
from core.langgraph import ArborSaver
from core.store import open_store

from langgraph_graphs import chat_graph, parallel_graph

GRAPHS = Path(__file__).resolve().parent / "langgraph_graphs.py"


def _wait(condition, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(GRAPHS), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def test_killed_mid_step_resumes_running_only_what_had_not_finished(tmp_path):
    """`fast` and `slow` run in one step; the process is killed while `slow` works, after
    `fast` finished (its writes are kept with the step's checkpoint). Resumed in another
    process, the run ends with both results and `last`, and `fast` ran once in all."""
    db, effects, gate = tmp_path / "agents.db", tmp_path / "effects.txt", tmp_path / "gate"
    agent = _start("parallel", str(db), "job", str(effects), str(gate))
    try:
        assert _wait(lambda: effects.exists() and "fast" in effects.read_text())
        store = open_store(db)
        try:
            def fast_write_kept() -> bool:
                session = store.langgraph.session("job")
                if session is None:
                    return False
                return any(channel == "log" and value and b"fast" in value
                           for row in store.langgraph.checkpoints_in_order(session)
                           for _task, channel, _kind, value in
                           store.langgraph.writes(session, row.checkpoint_id))
            assert _wait(fast_write_kept)
        finally:
            store.close()
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert agent.returncode == -signal.SIGKILL
    assert effects.read_text().split() == ["fast"]

    gate.touch()
    store = open_store(db)
    try:
        assert store.integrity_check() == "ok"
        graph = parallel_graph(ArborSaver(store), effects, gate)
        config = {"configurable": {"thread_id": "job"}}
        assert graph.get_state(config).next == ("slow",)
        final = graph.invoke(None, config)
    finally:
        store.close()
    assert sorted(final["log"]) == ["fast", "last", "slow"]
    assert sorted(effects.read_text().split()) == ["fast", "last", "slow"]


@pytest.mark.parametrize("delay", [0.4, 0.9, 1.7])
def test_killed_while_writing_checkpoints_goes_on_from_a_whole_one(tmp_path, delay):
    """Killed at some moment of a fast run of turns: every checkpoint in the store is
    whole (its entry, its arbor checkpoint, its messages), and the thread goes on."""
    db = tmp_path / "agents.db"
    agent = _start("chat", str(db), "busy", "100000")
    try:
        assert _wait(lambda: db.exists(), 60)
        watcher = open_store(db)
        try:   # the delay counts from the first checkpoint, however slow the machine is
            assert _wait(lambda: watcher.langgraph.session("busy") is not None, 60)
        finally:
            watcher.close()
        time.sleep(delay)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
    store = open_store(db)
    try:
        assert store.integrity_check() == "ok"
        session = store.langgraph.session("busy")
        rows = store.langgraph.checkpoints_in_order(session)
        assert rows
        for row in rows:
            entry = store.entries.get(row.entry_seq)
            assert entry.data["data"]["checkpoint_id"] == row.checkpoint_id
            assert store.annotations.get_checkpoint(row.checkpoint_ref).entry_seq == row.entry_seq
        saver = ArborSaver(store)
        graph = chat_graph(saver, ["after the crash"] * 3)
        config = {"configurable": {"thread_id": "busy"}}
        before = [m.content for m in graph.get_state(config).values.get("messages", [])]
        graph.invoke(None, config)   # the step the kill interrupted, finished
        out = graph.invoke({"messages": [HumanMessage("still there?")]}, config)
        contents = [m.content for m in out["messages"]]
        assert contents[:len(before)] == before
        assert contents[-2:] == ["still there?", "after the crash"]
        # one answer per question, none lost, none twice
        assert [c for c in contents if c.startswith("busy question")] == \
            [f"busy question {n}" for n in range(sum(c.startswith("busy question")
                                                        for c in contents))]
        assert len(contents) % 2 == 0 and all(
            not c.startswith("busy question") for c in contents[1::2])
        branch = store.branches.current(session)
        replay = [m["content"] for m in branch.conversation_history]
        assert replay == [m.content for m in out["messages"]]
    finally:
        store.close()


def test_agents_in_several_processes_write_one_store_at_once(tmp_path):
    db = tmp_path / "agents.db"
    open_store(db).close()   # (made once, so the processes need not race to create it)
    agents = [_start("chat", str(db), f"worker-{n}", "15") for n in range(3)]
    try:
        for agent in agents:
            _out, err = agent.communicate(timeout=300)
            assert agent.returncode == 0, err.decode()
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
    store = open_store(db)
    try:
        assert store.integrity_check() == "ok"
        for n in range(3):
            session = store.langgraph.session(f"worker-{n}")
            branch = store.branches.current(session)
            contents = [m["content"] for m in branch.conversation_history]
            assert contents[0::2] == [f"worker-{n} question {t}" for t in range(15)]
            assert contents[1::2] == [f"answer {t}" for t in range(15)]
            entries = store.paths.entries(branch.head_seq)
            assert sum(e.type == MESSAGE for e in entries) == 30
            assert store.branches.count(session) == 1
    finally:
        store.close()
