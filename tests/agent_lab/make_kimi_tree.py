"""Make tests/fixtures/agents/kimi/tree/ by driving Kimi CLI's own TUI (its shell) in tmux
against the fake model server: `/undo` and `/fork` are commands of the shell only.

    ARBOR_AGENT_VENVS=... python tests/agent_lab/make_kimi_tree.py [--socket S]

Steps (typed into the shell, each answer waited for on the screen):
 1. "say one" -> "One.", "say two" -> "Two."
 2. `/undo`, Enter (turn [1] "say two"): Kimi writes a new session ("Undo: …") with the
    wire and context up to turn 0 and switches to it, "say two" put back in the prompt
 3. ctrl+u, "say three" -> "Three."
 4. `/fork`: a new session ("Fork: …") with all of it, switched to: "say four" -> "Four."
 5. `/exit`"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FIXTURES, copy_tree, new_lab, scrub, venv_bin, versions  # noqa: E402
from make_kimi import configure, kimi_env  # noqa: E402
from tui import Tui  # noqa: E402
from fake_model_server import FakeModelServer, Reply, Usage, last_says  # noqa: E402

MODEL = "fake-model"
RULES = [
    (last_says("say one"), Reply("One.", usage=Usage(120, 5))),
    (last_says("say two"), Reply("Two.", usage=Usage(140, 5))),
    (last_says("say three"), Reply("Three.", usage=Usage(160, 5))),
    (last_says("say four"), Reply("Four.", usage=Usage(180, 5))),
]


def prepare(lab):
    configure(lab)
    (lab.project / "notes.txt").write_text("hello from the lab\n")
    return [venv_bin("kimi", "kimi")], kimi_env(lab)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/kimi-tree"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "kimi" / "tree")
    parser.add_argument("--socket", default="arbor-lab")
    args = parser.parse_args()
    if venv_bin("kimi", "kimi") is None:
        print("set ARBOR_AGENT_VENVS (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with FakeModelServer(rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        argv, env = prepare(lab)
        tui = Tui(args.socket, "kimi")
        tui.start(argv, env, lab.project)
        try:
            tui.wait_for("Welcome to Kimi", 90); time.sleep(2)
            tui.type_line("say one"); tui.wait_for("• One.", 60); time.sleep(1.5)
            tui.type_line("say two"); tui.wait_for("• Two.", 60); time.sleep(1.5)
            tui.type_line("/undo"); tui.wait_for("Select a turn to undo", 30); time.sleep(1)
            tui.keys("Enter", note="turn [1] say two"); tui.wait_for("Forked at turn 1", 30)
            tui.wait_for("Welcome to Kimi", 30)
            time.sleep(4)
            tui.keys("C-u", note="clear the prompt the undo filled"); time.sleep(0.5)
            tui.type_line("say three"); tui.wait_for("• Three.", 60); time.sleep(1.5)
            tui.type_line("/fork"); tui.wait_for("Session forked", 30); time.sleep(4)
            tui.type_line("say four"); tui.wait_for("• Four.", 60); time.sleep(1.5)
            print(tui.screen())
            tui.type_line("/exit"); time.sleep(4)
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
    kimi = lab.home / ".kimi"
    copy_tree(kimi / "sessions", out / "kimi-home" / "sessions")
    shutil.copy2(kimi / "kimi.json", out / "kimi-home" / "kimi.json")
    (out / "steps.txt").write_text(scrub("\n".join(tui.log), lab) + "\n")
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["kimi-cli"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
