"""Shared fixtures. The TUI ones build small deterministic stores in tmp_path."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tui import headless

# Four test workers on a shared machine stretch a draw now and then past Hypothesis's
# one-second "slow generation" check (CI: 6 inputs in 1.07 s, one draw of 1.069 s): what
# a property test checks is the property, not how fast examples are drawn.
settings.register_profile("arbor", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("arbor")

# How the suite runs in worker processes (pytest-xdist): tests/parallel.py.
pytest_plugins = ["parallel"]

# Textual: no animations, so pictures are stable.
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

HOSTILE_NAME = "[bold red]x[/] \x1b]52;c;aGVsbG8=\x07 [@click=app.quit]quit[/] \x1b[2J"
HOSTILE_TEXT = (
    "markup: [bold red]x[/] [link=https://evil.example]link[/link] [/foo] [@click=app.quit]click[/]\n"
    "osc52: \x1b]52;c;aGVsbG8gd29ybGQ=\x07 clear: \x1b[2J\x1b[H home\n"
    "osc8: \x1b]8;;https://evil.example\x1b\\click me\x1b]8;;\x1b\\ bell \x07 bs \x08 nul \x00\n"
    "c1: \x9b31m csi \x9d osc; bidi: \u202eevil\u202c; tab:\there"
)
HOSTILE_MARKDOWN = (
    "A **markdown** [link](https://evil.example) and ![img](https://evil.example/x.png)\n\n"
    "`\x1b]52;c;Zm9v\x07` and [@click=app.quit]text[/]\n\n<b>html</b> \x1b[31mred\x1b[0m"
)
BIG_OUTPUT_BYTES = 10 * 1024 * 1024


def build_hostile_store(path: Path) -> Path:
    """A store whose names, labels and messages hold markup, escapes, binary and 10 MB."""
    from core import open_store
    from core.actions import operations

    moments = iter(datetime(2026, 11, 29, 10, 0, tzinfo=timezone.utc) + timedelta(seconds=s)
                   for s in range(10_000))
    counter = iter(range(1, 10_000))
    store = open_store(path, clock=lambda: next(moments), id_factory=lambda: f"{next(counter):08x}")
    with store.transaction():
        session = store.sessions.create(HOSTILE_NAME, source="\x1b[31mevil\x1b[0m",
                                                cwd="/tmp/[bold]x")
        branch = store.branches.create(session.id, name="[/bold] \x1b]0;title\x07")
        store.entries.append_to_branch(branch.id, "message", {"message": {"role": "user", "content": HOSTILE_TEXT}})
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "assistant", "content": [{"type": "text", "text": HOSTILE_MARKDOWN},
                                             {"type": "toolCall", "id": "c1", "name": "bash\x1b[2J",
                                              "arguments": {"command": "cat \x1b]52;c;eA==\x07"}}]}})
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False,
            "content": [{"type": "text", "text": "\x1b[2J" + "A" * (BIG_OUTPUT_BYTES - 4)}]}})
        binary = bytes(range(256)).decode("latin-1") * 4
        store.entries.append_to_branch(branch.id, "message", {"message": {
            "role": "toolResult", "toolCallId": "c2", "toolName": "cat", "isError": True,
            "content": binary}})
        unknown = store.entries.append_to_branch(branch.id, "x_future_type",
                                         {"payload": "[red]raw[/] \x1b[2J", "n": 1})
        operations.set_label(store, unknown.seq, "[/] \x1b]52;c;bGFiZWw=\x07")
        operations.set_branch_label(store, branch.id, "[@click=app.quit]lbl")
    store.close()
    return path


def copy_store(source: Path, target: Path) -> Path:
    """A copy of a closed SQLite store, made by SQLite's backup (never by plain file I/O)."""
    import sqlite3

    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
    finally:
        writer.close()
        reader.close()
    return target


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    """The demo store, built once per test process (each xdist worker builds its own):
    tests take copies of it (`demo_db`), never the template itself."""
    from core.demo import build_demo

    return build_demo(tmp_path_factory.mktemp("demo-template") / "demo.db")


@pytest.fixture
def demo_db(tmp_path, demo_template) -> Path:
    """A demo store of the test's own (a copy of the session's: the demo is deterministic)."""
    return copy_store(demo_template, tmp_path / "demo.db")


@pytest.fixture
def hostile_db(tmp_path) -> Path:
    return build_hostile_store(tmp_path / "hostile.db")


@pytest.fixture
def empty_db(tmp_path) -> Path:
    from core import open_store

    path = tmp_path / "empty.db"
    open_store(path).close()
    return path


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests with asyncio.run (no async plugin is installed here)."""
    import asyncio
    import inspect

    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True


_fixed_stores: list = []   # opened by open_fixed, closed when the test ends


def open_fixed(path: Path):
    """The store with a fixed clock (the demo's "now") and counted ids, so that what the
    app writes during a test (branches, labels, compactions) looks the same every run.
    Closed when the test ends (the app does not close the store it is given)."""
    from core import open_store
    from core.demo import DEMO_NOW

    numbers = iter(range(0xA0000000, 0xFFFFFFFF))
    store = open_store(path, create=False, clock=lambda: DEMO_NOW,
                       id_factory=lambda: f"{next(numbers):08x}")
    _fixed_stores.append(store)
    return store


@pytest.fixture(autouse=True)
def _close_stores_then_look_for_open_pools():
    """The stores `open_fixed` opened are closed after each test; then a PostgreSQL store
    the test left open fails it: its connection pool would live on until the interpreter
    ends, where its __del__ prints a traceback. (Pools opened before the test, by a fixture
    of a wider scope, are that fixture's to close.)"""
    import sys

    def open_pools() -> set[int]:
        module = sys.modules.get("core.store.postgres.connection")
        return {id(held[0]) for held in module._pools.values()} if module else set()

    before = open_pools()
    yield
    while _fixed_stores:
        _fixed_stores.pop().close()
    left = open_pools() - before
    assert not left, f"{len(left)} PostgreSQL store(s) left open by this test: close them"


async def settle(pilot) -> None:
    await headless.settle(pilot, after=3)


async def wait_until(pilot, condition, timeout: float = 30.0, poll: float = 0.05) -> bool:
    """Let the app run until `condition()` holds (True) or `timeout` seconds pass (False).

    For what another process causes (a poll, a reload): a generous deadline, since a loaded
    machine may take seconds, and the wait ends as soon as the condition holds."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await pilot.pause(poll)
    await settle(pilot)
    return True


def index_terms(store) -> list[tuple[int, str]]:
    """What the full-text index holds: (entry seq, word) pairs, read through fts5vocab
    (the index is contentless, so it has no text to read back)."""
    conn = store.connection
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms"
                 " USING fts5vocab(main, entries_fts, instance)")
    return conn.execute("SELECT doc, term FROM temp.fts_terms ORDER BY doc, term").fetchall()


# ---------------------------------------------------------------- both backends
# Tests that take `store_location` run twice: on a SQLite file and on a PostgreSQL store
# (a schema of its own in one server started for the whole test session). Where no
# PostgreSQL binaries or no psycopg exist, the PostgreSQL runs are skipped with the reason.
def _server_for_tests(**options):
    """A PostgreSQL server started for the test session (`pg_server`), stopped after it;
    the tests that need one are skipped, with the reason, where none can be had."""
    from pg_server import PostgresServer, find_binaries

    binaries, why = find_binaries()
    if binaries is None:
        pytest.skip(f"PostgreSQL backend not tested: {why}")
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        pytest.skip("PostgreSQL backend not tested: psycopg is not installed "
                    "(pip install 'arbor[postgres]')")
    server = PostgresServer(binaries, **options)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="session")
def postgres_server():
    server = _server_for_tests()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def _postgres_tcp_server():
    server = _server_for_tests(tcp=True)
    yield server
    server.stop()


@pytest.fixture
def tcp_server(_postgres_tcp_server):
    """A PostgreSQL server on 127.0.0.1 (a port of its own) that a test may crash
    (`crash()`) and start again (`start_again()`); running when each test begins."""
    if not _postgres_tcp_server.started:
        _postgres_tcp_server.start_again()
    yield _postgres_tcp_server
    if not _postgres_tcp_server.started:
        _postgres_tcp_server.start_again()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    """A new, empty store's name: a file path, or a postgresql:// URL."""
    if request.param == "sqlite":
        return tmp_path / "store.db"
    return request.getfixturevalue("postgres_server").new_store_url()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sqlite_only: about SQLite's own file (WAL, pages, locks); not run on PostgreSQL")


def pytest_collection_modifyitems(config, items):
    """A test marked sqlite_only runs on its SQLite store alone."""
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("store_location") == "postgresql" \
                and item.get_closest_marker("sqlite_only"):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=["sqlite", "postgresql"])
def demo_location(request, tmp_path, demo_template):
    """The demo store as a file, or copied into a PostgreSQL store with `arbor push`'s code."""
    from core import open_store
    from core.export.push import push_sessions

    path = copy_store(demo_template, tmp_path / "demo.db")
    if request.param == "sqlite":
        return path
    url = request.getfixturevalue("postgres_server").new_store_url("demo")
    with open_store(path, create=False) as source, open_store(url) as target:
        sessions = source.sessions.list(include_archived=True)
        push_sessions(source, target, [s.id for s in reversed(sessions)])
    return url


# ---------------------------------------------------------------- a fake model on 127.0.0.1
@pytest.fixture
def fake_model():
    """A started tests/fake_model_server.FakeModelServer (empty script: `add` replies)."""
    from fake_model_server import FakeModelServer

    with FakeModelServer() as server:
        yield server

