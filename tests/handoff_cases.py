"""The hand-off tests' sessions and what each target agent must load of them.

One session per source agent (tests/agent_logs.py), imported, and for every other agent the
branch as that agent's own reader must return it: messages in order, tool calls under the
target's own tool (or generic), their results. Written out by hand per pair, not computed by
the code under test."""

from __future__ import annotations

from pathlib import Path

from agent_logs import claude_session, codex_session, pi_session
from core.importing import import_paths

PAIRS = [(s, t) for s in ("claude_code", "codex", "pi") for t in ("claude_code", "codex", "pi")
         if s != t]

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
EXPECTED = {"claude_code": CLAUDE_BRANCH, "codex": CODEX_BRANCH, "pi": PI_BRANCH}
TITLES = {"claude_code": "Flaky parser test · Instead, run the test 50 times first.",
          "codex": "Add a --dry-run flag to the deploy script · main",
          "pi": "Rename the config module · Wait, list the tests first."}


def expected(source: str, target: str, cwd: str = "") -> list[tuple]:
    rows = EXPECTED[source][target]
    if target == "qwen":
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
