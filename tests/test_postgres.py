"""What is PostgreSQL's own: the two backends' statements and migrations side by side, a
server that cannot be reached, a store from a newer arbor, commits told by NOTIFY, and
many processes appending to one branch at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core import open_store
from core.model.errors import StoreDamaged, StoreNotFound, StoreTooNew

ROOT = Path(__file__).resolve().parent.parent


def _names(cls) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")
            and (name.isupper() or callable(getattr(cls, name)))}


def test_every_statement_has_its_twin():
    from core.store.postgres import backend as postgres
    from core.store.sqlite import backend as sqlite

    sqlite_names = _names(sqlite.Statements)
    postgres_names = _names(postgres.Statements)
    assert sqlite_names == postgres_names, (
        f"only on SQLite: {sorted(sqlite_names - postgres_names)}; "
        f"only on PostgreSQL: {sorted(postgres_names - sqlite_names)}")


def test_every_migration_has_its_twin():
    from core.store.postgres import migrations as postgres
    from core.store.sqlite import migrations as sqlite

    assert [(n, name) for n, name, _ in postgres.MIGRATIONS] == \
        [(n, name) for n, name, _ in sqlite.MIGRATIONS]


def test_a_url_is_never_a_path_and_the_backend_follows_it(postgres_server):
    url = postgres_server.new_store_url()
    with open_store(url) as store:
        assert store._backend.name == "postgresql"
        assert str(store.path).startswith("postgresql://")
    assert not Path("postgresql:").exists()


def _arbor(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "arbor"), *args], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, env={**os.environ, **(env or {})})


def test_a_server_that_cannot_be_reached_is_one_sentence_and_exit_2(tmp_path):
    pytest.importorskip("psycopg")
    missing = tmp_path / "nosuchsocket"
    result = _arbor("export", "x", "--db", f"postgresql://someone:hunter2@/teamdb?host={missing}")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"arbor: cannot connect to PostgreSQL at {missing}")
    assert "teamdb" in lines[0] and "Traceback" not in result.stderr
    assert "hunter2" not in result.stderr + result.stdout
    # a refused TCP port says so too, and names host and port
    result = _arbor("export", "x", env={"ARBOR_DB": "postgresql://u@127.0.0.1:1/db",
                                  "PGPASSWORD": "hunter2", "PGCONNECT_TIMEOUT": "5"})
    assert result.returncode == 2
    assert result.stderr.startswith("arbor: cannot connect to PostgreSQL at 127.0.0.1:1, database db")
    assert "hunter2" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_store_written_by_a_newer_arbor_is_refused_and_left_alone(postgres_server):
    import psycopg

    url = postgres_server.new_store_url()
    with open_store(url) as store:
        store.sessions.create("kept")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 'x')")
        before = conn.execute("SELECT COUNT(*) FROM external_sessions").fetchone()
    with pytest.raises(StoreTooNew, match="newer arbor"):
        open_store(url)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone() == (99,)
        assert conn.execute("SELECT COUNT(*) FROM external_sessions").fetchone() == before


def test_other_tables_are_not_taken_for_a_store_and_a_missing_store_is_not_made(postgres_server):
    import psycopg

    url = postgres_server.new_store_url()
    with pytest.raises(StoreNotFound):
        open_store(url, create=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (n int)")
    with pytest.raises(StoreDamaged, match="not an arbor store"):
        open_store(url)
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute("SELECT table_name FROM information_schema.tables"
                              " WHERE table_schema = current_schema()").fetchall()
    assert tables == [("invoices",)]


def test_commits_of_other_connections_move_the_data_version_through_notify(postgres_server):
    url = postgres_server.new_store_url()
    app = open_store(url)
    reader = app.reader()
    start = reader.data_version()
    session = app.sessions.create("mine")   # the app's own connection: the reader sees it
    deadline = time.monotonic() + 10
    while reader.data_version() == start and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reader.data_version() > start
    # another process writes: the app's main connection is told too
    own = app.data_version()
    script = (f"from core import open_store\ns = open_store({url!r})\n"
              f"s.entries.append({session.id}, None, 'message', {{'message': {{'role': 'user',"
              f" 'content': 'from afar'}}}})\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT, timeout=60)
    deadline = time.monotonic() + 10
    while app.data_version() == own and time.monotonic() < deadline:
        time.sleep(0.01)
    assert app.data_version() > own
    # reads and an empty write transaction tell nobody
    settled = app.data_version()
    app.sessions.list()
    with app.transaction():
        pass
    time.sleep(0.3)
    assert reader.data_version() == reader.data_version() and app.data_version() == settled
    app.close()


def _write_from_another_process(url: str, session_id: int) -> None:
    script = (f"from core import open_store\ns = open_store({url!r})\n"
              f"s.entries.append({session_id}, None, 'message', {{'message': {{'role': 'user',"
              f" 'content': 'from afar'}}}})\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT, timeout=60)


def _moves(read, start: int, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while read() == start and time.monotonic() < deadline:
        time.sleep(0.05)
    return read() != start


def _moves_past(reader, start: int, seconds: float = 20) -> bool:
    """Whether the version moves past `start` within `seconds`, StoreUnreachable meanwhile
    (while the listener listens again) taken as "not yet"."""
    from core.model.errors import StoreUnreachable

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if reader.data_version() > start:
                return True
        except StoreUnreachable:
            pass
        time.sleep(0.05)
    return False


def test_live_refresh_goes_on_after_the_server_restarts(tmp_path):
    # An open app learns of others' commits through LISTEN; a restart of the server ends
    # that connection. The listener connects again (and counts the gap as a change), and
    # commits after the restart are told as before.
    from pg_server import PostgresServer, find_binaries

    binaries, why = find_binaries()
    if binaries is None:
        pytest.skip(why)
    server = PostgresServer(binaries)
    try:
        server.start()
        url = server.new_store_url()
        app = open_store(url)
        session = app.sessions.create("watched")
        reader = app.reader()
        before = reader.data_version()
        _write_from_another_process(url, session.id)
        assert _moves(reader.data_version, before)
        moved = reader.data_version()
        server.restart()
        # until the listener listens again, the version cannot be told: it says so
        # (StoreUnreachable: the app shows "server unreachable, retrying" meanwhile); then
        # the commits nobody heard of while it listened again count as one change
        assert _moves_past(reader, moved), "the listener did not come back"
        settled = reader.data_version()
        _write_from_another_process(url, session.id)
        assert _moves(reader.data_version, settled), "a commit after the restart went untold"
        assert [e.message["content"] for e in app.entries.of_session(session.id)] == ["from afar"] * 2
        reader.close()
        app.close()
    finally:
        server.stop()


WRITER = textwrap.dedent("""
    import sys
    from core import open_store
    url, branch, writer, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    store = open_store(url)
    for i in range(count):
        store.entries.append_to_branch(branch, "message",
                               {"message": {"role": "user", "content": f"{writer}:{i}"}})
    store.close()
""")


def test_eight_processes_append_to_one_branch_and_none_is_lost(postgres_server, tmp_path):
    url = postgres_server.new_store_url()
    store = open_store(url)
    session = store.sessions.create("busy")
    branch = store.branches.create(session.id, name="main")
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writers = [subprocess.Popen([sys.executable, str(script), url, str(branch.id), f"w{n}", "100"],
                                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                stderr=subprocess.PIPE, text=True) for n in range(8)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    head = store.branches.get(branch.id).head_seq
    path = store.paths.entries(head)
    assert len(path) == 800
    texts = [entry.data["message"]["content"] for entry in path]
    for n in range(8):
        mine = [int(text.split(":")[1]) for text in texts if text.startswith(f"w{n}:")]
        assert mine == list(range(100)), f"writer w{n} lost or reordered appends"
    assert store.sessions.get(session.id).message_count == 800
    # a single chain: every append continued the head the one before it left
    assert len(store.paths.segments(head)) == 1
    store.close()


def test_without_psycopg_a_url_says_how_to_install_it(monkeypatch, tmp_path):
    from core.model.errors import StoreUnavailable

    monkeypatch.setitem(sys.modules, "psycopg", None)   # as on an install without the extra
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreUnavailable, match=r"pip install 'arbor\[postgres\]'") as caught:
        open_store("postgresql://someone:hunter2@db.example.com/team")
    assert "hunter2" not in str(caught.value) and "\n" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []
    # a file store needs nothing of it
    with open_store(tmp_path / "local.db") as store:
        assert store.sessions.list() == []


# Texts whose search words depend on what the database's locale calls punctuation: ASCII
# marks, marks beyond ASCII (which an ICU locale counts and the C locale does not), symbols,
# spaces of other kinds, combining marks, NUL, a word too long to index, and a mark where the
# search text is cut (core.model.entries.FTS_TEXT_LIMIT).
SEARCH_TEXTS = [
    "foo.bar baz-qux snake_case C++ & C# don't say \"hi\" back\\slash 1.5e10 -42 $HOME ~/x",
    "http://example.com/path?q=1&r=2 user@example.com v1.2.3 <tag attr='x'>",
    "a→b … c—d ✓ done 🙂 ok 🚀 «guillemets» ¿qué? ¡sí! § ¶ © ® ™ ° ± × ÷ € £",
    "naïve café e\u0301 Ω≈ç√∫ ﬁ Ⅻ ½ 日本語のテキスト、句読点。 ！，",
    "tab\there new\nline nbsp\u00a0ideo\u3000space zero\u200dwidth esc\x1b del\x7f nul\x00end",
    "plain words only",
    "",
    "x" * 65_530 + ".y tail",
    "w " * 33_000 + "beyond.the.cut",
    # pieces between whitespace that come again, where the parser might read them
    # differently: at the start, at the end, after other pieces, numbers with an e, words
    # of letters and digits, a combining mark first, other spaces inside a piece, a word too
    # long to index, spaces at both ends
    "1e5 12e 1e5abc 2nd abc123 123abc 0x1F 1E10 e5 " * 40 + "1e5abc",
    "\u0301abc abc\u0301 ab\u00a0cd ab\u3000cd \t\n  x\u200dy " * 30 + "\u0301abc",
    (" lead trail " + "q" * 3000 + " ") * 5 + "lead",
    "Ünïcödé ÜNÏCÖDÉ 日本語 日本語 🙂🙂 🙂 x🙂y " * 50 + "end",
    # marks an ICU locale leaves: a sign, a path, symbols; and a tag, which spans words
    "+5 +5abc ~abc ~ x+1 5e+3 5e+ 12e+ $HOME a|b a^b a=b a>b `x` " * 20 + "+5",
    "<a b c> <a b c> x <b> y " * 20 + "<a b",
]


def _words_by_entry(store, session_id) -> dict[str, str]:
    rows = store.connection.execute(
        "SELECT e.id, s.words::text FROM entries e JOIN entries_search s ON s.seq = e.seq"
        " WHERE e.external_session_id = %s", (session_id,)).fetchall()
    return dict(rows)


def _write_texts(store, name: str, background: bool) -> int:
    session = store.sessions.create(name)
    with store.transaction():
        writer = store.entries.writer(session.id, background=background)
        for i, text in enumerate(SEARCH_TEXTS):
            writer.add_row(None, "message", {"message": {"role": "user", "content": text}},
                           entry_id=f"t{i}")
        writer.flush()
    return session.id


def _icu_database(postgres_server) -> str:
    import psycopg

    with psycopg.connect(postgres_server.url_of(), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'arbor_icu'").fetchone() is None:
            try:
                conn.execute("CREATE DATABASE arbor_icu LOCALE_PROVIDER icu ICU_LOCALE 'und'"
                             " LOCALE 'C.UTF-8' TEMPLATE template0")
            except psycopg.Error as error:
                pytest.skip(f"this PostgreSQL cannot make an ICU database: {error}")
    return postgres_server.url_of("arbor_icu")


@pytest.mark.parametrize("database", ["c", "icu"])
def test_an_imports_search_words_are_those_of_an_entry_written_alone(postgres_server, monkeypatch,
                                                                     database):
    # Imports blank punctuation before the server reads the words (and compute them on a
    # second connection); entries written one at a time use the server's regular expression.
    # Every way gives the same words, in a C database and in an ICU one (whose punctuation
    # differs: `$+<=>^|~` are not marks there, `…—«»¿¡§¶` are).
    from core.store.postgres import bulk as postgres_bulk

    url = postgres_server.new_store_url() if database == "c" else _icu_database(postgres_server)
    store = open_store(url)
    alone = _words_by_entry(store, _write_texts(store, "alone", background=False))
    inline = _words_by_entry(store, _write_texts(store, "few texts", background=True))
    monkeypatch.setattr(postgres_bulk, "WORDS_APART_FROM", 1)   # these few apart, too
    bulk = _words_by_entry(store, _write_texts(store, "bulk", background=True))
    monkeypatch.setattr(postgres_bulk._Words, "usable", property(lambda self: False))
    no_spare = _words_by_entry(store, _write_texts(store, "no spare connection", background=True))
    assert len(alone) == len(SEARCH_TEXTS) - 1   # the empty text has no words
    assert "'bar'" in alone["t0"] and "'y'" in alone["t7"] and "'beyond'" not in alone["t8"]
    assert "'1e5abc'" not in alone["t9"] and "'abc'" in alone["t9"]   # (1e5, then abc)
    assert bulk == alone
    assert inline == alone
    assert no_spare == alone
    assert [hit.entry_id for hit in store.search.messages("beyond")] == []
    store.close()


def test_the_search_index_is_cleaned_every_clean_from_rows_not_after_every_batch(
        postgres_server, monkeypatch):
    # Each gin_clean_pending_list reads the whole pending list and moves each word's entries
    # once: cleaning after every batch costs a third more server CPU than every 1,000 rows.
    from concurrent.futures import Future

    from core.store.postgres import bulk as postgres_bulk

    cleanings = []

    def at_once(self, task, *args):   # (the cleaning runs as it is asked for: a count, no race)
        cleanings.append(task)
        done = Future()
        done.set_result(task(*args))
        return done

    monkeypatch.setattr(postgres_bulk._Cleaner, "submit", at_once)
    monkeypatch.setattr(postgres_bulk, "CLEAN_FROM", 100)
    monkeypatch.setattr(postgres_bulk, "WORDS_APART_FROM", 1)
    with open_store(postgres_server.new_store_url()) as store:
        session = store.sessions.create("s")
        with store.transaction():
            writer = store.entries.writer(session.id, background=True)
            writer.BATCH = 40
            for i in range(1000):
                writer.add_row(None, "message", {"message": {"role": "user",
                                                             "content": f"word{i} more words"}},
                               entry_id=f"e{i}")
            writer.flush()
        assert [hit.entry_id for hit in store.search.messages("word999")] == ["e999"]
    # one per 100 rows at most (batches of 40: every third); the old code cleaned after each
    # of the last 23 batches
    assert 1 <= len(cleanings) <= 1000 // 100
