"""A stand-in for `pi`, `claude` and `codex` in tests: records how it was started (its name,
argv, working directory and $PWD) in $FAKE_AGENT_LOG, and with FAKE_AGENT_APPEND=1 carries
on the session it was given the way the real agent would (appends a user message and a
reply to the file it resumes). Exits with $FAKE_AGENT_EXIT (default 0; -N: ended by signal N).

FAKE_AGENT_APPEND=quit, for claude: the lines Claude Code 2.1.197 appended to a resumed
session when a prompt was typed, answered in part, stopped with Esc and Claude quit with
Ctrl-C twice (seen against a fake model server on 127.0.0.1): a file-history snapshot, the
meta "Continue from where you left off." and its synthetic answer, the prompt, two
attachments, the partial reply, the interruption, and last-prompt / mode / permission-mode
lines (11 lines, 5 of them messages).

FAKE_AGENT_APPEND=opened: what each agent appended when started on a session and quit at
once (Claude Code 2.1.197: `mode` and `permission-mode` lines; pi 0.73.1: a
`thinking_level_change` entry; Codex 0.171.0: a `thread_settings_applied` event): its own
state, nothing of the conversation.

FAKE_AGENT_SIGINT=1: before appending, the agent sends SIGINT to its process group, as a
terminal does on Ctrl-C, handles it itself (as the agents do: Ctrl-C stops a turn), takes a
second to finish, then appends and exits with $FAKE_AGENT_EXIT. A parent that does not
leave Ctrl-C to the agent gets the signal too (and Python's subprocess kills the child).

The `install(folder)` helper writes the three executables into a folder."""

from __future__ import annotations

import glob
import json
import os
import signal
import sys
import time
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


def resumed_file(name: str, argv: list[str]) -> str:
    if name == "pi":
        return argv[1]
    if name == "claude":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        [path] = glob.glob(f"{home}/projects/*/{argv[1]}.jsonl")
        return path
    home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
    [path] = glob.glob(f"{home}/sessions/*/*/*/rollout-*-{argv[1]}.jsonl")
    return path


def open_and_quit(name: str, argv: list[str]) -> None:
    path = resumed_file(name, argv)
    when = "2026-11-29T12:30:00.000Z"
    if name == "claude":
        session = argv[1]
        _append(path, [{"type": "mode", "mode": "normal", "sessionId": session},
                       {"type": "permission-mode", "permissionMode": "default", "sessionId": session}])
    elif name == "pi":
        last = [json.loads(line) for line in open(path, encoding="utf-8")][-1]
        _append(path, [{"type": "thinking_level_change", "id": "fa4e00aa", "parentId": last["id"],
                        "timestamp": when, "thinkingLevel": "off"}])
    else:
        _append(path, [{"timestamp": when, "type": "event_msg", "payload": {
            "type": "thread_settings_applied", "thread_id": argv[1],
            "thread_settings": {"model": "gpt-5.1-codex"}}}])


def carry_on(name: str, argv: list[str]) -> None:
    when = "2026-11-29T12:30:00.000Z"
    if name == "claude":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude")
        [path] = glob.glob(f"{home}/projects/*/{argv[1]}.jsonl")
        last = [json.loads(line) for line in open(path, encoding="utf-8") if '"uuid"' in line][-1]
        base = {k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version")}
        if os.environ.get("FAKE_AGENT_APPEND") == "quit":
            _append(path, claude_quit_lines(last, base["sessionId"], when))
            return
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


def claude_quit_lines(last: dict, session_id: str, when: str) -> list[dict]:
    """What Claude Code 2.1.197 appended on a prompt, Esc and Ctrl-C twice (module doc)."""
    base = {k: last[k] for k in ("isSidechain", "userType", "cwd", "version") if k in last}
    base["sessionId"] = session_id
    ids = [str(uuid.uuid4()) for _ in range(7)]
    meta, synthetic, prompt, agents, skills, reply, stopped = ids

    def line(uuid_: str, parent: str, kind: str, **fields) -> dict:
        return {"parentUuid": parent, **base, "type": kind, "uuid": uuid_, "timestamp": when,
                **fields}

    def assistant(text: str) -> dict:
        return {"id": str(uuid.uuid4()), "container": None, "model": "<synthetic>",
                "role": "assistant", "type": "message", "stop_reason": "stop_sequence",
                "stop_sequence": "", "usage": {"input_tokens": 0, "output_tokens": 0},
                "content": [{"type": "text", "text": text}]}
    return [
        {"type": "file-history-snapshot", "messageId": prompt, "isSnapshotUpdate": False,
         "snapshot": {"messageId": prompt, "trackedFileBackups": {}, "timestamp": when}},
        line(meta, last["uuid"], "user", isMeta=True, message={
            "role": "user", "content": [{"type": "text", "text": "Continue from where you left off."}]}),
        line(synthetic, meta, "assistant", message=assistant("No response requested.")),
        line(prompt, synthetic, "user", message={"role": "user", "content": "Please say hello"},
             permissionMode="default"),
        line(agents, prompt, "attachment", attachment={"type": "agent_listing_delta",
                                                       "addedTypes": ["Explore"], "addedLines": []}),
        line(skills, agents, "attachment", attachment={"type": "skill_listing", "content": ""}),
        line(reply, skills, "assistant", message=assistant("Hello from")),
        line(stopped, reply, "user", message={"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user]"}]}),
        {"type": "last-prompt", "lastPrompt": "Please say hello", "leafUuid": stopped,
         "sessionId": session_id},
        {"type": "mode", "mode": "normal", "sessionId": session_id},
        {"type": "permission-mode", "permissionMode": "default", "sessionId": session_id}]


def interrupt_own_group() -> None:
    """Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group."""
    caught = []
    signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    os.killpg(os.getpgrp(), signal.SIGINT)
    deadline = time.monotonic() + 5
    while not caught and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1.0)       # winding down a turn: a parent that killed it has done so by now


def main() -> int:
    name, argv = sys.argv[1], sys.argv[2:]
    with open(os.environ["FAKE_AGENT_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"name": name, "argv": argv, "cwd": os.getcwd(),
                              "pwd": os.environ.get("PWD")}) + "\n")
    if os.environ.get("FAKE_AGENT_SIGINT") == "1":
        interrupt_own_group()
    if os.environ.get("FAKE_AGENT_APPEND") in ("1", "quit"):
        carry_on(name, argv)
    elif os.environ.get("FAKE_AGENT_APPEND") == "opened":
        open_and_quit(name, argv)
    code = int(os.environ.get("FAKE_AGENT_EXIT", "0"))
    if code < 0:                      # ended by that signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        time.sleep(5)
    return code


if __name__ == "__main__":
    sys.exit(main())
