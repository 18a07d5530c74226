"""Make tests/fixtures/agents/copilot/tree/ by driving Copilot CLI's own TUI in tmux against
the fake model server: `/rewind` and `/fork` have no headless form.

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_copilot_tree.py [--socket S]

Steps (typed into the TUI, each answer waited for on the screen):
 1. Enter (trust the folder), "say one" -> "One.", "say two" -> "Two."
 2. a copy of session-state/ is taken (before-rewind/): what arbor's live follow reads
 3. `/rewind`, Enter (turn 2, "say two"), Enter ("Conversation only"): Copilot rewrites
    events.jsonl without turn 2 and appends a `session.info` (infoType rewind)
 4. ctrl+u (the rewind puts "say two" back in the prompt), "say three" -> "Three."
 5. `/fork`: a new session with the same events and a `session.info` (infoType fork)
    naming the original; the TUI goes on in the fork: "say four" -> "Four."
 6. `/exit`"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FIXTURES, backup_sqlite, copy_tree, new_lab, npm_bin, scrub, versions  # noqa: E402
from make_copilot import MODEL, copilot_env  # noqa: E402
from tui import Tui  # noqa: E402
from fake_model_server import FakeModelServer, Reply, Usage, last_says  # noqa: E402

RULES = [
    (last_says("say one"), Reply("One.", usage=Usage(120, 5))),
    (last_says("say two"), Reply("Two.", usage=Usage(140, 5))),
    (last_says("say three"), Reply("Three.", usage=Usage(160, 5))),
    (last_says("say four"), Reply("Four.", usage=Usage(180, 5))),
]


def prepare(lab):
    (lab.project / "notes.txt").write_text("hello from the lab\n")
    return ([npm_bin("copilot"), "--allow-all-tools", "--disable-client-telemetry"],
            copilot_env(lab))





def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/copilot-tree"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "copilot" / "tree")
    parser.add_argument("--socket", default="arbor-lab")
    args = parser.parse_args()
    if npm_bin("copilot") is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    with FakeModelServer(rules=RULES, default=Reply("OK."), model=MODEL) as server:
        lab = new_lab(args.keep, server)
        argv, env = prepare(lab)
        state = lab.home / ".copilot" / "session-state"
        tui = Tui(args.socket, "copilot")
        tui.start(argv, env, lab.project)
        try:
            tui.wait_for("Do you trust the files", 90); time.sleep(1)
            tui.keys("Enter", note="trust the folder"); time.sleep(3)
            tui.type_line("say one"); tui.wait_for("● One.", 60); time.sleep(1.5)
            tui.type_line("say two"); tui.wait_for("● Two.", 60); time.sleep(2)
            copy_tree(state, out / "before-rewind" / "session-state", skip=(".lock", ".hold"))
            tui.log.append("(copied session-state/ to before-rewind/)")
            tui.type_line("/rewind"); tui.wait_for("Rewind to a previous point", 30)
            time.sleep(1)
            tui.keys("Enter", note="turn 2: say two"); tui.wait_for("Conversation only", 30)
            time.sleep(1)
            tui.keys("Enter", note="Conversation only"); tui.wait_for("Rewound the conversation", 30)
            time.sleep(1)
            tui.keys("C-u", note="clear the prompt the rewind filled"); time.sleep(0.5)
            tui.type_line("say three"); tui.wait_for("● Three.", 60); time.sleep(1.5)
            tui.type_line("/fork"); tui.wait_for("Forked from", 60); time.sleep(2)
            tui.type_line("say four"); tui.wait_for("● Four.", 60); time.sleep(1.5)
            print(tui.screen())
            tui.type_line("/exit"); time.sleep(5)
        except TimeoutError as error:
            print(error)
            return 1
        finally:
            tui.stop()
        with open(args.keep / "requests-full.jsonl", "w") as full:
            for r in server.requests:
                full.write(json.dumps({"path": r.path, "body": r.body}) + "\n")
    copy_tree(state, out / "session-state", skip=(".lock", ".hold"))
    backup_sqlite(lab.home / ".copilot" / "session-store.db", out / "session-store.db")
    (out / "steps.txt").write_text(scrub("\n".join(tui.log), lab) + "\n")
    print("wrote", *[p.relative_to(out) for p in sorted(out.rglob("*")) if p.is_file()],
          sep="\n  ")
    print("version", versions()["@github/copilot"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
