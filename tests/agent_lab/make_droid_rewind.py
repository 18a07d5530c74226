"""Make tests/fixtures/agents/droid/rewind/ by driving droid's own TUI in tmux against the fake
model server: `/rewind-conversation` has no headless form.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_droid_rewind.py [--socket S]

Steps (typed into the TUI; droid 0.215 draws no input box under tmux, but takes keys):
 1. Enter (droid draws nothing until a key), "say one" -> "One.", "say two" -> "Two.",
    "say three" -> "Three."
 2. `/rewind-conversation`: droid lists the user messages; it is not drawn, but lists the user
    messages newest first ("say three" selected) and wraps: Down ("say two"), Enter: "Rewound conversation to before: \"say two\"" (no file changed: no restore step).
    droid goes on in a new session whose `session_start` names `parent` and
    `forkedAtMessageId`, and which repeats the kept messages under their own ids
 3. Backspace x12 (droid puts "say two" back in the input), "say four" -> "Four." (the conversation goes on differently after "say one")
 4. `/quit`"""

from __future__ import annotations

import argparse
import json
import os
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
    (last_says("say one"), Reply("One.", usage=Usage(120, 5))),
    (last_says("say two"), Reply("Two.", usage=Usage(140, 5))),
    (last_says("say three"), Reply("Three.", usage=Usage(160, 5))),
    (last_says("say four"), Reply("Four.", usage=Usage(150, 5))),
]


def prepare(lab):
    configure(lab)
    (lab.project / "notes.txt").write_text("hello from the lab\n")
    return [npm_bin("droid")], droid_env(lab)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/droid-rewind"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "droid" / "rewind")
    parser.add_argument("--socket", default="arbor-lab")
    parser.add_argument("--explore", action="store_true",
                        help="stop at the picker and wait (drive it by hand)")
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
            tui.type_line("say three"); tui.wait_for("Three.", 60); time.sleep(2)
            tui.type_line("/rewind-conversation"); time.sleep(3)
            print(tui.screen())
            if args.explore:
                while not Path("/tmp/h-rewind-go").exists():
                    time.sleep(1)
                return 0
            tui.keys("Down", note="the picker (not drawn) lists the user messages newest "
                     "first and wraps: 'say three' -> 'say two'"); time.sleep(1)
            tui.keys("Enter", note="rewind to before 'say two'")
            tui.wait_for('Rewound conversation to before: "say two"', 30); time.sleep(2)
            tui.keys(*["BSpace"] * 12, note="droid puts 'say two' back in the input: erase it")
            time.sleep(1)
            tui.type_line("say four"); tui.wait_for("Four.", 60); time.sleep(2)
            print(tui.screen())
            tui.type_line("/quit"); time.sleep(4)
        except TimeoutError as error:
            print(error)
            return 1
        finally:
            if not args.explore:
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
