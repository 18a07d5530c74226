"""Make tests/fixtures/agents/gemini/tree/ by driving Gemini CLI's own TUI in tmux against the
fake model server: `/chat save TAG` and `/chat resume TAG` have no headless form.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_gemini_tree.py [--socket S]

Steps (typed into the TUI, each answer waited for on the screen):
 1. "say one"  -> "One."
 2. `/chat save first`          (a checkpoint tagged `first`)
 3. "say two"  -> "Two."
 4. `/chat resume first`        (back to the checkpoint: "say two" is abandoned)
 5. "say three" -> "Three."
 6. `/quit`

With `--tools` (tests/fixtures/agents/gemini/resume-tools/): step 1 is "read the notes" ->
a `read_file` call of notes.txt, its result, "notes.txt says: hello from the lab.", so the
saved checkpoint that `/chat resume` brings back holds a tool call and its result."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FIXTURES, copy_tree, new_lab, npm_bin, scrub, versions  # noqa: E402
from make_gemini import MODEL, gemini_env, settings  # noqa: E402
from tui import Tui  # noqa: E402
from fake_model_server import FakeModelServer, Reply, ToolCall, Usage, last_says  # noqa: E402

RULES = [
    (last_says("say one"), Reply("One.", usage=Usage(120, 5))),
    (last_says("say two"), Reply("Two.", usage=Usage(140, 5))),
    (last_says("say three"), Reply("Three.", usage=Usage(160, 5))),
    (last_says("read the notes"),
     Reply("Reading it.", [ToolCall("read_file", {"file_path": "notes.txt"})],
           usage=Usage(110, 8))),
    (last_says("hello from the lab"),
     Reply("notes.txt says: hello from the lab.", usage=Usage(130, 9))),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--socket", default="arbor-lab")
    parser.add_argument("--tools", action="store_true",
                        help="the first turn calls a tool (fixture gemini/resume-tools)")
    args = parser.parse_args()
    name = "resume-tools" if args.tools else "tree"
    args.keep = args.keep or Path(f"/tmp/arbor-lab/gemini-{name}")
    args.out = args.out or FIXTURES / "gemini" / name
    first, answer = ("read the notes", "notes.txt says") if args.tools else ("say one", "One.")
    gemini = npm_bin("gemini")
    if gemini is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        settings(lab.home)
        (lab.project / "notes.txt").write_text("hello from the lab\n")
        tui = Tui(args.socket, "gemini")
        tui.start([gemini, "-m", MODEL], gemini_env(lab), lab.project)
        try:
            tui.wait_for("Type your message", 90)
            time.sleep(2)
            tui.type_line(first); tui.wait_for(answer, 60); time.sleep(1.5)
            tui.type_line("/chat save first"); tui.wait_for("first", 30); time.sleep(1.5)
            tui.type_line("say two"); tui.wait_for("Two.", 60); time.sleep(1.5)
            tui.type_line("/chat resume first"); time.sleep(4)
            tui.type_line("say three"); tui.wait_for("Three.", 60); time.sleep(1.5)
            print(tui.screen())
            tui.type_line("/quit"); time.sleep(4)
        except TimeoutError as error:
            print(error)
            return 1
        finally:
            tui.stop()
        with open(args.keep / "requests-full.jsonl", "w") as full:
            for r in server.requests:
                full.write(json.dumps({"path": r.path, "body": r.body}) + "\n")
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    copy_tree(lab.home / ".gemini" / "tmp", out / "gemini-tmp")
    (out / "steps.txt").write_text(scrub("\n".join(tui.log), lab) + "\n")
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["@google/gemini-cli"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
