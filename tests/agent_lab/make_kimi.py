"""Make tests/fixtures/agents/kimi/ by running Kimi CLI (PyPI kimi-cli) against the fake server.

    ARBOR_AGENT_VENVS=... python tests/agent_lab/make_kimi.py

kimi-cli 1.50.0, the last release that runs: 1.51.0 archived the project and 1.52.0 turns
every command into a notice (and `kimi` alone into a download of the successor's installer).
A provider of type `openai_legacy` (Chat Completions) on the fake server in
~/.kimi/config.toml, a 128,000-token context (with 20,000, Kimi compacts before the first request and loses the prompt). Runs (`kimi --print -y -p ...`):
 1. "list the files": a Shell call (ls), its result, an answer;
 2. `-C` (continue) "now read notes.txt": a ReadFile call, its result, an answer;
 3. `-C -p /compact`: a compaction of that session;
 4. "ask a helper": an Agent call (sub-agent) that runs one Shell command.
Replies are chosen by what each request ends with. ~/.kimi/sessions is copied as written."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, copy_tree, new_lab, venv_bin, versions  # noqa: E402
from fake_model_server import (FakeModelServer, Reply, ToolCall, Usage,  # noqa: E402
                               last_says)


def configure(lab) -> None:
    folder = lab.home / ".kimi"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        'default_model = "fake"\n\n[providers.fake]\ntype = "openai_legacy"\n'
        f'base_url = "{lab.server.url}/v1"\napi_key = "{FAKE_KEY}"\n\n'
        '[models.fake]\nprovider = "fake"\nmodel = "fake-model"\nmax_context_size = 128000\n')


def kimi_env(lab) -> dict:
    return lab.env()


def in_sub_agent(request) -> bool:
    users = [m for m in request.conversation() if m["role"] == "user"]
    return any("SUBTASK" in m["text"] for m in users) and \
        not any("ask a helper" in m["text"] for m in users)


def sub_agent_has_result(request) -> bool:
    return in_sub_agent(request) and any(m["role"] == "tool" for m in request.conversation())


RULES = [
    (lambda r: not r.tool_names and ("compact" in r.text.lower() or "summar" in r.text.lower()),
     Reply("Summary: the user listed the files (notes.txt) and read notes.txt.",
           usage=Usage(400, 30))),
    (sub_agent_has_result, Reply("The sub-agent counted 1 file.")),
    (in_sub_agent, Reply("Counting.", [ToolCall("Shell", {"command": "ls | wc -l"})])),
    (last_says("ask a helper"), Reply("I will ask a helper.", [ToolCall("Agent", {
        "description": "Count files", "prompt": "SUBTASK: count the files in the project",
        "subagent_type": "coder"})])),
    (last_says("list the files"), Reply("I will list the files.",
                                        [ToolCall("Shell", {"command": "ls"})])),
    (last_says("now read notes.txt"), Reply("Reading it.", [ToolCall(
        "ReadFile", {"path": "notes.txt"})], usage=Usage(1_500, 12, cached_tokens=500))),
    (last_says("hello from the lab"), Reply("notes.txt says: hello from the lab.")),
    (lambda r: r.conversation() and r.conversation()[-1]["role"] == "tool"
     and "notes.txt" in r.conversation()[-1]["text"], Reply("There is one file: notes.txt.")),
    (lambda r: r.conversation() and r.conversation()[-1]["role"] == "tool",
     Reply("The helper says there is 1 file.")),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/kimi"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "kimi")
    args = parser.parse_args()
    kimi = venv_bin("kimi", "kimi")
    if kimi is None:
        print("set ARBOR_AGENT_VENVS (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model="fake-model") as server:
        lab = new_lab(args.keep, server)
        configure(lab)
        (lab.project / "notes.txt").write_text("hello from the lab\n")
        env = kimi_env(lab)

        def run(argv, note):
            done = lab.run([kimi, "--print", "-y", *argv], env=env, note=note, timeout=240)
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-900:]}\n{done.stderr[-1500:]}")
            return done

        run(["-p", "list the files"], "1: a Shell call and its result")
        run(["-C", "-p", "now read notes.txt"], "2: -C (continue), a ReadFile call")
        run(["-C", "-p", "/compact"], "3: -C, /compact")
        run(["-p", "ask a helper to count the files"], "4: an Agent call (sub-agent)")
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
    copy_tree(lab.home / ".kimi", out / "kimi-home", skip=(".lock", "config.toml", ".log"))
    # telemetry events Kimi failed to send (it could not reach its endpoint): not sessions
    shutil.rmtree(out / "kimi-home" / "telemetry", ignore_errors=True)
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["kimi", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1))
    print("outside hosts tried (refused):", outside)
    print("files:", *sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
          sep="\n  ")
    print("version", versions()["kimi-cli"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
