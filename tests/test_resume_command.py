"""`arbor resume`: fake `pi`, `claude` and `codex` executables on PATH record how they were
started (argv and working directory); --print runs nothing; missing executables, missing
directories and sessions no agent can resume each get one clear sentence."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import fake_agent
from agent_logs import claude_session, codex_session, pi_session
from core import open_store
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
@pytest.fixture
def world(tmp_path):
    """A store with one session of each agent, in working directories that exist (one with
    spaces and non-ASCII), fake agents on PATH, and the agents' homes under tmp_path."""
    project = tmp_path / "my projects" / "café ✓"
    project.mkdir(parents=True)
    bin_dir = fake_agent.install(tmp_path / "bin")
    env = {**os.environ, "HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin",
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex"),
           "PI_CODING_AGENT_DIR": str(tmp_path / "pi"), "FAKE_AGENT_LOG": str(tmp_path / "calls.jsonl"),
           "ARBOR_DB": str(tmp_path / "arbor.db")}
    env.pop("PWD", None)
    store = open_store(tmp_path / "arbor.db")
    claude = claude_session(str(project))
    codex = codex_session(str(project))
    pi = pi_session(str(project))
    import_paths(store, [claude.write(tmp_path / "logs"), codex.write(tmp_path / "codex"),
                         pi.write(tmp_path / "logs")])
    store.close()
    return {"env": env, "project": project, "tmp": tmp_path, "claude": claude.session_id,
            "codex": codex.session_id, "pi": pi.session_id}


def arbor(world, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", "resume", *args], capture_output=True,
                          text=True, cwd=str(REPO), env=env or world["env"], timeout=60)


def calls(world) -> list[dict]:
    log = world["tmp"] / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_claude_is_started_from_the_sessions_directory(world):
    done = arbor(world, world["claude"][:8])
    assert done.returncode == 0, done.stderr
    [call] = calls(world)
    assert call["name"] == "claude" and call["argv"][0] == "--resume"
    new_id = call["argv"][1]
    assert call["cwd"] == call["pwd"] == str(world["project"])
    assert list((world["tmp"] / "claude" / "projects").rglob(f"{new_id}.jsonl"))
    assert "Wrote the branch as a new Claude Code session" in done.stderr
    assert "Traceback" not in done.stderr


def test_pi_and_codex_are_started_with_their_own_commands(world):
    assert arbor(world, world["pi"]).returncode == 0
    assert arbor(world, world["codex"]).returncode == 0
    pi_call, codex_call = calls(world)
    assert pi_call["name"] == "pi" and pi_call["argv"][0] == "--session"
    assert Path(pi_call["argv"][1]).is_file()
    assert Path(pi_call["argv"][1]).parent.parent == world["tmp"] / "pi" / "sessions"
    # the Codex branch ends where its rollout ends: the rollout itself is resumed
    assert codex_call == {"name": "codex", "argv": ["resume", world["codex"]],
                          "cwd": str(world["project"]), "pwd": str(world["project"])}


def test_the_agents_exit_status_is_arbors(world):
    env = {**world["env"], "FAKE_AGENT_EXIT": "3"}
    assert arbor(world, world["codex"], env=env).returncode == 3


def test_print_writes_the_file_and_prints_the_command_running_nothing(world):
    done = arbor(world, world["claude"], "--print")
    assert done.returncode == 0, done.stderr
    assert calls(world) == []
    words = shlex.split(done.stdout)
    assert words[:3] == ["cd", str(world["project"]), "&&"]
    assert words[3:5] == ["claude", "--resume"]
    assert list((world["tmp"] / "claude").rglob(f"{words[5]}.jsonl"))
    # the printed line runs as it is in a shell
    subprocess.run(["sh", "-c", done.stdout], env=world["env"], check=True)
    assert calls(world)[0]["argv"] == ["--resume", words[5]]
    assert calls(world)[0]["cwd"] == str(world["project"])


def test_a_branch_and_an_entry_can_be_chosen(world):
    store = open_store(world["tmp"] / "arbor.db")
    session = store.sessions.by_uid(world["claude"])
    main = next(b for b in store.branches.of_session(session.id) if b.name == "main")
    entry = [e for e in store.paths.entries(main.head_seq) if e.type == "message"][2]
    store.close()
    done = arbor(world, world["claude"], "--branch", "main", "--entry", entry.id[:10], "--print")
    assert done.returncode == 0, done.stderr
    new_id = shlex.split(done.stdout)[-1]
    [written] = (world["tmp"] / "claude").rglob(f"{new_id}.jsonl")
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    assert lines[-2]["forkedFrom"]["messageUuid"] == entry.id
    done = arbor(world, world["claude"], "--branch", str(main.id), "--entry", "nope", "--print")
    assert done.returncode == 1 and "has no entry 'nope'" in done.stderr


def test_an_agent_that_is_not_installed_is_named_with_the_command_to_run(world):
    env = {**world["env"], "PATH": "/usr/bin:/bin"}
    done = arbor(world, world["pi"], env=env)
    assert done.returncode == 127
    assert "pi is not on PATH" in done.stderr
    words = shlex.split(done.stdout)
    assert words[:3] == ["cd", str(world["project"]), "&&"] and words[3:5] == ["pi", "--session"]
    assert Path(words[5]).is_file()          # the file is written: the command works later
    assert calls(world) == []


def test_a_working_directory_that_is_gone(world):
    (world["project"]).rename(world["tmp"] / "moved")
    done = arbor(world, world["codex"])
    assert done.returncode == 1
    assert "does not exist here" in done.stderr and "codex resume" in done.stdout
    assert calls(world) == []


def test_sessions_that_cannot_be_resumed_get_one_sentence(world, tmp_path):
    store = open_store(world["tmp"] / "arbor.db")
    graph = store.sessions.create("graph", source="langgraph", cwd="/x")
    branch = store.branches.create(graph.id, name="main", is_current=True)
    store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": "hi"}})
    empty = store.sessions.create("empty one", source="pi", cwd="/x")
    store.branches.create(empty.id, name="main", is_current=True)
    store.close()
    for ref, words in (("graph", "LangGraph threads have no agent command"),
                       ("empty one", "has no entries"),
                       ("no-such-session", "no session with uid")):
        done = arbor(world, ref)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and lines[0].startswith("arbor: ")


def test_a_store_that_cannot_be_opened(world, tmp_path):
    done = arbor(world, "x", "--db", str(tmp_path / "missing" / "no.db"))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_ctrl_c_is_the_agents_to_handle(world):
    """Ctrl-C in the terminal reaches the whole foreground process group: arbor and the agent.
    The agent decides (the agents stop a turn, or quit after saving); arbor waits for it,
    neither dying nor killing it, and reports its status. Before, Python's subprocess killed
    the agent 0.25 s after the first Ctrl-C, before it wrote its last lines."""
    env = {**world["env"], "FAKE_AGENT_SIGINT": "1", "FAKE_AGENT_APPEND": "1",
           "FAKE_AGENT_EXIT": "130"}
    done = subprocess.run([sys.executable, "-m", "tui", "resume", world["pi"]], capture_output=True,
                          text=True, cwd=str(REPO), env=env, timeout=60, start_new_session=True)
    assert done.returncode == 130, done.stderr
    assert "interrupted" not in done.stderr and "Traceback" not in done.stderr
    [call] = calls(world)
    lines = Path(call["argv"][1]).read_text().splitlines()
    assert "Carried on in the agent" in lines[-2]       # the agent finished and wrote


def test_an_agent_ended_by_a_signal_is_reported_as_a_shell_does(world):
    env = {**world["env"], "FAKE_AGENT_EXIT": "-15"}
    done = arbor(world, world["codex"], env=env)
    assert done.returncode == 128 + 15, done.stderr
