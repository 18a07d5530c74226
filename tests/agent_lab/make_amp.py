"""Record what Amp CLI does when pointed at 127.0.0.1 (tests/fixtures/agents/amp/).

    ARBOR_AGENT_NODE_MODULES=... python tests/agent_lab/make_amp.py

Amp has no local model setting: AMP_URL names *Amp's own server* (its control plane), which
creates threads (`POST /api/thread-actors`, then a WebSocket per thread) and calls the models
itself. The fake server answers Amp's JSON-RPC (`POST /api/internal {"method": ...}`) with
empty successes so that the CLI gets as far as creating a thread; the thread creation has no
threadId/wsToken to give, and Amp stops there. What the CLI sent and its debug log are kept;
Amp wrote no session file (only ~/.local/share/amp/device-id.json)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab import FAKE_KEY, FIXTURES, new_lab, npm_bin, versions  # noqa: E402
from fake_model_server import FakeModelServer, Reply  # noqa: E402

USER = {"id": "user-lab", "email": "lab@127.0.0.1", "username": "lab", "features": [],
        "team": None}


class AmpControlPlane(FakeModelServer):
    """The fake model server, plus empty answers to Amp's `POST /api/internal` JSON-RPC."""

    def start(self):
        server = super().start()
        handler = self._httpd.RequestHandlerClass
        plain_post = handler.do_POST

        def do_POST(request_handler):
            if request_handler.path.startswith("/api/internal"):
                recorded = request_handler._read()
                method = (recorded.body or {}).get("method")
                result = USER if method == "getUserInfo" else {}
                request_handler._json({"ok": True, "result": result})
                return
            plain_post(request_handler)

        handler.do_POST = do_POST
        return server


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, default=Path("/tmp/arbor-lab/amp"))
    parser.add_argument("--out", type=Path, default=FIXTURES / "amp")
    args = parser.parse_args()
    amp = npm_bin("amp")
    if amp is None:
        print("set ARBOR_AGENT_NODE_MODULES (tests/agent_lab/install_agents.sh)", file=sys.stderr)
        return 2
    with AmpControlPlane([Reply("Hello.")]) as server:
        lab = new_lab(args.keep, server)
        log = lab.root / "amp-debug.log"
        done = lab.run([amp, "-x", "say hello", "--log-level", "debug", "--log-file", log],
                       env=lab.env(AMP_URL=server.url, AMP_API_KEY=FAKE_KEY),
                       note="amp -x (execute mode) with AMP_URL on the fake server", timeout=90)
        print(done.returncode, done.stdout[-500:], done.stderr[-800:])
        requests = [{"method": r.method, "path": r.path, "body": r.body}
                    for r in server.requests]
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    shutil.copy2(log, out / "amp-debug.log")
    written = sorted(str(p.relative_to(lab.home)) for p in lab.home.rglob("*") if p.is_file())
    (out / "runs.json").write_text(json.dumps(
        [{"argv": ["amp", *r["argv"][1:]], "rc": r["rc"], "note": r["note"],
          "stdout": r["stdout"], "stderr": r["stderr"], "files_written_under_home": written}
         for r in lab.runs], indent=1).replace(str(lab.root), "/tmp/arbor-lab/amp"))
    print("files under HOME:", written)
    print("version", versions()["@ampcode/cli"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
