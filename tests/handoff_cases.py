"""The hand-off tests' sessions and what each target agent must load of them.

One session per source agent (tests/agent_logs.py), imported, and for every other agent the
branch as that agent's own reader must return it: messages in order, tool calls under the
target's own tool (or generic), their results. Written out by hand per pair, not computed by
the code under test."""

from __future__ import annotations

import re
from pathlib import Path

from agent_logs import claude_session, codex_session, pi_session
from core.importing import import_paths

# (role, text, calls, thinking) / ("toolResult", call id, text); calls per target.
CLAUDE_BRANCH = {
    "codex": [
        ("user", "Find why the parser test fails — it's flaky on CI"),
        ("assistant", "I'll read the test and the parser.",
         [("Read", {"file_path": "tests/test_parser.py"}), ("Read", {"file_path": "src/parser.py"})],
         "Read the test first."),
        ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
        ("toolResult", "toolu_02", "def parse(text): ..."),
        ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
        ("user", "Instead, run the test 50 times first."),
        ("assistant", "Running it.", [("exec_command", {"cmd": "pytest -x --count 50"})], ""),
    ],
    "pi": [
        ("user", "Find why the parser test fails — it's flaky on CI"),
        ("assistant", "I'll read the test and the parser.",
         [("read", {"path": "tests/test_parser.py"}), ("read", {"path": "src/parser.py"})],
         "Read the test first."),
        ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
        ("toolResult", "toolu_02", "def parse(text): ..."),
        ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
        ("user", "Instead, run the test 50 times first."),
        ("assistant", "Running it.", [("bash", {"command": "pytest -x --count 50"})], ""),
    ],
    "qwen": [   # Qwen Code's file tools take absolute paths: joined to the session's folder
        ("user", "Find why the parser test fails — it's flaky on CI"),
        ("assistant", "I'll read the test and the parser.",
         [("read_file", {"file_path": "CWD/tests/test_parser.py"}),
          ("read_file", {"file_path": "CWD/src/parser.py"})],
         "Read the test first."),
        ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
        ("toolResult", "toolu_02", "def parse(text): ..."),
        ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
        ("user", "Instead, run the test 50 times first."),
        ("assistant", "Running it.", [("run_shell_command", {"command": "pytest -x --count 50"})], ""),
    ],
}
_SUMMARY = "The following is a summary of a branch that this conversation came back from:" \
           "\n\n<summary>\nStarted editing app.py.</summary>"
CODEX_BRANCH = {
    "claude_code": [
        ("user", "Add a --dry-run flag to the deploy script"),
        ("assistant", "", [("Bash", {"command": "rg -n argparse deploy.py"})], ""),
        ("toolResult", "call_1", "12: parser = ..."),
        ("assistant", "The script parses its flags at line 12; I'll add --dry-run there.", [], ""),
        ("user", "Also print what would be deployed."),
        ("assistant", "", [("apply_patch", {"input": "*** Begin Patch"})], ""),
        ("toolResult", "call_2", "Success."),
        ("assistant", "Done: --dry-run prints the plan and exits.", [], ""),
    ],
    "pi": [
        ("user", "Add a --dry-run flag to the deploy script"),
        ("assistant", "", [("bash", {"command": "rg -n argparse deploy.py"})],
         "Look at the argument parser.\nThen thread the flag through."),
        ("toolResult", "call_1", "12: parser = ..."),
        ("assistant", "The script parses its flags at line 12; I'll add --dry-run there.", [], ""),
        ("user", "Also print what would be deployed."),
        ("assistant", "", [("apply_patch", {"input": "*** Begin Patch"})], ""),
        ("toolResult", "call_2", "Success."),
        ("assistant", "Done: --dry-run prints the plan and exits.", [], ""),
    ],
}
CODEX_BRANCH["qwen"] = [
    ("user", "Add a --dry-run flag to the deploy script"),
    ("assistant", "", [("run_shell_command", {"command": "rg -n argparse deploy.py"})],
     "Look at the argument parser.\nThen thread the flag through."),
    ("toolResult", "call_1", "12: parser = ..."),
    ("assistant", "The script parses its flags at line 12; I'll add --dry-run there.", [], ""),
    ("user", "Also print what would be deployed."),
    ("assistant", "", [("apply_patch", {"input": "*** Begin Patch"})], ""),   # not a whole patch: generic
    ("toolResult", "call_2", "Success."),
    ("assistant", "Done: --dry-run prints the plan and exits.", [], ""),
]
PI_BRANCH = {   # after pi's compaction: its summary, the kept part, then the rest
    "claude_code": [
        ("user", "SUMMARY:Renaming config; tests listed."),
        ("user", "Rename the config module"),
        ("assistant", "", [("Bash", {"command": "rg -l config"})], ""),
        ("toolResult", "t1", "app.py\ncli.py"),
        ("assistant", "Two files import it.", [], ""),
        ("user", _SUMMARY),
        ("user", "Wait, list the tests first."),
        ("assistant", "tests/test_config.py", [], ""),
        ("user", "Now rename it."),
    ],
    "codex": [
        ("user", "Rename the config module"),
        ("assistant", "", [("exec_command", {"cmd": "rg -l config"})], "Find the imports."),
        ("toolResult", "t1", "app.py\ncli.py"),
        ("assistant", "Two files import it.", [], ""),
        ("user", _SUMMARY),
        ("user", "Wait, list the tests first."),
        ("assistant", "tests/test_config.py", [], ""),
        ("user", "Now rename it."),
    ],
}
PI_BRANCH["qwen"] = [   # Qwen Code's compression: the summary, then the kept part
    ("user", "SUMMARY:Renaming config; tests listed."),
    ("user", "Rename the config module"),
    ("assistant", "", [("run_shell_command", {"command": "rg -l config"})], "Find the imports."),
    ("toolResult", "t1", "app.py\ncli.py"),
    ("assistant", "Two files import it.", [], ""),
    ("user", _SUMMARY),
    ("user", "Wait, list the tests first."),
    ("assistant", "tests/test_config.py", [], ""),
    ("user", "Now rename it."),
]
# Gemini CLI, droid and Kimi CLI: their own tools; a call left without a result at the end
# gets the agent's own "interrupted"/"cancelled" result; droid gets no thinking
_GEMINI_CANCELLED = ("toolResult", "toolu_04", "[Operation Cancelled] Reason: the session was "
                     "carried on from before this result")
CLAUDE_BRANCH["gemini"] = [
    ("user", "Find why the parser test fails — it's flaky on CI"),
    ("assistant", "I'll read the test and the parser.",
     [("read_file", {"file_path": "tests/test_parser.py"}),
      ("read_file", {"file_path": "src/parser.py"})], "Read the test first."),
    ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
    ("toolResult", "toolu_02", "def parse(text): ..."),
    ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
    ("user", "Instead, run the test 50 times first."),
    ("assistant", "Running it.", [("run_shell_command", {"command": "pytest -x --count 50"})], ""),
    _GEMINI_CANCELLED,
]
CLAUDE_BRANCH["kimi"] = [
    ("user", "Find why the parser test fails — it's flaky on CI"),
    ("assistant", "I'll read the test and the parser.",
     [("ReadFile", {"path": "tests/test_parser.py"}), ("ReadFile", {"path": "src/parser.py"})],
     "Read the test first."),
    ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
    ("toolResult", "toolu_02", "def parse(text): ..."),
    ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
    ("user", "Instead, run the test 50 times first."),
    ("assistant", "Running it.", [("Shell", {"command": "pytest -x --count 50"})], ""),
    ("toolResult", "toolu_04", "<system>ERROR: Tool execution was interrupted before it "
                               "returned a result.</system>"),
]
CLAUDE_BRANCH["droid"] = [   # droid's Read takes absolute paths
    ("user", "Find why the parser test fails — it's flaky on CI"),
    ("assistant", "I'll read the test and the parser.",
     [("Read", {"file_path": "CWD/tests/test_parser.py"}),
      ("Read", {"file_path": "CWD/src/parser.py"})], ""),
    ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
    ("toolResult", "toolu_02", "def parse(text): ..."),
    ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
    ("user", "Instead, run the test 50 times first."),
    ("assistant", "Running it.", [("Execute", {"command": "pytest -x --count 50"})], ""),
    ("toolResult", "toolu_04", "Tool execution was interrupted"),
]
for _target, _shell in (("gemini", ("run_shell_command", "command")), ("kimi", ("Shell", "command")),
                        ("droid", ("Execute", "command"))):
    CODEX_BRANCH[_target] = [
        ("user", "Add a --dry-run flag to the deploy script"),
        ("assistant", "", [(_shell[0], {_shell[1]: "rg -n argparse deploy.py"})],
         "" if _target == "droid" else "Look at the argument parser.\nThen thread the flag through."),
        ("toolResult", "call_1", "12: parser = ..."),
        ("assistant", "The script parses its flags at line 12; I'll add --dry-run there.", [], ""),
        ("user", "Also print what would be deployed."),
        ("assistant", "", [("apply_patch", {"input": "*** Begin Patch"})], ""),   # generic
        ("toolResult", "call_2", "Success."),
        ("assistant", "Done: --dry-run prints the plan and exits.", [], ""),
    ]
    PI_BRANCH[_target] = [
        # each agent's compaction: Gemini CLI's summary and its acknowledgement; Kimi's
        # summary under its own heading; droid's summary as a user message
        *{"gemini": [("user", "Renaming config; tests listed."),
                     ("assistant", "Got it. Thanks for the additional context!", [], "")],
          "kimi": [("user", "<system>Previous context has been compacted. Here is the "
                            "compaction output:</system>\nRenaming config; tests listed.")],
          # (droid's writer words a compaction as pi words a branch summary)
          "droid": [("user", _SUMMARY.replace("Started editing app.py.",
                                              "Renaming config; tests listed."))]}[_target],
        ("user", "Rename the config module"),
        ("assistant", "", [(_shell[0], {_shell[1]: "rg -l config"})],
         "" if _target == "droid" else "Find the imports."),
        ("toolResult", "t1", "app.py\ncli.py"),
        ("assistant", "Two files import it.", [], ""),
        ("user", _SUMMARY),
        ("user", "Wait, list the tests first."),
        ("assistant", "tests/test_config.py", [], ""),
        ("user", "Now rename it."),
    ]
EXPECTED = {"claude_code": CLAUDE_BRANCH, "codex": CODEX_BRANCH, "pi": PI_BRANCH}
TITLES = {"claude_code": "Flaky parser test · Instead, run the test 50 times first.",
          "codex": "Add a --dry-run flag to the deploy script · main",
          "pi": "Rename the config module · Wait, list the tests first."}


def expected(source: str, target: str, cwd: str = "") -> list[tuple]:
    rows = EXPECTED[source][target]
    if target in ("qwen", "droid"):
        rows = [(r[0], r[1], [(name, {k: v.replace("CWD", cwd) for k, v in args.items()})
                              for name, args in r[2]], r[3]) if r[0] == "assistant" else r
                for r in rows]
    if target == "claude_code":
        # Claude Code has no place for another agent's unsigned thinking
        rows = [(r[0], r[1], r[2], "") if r[0] == "assistant" else r for r in rows]
    return rows


def source_session(source: str, root: Path, cwd: str):
    """(the log, the file it was written to) of the source agent's session."""
    log = {"claude_code": claude_session, "codex": codex_session, "pi": pi_session}[source](cwd)
    folder = root / f"source-{source}"
    return log, log.write(folder)


def import_source(store, source: str, root: Path, cwd: str):
    log, path = source_session(source, root, cwd)
    import_paths(store, [path])
    return store.sessions.by_uid(log.session_id), path


# --------------------------------------------------------------- what readers return
def _texts(blocks, kind: str) -> str:
    return "\n".join(str(b.get(kind, "")) for b in blocks
                     if isinstance(b, dict) and b.get("type") == kind and b.get(kind))


def pi_seen(messages: list[dict]) -> list[tuple]:
    """pi's buildSessionContext messages, reduced to the shape of EXPECTED."""
    out = []
    for m in messages:
        role, content = m["role"], m.get("content")
        if role == "compactionSummary":
            out.append(("user", f"SUMMARY:{m['summary']}"))
        elif role == "branchSummary":
            out.append(("user", _SUMMARY))
        elif role == "toolResult":
            out.append(("toolResult", m["toolCallId"], _texts(content, "text")))
        elif role == "user":
            out.append(("user", content if isinstance(content, str) else _texts(content, "text")))
        else:
            calls = [(b["name"], b["arguments"]) for b in content if b.get("type") == "toolCall"]
            out.append(("assistant", _texts(content, "text"), calls, _texts(content, "thinking")))
    return out


def _gemini_rows(role: str, parts: list[dict]) -> list[tuple]:
    text = "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))
    if role == "model":
        calls = [(p["functionCall"]["name"], p["functionCall"]["args"]) for p in parts
                 if "functionCall" in p]
        return [("assistant", text, calls, "".join(p["text"] for p in parts if p.get("thought")))]
    results = [("toolResult", p["functionResponse"]["id"],
                p["functionResponse"]["response"].get("output", ""))
               for p in parts if "functionResponse" in p]
    return results or [("user", text)]


def qwen_seen(records: list[dict]) -> list[tuple]:
    """Qwen Code's SessionService records (the path it resumes), reduced to the shape of
    EXPECTED: Gemini parts as text, thinking (`thought` parts), calls and results. From a
    compression on, what Qwen Code sends is its `compressedHistory` (the summary, the
    model's acknowledgement, the kept part), then the records after it."""
    out: list[tuple] = []
    for record in records:
        if record.get("subtype") == "chat_compression":
            summary, _ack, *kept = record["systemPayload"]["compressedHistory"]
            out = [("user", "SUMMARY:" + summary["parts"][0]["text"])]
            for content in kept:
                out.extend(_gemini_rows(content["role"], content["parts"]))
        elif record["type"] in ("user", "assistant", "tool_result"):
            out.extend(_gemini_rows(record["message"]["role"], record["message"]["parts"]))
    return out


def claude_seen(messages: list[dict]) -> list[tuple]:
    """The Agent SDK's getSessionMessages, reduced to the shape of EXPECTED (consecutive
    lines of one reply, as Claude Code sends them, as one message)."""
    out: list[tuple] = []
    for item in messages:
        m = item["message"]
        content = m["content"]
        if m["role"] == "user":
            if isinstance(content, str):
                text = content
                if text.startswith("This session is being continued"):
                    text = "SUMMARY:" + text.split("\n\n", 1)[1].rsplit("\n\nRecent messages", 1)[0]
                out.append(("user", text))
                continue
            for block in content:
                if block.get("type") == "tool_result":
                    body = block.get("content")
                    body = body if isinstance(body, str) else _texts(body, "text")
                    out.append(("toolResult", block["tool_use_id"], body))
                elif block.get("type") == "text":
                    out.append(("user", block["text"]))
            continue
        calls = [(b["name"], b["input"]) for b in content if b.get("type") == "tool_use"]
        out.append(("assistant", _texts(content, "text"), calls, _texts(content, "thinking")))
    return out


# ------------------------------------------------- sessions the other agents wrote
# The first exchange of a session each agent itself wrote against the fake model server
# (tests/fixtures/agents/<agent>, tests/agent_lab/make_<agent>.py): "list the files", the
# agent's shell call, its result, "There is one file: notes.txt." The branch is handed off
# from that answer on (`at_seq`), in the test's folder (the fixture's folder replaced).
AGENT_FIXTURES = Path(__file__).parent / "fixtures" / "agents"
AGENT_SOURCES = {
    "qwen": ("qwen/projects/-tmp-arbor-lab-qwen-project/chats/"
             "2232232f-aea5-4eb0-a50a-7578af0ff974.jsonl", "/tmp/arbor-lab/qwen/project"),
    "gemini": ("gemini/gemini-tmp/project/chats/session-2026-12-06T22-20-f53b9475.jsonl",
               "/tmp/arbor-lab/gemini/project"),
    "droid": ("droid/sessions/-tmp-arbor-lab-droid-project/"
              "5b1718eb-1a16-4a18-b5c5-37b5aab05f60.jsonl", "/tmp/arbor-lab/droid/project"),
    "kimi": ("kimi/kimi-home/sessions/73d625a8b0923cd1f9484f6e13217a66/"
             "b09f2d5c-bcc6-4424-b8b2-5b94e9b17630/wire.jsonl", "/tmp/arbor-lab/kimi/project"),
}
# the branch's title, up to the entry handed off (droid's session ends there)
AGENT_TITLES = {"qwen": "list the files · main, up to 1f957d79",
                "opencode": "Files in the project · main, up to msg_24d7",
                "copilot": "list the files · main, up to 0f17cf2b",
                "gemini": "list the files · main, up to 1057eb43",
                "droid": "list the files · main", "kimi": "list the files · main, up to L9"}
# what each agent's shell returned for `ls`, as it recorded it
AGENT_RESULTS = {
    "qwen": "Command: ls\nDirectory: (root)\nOutput: notes.txt\nError: (none)\nExit Code: 0\n"
            "Signal: (none)\nProcess Group PGID: (none)",
    "gemini": "<untrusted_context>\nOutput: notes.txt\nProcess Group PGID: 12407\n"
              "</untrusted_context>",
    "droid": "notes.txt\n\n\n[Process exited with code 0]",
    "kimi": "notes.txt\n",
    "opencode": "notes.txt\nopencode.json\n",
    "copilot": "notes.txt\n<shellId: 0 completed with exit code 0>",
}
# the sessions of opencode's database and Copilot's folder handed off (their first ones)
AGENT_UIDS = {"opencode": "ses_db28d291affeBWJ51SDDts5ac9",
              "copilot": "fd8ec7af-de2c-46f5-8d2f-101d6e2af536"}
AGENT_PROMPTS = {"opencode": '"list the files"'}     # (`opencode run` quoted it)
AGENT_CALL_IDS = {"qwen": "call_fake001_0", "gemini": "run_shell_command__gemini_call001_0",
                  "droid": "call_fake001_0", "kimi": "call_fake001_0",
                  "opencode": "call_fake002_0", "copilot": "call_fake001_0"}
# the source's `ls` call as each target must write it (by hand, from each agent's tools)
_DESCRIBED = {   # Qwen Code's and Gemini CLI's calls carry a description
    "claude_code": ("Bash", {"command": "ls", "description": "list files"}),
    "codex": ("exec_command", {"cmd": "ls"}),
    "pi": ("bash", {"command": "ls"}),
    "qwen": ("run_shell_command", {"command": "ls", "description": "list files"}),
    "gemini": ("run_shell_command", {"command": "ls", "description": "list files"}),
    "droid": ("Execute", {"command": "ls", "summary": "list files"}),
    "kimi": ("Shell", {"command": "ls"}),
    "opencode": ("bash", {"command": "ls"}),      # (its bash has no description)
    "copilot": ("bash", {"command": "ls", "description": "list files"}),
}
AGENT_CALLS = {
    "qwen": _DESCRIBED, "gemini": _DESCRIBED,
    "droid": {   # droid's summary of the command is the others' description
        "claude_code": ("Bash", {"command": "ls", "description": "List the project files"}),
        "codex": ("exec_command", {"cmd": "ls"}), "pi": ("bash", {"command": "ls"}),
        "qwen": ("run_shell_command", {"command": "ls", "description": "List the project files"}),
        "gemini": ("run_shell_command", {"command": "ls", "description": "List the project files"}),
        "kimi": ("Shell", {"command": "ls"}),
        "opencode": ("bash", {"command": "ls"}),
        "copilot": ("bash", {"command": "ls", "description": "List the project files"})},
    "kimi": {"claude_code": ("Bash", {"command": "ls"}), "codex": ("exec_command", {"cmd": "ls"}),
             "pi": ("bash", {"command": "ls"}), "qwen": ("run_shell_command", {"command": "ls"}),
             "gemini": ("run_shell_command", {"command": "ls"}),
             "droid": ("Execute", {"command": "ls"}), "opencode": ("bash", {"command": "ls"}),
             "copilot": ("bash", {"command": "ls"})},
    # opencode's bash declares no description (the fake model sent one): it does not cross
    "opencode": {"claude_code": ("Bash", {"command": "ls"}), "codex": ("exec_command", {"cmd": "ls"}),
                 "pi": ("bash", {"command": "ls"}), "qwen": ("run_shell_command", {"command": "ls"}),
                 "gemini": ("run_shell_command", {"command": "ls"}),
                 "droid": ("Execute", {"command": "ls"}), "kimi": ("Shell", {"command": "ls"}),
                 "copilot": ("bash", {"command": "ls"})},
    "copilot": _DESCRIBED,
}


def agent_expected(source: str, target: str) -> list[tuple]:
    """The first exchange of `source`'s own session as `target`'s reader must load it."""
    name, args = AGENT_CALLS[source][target]
    return [("user", AGENT_PROMPTS.get(source, "list the files")),
            ("assistant", "I will list the files.", [(name, args)], ""),
            ("toolResult", AGENT_CALL_IDS[source], AGENT_RESULTS[source]),
            ("assistant", "There is one file: notes.txt.", [], "")]


def import_agent_source(store, source: str, root: Path, cwd: str):
    """(the session, the seq of its first answer) of `source`'s own session, imported from a
    copy whose folder is `cwd`."""
    import hashlib
    import json
    import shutil

    if source in AGENT_UIDS:
        return _import_writer_source(store, source, root, cwd)
    relative, folder = AGENT_SOURCES[source]
    original = AGENT_FIXTURES / relative
    escaped = json.dumps(cwd)[1:-1]
    if source == "kimi":
        share = root / "source-kimi" / ".kimi"
        session_dir = share / "sessions" / hashlib.md5(cwd.encode()).hexdigest() / original.parent.name
        shutil.copytree(original.parent, session_dir)
        (share / "kimi.json").write_text(json.dumps({"work_dirs": [
            {"path": cwd, "kaos": "local", "last_session_id": None}]}))
        path = session_dir / "wire.jsonl"
    else:
        if source == "gemini":
            project = root / "source-gemini" / ".gemini" / "tmp" / "project"
            (project / "chats").mkdir(parents=True)
            (project / ".project_root").write_text(cwd)
            path = project / "chats" / original.name
        elif source == "droid":
            path = root / "source-droid" / cwd.replace("/", "-") / original.name
        else:
            path = root / "source-qwen" / re.sub(r"[^a-zA-Z0-9]", "-", cwd) / "chats" / original.name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(original.read_text("utf-8").replace(folder, escaped), "utf-8")
    import_paths(store, [path])
    session = store.sessions.get(next(s.id for s in store.sessions.list()
                                      if s.source == source and s.kind != "subagent"))
    branch = store.branches.current(session.id)
    answer = next(e for e in store.paths.entries(branch.head_seq)
                  if e.message and e.message.get("role") == "assistant" and
                  "There is one file" in str(e.message.get("content")))
    return session, answer.seq


def _import_writer_source(store, source: str, root: Path, cwd: str):
    """opencode's database (its session's folder set to `cwd`) or Copilot's session folder
    (the folder replaced in its events), imported: (the session, the seq of its first
    answer)."""
    import json
    import shutil
    import sqlite3

    if source == "opencode":
        path = root / "source-opencode" / "opencode.db"
        path.parent.mkdir(parents=True)
        with sqlite3.connect(f"file:{AGENT_FIXTURES / 'opencode' / 'opencode.db'}?mode=ro",
                             uri=True) as original:
            original.execute("VACUUM INTO ?", (str(path),))
        with sqlite3.connect(path) as copy:
            copy.execute("UPDATE session SET directory = ?", (cwd,))
        copy.close()
    else:
        path = root / "source-copilot" / "session-state"
        shutil.copytree(AGENT_FIXTURES / "copilot" / "session-state", path)
        escaped = json.dumps(cwd)[1:-1]
        for events in path.rglob("events.jsonl"):
            events.write_text(events.read_text("utf-8").replace(
                "/tmp/arbor-lab/copilot/project", escaped), "utf-8")
    import_paths(store, [path])
    session = store.sessions.get(store.sessions.by_uid(AGENT_UIDS[source]).id)
    branch = store.branches.current(session.id)
    answer = next(e for e in store.paths.entries(branch.head_seq)
                  if e.message and e.message.get("role") == "assistant" and
                  "There is one file" in str(e.message.get("content")))
    return session, answer.seq


def gemini_seen(history: list[dict]) -> list[tuple]:
    """Gemini CLI's client history (convertSessionToClientHistory), reduced to the shape
    of EXPECTED (a result's error, as for a cancelled call, as its text)."""
    out: list[tuple] = []
    for content in history:
        parts = content["parts"]
        for part in parts:
            response = part.get("functionResponse", {}).get("response")
            if isinstance(response, dict) and "output" not in response and "error" in response:
                response["output"] = response["error"]
        out.extend(_gemini_rows(content["role"], parts))
    return out


def kimi_seen(history: list[dict]) -> list[tuple]:
    """Kimi CLI's restored context (OpenAI-style messages with `think` parts), reduced to
    the shape of EXPECTED."""
    import json

    def texts(content, kind: str) -> str:
        if isinstance(content, str):
            return content if kind == "text" else ""
        return "\n".join(p.get(kind, "") for p in content or () if p.get("type") == kind)

    out: list[tuple] = []
    for m in history:
        if m["role"] == "tool":
            out.append(("toolResult", m["tool_call_id"], texts(m["content"], "text")))
        elif m["role"] == "user":
            out.append(("user", texts(m["content"], "text")))
        elif m["role"] == "assistant":
            calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
                     for c in m.get("tool_calls") or ()]
            out.append(("assistant", texts(m["content"], "text"), calls,
                        texts(m["content"], "think")))
    return out


def droid_view(rows: list[tuple]) -> list[tuple]:
    """What `droid search` shows of EXPECTED: each message's text by role, each call's
    tool, each result's text (not thinking: droid gets none)."""
    out = []
    for row in rows:
        if row[0] == "toolResult":
            out.append(("tool_result", row[1], row[2]))
        elif row[0] == "user":
            out.append(("message_text", "user", row[1]))
        else:
            if row[1]:
                out.append(("message_text", "assistant", row[1]))
            out.extend(("tool_use", name, "") for name, _args in row[2])
    return out


# ------------------------------------------------ opencode and Copilot CLI as targets
# Their own tools (by hand, from the tools each declares to its model): opencode's read and
# bash, Copilot's view and bash; their file tools take absolute paths; a call left without
# a result at the end gets the agent's own failed result. Thinking crosses (a reasoning
# part; Copilot's reasoningText).
_OPENCODE_ABORTED = "Tool execution aborted"
_COPILOT_INTERRUPTED = "The tool call was interrupted before it finished."
for _target, _read, _shell, _cut in (
        ("opencode", ("read", "filePath"), "bash", _OPENCODE_ABORTED),
        ("copilot", ("view", "path"), "bash", _COPILOT_INTERRUPTED)):
    CLAUDE_BRANCH[_target] = [
        ("user", "Find why the parser test fails — it's flaky on CI"),
        ("assistant", "I'll read the test and the parser.",
         [(_read[0], {_read[1]: "CWD/tests/test_parser.py"}),
          (_read[0], {_read[1]: "CWD/src/parser.py"})], "Read the test first."),
        ("toolResult", "toolu_01", "def test_parse(): assert parse(now()) == ..."),
        ("toolResult", "toolu_02", "def parse(text): ..."),
        ("assistant", "The test compares against `now()`: it races the clock.", [], ""),
        ("user", "Instead, run the test 50 times first."),
        ("assistant", "Running it.", [(_shell, {"command": "pytest -x --count 50"})], ""),
        ("toolResult", "toolu_04", _cut),
    ]
    CODEX_BRANCH[_target] = [
        ("user", "Add a --dry-run flag to the deploy script"),
        ("assistant", "", [(_shell, {"command": "rg -n argparse deploy.py"})],
         "Look at the argument parser.\nThen thread the flag through."),
        ("toolResult", "call_1", "12: parser = ..."),
        ("assistant", "The script parses its flags at line 12; I'll add --dry-run there.", [], ""),
        ("user", "Also print what would be deployed."),
        ("assistant", "", [("apply_patch", {"input": "*** Begin Patch"})], ""),   # generic
        ("toolResult", "call_2", "Success."),
        ("assistant", "Done: --dry-run prints the plan and exits.", [], ""),
    ]
    PI_BRANCH[_target] = [   # each one's compaction: the summary, then the kept part
        ("user", "SUMMARY:Renaming config; tests listed."),
        ("user", "Rename the config module"),
        ("assistant", "", [(_shell, {"command": "rg -l config"})], "Find the imports."),
        ("toolResult", "t1", "app.py\ncli.py"),
        ("assistant", "Two files import it.", [], ""),
        ("user", _SUMMARY),
        ("user", "Wait, list the tests first."),
        ("assistant", "tests/test_config.py", [], ""),
        ("user", "Now rename it."),
    ]


def with_cwd(rows: list[tuple], cwd: str) -> list[tuple]:
    return [(r[0], r[1], [(name, {k: v.replace("CWD", cwd) if isinstance(v, str) else v
                                  for k, v in args.items()}) for name, args in r[2]], r[3])
            if r[0] == "assistant" else r for r in rows]


def opencode_seen(document: dict) -> list[tuple]:
    """`opencode export` of a session, reduced to the shape of EXPECTED: each message's text,
    reasoning and tool parts (a tool part's result after its message, its error where it
    failed). From a compaction's summary on, what opencode sends: the summary, the messages
    from the compaction's `tail_start_id`, then what follows."""
    out: list[tuple] = []
    by_id: dict[str, list[tuple]] = {}
    order: list[str] = []
    tail: str | None = None
    for message in document["messages"]:
        info, parts = message["info"], message["parts"]
        rows: list[tuple] = []
        if info["role"] == "user":
            compaction = next((p for p in parts if p["type"] == "compaction"), None)
            if compaction is not None:
                tail = compaction.get("tail_start_id")
                continue
            rows.append(("user", "".join(p["text"] for p in parts if p["type"] == "text")))
        elif info.get("summary"):
            text = "".join(p["text"] for p in parts if p["type"] == "text")
            kept = order[order.index(tail):] if tail in order else []
            out = [("user", f"SUMMARY:{text}")] + [row for mid in kept for row in by_id[mid]]
            order, by_id = [], {}
            continue
        else:
            tools = [p for p in parts if p["type"] == "tool"]
            rows.append(("assistant", "".join(p["text"] for p in parts if p["type"] == "text"),
                         [(p["tool"], p["state"]["input"]) for p in tools],
                         "".join(p["text"] for p in parts if p["type"] == "reasoning")))
            rows += [("toolResult", p["callID"], p["state"].get("output", p["state"].get("error")))
                     for p in tools]
        by_id[info["id"]] = rows
        order.append(info["id"])
        out += rows
    return out


def copilot_seen(events: list[dict]) -> list[tuple]:
    """The events Copilot CLI loaded (its SDK's getEvents), reduced to the shape of EXPECTED.
    From an applied compaction on, what Copilot sends: the summary, what was said after the
    compaction started, then what follows."""
    out: list[tuple] = []
    started = 0
    for event in events:
        kind, data = event["type"], event["data"]
        if kind == "session.compaction_start":
            started = len(out)
        elif kind == "session.compaction_complete" and data.get("success"):
            out = [("user", f"SUMMARY:{data['summaryContent']}")] + out[started:]
        elif kind == "user.message":
            out.append(("user", data["content"]))
        elif kind == "assistant.message":
            out.append(("assistant", data["content"],
                        [(r["name"], r["arguments"]) for r in data.get("toolRequests") or ()],
                        data.get("reasoningText", "")))
        elif kind == "tool.execution_complete":
            text = data["result"]["content"] if data.get("success") else data["error"]["message"]
            out.append(("toolResult", data["toolCallId"], text))
    return out
