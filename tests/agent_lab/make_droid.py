"""Make tests/fixtures/agents/droid/ by running Factory's droid against the fake server.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_droid.py

droid's own BYOK: a custom model in ~/.factory/config.json (`custom_models`, provider
`generic-chat-completion-api`, base_url on the fake server) used as `-m custom:Fake-Model-0`,
with FACTORY_AIRGAP_ENABLED=1 (no Factory login, no network). Runs (`droid exec`):
 1. "list the files": an Execute call (ls), its result, an answer;
 2. `--fork <id>` "now read notes.txt": a new session with session 1's history, a Read call
    whose reply reports 19,000 prompt tokens of a 20,000 context (max_context_limit), then an
    answer (and whatever compaction droid does);
 3. `-s <id>` "fork: say hi": continuing a session headless asks api.factory.ai for it,
    which airgap mode blocks: exit 1, kept to show it;
 4. `--auto high` "ask a helper": a Task call (sub-agent), if droid offers the tool.
Replies are chosen by what each request ends with. The session folder is copied as written."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, copy_tree, new_lab, npm_bin, versions  # noqa: E402
from fake_model_server import (FakeModelServer, Reply, ToolCall, Usage,  # noqa: E402
                               last_says)

MODEL = "custom:Fake-Model-0"


def configure(lab) -> None:
    folder = lab.home / ".factory"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"custom_models": [{
        "model_display_name": "Fake Model", "model": "fake-model",
        "base_url": lab.server.url + "/v1", "api_key": FAKE_KEY,
        "provider": "generic-chat-completion-api", "max_context_limit": 20000}]}, indent=1))


def droid_env(lab) -> dict:
    return lab.env(FACTORY_AIRGAP_ENABLED="1")


def in_sub_agent(request) -> bool:
    users = [m for m in request.conversation() if m["role"] == "user"]
    return any("SUBTASK" in m["text"] for m in users) and \
        not any("ask a helper" in m["text"] for m in users)


def sub_agent_has_result(request) -> bool:
    return in_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


EXECUTE = {"summary": "List the project files", "command": "ls",
           "riskLevel": "low", "riskLevelReason": "Only lists files."}
RULES = [
    (lambda r: not r.tool_names and "summar" in r.text.lower(),
     Reply("Summary: the user listed the files (notes.txt) and read notes.txt.",
           usage=Usage(400, 30))),
    (sub_agent_has_result, Reply("The sub-agent counted 1 file.")),
    (in_sub_agent, Reply("Counting.", [ToolCall("Execute", dict(
        EXECUTE, summary="Count the project files", command="ls | wc -l"))])),
    (last_says("fork: say hi"), Reply("Hi from the fork.")),
    (last_says("ask a helper"), Reply("I will ask a helper.", [ToolCall("Task", {
        "subagent_type": "worker", "description": "Count files",
        "prompt": "SUBTASK: count the files in the project"})])),
    (last_says("list the files"), Reply("I will list the files.", [ToolCall("Execute",
                                                                            EXECUTE)])),
    (last_says("now read notes.txt"), Reply("Reading it.", [ToolCall(
        "Read", {"file_path": "NOTES"})], usage=Usage(19_000, 12, cached_tokens=1_000))),
    (last_says("hello from the lab"), Reply("notes.txt says: hello from the lab.")),
    (lambda r: r.conversation() and r.conversation()[-1]["role"] == "tool"
     and "notes.txt" in r.conversation()[-1]["text"], Reply("There is one file: notes.txt.")),
    (lambda r: r.conversation() and r.conversation()[-1]["role"] == "tool",
     Reply("The helper says there is 1 file.")),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/droid"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "droid")
    args = parser.parse_args()
    droid = npm_bin("droid")
    if droid is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model="fake-model") as server:
        lab = new_lab(args.keep, server)
        configure(lab)
        notes = lab.project / "notes.txt"
        notes.write_text("hello from the lab\n")
        next(reply for _, reply in server.rules if reply.tool_calls and reply.tool_calls[0].name
             == "Read").tool_calls[0].arguments["file_path"] = str(notes)
        env = droid_env(lab)
        sessions = lab.home / ".factory" / "sessions"

        def run(argv, note):
            done = lab.run([droid, "exec", "-m", MODEL, *argv], env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-900:]}\n{done.stderr[-1500:]}")
            return done

        run(["list the files"], "1: an Execute call and its result")
        first = next(sessions.rglob("*.jsonl")).stem
        run(["--fork", first, "now read notes.txt"],
            "2: --fork of session 1, a Read call, 19,000 prompt tokens of 20,000")
        run(["-s", first, "fork: say hi"],
            "3: -s (continue session 1): fails, droid fetches the session from api.factory.ai")
        run(["--auto", "high", "ask a helper to count the files"], "4: a Task call (sub-agent)")
        requests = [{"path": r.path, "api": r.api, "tools": r.tool_names,
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
    copy_tree(sessions, out / "sessions", skip=(".lock", ".bak"))
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["droid", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1))
    print("outside hosts tried (refused):", outside)
    print("files:", *sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
          sep="\n  ")
    print("version", versions()["droid"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
