"""`arbor mcp` on a big store: what each tool call costs through the protocol, and how long the
server takes from its start to its first answer.

    python bench/make_big_store.py /tmp/big.db
    python bench/bench_mcp.py /tmp/big.db [--repeat 5] [--starts 5]

Tool calls go through the MCP SDK's in-memory client (the JSON-RPC messages, argument
validation and result conversion included), on a server built as `arbor mcp` builds it
(read-only store). Each figure is the median of `--repeat` calls: wall time, and the CPU time
of this process (client and server both; on a loaded machine, the steadier of the two). Then `arbor mcp`
is started `--starts` times as a process, as an agent starts it, and timed from the spawn to
the answers of `initialize`, of `tools/list` and of a first `search`: wall time and the
server's CPU time (read from /proc on Linux). A server made of the SDK alone (`MCPServer`
and one tool), the interpreter's own start and `import mcp` are timed beside it, since they
bound what arbor can do. `--only calls` or `--only starts` runs one half.

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


HELLO_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("hello")


@server.tool()
def hello(name: str) -> str:
    \"\"\"Say hello.\"\"\"
    return "hello " + name


server.run("stdio")
"""


def _cpu_ms(pid: int) -> float | None:
    """The CPU time a running process has used so far (Linux: /proc), in ms."""
    import os

    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _spawn(argv: list[str], env: dict, steps: list[tuple[str, str]]) -> list[tuple[float, float | None]]:
    """Start a server, send each step's message and wait for its answer: per step, the wall
    time since the spawn and the server's CPU time so far."""
    import tempfile

    started = time.perf_counter()
    # (in a folder of no checkout: `python -c` puts its folder before PYTHONPATH)
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env,
                               cwd=tempfile.gettempdir())
    marks = []
    for message, _ in steps:
        process.stdin.write(message)
        process.stdin.flush()
        json.loads(process.stdout.readline())
        marks.append((time.perf_counter() - started, _cpu_ms(process.pid)))
    process.stdin.close()
    process.wait(timeout=30)
    return marks


def starts(path: str, count: int) -> None:
    def message(ident, method, params=None):
        body = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            body["params"] = params
        return json.dumps(body) + "\n"

    hello = message(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "bench", "version": "1"}})
    ready = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    listing = ready + message(2, "tools/list")
    search = message(3, "tools/call", {"name": "search", "arguments": {"query": "handler"}})
    arbor = [sys.executable, "-c", "from tui.cli import run; run()", "mcp", "--db", path]
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    figures: dict[str, list[tuple[float, float | None]]] = {}
    for _ in range(count):
        for label, argv, steps in (
                ("SDK-only hello server", [sys.executable, "-c", HELLO_SERVER],
                 [(hello, "initialize"), (listing, "tools/list")]),
                ("arbor mcp", arbor,
                 [(hello, "initialize"), (listing, "tools/list"), (search, "first search")])):
            for (wall, cpu), (_, step) in zip(_spawn(argv, env, steps), steps):
                figures.setdefault(f"{label}: spawn to {step} answer", []).append((wall, cpu))
        for label, code in (("python -c pass", "pass"), ("python -c 'import mcp'", "import mcp")):
            started = time.perf_counter()
            before = os_times()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            figures.setdefault(label, []).append((time.perf_counter() - started,
                                                  (os_times() - before) * 1000))
    print(f"\n{'servers as processes (' + str(count) + ' starts)':<52}{'wall med':>9}{'min':>6}"
          f"{'CPU med':>9}{'min':>6}")
    for name, samples in figures.items():
        walls = [w for w, _ in samples]
        cpus = [c for _, c in samples if c is not None]
        cpu = (f"{statistics.median(cpus):>9.0f}{min(cpus):>6.0f}" if cpus else f"{'?':>9}{'?':>6}")
        print(f"{name:<52}{median_ms(walls):>9.0f}{min(walls) * 1000:>6.0f}{cpu}")
    print("(CPU: the server's own, read from /proc when its answer arrives; for the two "
          "commands, the whole process to its exit)")


def os_times() -> float:
    """CPU time of the finished children of this process, in seconds."""
    import os

    times = os.times()
    return times.children_user + times.children_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--only", choices=("calls", "starts"),
                        help="only the tool calls, or only the starts")
    args = parser.parse_args()
    if args.only != "starts":
        import anyio

        anyio.run(tool_calls, args.store, args.repeat)
    if args.only != "calls":
        starts(args.store, args.starts)


if __name__ == "__main__":
    main()
