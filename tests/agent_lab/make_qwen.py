"""Make tests/fixtures/agents/qwen/ by running Qwen Code against the fake model server.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_qwen.py

Qwen Code's OpenAI auth (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL;
`security.auth.selectedType: "openai"` in ~/.qwen/settings.json). Runs (`qwen ... --yolo`):
 1. "list the files": a run_shell_command call (ls), its result, an answer;
 2. `--continue` "now read notes.txt": a read_file call, an answer; then
    `--continue -p /compress`: a compression of that history;
 3. `--resume <id> --fork-session` "fork: say hi": a forked session;
 4. "ask a helper": an `agent` call (sub-agent general-purpose) that runs one command.
The project's chats folder and ~/.qwen/usage_record.jsonl are copied as written."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, copy_tree, new_lab, npm_bin, versions  # noqa: E402
from fake_model_server import FakeModelServer, Reply, ToolCall, Usage, last_says  # noqa: E402

MODEL = "qwen3-coder-plus"


def settings(home: Path) -> None:
    folder = home / ".qwen"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True},
        "memory": {"enableManagedAutoMemory": False}}, indent=2))


def qwen_env(lab) -> dict:
    return lab.env(OPENAI_API_KEY=FAKE_KEY, OPENAI_BASE_URL=lab.server.url + "/v1",
                   OPENAI_MODEL=MODEL, QWEN_CODE_SUPPRESS_YOLO_WARNING="1")


def in_sub_agent(request) -> bool:
    users = [m for m in request.conversation() if m["role"] == "user"]
    return any("SUBTASK" in m["text"] for m in users) and \
        not any("ask a helper" in m["text"] for m in users)


def sub_agent_has_result(request) -> bool:
    return in_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


SUMMARY = "<state_snapshot>The user listed the files (notes.txt) and read notes.txt.</state_snapshot>"

# Every reply is chosen by what the request ends with (Qwen Code sends side requests and
# runs the sub-agent in the background, so a fixed order would drift).
RULES = [
    (lambda r: not r.tool_names and "summar" in r.text.lower(),
     # Qwen Code judges a compression by the usage figures: the summary request's prompt
     # (25,000) stands for the history it replaces, so the new size 30,000 - 24,000 + 40
     # is below the last prompt's 30,000 and the compression is kept
     Reply(SUMMARY, usage=Usage(25_000, 40))),
    (sub_agent_has_result, Reply("The sub-agent counted 1 file.")),
    (in_sub_agent, Reply("Counting.", [ToolCall("run_shell_command", {
        "command": "ls | wc -l", "description": "count files"})])),
    (last_says("fork: say hi"), Reply("Hi from the fork.")),
    (last_says("list the files"), Reply("I will list the files.", [ToolCall(
        "run_shell_command", {"command": "ls", "description": "list files"})])),
    (last_says("Command: ls\n"), Reply("There is one file: notes.txt.")),
    (last_says("now read notes.txt"), Reply("Reading it.", [ToolCall(
        "read_file", {"file_path": "NOTES"})], usage=Usage(1_500, 12, cached_tokens=500))),
    (last_says("hello from the lab"), Reply("notes.txt says: hello from the lab.",
                                            usage=Usage(30_000, 12))),
    (last_says("ask a helper"), Reply("I will ask a helper.", [ToolCall("agent", {
        "description": "Count files", "prompt": "SUBTASK: count the files in the project",
        "subagent_type": "general-purpose"})])),
    (last_says("task-notification"), Reply("The helper says there is 1 file.")),
]
SCRIPT: list = []


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/qwen"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "qwen")
    args = parser.parse_args()
    qwen = npm_bin("qwen")
    if qwen is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(SCRIPT, rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        settings(lab.home)
        notes = lab.project / "notes.txt"
        notes.write_text("hello from the lab\n")
        next(reply for _, reply in server.rules if reply.tool_calls and reply.tool_calls[0].name
             == "read_file").tool_calls[0].arguments["file_path"] = str(notes)
        env = qwen_env(lab)
        base = [qwen, "-m", MODEL, "--yolo"]
        chats = lab.home / ".qwen" / "projects"

        def run(argv, note):
            done = lab.run(base + argv, env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-900:]}\n{done.stderr[-1500:]}")
            return done

        run(["-p", "list the files"], "1: a run_shell_command call and its result")
        first = next(chats.rglob("*.jsonl")).stem
        run(["--continue", "-p", "now read notes.txt"], "2: --continue, a read_file call")
        run(["--continue", "-p", "/compress"], "2b: /compress")
        run(["--resume", first, "--fork-session", "-p", "fork: say hi"],
            "3: --resume --fork-session")
        run(["-p", "ask a helper to count the files"], "4: an agent call (sub-agent)")
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
    copy_tree(chats, out / "projects")
    shutil.copy2(lab.home / ".qwen" / "usage_record.jsonl", out / "usage_record.jsonl")
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["qwen", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1))
    print("outside hosts tried (refused):", outside)
    print("files:", *sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
          sep="\n  ")
    print("version", versions()["@qwen-code/qwen-code"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
