"""Fewer round trips to a PostgreSQL server, the same store.

A write transaction's INSERTs and UPDATEs that return no rows go with the next statement
that has rows to give (one query string, values bound by psycopg), its BEGIN with its first
statement, the last of them with the COMMIT (core/store/postgres/backend.py, `_may_wait`). And the
store does not read back what the transaction itself just made: a session or branch it
created (returned as built), their names, metadata and (no) branches, an entry's row read
once (core/store/api.py, registry.Link.made). Each of those answers is checked here against
a fresh read, on both backends; the count of round trips is checked on PostgreSQL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from core import open_store
from core.model.errors import ArborError, NotFound
from core.importing import driver, import_paths

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import claude_tree  # noqa: E402


def _fresh(store, sql_name: str, *args):
    """A row read past the store's knowledge of its transaction."""
    return store.connection.execute(getattr(store._sql, sql_name), args).fetchone()


def test_a_made_session_and_branch_are_what_reading_them_back_gives(store_location):
    with open_store(store_location) as store:
        with store.transaction():
            made = store.sessions.create(
                "the name", uid="u-1", user_id=7, cwd="/home/me/src", source="claude_code",
                kind="subagent", parent_session="u-0",
                metadata={"path": "/x", "nested": {"a": [1, 2.5, None, True]}, "é": "ü"},
                created_at="2025-03-04T05:06:07.123+00:00")
            assert made == store.sessions.get(made.id)
            writer = store.entries.writer(made.id)
            root = writer.add_row(None, "message", {"message": {"role": "user", "content": "hi"}},
                                  entry_id="a", timestamp="2025-03-04T05:06:08+00:00")
            leaf = writer.add_row(root, "message", {"message": {"role": "assistant",
                                                                "content": "yes"}},
                                  entry_id="b", timestamp="2025-03-04T05:06:09+00:00")
            writer.flush()
            main = store.branches.create(made.id, head_seq=root, name="main",
                                                 is_current=False, session_state={"k": 1},
                                                 metadata={"m": [1]}, checkpoint_count=2,
                                                 created_at="2025-03-04T05:06:10+00:00")
            assert main == store.branches.get(main.id)
            fork = store.branches.create(made.id, head_seq=leaf, fork_seq=root,
                                                 parent_session_id=main.id,
                                                 langgraph_session_id="key-b",
                                                 tool_invocation_count=3)
            assert fork == store.branches.get(fork.id)
            assert (fork.head_id, fork.fork_id, fork.message_count) == ("b", "a", 2)
        # and after the commit, read with nothing known
        assert made.id == store.sessions.by_uid("u-1").id
        assert store.branches.get(fork.id).head_id == "b"


def test_what_a_transaction_knows_of_what_it_made_is_what_is_stored(store_location):
    with open_store(store_location) as store:
        other = store.sessions.create("older")
        with store.transaction():
            made = store.sessions.create("first name", metadata={"a": 1})
            assert store.branches.heads(made.id) == []
            store.sessions.rename(made.id, "second name")
            store.sessions.set_metadata(made.id, {"b": [2]})
            assert store.sessions.name(made.id) == "second name" == \
                _fresh(store, "EXTERNAL_NAME", made.id)[0]
            assert store.sessions.metadata(made.id) == {"b": [2]}
            writer = store.entries.writer(made.id)
            seq = writer.add_row(None, "message", {"message": {"role": "user", "content": "x"}},
                                 entry_id="e1", timestamp="2025-01-01T00:00:00+00:00")
            writer.flush()
            assert store.entries.id_of(seq) == "e1"
            assert store.entries.timestamp_of(seq) == "2025-01-01T00:00:00.000+00:00"
            assert store.entries.get(seq).data["message"]["content"] == "x"
            branch = store.branches.create(made.id, head_seq=seq, is_current=False)
            assert store.branches.heads(made.id) == [(branch.id, seq)]
            assert store.branches.set_current(branch.id)
            assert store.branches.current(made.id).id == branch.id
            store.branches.delete(branch.id)
            assert store.branches.heads(made.id) == []
            # what it did not make is read as ever
            with pytest.raises(NotFound):
                store.sessions.rename(other.id + 1000, "nobody")
            with pytest.raises(ArborError, match="belongs to another session"):
                store.branches.create(other.id, head_seq=seq)
        assert store.sessions.name(made.id) == "second name"
        assert store.sessions.metadata(made.id) == {"b": [2]}
        # a session made and deleted in one transaction is forgotten with it
        with store.transaction():
            gone = store.sessions.create("gone")
            store.sessions.delete(gone.id)
            assert store.sessions.name(gone.id) is None
            with pytest.raises(NotFound):
                store.sessions.rename(gone.id, "still gone")


# ------------------------------------------------------------------ PostgreSQL only
@pytest.fixture
def pg_store(postgres_server):
    store = open_store(postgres_server.new_store_url("trips"))
    yield store
    store.close()


def _round_trips(store, call) -> int:
    """What psycopg sends on the store's connection and then waits for (from any thread):
    a query (of one statement or several), an executemany, a COPY."""
    import psycopg

    raw = store.connection.raw
    count = [0]
    originals = {name: getattr(psycopg.Cursor, name) for name in ("execute", "executemany", "copy")}

    def counting(original):
        def run(self, *args, **kwargs):
            if self.connection is raw:
                count[0] += 1
            return original(self, *args, **kwargs)
        return run

    for name, original in originals.items():
        setattr(psycopg.Cursor, name, counting(original))
    try:
        call()
    finally:
        for name, original in originals.items():
            setattr(psycopg.Cursor, name, original)
    return count[0]


def test_an_import_of_one_small_file_takes_few_round_trips(pg_store, tmp_path, monkeypatch):
    # A 92 KB Claude Code file (69 entries, one branch, ten responses) into a store that has
    # imported one file before: 48 round trips before the statements that need no answer
    # went with the next one and the store read back what it had just made; 22 after.
    # One transaction: a loaded machine otherwise commits midway (every 0.1 s), which is
    # more trips (31 seen at load 13) for a reason this test is not about.
    monkeypatch.setattr(driver, "COMMIT_EVERY", 3600.0)
    claude_tree.generate(tmp_path, mb=0.3)
    files = sorted(tmp_path.rglob("*.jsonl"))
    import_paths(pg_store, [files[0]])
    report = []
    trips = _round_trips(pg_store, lambda: report.append(import_paths(pg_store, [files[1]])))
    assert report[0].files[0].status == "imported" and report[0].entries_added == 69
    assert trips <= 24, trips


def test_a_transaction_that_sends_nothing_sends_nothing(pg_store):
    def nothing():
        with pg_store.transaction():
            pass
        with pg_store.reading():
            pass
    assert _round_trips(pg_store, nothing) == 0
    session = pg_store.sessions.create("s")

    def one_write():
        with pg_store.transaction():
            pg_store.sessions.set_cwd_if_empty(session.id, "/here")   # (waits for the COMMIT)
    assert _round_trips(pg_store, one_write) == 1
    assert pg_store.sessions.get(session.id).cwd == "/here"


def test_statements_that_wait_run_in_order_and_a_rowcount_sends_them(pg_store):
    session = pg_store.sessions.create("s")
    conn = pg_store.connection
    with pg_store.transaction():
        pg_store.sessions.set_cwd_if_empty(session.id, "/first")
        pg_store.sessions.set_cwd_if_empty(session.id, "/second")   # (cwd is no longer empty)
        cursor = conn.execute("UPDATE external_sessions SET cwd = cwd || '!' WHERE id = %s",
                              (session.id,))
        with pytest.raises(pg_store.errors, match="didn't produce records"):
            cursor.fetchone()   # (as psycopg says of an UPDATE)
        assert cursor.rowcount == 1
        assert conn.execute("SELECT cwd FROM external_sessions WHERE id = %s",
                            (session.id,)).fetchone()[0] == "/first!"
    assert pg_store.sessions.get(session.id).cwd == "/first!"


def test_an_error_of_a_statement_that_waited_fails_its_transaction(pg_store):
    session = pg_store.sessions.create("s")
    with pytest.raises(pg_store.errors):
        with pg_store.transaction() as conn:
            pg_store.sessions.set_cwd_if_empty(session.id, "/never")
            # NOT NULL: the error comes with the next statement that has rows to give
            conn.execute("UPDATE external_sessions SET session_name = NULL WHERE id = %s",
                         (session.id,))
            conn.execute("SELECT 1").fetchone()
            pytest.fail("the failed UPDATE went unnoticed")
    assert pg_store.sessions.get(session.id).cwd == ""   # (rolled back, all of it)
    with pytest.raises(pg_store.errors):
        with pg_store.transaction() as conn:
            conn.execute("UPDATE external_sessions SET session_name = NULL WHERE id = %s",
                         (session.id,))   # (its error comes with the COMMIT)
    assert pg_store.sessions.get(session.id).session_name == "s"
    pg_store.sessions.rename(session.id, "the connection goes on")
    assert pg_store.sessions.name(session.id) == "the connection goes on"


def test_many_usage_rows_in_one_statement_are_the_rows_one_by_one(postgres_server, monkeypatch):
    # More than a few usage rows go in as one INSERT … SELECT FROM unnest(arrays) (one round
    # trip): the same rows, seqs (their order), bucket sums and refusals as row by row.
    from core.store.postgres import backend as postgres

    def rows(session_id: int) -> list[tuple]:
        return [(session_id, "anthropic", "messages", f"model-{i % 3}", i, 2 * i, 3 * i, 0,
                 f"2025-01-0{1 + i % 5}T0{i % 10}:00:00.000+00:00", None, None, None,
                 None if i % 7 == 0 else f"key-{i}", i % 4, 0, i, 0,
                 None if i % 3 else i / 7, i % 2, 5, i % 2 == 0, i % 5 == 0, 1)
                for i in range(40)]

    def insert(url: str, one_by_one: bool) -> dict:
        with monkeypatch.context() as patch:
            if one_by_one:
                patch.setattr(postgres, "_AS_ONE", {})
            with open_store(url) as store:
                session = store.sessions.create("s")
                with store.transaction() as conn:
                    postgres.PostgresBackend.executemany(
                        conn, postgres.Statements.USAGE_INSERT_RESPONSE, rows(session.id))
                out = {table: store.connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4"
                                                       ).fetchall()
                       for table in ("usage", "usage_buckets")}
                with pytest.raises(store.errors, match="duplicate key"):   # a response twice
                    with store.transaction() as conn:
                        postgres.PostgresBackend.executemany(
                            conn, postgres.Statements.USAGE_INSERT_RESPONSE, rows(session.id))
                return out

    one = insert(postgres_server.new_store_url("one"), one_by_one=False)
    many = insert(postgres_server.new_store_url("many"), one_by_one=True)
    assert len(one["usage"]) == 40 and one["usage_buckets"]
    assert one == many
