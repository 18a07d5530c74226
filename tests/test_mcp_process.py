"""`arbor mcp` as a process: the protocol spoken over its stdin and stdout (and nothing else
on stdout), the base install and the app never loading the SDK, the one sentence said when the
extra is missing, and the server open beside an import and an agent appending to the store."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARBOR = [sys.executable, "-c", "from tui.cli import run; run()"]


def _env(tmp_path, **more) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT), **more)
    env.pop("ARBOR_DB", None)
    return env


class Speaker:
    """A JSON-RPC client on a process's stdin and stdout, one message a line (MCP's stdio
    transport), as an agent speaks to the servers it starts."""

    def __init__(self, argv, env, cwd):
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
        self.next_id = 0
        self.lines: list[str] = []

    def send(self, method, params=None, *, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        if notify:
            return None
        while True:
            line = self.process.stdout.readline()
            assert line, f"the server closed stdout: {self.process.stderr.read()}"
            self.lines.append(line)
            answer = json.loads(line)         # every line on stdout is a protocol message
            if answer.get("id") == self.next_id:
                return answer

    def close(self) -> tuple[int, str, str]:
        self.process.stdin.close()
        rest = self.process.stdout.read()
        err = self.process.stderr.read()
        return self.process.wait(timeout=30), rest, err


def test_arbor_mcp_speaks_the_protocol_on_stdio(demo_db, tmp_path):
    speaker = Speaker(ARBOR + ["mcp", "--db", str(demo_db)],
                      _env(tmp_path, CLAUDE_CODE_SESSION_ID="1e7ea419"), cwd=tmp_path)
    hello = speaker.send("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.332"}})
    assert hello["result"]["serverInfo"]["name"] == "arbor"
    assert "search" in hello["result"]["instructions"]
    speaker.send("notifications/initialized", notify=True)
    tools = speaker.send("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} >= {"search", "get_messages", "whoami"}
    assert "label" not in {t["name"] for t in tools}
    found = speaker.send("tools/call", {"name": "search", "arguments": {"query": "flaky"}})
    hits = found["result"]["structuredContent"]["hits"]
    assert hits and hits[0]["session"]
    me = speaker.send("tools/call", {"name": "whoami", "arguments": {}})["result"]
    assert me["structuredContent"]["session"] == "1e7ea419"
    assert me["structuredContent"]["client"] == "claude-code"
    wrong = speaker.send("tools/call", {"name": "get_session", "arguments": {"session": 3}})
    assert wrong["result"]["isError"] is True
    code, rest, err = speaker.close()
    assert code == 0 and rest == ""
    assert "Traceback" not in err


def test_the_start_collects_no_garbage_until_initialize_is_answered(demo_db, tmp_path):
    # the SDK's import builds ~500 pydantic models: the collector is paused for the start
    # (a tenth of it), and on again for the tool calls
    counter = tmp_path / "collections"
    probe = textwrap.dedent(f"""
        import gc, sys
        seen = [0]
        def count(phase, info):
            if phase == "start" and "mcp" in sys.modules:
                seen[0] += 1
                with open({str(counter)!r}, "w") as out:
                    out.write(str(seen[0]))
        gc.callbacks.append(count)
        from tui.cli import run
        run()
    """)
    speaker = Speaker([sys.executable, "-c", probe, "mcp", "--db", str(demo_db)],
                      _env(tmp_path), cwd=tmp_path)
    hello = speaker.send("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"}})
    assert hello["result"]["serverInfo"]["name"] == "arbor"
    assert not counter.exists()       # no collection since the SDK was imported
    speaker.send("notifications/initialized", notify=True)
    assert speaker.send("tools/list")["result"]["tools"]
    for word in ("flaky", "test", "cache", "deploy"):
        speaker.send("tools/call", {"name": "search", "arguments": {"query": word}})
    code, _, err = speaker.close()
    assert code == 0, err
    assert int(counter.read_text()) > 0  # and the tool calls' garbage is collected again


def test_the_app_and_the_command_line_never_import_the_sdk(tmp_path):
    probe = textwrap.dedent("""
        import sys
        from tui.cli import main
        assert main(["--help"]) == 0
        assert main(["mcp", "--help"]) == 0
        import tui.app
        loaded = sorted(m for m in sys.modules if m == "mcp" or m.startswith("mcp."))
        print("LOADED", loaded, file=sys.stderr)
        sys.exit(1 if loaded else 0)
    """)
    done = subprocess.run([sys.executable, "-c", probe], env=_env(tmp_path), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--allow-write" in done.stdout


def test_without_the_extra_one_sentence_says_how_to_install_it(demo_db, tmp_path):
    # an interpreter where `mcp` cannot be imported, as after `pip install arbor`
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys
        class NoMCP:
            def find_spec(self, name, path=None, target=None):
                if name == "mcp" or name.startswith("mcp."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, NoMCP())
    """))
    env = _env(tmp_path)
    env["PYTHONPATH"] = f"{blocker}:{ROOT}"
    done = subprocess.run(ARBOR + ["mcp", "--db", str(demo_db)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == \
        ["arbor: arbor mcp needs the MCP SDK: install it with  pip install 'arbor[mcp]'."]


def test_a_store_that_cannot_be_opened_is_one_sentence(tmp_path):
    missing = tmp_path / "nowhere" / "store.db"
    done = subprocess.run(ARBOR + ["mcp", "--db", str(missing)], env=_env(tmp_path),
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


PI_SESSION = [
    {"type": "session", "version": 3, "id": "0199aaaa-0000-7000-8000-000000000001",
     "timestamp": "2026-11-29T07:41:47.102Z", "cwd": "/work/shop"},
    {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-11-29T07:41:48.000Z",
     "message": {"role": "user", "content": "Why does the zanzibarquux cache miss?"}},
    {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-29T07:41:49.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Its key changes."}]}},
]

APPEND = textwrap.dedent("""
    import sys
    from core import open_store
    store = open_store(sys.argv[1], create=False)
    branch = store.branches.current(store.sessions.by_uid(sys.argv[2]).id)
    store.entries.append_messages(branch.id, [{"role": "user", "content": sys.argv[3]}])
    store.close()
""")


@pytest.mark.sqlite_only
async def test_the_server_sees_an_import_and_an_agents_appends_and_locks_nobody_out(
        demo_db, tmp_path):
    from mcp import Client
    from mcp.types import Implementation

    from core import open_store
    from core.mcp.server import build

    store = open_store(demo_db, read_only=True)     # as `arbor mcp` opens it
    server = build(store, env={}, cwd=str(tmp_path))
    try:
        async with Client(server, mode="legacy",
                          client_info=Implementation(name="t", version="1")) as client:
            async def structured(tool, **arguments):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content[0].text
                return result.structured_content

            before = await structured("search", query="zanzibarquux")
            assert before["hits"] == []
            versions = [store.data_version()]
            # an import in another process while the server holds the store open
            log = tmp_path / "pi.jsonl"
            log.write_text("".join(json.dumps(line) + "\n" for line in PI_SESSION))
            imported = subprocess.run(ARBOR + ["import", str(log), "--db", str(demo_db)],
                                      env=_env(tmp_path), cwd=tmp_path, capture_output=True,
                                      text=True, timeout=120, stdin=subprocess.DEVNULL)
            assert imported.returncode == 0, imported.stderr
            versions.append(store.data_version())
            after = await structured("search", query="zanzibarquux")
            assert [h["session"] for h in after["hits"]] == [PI_SESSION[0]["id"]]
            listed = await structured("list_sessions", source="pi")
            assert PI_SESSION[0]["id"] in [s["session"] for s in listed["sessions"]]
            # an agent appending to a session the server has just read
            old = await structured("get_messages", session="1e7ea419", count=3)
            appended = subprocess.run(
                [sys.executable, "-c", APPEND, str(demo_db), "1e7ea419", "wibblefrotz done"],
                env=_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert appended.returncode == 0, appended.stderr
            versions.append(store.data_version())
            new = await structured("get_messages", session="1e7ea419", count=3)
            assert new["length"] == old["length"] + 1
            assert new["messages"][-1]["text"] == "wibblefrotz done"
            assert (await structured("search", query="wibblefrotz"))["hits"]
            assert len(set(versions)) == 3       # each write reached the server's connection
    finally:
        store.close()


def test_sigterm_stops_a_serving_server_at_once(demo_db, tmp_path):
    import signal

    speaker = Speaker(ARBOR + ["mcp", "--db", str(demo_db)], _env(tmp_path), cwd=tmp_path)
    speaker.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
    speaker.process.send_signal(signal.SIGTERM)     # stdin still open: its reader is blocked
    assert speaker.process.wait(timeout=20) == 128 + signal.SIGTERM
    assert speaker.process.stderr.read().strip() == "arbor mcp: stopped by SIGTERM."
