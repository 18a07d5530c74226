"""`arbor mcp` on a big store: what each tool call costs through the protocol, and how long the
server takes from its start to its first answer.

    python bench/make_big_store.py /tmp/big.db
    python bench/bench_mcp.py /tmp/big.db [--repeat 5] [--starts 5]

Tool calls go through the MCP SDK's in-memory client (the JSON-RPC messages, argument
validation and result conversion included), on a server built as `arbor mcp` builds it
(read-only store). Each figure is the median of `--repeat` calls: wall time, and the CPU time
of this process (client and server both; on a loaded machine, the steadier of the two). Then `arbor mcp`
is started `--starts` times as a process, as an agent starts it, and timed from the spawn to
the answer of `initialize` and to the answer of a first `search`; the interpreter's own start
and the SDK's import are timed apart, since they bound what arbor can do.

Targets (issue 32): search under 100 ms, a 50-message window of get_messages under 50 ms on the
1M-entry store, start to first answer under 500 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BIG_NAME = "Big session: 100k messages"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def tool_calls(path: str, repeat: int) -> None:
    from mcp import Client
    from mcp.types import Implementation

    from core import open_store
    from core.mcp.server import build

    store = open_store(path, read_only=True)
    big = next(s for s in store.sessions.list() if s.name == BIG_NAME)
    head = store.branches.current(big.id).head_seq
    length = store.paths.length(head)
    middle = store.paths.at_depth(head, length // 2)
    calls = [
        ("search", "common word", {"query": "handler"}),
        ("search", "two words", {"query": "backoff retry"}),
        ("search", "exact phrase", {"query": '"cache is warm"'}),
        ("search", "rare word", {"query": "99999"}),
        ("search", "no match", {"query": "migration"}),
        ("search", "regex over hits", {"query": "handler", "regex": r"retry \w+ backoff"}),
        ("search", "one session", {"query": "handler", "session": big.uid}),
        ("search", "page 3 of 10", {"query": "handler", "offset": 20}),
        ("get_messages", "50, newest", {"session": big.uid, "count": 50}),
        ("get_messages", "50, from middle", {"session": big.uid, "start": length // 2,
                                             "count": 50}),
        ("get_messages", "50, around entry", {"session": big.uid, "around": middle,
                                              "count": 50}),
        ("get_messages", "50, tools open", {"session": big.uid, "count": 50, "tools": True}),
        ("get_entry", "one", {"entry": middle}),
        ("get_session", "big session", {"session": big.uid}),
        ("whoami", "no session id", {}),
        ("list_sessions", "first 50", {"limit": 50}),
        ("usage", "by model", {"by": "model"}),
    ]
    server = build(store, env={}, cwd="/nowhere")
    print(f"store: {path} ({length:,} entries on the big branch)\n")
    print(f"{'tool':<15}{'case':<20}{'median ms':>10}{'max ms':>9}{'CPU ms':>8}  result")
    async with Client(server, mode="legacy",
                      client_info=Implementation(name="bench", version="1")) as client:
        for tool, case, arguments in calls:
            samples, cpu, result = [], [], None
            for _ in range(repeat):
                started, used = time.perf_counter(), time.process_time()
                result = await client.call_tool(tool, arguments)
                samples.append(time.perf_counter() - started)
                cpu.append(time.process_time() - used)
            data = result.structured_content or {}
            counted = [f"{len(data[k])} {k}" for k in ("hits", "messages", "sessions", "rows")
                       if isinstance(data.get(k), list)]
            shown = ("error: " + result.content[0].text[:60] if result.is_error else
                     counted[0] if counted else "ok")
            print(f"{tool:<15}{case:<20}{median_ms(samples):>10.1f}{max(samples) * 1000:>9.1f}"
                  f"{median_ms(cpu):>8.1f}  {shown}")
    store.close()


def starts(path: str, count: int) -> None:
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"
    ready = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    search = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "search", "arguments": {"query": "handler"}}}) + "\n"
    argv = [sys.executable, "-c", "from tui.cli import run; run()", "mcp", "--db", path]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    firsts, answers = [], []
    for _ in range(count):
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True, env=env)
        process.stdin.write(hello)
        process.stdin.flush()
        json.loads(process.stdout.readline())
        firsts.append(time.perf_counter() - started)
        process.stdin.write(ready + search)
        process.stdin.flush()
        json.loads(process.stdout.readline())
        answers.append(time.perf_counter() - started)
        process.stdin.close()
        process.wait(timeout=30)
    floor = []
    sdk = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        floor.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True, env=env)
        sdk.append(time.perf_counter() - started)
    print(f"\n{'arbor mcp, as a process':<40}{'median ms':>10}{'min ms':>9}")
    for name, samples in (("python -c pass", floor), ("python -c 'import mcp.server.mcpserver'", sdk),
                          ("spawn to the initialize answer", firsts),
                          ("spawn to the first search answer", answers)):
        print(f"{name:<40}{median_ms(samples):>10.0f}{min(samples) * 1000:>9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    import anyio

    anyio.run(tool_calls, args.store, args.repeat)
    starts(args.store, args.starts)


if __name__ == "__main__":
    main()
