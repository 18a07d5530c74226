"""Resuming a branch again, and what the written session is called.

The report: `arbor resume --print` wrote a new session file at every call, and Claude Code's
picker listed identical copies, all named after the session ("<name> (branch)"), none after
the branch. Now the same unchanged branch reuses the file arbor wrote for it (while the file
is as written), `--dry-run` writes nothing, and the title names the branch by its label or
name, written as each agent names a session (Claude Code's custom-title, pi's session_info,
Codex's session index)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from agent_logs import NOW, claude_session, codex_session, fixed_ids, pi_session
from core import open_store
from core.actions import operations
from core.agents import prepare_resume
from core.agents.reuse import KEY
from core.importing import import_paths

REPO = Path(__file__).resolve().parent.parent
CWD = "/srv/work tree/ünï"


@pytest.fixture
def env(tmp_path):
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
            "CODEX_HOME": str(tmp_path / "codex"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
            "PATH": "", "TZ": "UTC"}


_opened = []


@pytest.fixture(autouse=True)
def _close_stores():
    """Each store `stored` opened is closed after its test (a PostgreSQL store left open
    keeps its connection pool until the interpreter ends)."""
    yield
    while _opened:
        _opened.pop().close()


def stored(tmp_path, env, agent: str, location=None):
    """A store holding one session of `agent`, and the session and its current branch."""
    store = open_store(location or tmp_path / "arbor.db")
    _opened.append(store)
    log = {"pi": pi_session, "claude": claude_session, "codex": codex_session}[agent](CWD)
    folder = Path(env["CODEX_HOME"]) if agent == "codex" else tmp_path / "source"
    import_paths(store, [log.write(folder)])
    session = store.sessions.by_uid(log.session_id)
    return store, session, store.branches.current(session.id)


def at_entry(store, branch, agent):
    """The branch's head for pi and Claude Code; for Codex a message before it (a Codex
    branch that ends where its rollout ends is resumed without writing anything)."""
    if agent != "codex":
        return None
    return [e for e in store.paths.entries(branch.head_seq) if e.type == "message"][4].seq


def resume(store, session, branch, env, **options):
    options.setdefault("ids", fixed_ids())
    return prepare_resume(store, session, branch, env=env, now=NOW, **options)


def written(env) -> list[Path]:
    return sorted(p for key in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR")
                  for p in Path(env[key]).rglob("*.jsonl") if p.name != "session_index.jsonl"
                  and "source" not in p.parts)


AGENTS = ["pi", "claude", "codex"]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_same_unchanged_branch_reuses_the_file_written_for_it(tmp_path, env, agent,
                                                                   store_location):
    store, session, branch = stored(tmp_path, env, agent, store_location)
    before = written(env)
    at = at_entry(store, branch, agent)
    first = resume(store, session, branch, env, at_seq=at)
    assert not first.reused and first.file.is_file()
    content = first.file.read_bytes()
    # new ids each time (as a real run has): only the record can tell it is the same branch
    second = resume(store, session, branch, env, at_seq=at,
                    ids=fixed_ids(500))
    assert second.reused
    assert (second.file, second.native_id, second.argv) == (first.file, first.native_id, first.argv)
    assert second.file.read_bytes() == content
    assert len(written(env)) == len(before) + 1
    assert "resumed, not copied" in second.summary


# What each agent appended to a resumed session when started and quit at once (seen with
# Claude Code 2.1.197, pi 0.73.1 and Codex 0.171.0): its own state, not the conversation.
STARTED_AND_QUIT = {
    "claude": [{"type": "mode", "mode": "normal", "sessionId": "s"},
               {"type": "permission-mode", "permissionMode": "default", "sessionId": "s"}],
    "pi": [{"type": "thinking_level_change", "id": "c566bb43", "parentId": "p",
            "timestamp": "2026-12-06T21:02:18.299Z", "thinkingLevel": "off"}],
    "codex": [{"timestamp": "2026-12-06T21:02:46.400Z", "type": "event_msg",
               "payload": {"type": "thread_settings_applied", "thread_id": "t",
                           "thread_settings": {"model": "gpt-5.1-codex"}}}]}
# What each agent appends when a prompt is typed (a line of the conversation).
CARRIED_ON = {
    "claude": {"parentUuid": "p", "isSidechain": False, "type": "user", "uuid": "u",
               "sessionId": "s", "message": {"role": "user", "content": "go on"}},
    "pi": {"type": "message", "id": "fa4e0001", "parentId": "p",
           "timestamp": "2026-11-29T12:30:00.000Z", "message": {"role": "user", "content": "go on"}},
    "codex": {"timestamp": "2026-11-29T12:30:00.000Z", "type": "event_msg",
              "payload": {"type": "user_message", "message": "go on"}}}


def chained(path: Path, lines: list[dict]) -> list[dict]:
    """`lines` with their parents set as the agent sets them: after the file's last entry
    (pi: `parentId`, each after the one before) or its last message line (Claude Code)."""
    written = [json.loads(row) for row in path.read_text(encoding="utf-8").splitlines()]
    out = []
    if "parentId" in lines[0]:
        parent = written[-1]["id"]
        for line in lines:
            out.append({**line, "parentId": parent})
            parent = line["id"]
    else:
        parent = [row for row in written if "uuid" in row][-1]["uuid"]
        out = [{**line, "parentUuid": parent} if "parentUuid" in line else line for line in lines]
    return out


def append(path: Path, lines: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_the_agent_only_opened_is_reused(tmp_path, env, agent):
    """Each agent writes its own state as it starts or quits: the conversation in the file
    is still the branch, so `o`, quit, `o` again opens the same session."""
    store, session, branch = stored(tmp_path, env, agent)
    at = at_entry(store, branch, agent)
    first = resume(store, session, branch, env, at_seq=at)
    append(first.file, STARTED_AND_QUIT[agent])
    again = resume(store, session, branch, env, at_seq=at, ids=fixed_ids(700))
    assert again.reused and again.file == first.file
    # a torn last line (the agent is writing) or a line that is not JSON: not the same file
    with open(first.file, "a", encoding="utf-8") as handle:
        handle.write('{"type": "mo')
    assert not resume(store, session, branch, env, at_seq=at, ids=fixed_ids(800)).reused


@pytest.mark.parametrize("agent", AGENTS)
def test_a_file_the_agent_carried_on_is_not_reused(tmp_path, env, agent):
    store, session, branch = stored(tmp_path, env, agent)
    at = at_entry(store, branch, agent)
    first = resume(store, session, branch, env, at_seq=at)
    append(first.file, STARTED_AND_QUIT[agent] + [CARRIED_ON[agent]])
    again = resume(store, session, branch, env, at_seq=at, ids=fixed_ids(700))
    assert not again.reused and again.file != first.file and again.native_id != first.native_id
    assert "go on" not in again.file.read_text()
    # and that one is reused from now on
    third = resume(store, session, branch, env, at_seq=at, ids=fixed_ids(900))
    assert third.reused and third.file == again.file


def test_a_file_changed_in_what_arbor_wrote_is_not_reused(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "claude")
    first = resume(store, session, branch, env)
    data = first.file.read_bytes()
    first.file.write_bytes(data.replace(b"Flaky", b"Fixed") + b"\n".join(
        json.dumps(line).encode() for line in STARTED_AND_QUIT["claude"]) + b"\n")
    assert not resume(store, session, branch, env, ids=fixed_ids(700)).reused


def test_a_changed_branch_or_another_point_gets_its_own_file(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "claude")
    first = resume(store, session, branch, env)
    # a label on the branch renames the session: a new file, called by the label
    operations.set_branch_label(store, branch.id, "retry with a fake clock")
    labelled = resume(store, session, branch, env, ids=fixed_ids(300))
    assert not labelled.reused and labelled.file != first.file
    assert json.loads(labelled.file.read_text().splitlines()[-1])["customTitle"] == \
        "Flaky parser test · retry with a fake clock"
    # a message added to the branch: a new head, a new file
    store.entries.append_messages(branch.id, [{"role": "user", "content": "and one more thing"}])
    grown = store.branches.get(branch.id)
    longer = resume(store, session, grown, env, ids=fixed_ids(400))
    assert not longer.reused and "and one more thing" in longer.file.read_text()
    # a point inside the branch: a file of its own, reused in turn
    middle = [e for e in store.paths.entries(grown.head_seq) if e.type == "message"][2]
    inside = resume(store, session, grown, env, at_seq=middle.seq,
                    ids=fixed_ids(600))
    assert not inside.reused
    assert resume(store, session, grown, env, at_seq=middle.seq,
                  ids=fixed_ids(800)).file == inside.file
    # and the whole grown branch again: the file written for it
    assert resume(store, session, grown, env, ids=fixed_ids(850)).file \
        == longer.file


def test_records_are_kept_to_the_newest_few(tmp_path, env, store_location, monkeypatch):
    from core.agents import reuse

    monkeypatch.setattr(reuse, "KEEP", 3)
    store, session, branch = stored(tmp_path, env, "pi", store_location)
    entries = [e for e in store.paths.entries(branch.head_seq) if e.type == "message"]
    assert len(entries) > reuse.KEEP
    plans = []
    for n, entry in enumerate(entries):
        when = NOW.replace(minute=n)          # one minute apart: the oldest is known
        plans.append(prepare_resume(store, session, branch, env=env, now=when, at_seq=entry.seq,
                                    ids=fixed_ids(1000 * (n + 1))))
    records = store.sessions.metadata(session.id)[KEY]
    assert sorted(r["id"] for r in records.values()) == sorted(p.native_id for p in plans[-reuse.KEEP:])
    # the newest are still reused, the oldest written again
    assert prepare_resume(store, session, branch, env=env, now=NOW, at_seq=entries[-1].seq,
                          ids=fixed_ids(90000)).reused
    assert not prepare_resume(store, session, branch, env=env, now=NOW, at_seq=entries[0].seq,
                              ids=fixed_ids(95000)).reused


def test_a_store_that_cannot_take_the_record_still_resumes(tmp_path, env, monkeypatch):
    store, session, branch = stored(tmp_path, env, "claude")

    def refuse(*args, **kwargs):
        import sqlite3
        raise sqlite3.OperationalError("attempt to write a readonly database")
    monkeypatch.setattr(store.sessions, "set_metadata", refuse)
    plan = resume(store, session, branch, env)
    assert plan.file.is_file() and not plan.reused
    assert KEY not in store.sessions.metadata(session.id)


# -------------------------------------------------------------------- titles
def test_the_title_names_the_branch_by_its_label_else_its_name(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "pi")
    plan = resume(store, session, branch, env)
    info = json.loads(plan.file.read_text().splitlines()[-1])
    assert info["type"] == "session_info"
    assert info["name"] == "Rename the config module · Wait, list the tests first."
    operations.set_branch_label(store, branch.id, "the careful way")
    plan = resume(store, session, branch, env, ids=fixed_ids(50))
    assert json.loads(plan.file.read_text().splitlines()[-1])["name"] == \
        "Rename the config module · the careful way"


def test_a_hostile_name_makes_a_clean_one_line_title(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "claude")
    store.sessions.rename(session.id, "evil\x1b]52;c;cGF5bG9hZA==\x07 name\nsecond line\u202e")
    session = store.sessions.get(session.id)
    operations.rename_branch(store, branch.id, "x" * 300)
    branch = store.branches.get(branch.id)
    plan = resume(store, session, branch, env)
    title = json.loads(plan.file.read_text().splitlines()[-1])["customTitle"]
    assert all(ord(c) >= 0x20 and c != "\x7f" and c != "\u202e" for c in title)
    assert title.startswith("evil ]52;c;cGF5bG9hZA== name second line · xxx")
    assert len(title) == 120 and title.endswith("…")


# ------------------------------------------------------------- the command
def arbor(env, db, *args):
    import os
    full = {**os.environ, **env, "PATH": os.environ["PATH"], "ARBOR_DB": str(db)}
    return subprocess.run([sys.executable, "-m", "tui", "resume", *args], capture_output=True,
                          text=True, cwd=str(REPO), env=full, timeout=60)


def test_print_twice_gives_the_same_session_and_writes_once(tmp_path, env):
    store, session, _ = stored(tmp_path, env, "claude")
    store.close()
    first = arbor(env, tmp_path / "arbor.db", session.uid, "--print")
    second = arbor(env, tmp_path / "arbor.db", session.uid, "--print")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout == second.stdout
    assert len(written(env)) == 1
    assert "Wrote the branch as a new Claude Code session" in first.stderr
    assert 'titled "Flaky parser test · Instead, run the test 50 times first."' in first.stderr
    assert "resumed, not copied" in second.stderr
    new_id = shlex.split(first.stdout)[-1]
    assert written(env)[0].name == f"{new_id}.jsonl"


def test_dry_run_writes_and_changes_nothing(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "pi")
    metadata = store.sessions.metadata(session.id)
    store.close()
    done = arbor(env, tmp_path / "arbor.db", session.uid, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert written(env) == [] and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith('arbor: Would write the branch as a new pi session titled '
                               '"Rename the config module · Wait, list the tests first." in ')
    assert lines[0].endswith("(nothing was written).")
    assert lines[1].startswith("arbor: would run: cd ") and " && pi --session " in lines[1]
    assert "pi is not on PATH here" in done.stderr            # PATH has no pi
    again = open_store(tmp_path / "arbor.db")
    assert again.sessions.metadata(session.id) == metadata
    again.close()
    # once written, a dry run says the session would be resumed as it is
    assert arbor(env, tmp_path / "arbor.db", session.uid, "--print").returncode == 0
    done = arbor(env, tmp_path / "arbor.db", session.uid, "--dry-run")
    assert "resumed, not copied" in done.stderr and len(written(env)) == 1
    # --print and --dry-run together make no sense
    assert arbor(env, tmp_path / "arbor.db", session.uid, "--print", "--dry-run").returncode == 2


def test_dry_run_on_a_session_arbor_owns_changes_no_branch(tmp_path, env):
    from core.demo import build_demo

    db = build_demo(tmp_path / "demo.db")
    store = open_store(db)
    session = next(s for s in store.sessions.list() if s.source == "arbor")
    current = store.branches.current(session.id).id
    first = store.paths.entries(store.branches.current(session.id).head_seq)[0]
    branches = len(store.branches.of_session(session.id))
    store.close()
    done = arbor(env, db, session.uid, "--entry", first.id, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "Would make" in done.stderr and "nothing was changed" in done.stderr
    store = open_store(db)
    assert store.branches.current(session.id).id == current
    assert len(store.branches.of_session(session.id)) == branches
    store.close()


# ------------------------------------------- the session arbor wrote, resumed itself
@pytest.mark.parametrize("agent", ["pi", "claude"])
def test_the_session_arbor_wrote_is_carried_on_in_place(tmp_path, env, agent):
    """Back from the agent, the app shows the session arbor wrote (imported). Resuming its
    branch again runs the agent on that same file, whether the agent only opened it or
    carried it on: no copy of a copy ("… · Instead, … · main")."""
    store, session, branch = stored(tmp_path, env, agent)
    first = resume(store, session, branch, env)
    append(first.file, chained(first.file, STARTED_AND_QUIT[agent]))
    import_paths(store, [first.file])
    written_session = store.sessions.by_uid(first.native_id)
    again = resume(store, written_session, None, env, ids=fixed_ids(700))
    assert again.file is None and "nothing to write" in again.summary
    assert again.argv == first.argv and again.native_id == first.native_id
    # the agent carried it on: resuming where it stopped is that file still
    append(first.file, chained(first.file, [CARRIED_ON[agent]]))
    import_paths(store, [first.file])
    assert resume(store, written_session, None, env, ids=fixed_ids(800)).argv == first.argv
    assert len(written(env)) == 1
    # an earlier point of it is a new session, as for any other
    middle = [e for e in store.paths.entries(store.branches.current(
        written_session.id).head_seq) if e.type == "message"][2]
    inside = resume(store, written_session, None, env, at_seq=middle.seq, ids=fixed_ids(900))
    assert inside.file is not None and inside.file != first.file


def test_the_agents_own_session_is_forked_not_carried_on_in_place(tmp_path, env):
    """A session the agent wrote itself is forked even when the branch ends where its file
    ends (Codex apart, whose rollout is linear): its own file is the user's, not arbor's."""
    from core.agents.claude_code.writer import transcript_dir

    store = open_store(tmp_path / "arbor.db")
    log = claude_session(CWD)
    own = log.write(transcript_dir(CWD, env))            # where Claude Code keeps it
    import_paths(store, [own])
    session = store.sessions.by_uid(log.session_id)
    plan = resume(store, session, None, env)
    assert plan.file is not None and plan.native_id != log.session_id


def test_labels_set_in_arbor_on_the_written_pi_session_are_written_anew(tmp_path, env):
    store, session, branch = stored(tmp_path, env, "pi")
    first = resume(store, session, branch, env)
    import_paths(store, [first.file])
    written_session = store.sessions.by_uid(first.native_id)
    head = store.branches.current(written_session.id).head_seq
    message = [e for e in store.paths.entries(head) if e.type == "message"][1]
    operations.set_label(store, message.seq, "set in arbor")
    again = resume(store, written_session, None, env, ids=fixed_ids(700))
    assert again.file is not None and again.file != first.file
    assert any(line.get("label") == "set in arbor" for line in
               (json.loads(row) for row in again.file.read_text().splitlines()))


def test_a_pi_entry_off_the_branch_at_the_end_means_a_new_session(tmp_path, env):
    """pi resumes at the file's last entry: one that does not chain back to the branch's
    head (another branch's) would land pi elsewhere, so the branch is written anew."""
    store, session, branch = stored(tmp_path, env, "pi")
    first = resume(store, session, branch, env)
    import_paths(store, [first.file])
    written_session = store.sessions.by_uid(first.native_id)
    rows = [json.loads(row) for row in first.file.read_text().splitlines()]
    append(first.file, [{**STARTED_AND_QUIT["pi"][0], "parentId": rows[2]["id"]}])
    again = resume(store, written_session, None, env, ids=fixed_ids(700))
    assert again.file is not None and again.file != first.file
