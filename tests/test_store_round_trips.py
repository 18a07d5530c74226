"""Fewer round trips to a PostgreSQL server, the same store.

A write transaction's INSERTs and UPDATEs that return no rows go with the next statement
that has rows to give (one query string, values bound by psycopg), its BEGIN with its first
statement, the last of them with the COMMIT (core/store/postgres.py, `_may_wait`)."""

from __future__ import annotations

import pytest

from core import open_store


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


def test_a_transaction_that_sends_nothing_sends_nothing(pg_store):
    def nothing():
        with pg_store.transaction():
            pass
        with pg_store.reading():
            pass
    assert _round_trips(pg_store, nothing) == 0
    session = pg_store.create_external_session("s")

    def one_write():
        with pg_store.transaction():
            pg_store.set_cwd_if_empty(session.id, "/here")   # (waits for the COMMIT)
    assert _round_trips(pg_store, one_write) == 1
    assert pg_store.get_external_session(session.id).cwd == "/here"


def test_statements_that_wait_run_in_order_and_a_rowcount_sends_them(pg_store):
    session = pg_store.create_external_session("s")
    conn = pg_store.connection
    with pg_store.transaction():
        pg_store.set_cwd_if_empty(session.id, "/first")
        pg_store.set_cwd_if_empty(session.id, "/second")   # (cwd is no longer empty)
        cursor = conn.execute("UPDATE external_sessions SET cwd = cwd || '!' WHERE id = %s",
                              (session.id,))
        with pytest.raises(pg_store.errors, match="didn't produce records"):
            cursor.fetchone()   # (as psycopg says of an UPDATE)
        assert cursor.rowcount == 1
        assert conn.execute("SELECT cwd FROM external_sessions WHERE id = %s",
                            (session.id,)).fetchone()[0] == "/first!"
    assert pg_store.get_external_session(session.id).cwd == "/first!"


def test_an_error_of_a_statement_that_waited_fails_its_transaction(pg_store):
    session = pg_store.create_external_session("s")
    with pytest.raises(pg_store.errors):
        with pg_store.transaction() as conn:
            pg_store.set_cwd_if_empty(session.id, "/never")
            # NOT NULL: the error comes with the next statement that has rows to give
            conn.execute("UPDATE external_sessions SET session_name = NULL WHERE id = %s",
                         (session.id,))
            conn.execute("SELECT 1").fetchone()
            pytest.fail("the failed UPDATE went unnoticed")
    assert pg_store.get_external_session(session.id).cwd == ""   # (rolled back, all of it)
    with pytest.raises(pg_store.errors):
        with pg_store.transaction() as conn:
            conn.execute("UPDATE external_sessions SET session_name = NULL WHERE id = %s",
                         (session.id,))   # (its error comes with the COMMIT)
    assert pg_store.get_external_session(session.id).session_name == "s"
    pg_store.rename_session(session.id, "the connection goes on")
    assert pg_store.session_name(session.id) == "the connection goes on"
