"""Following running agents (core.importing.follow): what an agent appends is imported as it is
written, once, from the files' stored offsets; a torn line waits for its end."""

from __future__ import annotations

import builtins
import os
import threading
import time
from pathlib import Path

import pytest

from agent_writers import agent_home
from core import open_store
from core.importing.follow import Follower, Root
from core.importing import import_paths

DEADLINE = 30.0     # generous: the machine is shared; the speed is measured in bench/


def wait_until(condition, deadline: float = DEADLINE, step: float = 0.05) -> float:
    """Seconds until `condition()` held (raises after `deadline`)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > deadline:
            raise AssertionError("the condition did not hold in time")
        time.sleep(step)
    return time.monotonic() - started


def texts(store) -> list[str]:
    from core.model.entries import content_text

    out = []
    for session in store.sessions.list(include_archived=True):
        for entry in store.entries.of_session(session.id):
            if entry.message:
                out.append(content_text(entry.message.get("content")))
    return out


@pytest.fixture
def home(tmp_path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "s.db")
    yield s
    s.close()


class Running:
    """A follower in a thread, stopped at the end of the test."""

    def __init__(self, follower: Follower):
        self.follower = follower
        self.stop = threading.Event()
        self.thread = threading.Thread(target=follower.run, args=(self.stop,), daemon=True)

    def __enter__(self) -> Follower:
        self.thread.start()
        wait_until(lambda: self.follower.stats.mode in ("notify", "polling", "idle"))
        return self.follower

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def any_store(store_location):
    """A store on either backend: following works the same on PostgreSQL."""
    s = open_store(store_location)
    yield s
    s.close()


@pytest.mark.parametrize("poll", [False, True], ids=["notify", "polling"])
def test_appended_lines_of_every_agent_are_imported_once(any_store, home, poll, tmp_path):
    store = any_store
    writers = agent_home(home)
    for name, writer in writers.items():
        writer.start(f"{name} starts")
    import_paths(store, [w.path for w in writers.values()])
    with Running(Follower(store, home=home, poll=poll, poll_delay_ms=100)) as follower:
        assert follower.stats.mode == ("polling" if poll else "notify")
        for name, writer in writers.items():
            writer.append("assistant", f"{name} answers")
            wait_until(lambda: f"{name} answers" in texts(store))
        # a torn line (the agent is still writing it) waits for its end
        claude = writers["claude_code"]
        rest = claude.torn("user", "a line written in two parts", cut=40)
        time.sleep(1.0)
        assert "a line written in two parts" not in texts(store)
        claude.finish(rest)
        wait_until(lambda: "a line written in two parts" in texts(store))
    all_texts = texts(store)
    assert len(all_texts) == len(set(all_texts)) == 7
    # the same as importing the finished files afresh
    fresh = open_store(tmp_path / "fresh.db")
    import_paths(fresh, [w.path for w in writers.values()])
    assert sorted(texts(fresh)) == sorted(all_texts)
    fresh.close()


def test_a_new_file_in_a_followed_folder_is_imported(store, home):
    writers = agent_home(home)
    writers["pi"].start("the first pi session")
    import_paths(store, [writers["pi"].path])
    with Running(Follower(store, home=home)):
        from agent_writers import PiWriter

        other = PiWriter(writers["pi"].path.with_name("2026-12-01T10-00-00-000Z_dddd.jsonl"),
                         "dddddddd-4444-4444-8444-444444444444")
        other.start("a session started while following")
        wait_until(lambda: "a session started while following" in texts(store))


def test_files_never_imported_are_left_alone_until_they_change(store, home):
    writers = agent_home(home)
    for writer in writers.values():
        writer.start("old work, never imported")
    with Running(Follower(store, home=home)):
        time.sleep(1.0)
        assert store.sessions.list() == []
        writers["codex"].append("user", "the agent goes on")
        wait_until(lambda: "the agent goes on" in texts(store))
    assert len(store.sessions.list()) == 1


@pytest.mark.parametrize("where", ["pass", "file"])
def test_a_failed_pass_is_tried_again_though_the_file_changes_no_more(store, home,
                                                                       monkeypatch, where):
    """A pass that fails (here the store is busy: another process holds its write lock)
    leaves the line for later; the agent may write nothing more to wake the watcher.
    `pass`: the whole import raises; `file`: the file's own import fails (reported
    failed in the pass's report, which itself succeeds)."""
    import core.importing as importers
    from core.model.errors import StoreBusy
    from core.importing import driver

    writers = agent_home(home)
    writers["claude_code"].start("the first line")
    import_paths(store, [writers["claude_code"].path])
    failing = {"left": 2}
    owner, name = (importers, "import_paths") if where == "pass" else (driver, "_recorded")
    real = getattr(owner, name)

    def busy_twice(*args, **kwargs):
        if failing["left"]:
            failing["left"] -= 1
            raise StoreBusy("the store is busy")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, busy_twice)
    with Running(Follower(store, home=home)) as follower:
        writers["claude_code"].append("assistant", "written once, while the store was busy")
        wait_until(lambda: "written once, while the store was busy" in texts(store))
        # (the line is committed inside the pass; the pass clears its retry state after)
        wait_until(lambda: follower._retry_at is None and not follower._retry_files)
        assert follower.stats.failures == 2
        assert follower.stats.last_error.endswith("the store is busy")
    assert texts(store).count("written once, while the store was busy") == 1


def test_what_changed_while_nobody_followed_is_caught_up_at_start(store, home):
    writers = agent_home(home)
    writers["claude_code"].start("before")
    import_paths(store, [writers["claude_code"].path])
    writers["claude_code"].append("assistant", "while the app was closed")
    follower = Follower(store, home=home)
    follower.catch_up()
    assert "while the app was closed" in texts(store)


def test_checking_unchanged_files_opens_none_of_them(store, home, monkeypatch):
    writers = agent_home(home)
    for writer in writers.values():
        writer.start("imported once")
    import_paths(store, [w.path for w in writers.values()])
    follower = Follower(store, home=home)
    logs = {str(w.path) for w in writers.values()}
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *args, **kwargs):
        if str(file) in logs:
            opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(file, *args, **kwargs):
        if str(file) in logs:
            opened.append(str(file))
        return real_os_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    assert follower.catch_up() is None                 # nothing to import: the importer not called
    assert opened == []
    writers["pi"].append("user", "one more")
    report = follower.catch_up()                       # the changed one alone is read
    assert [Path(f.path).name for f in report.files] == [writers["pi"].path.name]
    assert opened == [str(writers["pi"].path)] * len(opened) and opened


def test_the_store_and_unknown_files_are_not_imported(store, home, tmp_path):
    follower = Follower(store, home=home)
    store_path = Path(store.path)
    changed = [store_path, store_path.with_name(store_path.name + "-wal"),
               tmp_path / "notes.txt", tmp_path / "other.db-wal", tmp_path / "x.jsonl"]
    assert follower.relevant(changed) == [tmp_path / "x.jsonl"]


def test_roots_agents_folders_deep_imported_folders_by_size(store, home, tmp_path):
    writers = agent_home(home)
    writers["pi"].start("x")
    small = tmp_path / "small"
    (small / "s1" / "subagents").mkdir(parents=True)
    big = tmp_path / "big"
    for i in range(70):
        (big / f"d{i}").mkdir(parents=True)
    from agent_writers import ClaudeWriter

    for folder in (small, big):
        w = ClaudeWriter(folder / "eeeeeeee-5555-4555-8555-555555555555.jsonl",
                         "eeeeeeee-5555-4555-8555-555555555555" if folder is small else
                         "ffffffff-6666-4666-8666-666666666666")
        w.start("imported from elsewhere")
        import_paths(store, [w.path])
    import_paths(store, [writers["pi"].path])
    roots = Follower(store, home=home).roots()
    assert Root(home / ".pi" / "agent" / "sessions", True) in roots
    assert Root(small, True) in roots and Root(big, False) in roots
    assert not any(r.path == writers["pi"].path.parent for r in roots)   # inside an agent folder


# ------------------------------------------------- agent folders made after following began
@pytest.mark.parametrize("poll", [False, True], ids=["notify", "polling"])
@pytest.mark.parametrize("made", ["sessions folder", "agent folder"])
def test_an_agents_folder_made_after_following_began_is_followed(store, home, poll, made):
    """pi installed (or first run) while the app is open: ~/.pi/agent/sessions (or all of
    ~/.pi) did not exist when following began. Its first session is written in one go
    (pi writes nothing until the first answer, then every line so far) and may get no
    further line: it is imported all the same, and what is appended later too."""
    (home / ".claude" / "projects").mkdir(parents=True)
    if made == "sessions folder":
        (home / ".pi" / "agent").mkdir(parents=True)
    with Running(Follower(store, home=home, poll=poll, poll_delay_ms=100)):
        writers = agent_home(home)        # makes the pi session's folders, as pi does
        writers["pi"].start("the first pi session, written in one go")
        wait_until(lambda: "the first pi session, written in one go" in texts(store))
        writers["pi"].append("assistant", "pi goes on")
        wait_until(lambda: "pi goes on" in texts(store))
    assert texts(store).count("the first pi session, written in one go") == 1


def test_a_new_project_folder_in_a_followed_folder_is_imported(store, home):
    """A new folder inside an agent's folder (pi's per-project folder, a Claude Code
    project): a file written there at once, before the watcher saw the folder, is
    imported without waiting for another line."""
    writers = agent_home(home)
    writers["pi"].start("an older session")
    import_paths(store, [writers["pi"].path])
    with Running(Follower(store, home=home)):
        from agent_writers import PiWriter

        for n in range(3):
            other = PiWriter(home / ".pi" / "agent" / "sessions" / f"--work-new{n}--" /
                             f"2026-12-01T10-00-0{n}-000Z_dddd.jsonl",
                             f"dddddddd-4444-4444-8444-44444444444{n}")
            other.start(f"a session in a new project folder {n}")
        for n in range(3):
            wait_until(lambda: f"a session in a new project folder {n}" in texts(store))
