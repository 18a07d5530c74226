"""Make tests/fixtures/agents/copilot/ by running GitHub Copilot CLI against the fake server.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_copilot.py

Copilot CLI's own BYOK mode: COPILOT_PROVIDER_BASE_URL (OpenAI Chat Completions) with
COPILOT_OFFLINE=true, so no GitHub login and no other network. A 20,000-token prompt limit
(COPILOT_PROVIDER_MAX_PROMPT_TOKENS) lets a reply reporting 19,000 prompt tokens start a
compaction. Runs (`copilot -p ... --allow-all-tools`):
 1. "list the files": a bash call (ls), its result, an answer;
 2. `--resume=<id>` "now read notes.txt": a view call reporting 19,000 prompt tokens, then
    an answer (and whatever compaction Copilot does);
 3. "ask a helper": a task call (agent_type explore) whose sub-agent runs one bash command.
The session folders are copied as written; session-store.db with VACUUM INTO."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import (FAKE_KEY, FIXTURES, backup_sqlite, copy_tree, new_lab, npm_bin,  # noqa: E402
                 versions)
from fake_model_server import FakeModelServer, Reply, ToolCall, Usage, last_says  # noqa: E402

MODEL = "gpt-4.1"


def copilot_env(lab, **more) -> dict:
    return lab.env(COPILOT_PROVIDER_BASE_URL=lab.server.url + "/v1",
                   COPILOT_PROVIDER_API_KEY=FAKE_KEY, COPILOT_OFFLINE="true",
                   COPILOT_MODEL=MODEL, COPILOT_AUTO_UPDATE="false", **more)


def in_sub_agent(request) -> bool:
    users = [m for m in request.conversation() if m["role"] == "user"]
    return any("SUBTASK" in m["text"] for m in users) and \
        not any("ask a helper" in m["text"] for m in users)


def sub_agent_has_result(request) -> bool:
    return in_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


# the compaction request: the whole history with the tools, then this user message
is_compaction = last_says("Please create a detailed summary of the conversation so far")


RULES = [
    (is_compaction, Reply("<summary>The user listed the files (notes.txt) and read notes.txt."
                          "</summary>", usage=Usage(400, 30))),
    (sub_agent_has_result, Reply("The sub-agent counted 1 file.")),
    (in_sub_agent, Reply("Counting.", [ToolCall("bash", {"command": "ls | wc -l",
                                                          "description": "count files"})])),
]

SCRIPT = [
    Reply("I will list the files.", [ToolCall("bash", {"command": "ls",
                                                       "description": "list files"})]),
    Reply("There is one file: notes.txt."),
    Reply("Reading it.", [ToolCall("view", {"path": "NOTES"})], usage=Usage(19_000, 12, 1_000)),
    # late, so that the compaction Copilot runs beside this request finishes first
    Reply("notes.txt says: hello from the lab.", delay=4),
    Reply("I will ask a helper.", [ToolCall("task", {
        "description": "Count files", "prompt": "SUBTASK: count the files in the project",
        "agent_type": "explore", "name": "counter"})]),
    Reply("The helper says there is 1 file."),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/copilot"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "copilot")
    args = parser.parse_args()
    copilot = npm_bin("copilot")
    if copilot is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(SCRIPT, rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        notes = lab.project / "notes.txt"
        notes.write_text("hello from the lab\n")
        server.script[2].tool_calls[0].arguments["path"] = str(notes)
        env = copilot_env(lab, COPILOT_PROVIDER_MAX_PROMPT_TOKENS="20000")
        base = [copilot, "--allow-all-tools", "--disable-client-telemetry"]
        state = lab.home / ".copilot" / "session-state"

        def run(argv, note):
            done = lab.run(base + argv, env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-900:]}\n{done.stderr[-1500:]}")
            return done

        run(["-p", "list the files"], "1: a bash call and its result")
        first = next(p.name for p in state.iterdir() if not p.name.startswith("."))
        run([f"--resume={first}", "-p", "now read notes.txt"],
            "2: --resume, a view call, 19,000 prompt tokens of 20,000")
        run(["-p", "ask a helper to count the files"], "3: a task call (sub-agent)")
        run([f"--resume={first}", "-p", "/compact"], "4: /compact on the first session")
        requests = [{"path": r.path, "api": r.api, "scripted": r.scripted,
                     "tools": len(r.tool_names),
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
    copy_tree(state, out / "session-state", skip=(".lock",))
    backup_sqlite(lab.home / ".copilot" / "session-store.db", out / "session-store.db")
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["copilot", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1))
    print("outside hosts tried (refused):", outside)
    print("version", versions()["@github/copilot"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
