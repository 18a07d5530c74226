"""A PostgreSQL server that goes away under an open store (stopped as a crash or a cut
network looks: `pg_ctl -m immediate`) and comes back on the same port; one that takes
connections and never answers. The store says so in one sentence naming the server, at
once (never the pool's 30 s wait), a transaction cut short is lost whole, and the same
handle works again once the server is back."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from core import open_store
from core.model.errors import StoreUnreachable
from core.store import reach
from core.store.postgres.reconnect import CONNECT_TIMEOUT
from pg_server import BlackHole

ROOT = Path(__file__).resolve().parent.parent


def _names(store) -> list[str]:
    return sorted(s.name for s in store.sessions.list(include_archived=True))


def test_a_crashed_server_is_one_sentence_at_once_and_the_store_goes_on_after(tcp_server):
    url = tcp_server.new_store_url()
    store = open_store(url)
    reader = store.reader()
    try:
        store.sessions.create("before")
        assert _names(reader) == ["before"]
        tcp_server.crash()
        for handle in (store, reader, store, reader):     # each call, not only the first
            started = time.monotonic()
            with pytest.raises(StoreUnreachable) as caught:
                handle.sessions.list()
            assert time.monotonic() - started < 2          # was 30 s a call (the pool's wait)
            said = str(caught.value)
            assert f"PostgreSQL at 127.0.0.1:{tcp_server.port}, database arbor_test" in said
            assert "\n" not in said and "Traceback" not in said
        with pytest.raises(StoreUnreachable):
            store.sessions.create("during")
        tcp_server.start_again()
        store.sessions.create("after")               # the same handles, reconnected
        assert _names(reader) == ["after", "before"]
    finally:
        reader.close()
        store.close()


def test_a_transaction_cut_by_the_crash_is_lost_whole_and_nothing_runs_outside_it(tcp_server):
    url = tcp_server.new_store_url()
    store = open_store(url)
    try:
        session = store.sessions.create("kept")
        branch = store.branches.create(session.id)
        with pytest.raises(StoreUnreachable, match="lost the connection to PostgreSQL"):
            with store.transaction():
                store.entries.append_to_branch(branch.id, "message",
                                       {"message": {"role": "user", "content": "first"}})
                store.branches.get(branch.id)          # (sent: the transaction is open)
                tcp_server.crash()
                tcp_server.start_again()                      # back before the next statement
                # the next statements must not run on a fresh connection, in no transaction
                store.entries.append_to_branch(branch.id, "message",
                                       {"message": {"role": "user", "content": "second"}})
        assert [e.message["content"] for e in store.entries.of_session(session.id)] == []
        store.entries.append_to_branch(branch.id, "message",
                               {"message": {"role": "user", "content": "again"}})
        assert [e.message["content"] for e in store.entries.of_session(session.id)] == ["again"]
    finally:
        store.close()


def test_a_server_that_takes_connections_and_never_answers_costs_one_connect_timeout(tcp_server):
    url = tcp_server.new_store_url()
    store = open_store(url)
    try:
        store.sessions.create("before")
        tcp_server.crash()
        with BlackHole(tcp_server.port):
            started = time.monotonic()
            with pytest.raises(StoreUnreachable, match="timeout"):
                store.sessions.list()
            took = time.monotonic() - started
            assert CONNECT_TIMEOUT - 1 <= took < CONNECT_TIMEOUT + 2
        tcp_server.start_again()
        assert _names(store) == ["before"]
    finally:
        store.close()


def test_a_thread_that_may_not_wait_never_connects(tcp_server):
    """The app's screen: with the server gone, a call there fails at once, even where a
    connection attempt would hang; a thread that may wait reconnects for it."""
    url = tcp_server.new_store_url()
    store = open_store(url)
    outcome: dict = {}

    def screen() -> None:
        reach.forbid_waiting()
        started = time.monotonic()
        try:
            store.sessions.list()
        except StoreUnreachable as error:
            outcome["error"] = str(error)
        outcome["took"] = time.monotonic() - started

    try:
        store.sessions.create("before")
        tcp_server.crash()
        with BlackHole(tcp_server.port):
            thread = threading.Thread(target=screen)
            thread.start()
            thread.join(30)
        assert outcome["took"] < 0.5
        assert f"127.0.0.1:{tcp_server.port}" in outcome["error"]
        tcp_server.start_again()
        store.ping()                    # (this thread may wait: it connects again)
        outcome.clear()
        thread = threading.Thread(target=screen)
        thread.start()
        thread.join(30)
        assert "error" not in outcome
    finally:
        store.close()


POLLER = textwrap.dedent("""
    import sys, time
    from core import open_store
    from core.model.errors import StoreUnreachable
    store = open_store(sys.argv[1])
    print("open", flush=True)
    failed = worked = 0
    end = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        try:
            store.sessions.list()
            worked += 1
        except StoreUnreachable:
            failed += 1
        time.sleep(0.05)
    store.close()
    print(failed, worked, flush=True)
""")


def test_the_pools_warnings_never_reach_the_terminal(tcp_server):
    """The issue's watch printed 47 lines of the pool's "error connecting" warnings: the
    pool retries in the background, and its warnings went to Python's last-resort
    handler, on stderr, under the app's screen too."""
    url = tcp_server.new_store_url()
    open_store(url).close()
    poller = subprocess.Popen([sys.executable, "-c", POLLER, url, "8"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert poller.stdout.readline().strip() == "open"
    time.sleep(1)
    tcp_server.crash()
    time.sleep(3)
    tcp_server.start_again()
    out, err = poller.communicate(timeout=60)
    failed, worked = map(int, out.split())
    assert failed > 10 and worked > 10
    assert err == ""
