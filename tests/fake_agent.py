"""A stand-in for `pi`, `claude` and `codex` in tests: records how it was started (its name,
argv, working directory and $PWD) in $FAKE_AGENT_LOG, and with FAKE_AGENT_APPEND=1 carries
on the session it was given the way the real agent would (appends a user message and a
reply to the file it resumes). Exits with $FAKE_AGENT_EXIT (default 0).

The `install(folder)` helper writes the three executables into a folder."""

from __future__ import annotations

import glob
import json
import os
import sys
import uuid
from pathlib import Path

WRAPPER = "#!/bin/sh\nexec {python} {script} {name} \"$@\"\n"


def install(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pi", "claude", "codex"):
        path = folder / name
        path.write_text(WRAPPER.format(python=sys.executable, script=Path(__file__).resolve(), name=name))
        path.chmod(0o755)
    return folder


def _append(path: str, lines: list[dict]) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line) + "\n")


def carry_on(name: str, argv: list[str]) -> None:
    when = "2026-11-29T12:30:00.000Z"
    if name == "claude":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        [path] = glob.glob(f"{home}/projects/*/{argv[1]}.jsonl")
        last = [json.loads(line) for line in open(path, encoding="utf-8") if '"uuid"' in line][-1]
        base = {k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version")}
        asked, answered = str(uuid.uuid4()), str(uuid.uuid4())
        _append(path, [
            {"parentUuid": last["uuid"], **base, "type": "user", "uuid": asked, "timestamp": when,
             "message": {"role": "user", "content": "Carried on in the agent"}},
            {"parentUuid": asked, **base, "type": "assistant", "uuid": answered, "timestamp": when,
             "message": {"id": "msg_01FAKE", "type": "message", "role": "assistant", "model": "m",
                         "content": [{"type": "text", "text": "The agent's reply"}],
                         "stop_reason": "end_turn", "stop_sequence": None,
                         "usage": {"input_tokens": 1, "output_tokens": 1}}}])
    elif name == "pi":
        path = argv[1]
        last = [json.loads(line) for line in open(path, encoding="utf-8")][-1]
        _append(path, [
            {"type": "message", "id": "fa4e0001", "parentId": last["id"], "timestamp": when,
             "message": {"role": "user", "content": "Carried on in the agent"}},
            {"type": "message", "id": "fa4e0002", "parentId": "fa4e0001", "timestamp": when,
             "message": {"role": "assistant", "content": [{"type": "text", "text": "The agent's reply"}]}}])
    elif name == "codex":
        home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        [path] = glob.glob(f"{home}/sessions/*/*/*/rollout-*-{argv[1]}.jsonl")
        _append(path, [
            {"timestamp": when, "type": "event_msg", "payload": {"type": "user_message",
                                                                 "message": "Carried on in the agent"}},
            {"timestamp": when, "type": "response_item", "payload": {
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "Carried on in the agent"}]}},
            {"timestamp": when, "type": "response_item", "payload": {
                "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "The agent's reply"}]}}])


def main() -> int:
    name, argv = sys.argv[1], sys.argv[2:]
    with open(os.environ["FAKE_AGENT_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"name": name, "argv": argv, "cwd": os.getcwd(),
                              "pwd": os.environ.get("PWD")}) + "\n")
    if os.environ.get("FAKE_AGENT_APPEND") == "1":
        carry_on(name, argv)
    return int(os.environ.get("FAKE_AGENT_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
