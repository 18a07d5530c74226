"""Make tests/fixtures/agents/droid/tree/ by driving droid's own TUI in tmux against the fake
model server: a compaction has no headless form (`droid exec` never compacts).

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_droid_tree.py [--socket S]

Steps (typed into the TUI; droid 0.215 draws no input box under tmux, but takes keys):
 1. Enter (droid draws nothing until a key), "say one" -> "One.", "say two" -> "Two."
 2. `/compress`, Enter (confirm): droid asks the model for a summary and goes on in a new
    session whose `session_start` names `parent` and whose first record is a
    `compaction_state` (the summary): "Loaded summary from session …"
 3. "say three" -> "Three."
 4. `/quit`"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FIXTURES, copy_tree, new_lab, npm_bin, scrub, versions  # noqa: E402
from make_droid import configure, droid_env  # noqa: E402
from tui import Tui  # noqa: E402
from fake_model_server import FakeModelServer, Reply, Usage, last_says  # noqa: E402

MODEL = "fake-model"
RULES = [
    (lambda r: not r.tool_names and "summar" in r.text.lower(),
     Reply("Summary: the user asked for one and two; the model said One. and Two.",
           usage=Usage(400, 30))),
    (last_says("say one"), Reply("One.", usage=Usage(120, 5))),
    (last_says("say two"), Reply("Two.", usage=Usage(140, 5))),
    (last_says("say three"), Reply("Three.", usage=Usage(160, 5))),
]


def prepare(lab):
    configure(lab)
    (lab.project / "notes.txt").write_text("hello from the lab\n")
    return [npm_bin("droid")], droid_env(lab)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/droid-tree"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "droid" / "tree")
    parser.add_argument("--socket", default="arbor-lab")
    args = parser.parse_args()
    if npm_bin("droid") is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        argv, env = prepare(lab)
        tui = Tui(args.socket, "droid")
        tui.start(argv, env, lab.project)
        try:
            time.sleep(20)
            tui.keys("Enter", note="droid draws nothing until a key"); tui.wait_for("Airgap", 60)
            time.sleep(2)
            tui.type_line("say one"); tui.wait_for("One.", 60); time.sleep(2)
            tui.type_line("say two"); tui.wait_for("Two.", 60); time.sleep(2)
            tui.type_line("/compress"); time.sleep(3)
            tui.keys("Enter", note="confirm the compression")
            tui.wait_for("Loaded summary from session", 60); time.sleep(2)
            tui.type_line("say three"); tui.wait_for("Three.", 60); time.sleep(2)
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
    copy_tree(lab.home / ".factory" / "sessions", out / "sessions", skip=(".lock", ".bak"))
    (out / "steps.txt").write_text(scrub("\n".join(tui.log), lab) + "\n")
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["droid"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
