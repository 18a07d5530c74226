"""`arbor watch` and `arbor import` on a PostgreSQL store whose server goes away (stopped as
a crash looks, `pg_ctl -m immediate`) and comes back on the same port, or takes
connections and never answers. As the issue found them: an idle watch died with a psycopg
traceback and exit 0, a busy one printed 47 lines of the pool's warnings, an import of 12
files went on for 273 s (30 s a file) and exited 0, and Ctrl-C did not stop a watch within
15 s. Now: one sentence naming the server, once; the watch follows on and catches up
(nothing lost, nothing twice); the import stops at once with exit 2 and the next one goes
on; Ctrl-C stops either within a second, even while a connection attempt hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agent_writers import agent_home
from core import open_store
from core.importing import import_paths
from pg_server import BlackHole
from test_watch_command import _contents

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import claude_tree  # noqa: E402

NOISE = ("Traceback", "error connecting", "Exception in thread", "discarding", "Warning",
         "OperationalError", "PoolTimeout")


def _followed_home(tmp_path: Path, url: str) -> tuple[Path, dict]:
    """A home whose agents each wrote a first line, imported into the store `url`."""
    home = tmp_path / "home"
    writers = agent_home(home)
    for name, writer in writers.items():
        writer.start(f"{name} starts")
    store = open_store(url)
    import_paths(store, [w.path for w in writers.values()])
    store.close()
    return home, writers


def _arbor(*args: str, home: Path) -> subprocess.Popen:
    """`arbor ARGS` with Ctrl-C (SIGINT) as a terminal delivers it (a background process
    of a shell would ignore it)."""
    return subprocess.Popen([sys.executable, "-m", "tui", *args], cwd=REPO,
                            env=dict(os.environ, HOME=str(home)), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


class _Lines:
    """The stderr lines of a running process, read in a thread as they come."""

    def __init__(self, process: subprocess.Popen):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, words: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines if words in line]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"no line with {words!r} in {timeout} s: {self.lines}")

    def done(self) -> str:
        self._thread.join(30)
        return "\n".join(self.lines)


def _imported_files(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM import_sources").fetchone()[0]


# ----------------------------------------------------------------------------- import
def test_an_import_stops_at_the_first_unreachable_error_and_the_next_one_goes_on(
        tcp_server, tmp_path):
    home = tmp_path / "home"
    claude_tree.generate(home, mb=12, files=12, seed=5)
    url = tcp_server.new_store_url()
    open_store(url).close()
    process = _arbor("import", "-q", "--discover", "--db", url, home=home)
    deadline = time.monotonic() + 120
    while _imported_files(url) < 1:                   # a file in: the import is under way
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    tcp_server.crash()
    crashed = time.monotonic()
    _out, err = process.communicate(timeout=120)
    took = time.monotonic() - crashed
    assert process.returncode == 2, err
    assert took < 5, f"went on for {took:.1f} s after the crash"   # (was 273 s, 30 s a file)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"PostgreSQL at 127.0.0.1:{tcp_server.port}, database arbor_test" in lines[0]
    assert "stopped" in lines[0] and "run it again to go on from there" in lines[0]
    assert not any(word in err for word in NOISE), err
    tcp_server.start_again()
    again = _arbor("import", "-q", "--discover", "--db", url, home=home)
    _out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    fresh = tcp_server.new_store_url("fresh")
    whole = _arbor("import", "-q", "--discover", "--db", fresh, home=home)
    assert whole.communicate(timeout=300) and whole.returncode == 0
    assert _contents(url) == _contents(fresh)            # nothing lost, nothing twice
    assert len(_contents(url)) >= 10


def test_ctrl_c_stops_an_import_within_a_second_while_a_connection_attempt_hangs(
        tcp_server, tmp_path):
    home = tmp_path / "home"
    claude_tree.generate(home, mb=1, files=3, seed=5)
    url = tcp_server.new_store_url()
    open_store(url).close()
    tcp_server.crash()
    with BlackHole(tcp_server.port):      # connecting waits for an answer that never comes
        process = _arbor("import", "-q", "--discover", "--db", url, home=home)
        time.sleep(2)
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        _out, err = process.communicate(timeout=60)
        took = time.monotonic() - stopped
    assert took < 1, f"Ctrl-C took {took:.2f} s"
    assert process.returncode == 130, err
    assert "arbor import: interrupted" in err and "Traceback" not in err


# ------------------------------------------------------------------------------ watch
@pytest.mark.parametrize("work", ["idle", "writing"])
def test_watch_follows_through_an_outage_and_catches_up(tcp_server, tmp_path, work):
    """idle: agents write only while the server is down; writing: they write all along
    (before, during and after the outage)."""
    url = tcp_server.new_store_url()
    home, writers = _followed_home(tmp_path, url)
    written = [0]
    stop_writing = threading.Event()

    def write(count: int | None = None) -> None:
        n = 0
        while (count is None and not stop_writing.is_set()) or (count is not None and n < count):
            for name, writer in writers.items():
                writer.append("assistant" if written[0] % 2 else "user",
                              f"{name} line {written[0]}")
            written[0] += 1
            n += 1
            time.sleep(0.05)

    watcher = _arbor("watch", "--db", url, home=home)
    said = _Lines(watcher)
    try:
        said.wait_for("following")
        writing = None
        if work == "writing":
            writing = threading.Thread(target=write)
            writing.start()
            time.sleep(1)
        tcp_server.crash()
        if work == "idle":
            write(5)
        outage = said.wait_for("PostgreSQL at 127.0.0.1", timeout=30)
        time.sleep(4)                                   # (a few tries meanwhile: said once)
        tcp_server.start_again()
        said.wait_for("answers again", timeout=30)
        if writing is not None:
            time.sleep(1)
            stop_writing.set()
            writing.join(30)
        expected = written[0] + 1

        def complete() -> bool:
            return all(count == expected for _ids, count, _u in _contents(url).values())

        deadline = time.monotonic() + 60
        while not complete():
            assert time.monotonic() < deadline, (expected, _contents(url), said.lines)
            time.sleep(0.2)
        watcher.send_signal(signal.SIGTERM)
        assert watcher.wait(20) == 0
    finally:
        stop_writing.set()
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait(10)
    err = said.done()
    assert f"PostgreSQL at 127.0.0.1:{tcp_server.port}, database arbor_test" in outage
    assert sum("PostgreSQL at" in line for line in said.lines) == 1, err   # once
    assert not any(word in err for word in NOISE), err
    fresh = tcp_server.new_store_url("fresh")
    store = open_store(fresh)
    import_paths(store, [w.path for w in writers.values()])
    store.close()
    assert _contents(url) == _contents(fresh)            # nothing lost, nothing twice


def test_ctrl_c_stops_watch_within_a_second_while_a_connection_attempt_hangs(
        tcp_server, tmp_path):
    url = tcp_server.new_store_url()
    home, writers = _followed_home(tmp_path, url)
    watcher = _arbor("watch", "--db", url, home=home)
    said = _Lines(watcher)
    try:
        said.wait_for("following")
        tcp_server.crash()
        with BlackHole(tcp_server.port):
            writers["claude_code"].append("user", "written while the server hangs")
            time.sleep(1.5)          # the import it starts waits for the connection
            watcher.send_signal(signal.SIGINT)
            stopped = time.monotonic()
            code = watcher.wait(30)
            took = time.monotonic() - stopped
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait(10)
    err = said.done()
    assert took < 1, f"Ctrl-C took {took:.2f} s: {err}"
    assert code == 0 and "arbor watch: stopped" in err
    assert not any(word in err for word in NOISE), err


def test_any_command_whose_store_stops_answering_says_so_in_one_sentence(monkeypatch, capsys):
    """A server that goes away while a command other than watch and import runs (list,
    usage, export, push): one sentence and exit 2, not a traceback."""
    from core.model.errors import StoreUnreachable
    from tui import cli
    from tui.commands import list_sessions

    def gone(_args):
        raise StoreUnreachable("lost the connection to PostgreSQL at db.example.com:5432, "
                               "database agents: server closed the connection unexpectedly")

    monkeypatch.setattr(list_sessions, "run", gone)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err == ("arbor list: lost the connection to PostgreSQL at db.example.com:5432, "
                   "database agents: server closed the connection unexpectedly\n")
