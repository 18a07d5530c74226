"""Make tests/fixtures/agents/gemini/ by running Gemini CLI against the fake model server.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_gemini.py [--keep /tmp/x]

Runs (each `gemini -p ... --yolo`, headless, in a temp HOME):
 1. "list the files": one run_shell_command call (ls) and its result, then an answer;
 2. `--resume latest`, "now read notes.txt": a read_file call whose reply reports a prompt of
    900,000 tokens, so that before the next request Gemini CLI compresses the history
    (summary + verification requests), then answers;
 3. a new session, "ask a helper": the model calls `invoke_agent` for the `generalist` sub-agent, which runs one
    shell command and calls complete_task; the main agent answers.
Every request the agent sent is summarised in requests.jsonl next to the files it wrote."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, copy_tree, new_lab, npm_bin, scrub, versions  # noqa: E402
from fake_model_server import (FakeModelServer, Reply, ToolCall, Usage, last_says,  # noqa: E402
                               offers_tool)

MODEL = "gemini-2.5-flash"


def settings(home: Path) -> None:
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False}}, indent=2))


def gemini_env(lab) -> dict:
    return lab.env(GEMINI_API_KEY=FAKE_KEY, GOOGLE_GEMINI_BASE_URL=lab.server.url,
                   GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="true")


def is_sub_agent(request) -> bool:
    return offers_tool("complete_task")(request)


def sub_agent_has_result(request) -> bool:
    return is_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


RULES = [
    # compression: the summary, then its verification (both non-streaming generateContent)
    (last_says("Critically evaluate the <state_snapshot>"),
     Reply("<state_snapshot>The user listed the files (notes.txt) and read notes.txt."
           "</state_snapshot>", usage=Usage(300, 40))),
    (last_says("<state_snapshot>"),
     Reply("<state_snapshot>The user listed the files (notes.txt) and read notes.txt."
           "</state_snapshot>", usage=Usage(300, 40))),
    # the sub-agent: one shell command, then complete_task
    (sub_agent_has_result,
     Reply("", [ToolCall("complete_task", {"result": {"response": "There is one file."}})])),
    (is_sub_agent,
     Reply("Counting.", [ToolCall("run_shell_command", {"command": "ls | wc -l",
                                                        "description": "count files"})])),
]

SCRIPT = [
    # run 1
    Reply("I will list the files.",
          [ToolCall("run_shell_command", {"command": "ls", "description": "list files"})]),
    Reply("There is one file: notes.txt."),
    # run 2 (resumed): a huge prompt figure makes the next request compress first
    Reply("Reading it.", [ToolCall("read_file", {"file_path": "notes.txt"})],
          usage=Usage(900_000, 15)),
    Reply("notes.txt says: hello from the lab."),
    # run 3: the sub-agent
    Reply("I will ask the generalist.",
          [ToolCall("invoke_agent", {"agent_name": "generalist",
                                    "prompt": "Count the files in the project."})]),
    Reply("The helper found one file."),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/gemini"),
                        help="the lab folder (its path shows in the files the agent writes)")
    parser.add_argument("--out", type=Path, default=FIXTURES / "gemini")
    args = parser.parse_args()
    gemini = npm_bin("gemini")
    if gemini is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    root = args.keep
    with FakeModelServer(SCRIPT, rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(root, server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello from the lab\n")
        env = gemini_env(lab)
        base = [gemini, "-m", MODEL, "--yolo"]
        runs = [
            (base + ["-p", "list the files"], "1: a tool call and its result"),
            (base + ["--resume", "latest", "-p", "now read notes.txt"],
             "2: resume, a read_file call, an automatic compression"),
            (base + ["-p", "ask a helper to count the files"], "3: a sub-agent (generalist)"),
        ]
        for argv, note in runs:
            done = lab.run(argv, env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}")
        requests = [{"path": r.path, "api": r.api, "scripted": r.scripted,
                     "tools": len(r.tool_names),
                     "messages": [(m["role"], m["text"][:80], m["tool_calls"])
                                  for m in r.conversation()][-4:]}
                    for r in server.requests]
        unknown = [(r.method, r.path) for r in server.unknown]
        with open(root / "requests-full.jsonl", "w") as full:  # for debugging, not a fixture
            for r in server.requests:
                full.write(json.dumps({"path": r.path, "body": r.body}) + "\n")
    out = args.out
    if out.exists():
        import shutil
        shutil.rmtree(out)
    copy_tree(lab.home / ".gemini" / "tmp", out / "gemini-tmp")   # as written, byte for byte
    (out / "requests.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in json.loads(scrub(json.dumps(requests), lab))))
    (out / "runs.json").write_text(scrub(json.dumps(
        [{"argv": [Path(a).name if i == 0 else a for i, a in enumerate(r["argv"])],
          "rc": r["rc"], "note": r["note"]} for r in lab.runs], indent=1), lab))
    print("unknown endpoints:", unknown)
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["@google/gemini-cli"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
