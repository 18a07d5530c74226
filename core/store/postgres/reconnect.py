"""Connecting to a PostgreSQL server that may be gone: bounded attempts, one sentence
when it does not answer, and the pool told how to behave meanwhile (see `reach` for who
may wait).

psycopg's pool grows in the background: a caller waiting for a connection hears nothing
of a refused attempt and waits out the pool's whole timeout (30 s per call was what an
import of twelve files spent per file while the server was down), and each background
attempt logs a warning. So after a connection broke, or before the first one, arbor
connects once itself, bounded by the connect timeout: a refused or timed-out attempt is
the sentence the caller gets at once; an attempt that succeeds says the server is back,
and the pool then has its connection within a moment. The pool's own attempts give up
after `POOL_GIVES_UP` seconds (its `reconnect_failed` marks the server down), so that a
pool that retried through an outage does not wait minutes between attempts once the
server is back. psycopg's warnings (the pool's "error connecting", a COPY cut short) go
to a NullHandler: never to the terminal under the app, nor into a command's one sentence
(a program that configures logging still gets them).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from typing import Any

from core.store.reach import Reach

CONNECT_TIMEOUT = 5       # seconds for one attempt to connect (libpq's connect_timeout)
POOL_WAIT = 10            # seconds a caller waits for the pool once the server answered
POOL_GIVES_UP = 10        # seconds the pool goes on trying to connect in the background
# A connection whose server vanished without a word (a cut network, a machine gone) is
# found out by TCP: sent data not acknowledged within TCP_USER_TIMEOUT_MS, or an idle
# connection's keepalives unanswered, ends it instead of the default ~15 minutes.
TCP_USER_TIMEOUT_MS = 15_000
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10,
              "keepalives_count": 3}

_reaches: dict[str, Reach] = {}
_reaches_lock = threading.Lock()

logging.getLogger("psycopg").addHandler(logging.NullHandler())


def reach_of(conninfo: str) -> Reach:
    """The process's `Reach` of the server a URL names (one per URL)."""
    with _reaches_lock:
        found = _reaches.get(conninfo)
        if found is None:
            found = _reaches[conninfo] = Reach(server_of(conninfo))
        return found


def connect_options(conninfo: str) -> dict[str, Any]:
    """What every connection is opened with, besides the URL: autocommit, the connect
    timeout and TCP's limits, each unless the URL (or PGCONNECT_TIMEOUT) says otherwise."""
    options: dict[str, Any] = {"autocommit": True}
    given = _parts(conninfo)
    if "connect_timeout" not in given and not os.environ.get("PGCONNECT_TIMEOUT"):
        options["connect_timeout"] = CONNECT_TIMEOUT
    host = str(given.get("host") or os.environ.get("PGHOST") or "")
    if not host.startswith("/") and "tcp_user_timeout" not in given:
        options["tcp_user_timeout"] = TCP_USER_TIMEOUT_MS
    for name, value in KEEPALIVES.items():
        if name not in given:
            options[name] = value
    return options


def connect(conninfo: str, reach: Reach) -> Any:
    """A connection of arbor's own (not the pool's), or StoreUnreachable with the sentence
    (another fault of connecting, a wrong password say, is raised as psycopg gave it)."""
    import psycopg

    refusal = reach.refusal()
    if refusal is not None:
        raise refusal
    try:
        conn = psycopg.connect(conninfo, **connect_options(conninfo))
    except psycopg.OperationalError as error:
        if unreachable(error):
            raise reach.failed(reason(error)) from None
        raise
    reach.answered()
    return conn


def reconnect(pool: Any, reach: Reach, conninfo: str) -> Any:
    """A connection of the pool for a `Connection` whose own broke (or that has none):
    arbor's own attempt first (bounded, see the module doc), then the pool's."""
    from psycopg_pool import PoolTimeout

    connect(conninfo, reach).close()
    try:
        return pool.getconn(timeout=POOL_WAIT)
    except PoolTimeout:
        raise reach.failed(f"no connection came within {POOL_WAIT} s") from None


def pool_options(conninfo: str, reach: Reach) -> dict[str, Any]:
    """The pool's settings (besides its size and the function that configures each
    connection)."""
    def gave_up(_pool: Any) -> None:
        if reach.state == "up":   # (else the sentence already says why, better)
            reach.failed(f"the server did not answer for {POOL_GIVES_UP} s")

    return {"kwargs": connect_options(conninfo), "reconnect_timeout": POOL_GIVES_UP,
            "reconnect_failed": gave_up}


def broke(conn: Any) -> bool:
    """Whether a psycopg connection is gone (the server ended it, or stopped answering)."""
    return conn is None or conn.closed or conn.broken


def unreachable(error: BaseException) -> bool:
    """Whether a failed attempt to connect means the server is not there (refused, timed
    out, no route, starting up or shutting down), not that it said no (a password, a
    database that does not exist)."""
    state = getattr(error, "sqlstate", None)
    if state is None:
        text = str(error).lower()
        return not any(words in text for words in _REFUSALS)
    return state.startswith(("08", "57"))


# (what libpq says without an SQLSTATE when the server answered and refused)
_REFUSALS = ("password authentication failed", "no password supplied", "does not exist",
             "no pg_hba.conf entry", "certificate", "ssl")


def reason(error: BaseException) -> str:
    """What libpq said, without its "connection to server … failed:" preamble and hints."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    said = lines[0] if lines else type(error).__name__
    said = re.sub(r'^connection failed:\s*', "", said)
    said = re.sub(r'^connection to server (at|on) .*? failed:\s*', "", said)
    said = re.sub(r'^connection is bad:\s*', "", said)
    said = re.sub(r'^(consuming input|sending copy data|sending query) failed:\s*', "", said)
    return said.rstrip(".") or type(error).__name__


def server_of(conninfo: str) -> str:
    """host:port/dbname of a URL, as libpq reads it (no user, no password)."""
    parts = _parts(conninfo)
    if not parts:
        return "the server the URL names"
    host = str(parts.get("host") or os.environ.get("PGHOST") or "localhost")
    port = str(parts.get("port") or os.environ.get("PGPORT") or "5432")
    dbname = parts.get("dbname") or os.environ.get("PGDATABASE")
    where = f"{host}:{port}" if not host.startswith("/") else f"{host} (port {port})"
    return f"{where}, database {dbname}" if dbname else where


def _parts(conninfo: str) -> dict[str, Any]:
    try:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(conninfo)
    except Exception:  # noqa: BLE001 - a URL libpq cannot read fails where it is used
        return {}


def _forget_in_child() -> None:
    global _reaches_lock
    _reaches.clear()
    _reaches_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
