"""Make tests/fixtures/agents/aider/ by running Aider (PyPI aider-chat) against the fake server.

    ARBOR_AGENT_VENVS=... python tests/agent_lab/make_aider.py

Aider has no tool calls: the model edits files with SEARCH/REPLACE blocks that Aider applies
(and commits, in a git repository). It keeps its history as Markdown in the project:
.aider.chat.history.md (every session appended), .aider.input.history, and with
--llm-history-file the exact messages sent and received. Runs (`aider --message ...`):
 1. "add a line to notes.txt": the model answers with a SEARCH/REPLACE block, Aider applies it
    and commits;
 2. `--restore-chat-history` "what did you change?" with --max-chat-history-tokens 20: the
    restored history is too long, so Aider asks the weak model for a summary first;
 3. `--restore-chat-history --chat-mode ask` "/run ls": a shell command run by Aider, its output
    added to the chat.
Model: `openai/fake-model` with --openai-api-base on the fake server (through litellm)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, new_lab, venv_bin, versions  # noqa: E402
from fake_model_server import FakeModelServer, Reply, Usage, last_says  # noqa: E402

EDIT = ("I will add the line.\n\nnotes.txt\n```\n<<<<<<< SEARCH\nhello from the lab\n=======\n"
        "hello from the lab\nsecond line from the model\n>>>>>>> REPLACE\n```\n")
def first_says(word: str):
    return lambda r: bool(r.conversation()) and word in r.conversation()[0]["text"]


RULES = [
    (first_says("Git commit messages"), Reply("Add a second line to notes.txt")),
    (first_says("summarize this partial conversation"),
     Reply("I asked you to add a line to notes.txt and you added it.", usage=Usage(200, 20))),
    (last_says("add a line to notes.txt"), Reply(EDIT, usage=Usage(900, 60, cached_tokens=100))),
    (last_says("what did you change?"), Reply("I added a second line to notes.txt.")),
]


def aider_argv(aider: Path, server_url: str) -> list:
    return [aider, "--model", "openai/fake-model", "--openai-api-base", server_url + "/v1",
            "--openai-api-key", FAKE_KEY, "--weak-model", "openai/fake-model",
            "--edit-format", "diff", "--no-show-model-warnings",
            "--no-check-update", "--no-show-release-notes", "--analytics-disable",
            "--no-pretty", "--no-stream", "--yes-always", "--no-auto-lint",
            "--llm-history-file", ".aider.llm.history"]


def aider_env(lab) -> dict:
    # LITELLM_LOCAL_MODEL_COST_MAP: litellm reads its bundled price list instead of
    # fetching one from GitHub at start
    return lab.env(LITELLM_LOCAL_MODEL_COST_MAP="True", GIT_AUTHOR_NAME="lab", GIT_AUTHOR_EMAIL="lab@127.0.0.1",
                   GIT_COMMITTER_NAME="lab", GIT_COMMITTER_EMAIL="lab@127.0.0.1",
                   GIT_AUTHOR_DATE="2026-12-06T12:00:00Z",
                   GIT_COMMITTER_DATE="2026-12-06T12:00:00Z")


def init_project(lab) -> None:
    (lab.project / "notes.txt").write_text("hello from the lab\n")
    env = aider_env(lab)
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "notes.txt"],
                 ["git", "commit", "-q", "-m", "notes"]):
        subprocess.run(argv, cwd=lab.project, env=env, check=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/aider"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "aider")
    args = parser.parse_args()
    aider = venv_bin("aider", "aider")
    if aider is None:
        print("set ARBOR_AGENT_VENVS (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model="fake-model") as server:
        lab = new_lab(args.keep, server)
        init_project(lab)
        env = aider_env(lab)
        base = aider_argv(aider, server.url)

        def run(argv, note):
            # (stdin a pipe: with /dev/null Aider's prompt toolkit fails on a -1 descriptor)
            done = lab.run(base + argv, env=env, note=note, timeout=300, input="")
            print(f"== {note}: rc={done.returncode}\n{done.stdout[-1200:]}\n{done.stderr[-1500:]}")
            return done

        run(["notes.txt", "--message", "add a line to notes.txt"],
            "1: a SEARCH/REPLACE edit, applied and committed")
        run(["notes.txt", "--restore-chat-history", "--max-chat-history-tokens", "20",
             "--message", "what did you change?"],
            "2: --restore-chat-history, summarised because it is over 20 tokens")
        run(["--restore-chat-history", "--message", "/run ls"], "3: /run ls")
        requests = [{"path": r.path, "api": r.api,
                     "messages": [(m["role"], m["text"][:100]) for m in r.conversation()][-4:]}
                    for r in server.requests if r.api != "proxy"]
        outside = sorted({r.path for r in server.unknown})
        log = subprocess.run(["git", "log", "--format=%h %s", "--stat"], cwd=lab.project,
                             capture_output=True, text=True).stdout
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in (".aider.chat.history.md", ".aider.input.history", ".aider.llm.history",
                 "notes.txt"):
        if (lab.project / name).exists():
            shutil.copy2(lab.project / name, out / name.lstrip("."))
    (out / "git-log.txt").write_text(log)
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["aider", *r["argv"][1:]], "rc": r["rc"], "note": r["note"]}
         for r in lab.runs], indent=1).replace(f"127.0.0.1:{lab.port}", "127.0.0.1:PORT"))
    print("outside hosts tried (refused):", outside)
    print("version", versions()["aider-chat"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
