"""`arbor mcp [--allow-write] [--db PATH]`: an MCP server on stdin/stdout over the store, for
agents to search and read their history (and, with --allow-write, label, checkpoint and fork
it). The server is core/mcp; it needs the optional extra `arbor[mcp]`.

Exit status: 0 the client closed the connection, 1 the MCP SDK is not installed, 2 the store
cannot be opened (or the command line is wrong).
"""

from __future__ import annotations

import argparse

from .shared import EXIT_FAILED, EXIT_OK, EXIT_STORE, add_db_argument, open_store_or_explain, say

# Ctrl-C, SIGTERM and SIGHUP end the server at once (see `_stop_on_signals`), not through
# cli.Stopped: the SDK reads stdin in a worker thread that an exception cannot interrupt.
KEEPS_SIGNALS = True


def configure(p: argparse.ArgumentParser) -> None:
    p.description = ("Serve the store to agents over the Model Context Protocol on stdin and "
                     "stdout: search, sessions, messages, usage and which session the agent "
                     "is in. Register it in the agent, e.g. `claude mcp add arbor -- arbor mcp`.")
    p.add_argument("--allow-write", action="store_true",
                   help="also offer label, checkpoint and fork_here (undone with u in the app)")
    add_db_argument(p)


def run(args: argparse.Namespace) -> int:
    import gc

    from core.mcp import INSTALL_HINT, sdk_available

    # The SDK's import builds ~500 pydantic models: with the collector on, it walks them
    # again and again as they are made (about 60 ms of a ~500 ms start here). It comes back
    # on once `initialize` is answered (core.mcp.server.collect_garbage_again).
    gc.disable()
    if not sdk_available():
        say(INSTALL_HINT + ".")
        return EXIT_FAILED
    store = open_store_or_explain(args.db, create=args.allow_write,
                                  read_only=not args.allow_write)
    if store is None:
        return EXIT_STORE
    from core.mcp.server import serve_stdio

    import sys

    if sys.stdin.isatty():   # (a person typed it: the protocol is for an agent)
        say("serving the store to an MCP client on stdin and stdout; an agent starts this "
            "command itself (see `arbor mcp --help`); Ctrl-C stops it.")
    _stop_on_signals()
    try:
        serve_stdio(store, allow_write=args.allow_write)
    finally:
        store.close()
    return EXIT_OK


def _stop_on_signals() -> None:
    """Ctrl-C, SIGTERM and SIGHUP end the process at once, with 128 + the signal's number:
    the SDK's reader of stdin is a thread blocked in read(), which would keep a stopped
    server alive until its client closed the pipe. Nothing is lost: a write tool's
    transaction is either committed or rolled back by the database, as after any crash."""
    import os
    import signal
    import sys

    def stop(signum, _frame):
        try:
            print(f"arbor mcp: stopped by {signal.Signals(signum).name}.", file=sys.stderr,
                  flush=True)
        except (OSError, ValueError):
            pass
        os._exit(128 + signum)

    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, stop)
