"""Make tests/fixtures/agents/aider/tree/ by driving Aider's own TUI (its prompt) in tmux
against the fake model server, with a chat history small enough (`--max-chat-history-tokens
40`) that the weak model summarises it during the session.

    ARBOR_AGENT_VENVS=... python tests/agent_lab/make_aider_tree.py [--socket S]

Steps (typed at Aider's prompt, each answer waited for on the screen):
 1. "say one", "say two": each answer an edit appending the word to notes.txt, applied
    and committed; after each edit Aider checks the history's size in the background and,
    over the limit, asks the weak model to
    "*Briefly* summarize this partial conversation"; the next request sends the summary
    ("I spoke to you previously about a number of things. ...") instead of the history
 2. "say three": the same (its request carries the summary)
 3. `/exit`
The summary is written nowhere but in the next request, which `--llm-history-file` logs."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FIXTURES, new_lab, scrub, venv_bin, versions  # noqa: E402
from make_aider import aider_argv, aider_env, first_says, init_project  # noqa: E402
from tui import Tui  # noqa: E402
from fake_model_server import FakeModelServer, Reply, Usage, last_says  # noqa: E402

MODEL = "fake-model"


def edit(word: str, after: str) -> Reply:
    """An answer that appends `word` to notes.txt (only edits move a turn into the history
    Aider summarises)."""
    return Reply(f"Adding {word}.\n\nnotes.txt\n```\n<<<<<<< SEARCH\n{after}\n=======\n"
                 f"{after}\n{word}\n>>>>>>> REPLACE\n```\n", usage=Usage(120, 25))


RULES = [
    (first_says("Git commit messages"), Reply("Add a word to notes.txt")),
    (first_says("summarize this partial conversation"),
     Reply("I asked you to add one and two to notes.txt, and you did.", usage=Usage(200, 20))),
    (last_says("say one"), edit("one", "hello from the lab")),
    (last_says("say two"), edit("two", "one")),
    (last_says("say three"), edit("three", "two")),
]


def prepare(lab):
    init_project(lab)
    argv = [a for a in aider_argv(venv_bin("aider", "aider"), lab.server.url) if a != "--no-stream"]
    return argv + ["--max-chat-history-tokens", "40", "--no-fancy-input", "notes.txt"], aider_env(lab)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/aider-tree"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "aider" / "tree")
    parser.add_argument("--socket", default="arbor-lab")
    args = parser.parse_args()
    if venv_bin("aider", "aider") is None:
        print("set ARBOR_AGENT_VENVS (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        argv, env = prepare(lab)
        tui = Tui(args.socket, "aider")
        tui.start(argv, env, lab.project)
        try:
            tui.wait_for("diff>", 120); time.sleep(3)
            for word in ("one", "two", "three"):
                tui.type_line(f"say {word}")
                tui.wait_for(f"Adding {word}.", 90); time.sleep(6)
            print(tui.screen())
            tui.type_line("/exit"); time.sleep(4)
        except TimeoutError as error:
            print(error)
            return 1
        finally:
            tui.stop()
        summaries = sum(1 for r in server.requests
                        if "summarize this partial conversation" in r.text)
        with open(args.keep / "requests-full.jsonl", "w") as full:
            for r in server.requests:
                full.write(json.dumps({"path": r.path, "body": r.body}) + "\n")
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in (".aider.chat.history.md", ".aider.input.history", ".aider.llm.history"):
        if (lab.project / name).exists():
            shutil.copy2(lab.project / name, out / name.lstrip("."))
    (out / "steps.txt").write_text(scrub("\n".join(tui.log), lab) + "\n")
    print("summary requests:", summaries)
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["aider-chat"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
