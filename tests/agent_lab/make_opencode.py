"""Make tests/fixtures/agents/opencode/ by running opencode against the fake model server.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_opencode.py

The provider is an `@ai-sdk/openai-compatible` one named `fake` in `opencode.json` (in the
project), with a 20,000-token context so that a reply reporting 19,000 prompt tokens makes
opencode compact before its next request. Runs (`opencode run`, headless):
 1. "list the files": a bash call (ls) and its result, then an answer;
 2. `--continue` "now read notes.txt": a read call (the reply reports 19,000 prompt tokens),
    the automatic compaction, then an answer;
 3. `--session <first> --fork` "fork: say hi": a forked copy of the session gets the turn;
 4. "ask a helper": a task call (sub-agent `general`) that runs one bash command.
Then `opencode export <id>` for each session and `opencode stats`. The database is copied
with VACUUM INTO; `requests.jsonl` summarises what the fake server received."""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, backup_sqlite, new_lab, npm_bin, versions  # noqa: E402
from fake_model_server import FakeModelServer, Reply, ToolCall, Usage, contains  # noqa: E402

MODEL = "fake-model"


def config(base_url: str) -> dict:
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake (127.0.0.1)",
            "options": {"baseURL": base_url + "/v1", "apiKey": FAKE_KEY},
            "models": {MODEL: {"name": "Fake model", "tool_call": True,
                               "limit": {"context": 20000, "output": 4000},
                               "cost": {"input": 3, "output": 15, "cache_read": 0.3}}}}},
        "model": f"fake/{MODEL}", "small_model": f"fake/{MODEL}",
        "autoupdate": False, "share": "disabled",
        "permission": {"bash": "allow", "edit": "allow", "read": "allow"},
    }


def opencode_env(lab) -> dict:
    return lab.env(OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                   OPENCODE_DISABLE_SHARE="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1",
                   OPENCODE_DISABLE_DEFAULT_PLUGINS="1")


def write_config(lab) -> None:
    (lab.project / "opencode.json").write_text(json.dumps(config(lab.server.url), indent=1))


def in_sub_agent(request) -> bool:
    first_user = next((m for m in request.conversation() if m["role"] == "user"), None)
    return first_user is not None and "SUBTASK" in first_user["text"]


def sub_agent_has_result(request) -> bool:
    return in_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


TITLE = contains("You are a title generator")
RULES = [
    (TITLE, Reply("Files in the project", usage=Usage(50, 5))),
    # the compaction request: opencode's summary prompt, no tools
    (lambda r: not r.tool_names and contains("summar")(r),
     Reply("Summary: the user listed the files (notes.txt) and asked to read notes.txt.",
           usage=Usage(400, 30))),
    (sub_agent_has_result, Reply("The sub-agent counted 2 files.")),
    (in_sub_agent, Reply("Counting.", [ToolCall("bash", {"command": "ls | wc -l",
                                                          "description": "count files"})])),
]

SCRIPT = [
    # run 1
    Reply("I will list the files.", [ToolCall("bash", {"command": "ls",
                                                       "description": "list files"})]),
    Reply("There is one file: notes.txt."),
    # run 2: --continue; the call's reply reports 19,000 prompt tokens
    Reply("Reading it.", [ToolCall("read", {"filePath": "notes.txt"})],
          usage=Usage(19_000, 12, cached_tokens=1_000)),
    Reply("notes.txt says: hello from the lab."),
    # run 3: --fork
    Reply("Hi from the fork."),
    # run 4: the sub-agent
    Reply("I will ask a helper.", [ToolCall("task", {
        "description": "Count files", "prompt": "SUBTASK: count the files in the project",
        "subagent_type": "general"})]),
    Reply("The helper says there are 2 files."),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/opencode"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "opencode")
    args = parser.parse_args()
    opencode = npm_bin("opencode")
    if opencode is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(SCRIPT, rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        write_config(lab)
        (lab.project / "notes.txt").write_text("hello from the lab\n")
        env = opencode_env(lab)
        db = lab.home / ".local/share/opencode/opencode.db"

        def sessions() -> list[tuple]:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                return conn.execute("SELECT id, parent_id, title FROM session"
                                    " ORDER BY time_created").fetchall()

        def run(argv, note):
            done = lab.run([opencode, "run", *argv], env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-800:]}\n{done.stderr[-1500:]}")
            return done

        run(["list the files"], "1: a bash call and its result")
        first = sessions()[0][0]
        run(["--continue", "now read notes.txt"], "2: --continue, read, automatic compaction")
        run(["--session", first, "--fork", "fork: say hi"], "3: --fork of the first session")
        run(["ask a helper to count the files"], "4: a task call (sub-agent)")
        exports = {}
        for session_id, _, _ in sessions():
            done = lab.run([opencode, "export", session_id], env=env,
                           note=f"export {session_id}", timeout=120)
            exports[session_id] = done.stdout
        stats = lab.run([opencode, "stats"], env=env, note="stats", timeout=120).stdout
        requests = [{"path": r.path, "api": r.api, "scripted": r.scripted,
                     "tools": r.tool_names,
                     "messages": [(m["role"], m["text"][:80], m["tool_calls"])
                                  for m in r.conversation()][-4:]}
                    for r in server.requests if r.api != "proxy"]
        outside = sorted({r.path for r in server.unknown})
        with open(args.keep / "requests-full.jsonl", "w") as full:
            for r in server.requests:
                full.write(json.dumps({"path": r.path, "body": r.body}) + "\n")
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    (out / "export").mkdir(parents=True)
    backup_sqlite(db, out / "opencode.db")
    for session_id, text in exports.items():
        (out / "export" / f"{session_id}.json").write_text(text)
    (out / "stats.txt").write_text(stats)
    (out / "opencode.json").write_text((lab.project / "opencode.json").read_text())
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["opencode", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1))
    print("outside hosts tried (refused):", outside)
    print("sessions:", sessions())
    print("version", versions()["opencode-ai"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
