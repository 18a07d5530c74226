"""Load a Codex rollout with Codex's own reader (`codex app-server`, `thread/read` with its
turns; offline) and print the thread as JSON.

usage: python codex_read.py <codex executable> <thread id> [method]
CODEX_HOME must name the folder the rollout is under.
"""

from __future__ import annotations

import json
import subprocess
import sys


def read_thread(codex: str, thread_id: str, method: str = "thread/read", timeout: float = 60,
                env: dict | None = None) -> dict:
    params = {"threadId": thread_id, "includeTurns": True} if method == "thread/read" else \
        {"threadId": thread_id}
    requests = [
        {"id": 0, "method": "initialize",
         "params": {"clientInfo": {"name": "arbor-check", "version": "0"}}},
        {"method": "initialized"},
        {"id": 1, "method": method, "params": params},
    ]
    process = subprocess.Popen([codex, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        answer = None
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            if "id" not in request:
                continue
            while True:
                line = process.stdout.readline()
                if not line:
                    raise RuntimeError("codex app-server stopped without an answer")
                message = json.loads(line)
                if message.get("id") == request["id"]:
                    answer = message
                    break
        if "error" in answer:
            raise RuntimeError(f"codex {method}: {answer['error']}")
        return answer["result"]
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()


if __name__ == "__main__":
    method = sys.argv[3] if len(sys.argv) > 3 else "thread/read"
    print(json.dumps(read_thread(sys.argv[1], sys.argv[2], method)))
