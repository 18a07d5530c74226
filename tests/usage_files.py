"""Agent logs made for the usage tests: each case of the counting rules, with known answers.

Every token count here is chosen so that a double count, a missed count or a count of the
wrong copy gives a different total (the counts are distinct powers-of-two-ish numbers).
"""

from __future__ import annotations

import json
from pathlib import Path

SESSION = "aaaaaaaa-0000-4000-8000-000000000001"
RESUMED = "aaaaaaaa-0000-4000-8000-000000000002"
CWD = "/work/usage-demo"
SONNET = "claude-sonnet-4-5-20250929"
UNPRICED = "claude-imaginary-9"


def _line(uuid, parent, kind, when, **more):
    base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CWD,
            "sessionId": SESSION, "version": "2.0.0", "gitBranch": "main", "type": kind,
            "uuid": uuid, "timestamp": when}
    base.update(more)
    return base


def _assistant(uuid, parent, when, msg_id, request_id, usage, *, model=SONNET, block=None, **more):
    message = {"model": model, "id": msg_id, "type": "message", "role": "assistant",
               "content": [block or {"type": "text", "text": f"reply {uuid}"}],
               "stop_reason": None, "usage": usage}
    line = _line(uuid, parent, "assistant", when, message=message, **more)
    if request_id is not None:
        line["requestId"] = request_id
    return line


def _user(uuid, parent, when, text, **more):
    return _line(uuid, parent, "user", when, message={"role": "user", "content": text}, **more)


def _usage(inp, out, write=0, read=0, one_hour=0):
    usage = {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": write,
             "cache_read_input_tokens": read, "service_tier": "standard"}
    if one_hour:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": write - one_hour,
                                   "ephemeral_1h_input_tokens": one_hour}
    return usage


# The responses of the Claude Code session and what each must count as.
#   r1: streamed as three lines (thinking, text, tool_use); the first two copies carry a
#       partial output count, the last the final one: counted once, with output 301.
#   r2: no requestId on its two lines: keyed by message.id alone, counted once.
#   r3: a long-context request (cache read 250,000): above the 200k tier as a whole.
#   r4: a model the table has no price for: tokens counted, cost incomplete.
#   r5: a sidechain (sub-agent) response inside the main file: counted, shown apart.
#   r6: a response on a second branch (after a rewind): counted once for the session.
CLAUDE_RESPONSES = {
    "r1": dict(input=3, output=301, write=1000, read=2000),
    "r2": dict(input=5, output=40, write=0, read=3000),
    "r3": dict(input=7, output=500, write=100, read=250_000),
    "r4": dict(input=11, output=60, write=0, read=0),
    "r5": dict(input=13, output=70, write=400, read=0),
    "r6": dict(input=17, output=80, write=0, read=4000),
}
SUBAGENT_RESPONSE = dict(input=19, output=90, write=500, read=600)


def append_answered_question(session: Path, number: int) -> None:
    """Two lines more in a Claude Code session: a question and a priced answer."""
    last = json.loads(session.read_text().splitlines()[-1])
    lines = [_user(f"n{number}-q", last["uuid"], "2025-10-02T11:00:00.000Z", "one more thing"),
             _assistant(f"n{number}", f"n{number}-q", "2025-10-02T11:00:01.000Z",
                        f"msg_n{number}", f"req_n{number}", _usage(9, 333, 700, 9000))]
    with open(session, "a") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))


def claude_session(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    r = CLAUDE_RESPONSES
    lines = [
        _user("u1", None, "2025-10-01T10:00:00.000Z", "Start the work"),
        # r1: three lines of one streamed response
        _assistant("a1", "u1", "2025-10-01T10:00:01.000Z", "msg_r1", "req_r1",
                   _usage(r["r1"]["input"], 1, r["r1"]["write"], r["r1"]["read"]),
                   block={"type": "thinking", "thinking": "hmm", "signature": "s"}),
        _assistant("a2", "a1", "2025-10-01T10:00:01.500Z", "msg_r1", "req_r1",
                   _usage(r["r1"]["input"], 12, r["r1"]["write"], r["r1"]["read"])),
        _assistant("a3", "a2", "2025-10-01T10:00:02.000Z", "msg_r1", "req_r1",
                   _usage(r["r1"]["input"], r["r1"]["output"], r["r1"]["write"], r["r1"]["read"]),
                   block={"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}),
        _user("u2", "a3", "2025-10-01T10:00:03.000Z",
              [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a b"}]),
        # r2: no requestId, two lines
        _assistant("a4", "u2", "2025-10-01T10:00:04.000Z", "msg_r2", None,
                   _usage(r["r2"]["input"], r["r2"]["output"], r["r2"]["write"], r["r2"]["read"])),
        _assistant("a5", "a4", "2025-10-01T10:00:04.500Z", "msg_r2", None,
                   _usage(r["r2"]["input"], r["r2"]["output"], r["r2"]["write"], r["r2"]["read"])),
        _user("u3", "a5", "2025-10-01T10:01:00.000Z", "Read the whole repository"),
        # r3: long context
        _assistant("a6", "u3", "2025-10-01T10:01:05.000Z", "msg_r3", "req_r3",
                   _usage(r["r3"]["input"], r["r3"]["output"], r["r3"]["write"], r["r3"]["read"])),
        _user("u4", "a6", "2025-10-01T10:02:00.000Z", "Ask the other model"),
        # r4: no price
        _assistant("a7", "u4", "2025-10-01T10:02:01.000Z", "msg_r4", "req_r4",
                   _usage(r["r4"]["input"], r["r4"]["output"]), model=UNPRICED),
        # r5: a sidechain response inside the main file
        _user("s1", None, "2025-10-01T10:02:10.000Z", "Sub-task: look around", isSidechain=True),
        _assistant("s2", "s1", "2025-10-01T10:02:11.000Z", "msg_r5", "req_r5",
                   _usage(r["r5"]["input"], r["r5"]["output"], r["r5"]["write"]), isSidechain=True),
        # r6: a rewind: a new prompt with u3's parent, and a reply on that branch
        _user("u5", "a5", "2025-10-02T09:00:00.000Z", "Actually, read only src/"),
        _assistant("a8", "u5", "2025-10-02T09:00:05.000Z", "msg_r6", "req_r6",
                   _usage(r["r6"]["input"], r["r6"]["output"], r["r6"]["write"], r["r6"]["read"])),
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # a sub-agent's own file, as Claude Code writes it beside the session
    agents = folder / SESSION / "subagents"
    agents.mkdir(parents=True, exist_ok=True)
    s = SUBAGENT_RESPONSE
    sub = [
        _user("x1", None, "2025-10-01T10:00:10.000Z", "Find the tests", isSidechain=True,
              agentId="agent1"),
        _assistant("x2", "x1", "2025-10-01T10:00:11.000Z", "msg_sub", "req_sub",
                   _usage(s["input"], s["output"], s["write"], s["read"]), isSidechain=True,
                   agentId="agent1"),
    ]
    (agents / "agent-agent1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in sub))
    (agents / "agent-agent1.meta.json").write_text(json.dumps({"toolUseId": "toolu_1"}))
    return path


def claude_resumed_copy(folder: Path) -> Path:
    """A second session file that repeats r1 (as a resumed session's copy) and adds one more."""
    r = CLAUDE_RESPONSES["r1"]
    lines = [
        _user("c1", None, "2025-10-03T08:00:00.000Z", "Start the work", sessionId=RESUMED),
        _assistant("c2", "c1", "2025-10-01T10:00:02.000Z", "msg_r1", "req_r1",
                   _usage(r["input"], r["output"], r["write"], r["read"]), sessionId=RESUMED),
        _user("c3", "c2", "2025-10-03T08:00:10.000Z", "And one more thing", sessionId=RESUMED),
        _assistant("c4", "c3", "2025-10-03T08:00:12.000Z", "msg_new", "req_new",
                   _usage(23, 100, 0, 5000), sessionId=RESUMED),
    ]
    path = folder / f"{RESUMED}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# Codex: (last_token_usage, total_token_usage) per token_count event, in file order.
CODEX_MODEL = "gpt-5-codex"


def codex_rollout(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    uid = "bbbbbbbb-0000-4000-8000-000000000001"

    def ev(when, kind, payload):
        return {"timestamp": when, "type": kind, "payload": payload}

    def tc(when, last, total):
        info = {"total_token_usage": total, "model_context_window": 272000}
        if last is not None:
            info["last_token_usage"] = last
        return ev(when, "event_msg", {"type": "token_count", "info": info, "rate_limits": None})

    def u(inp, cached, out, reasoning):
        return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": reasoning, "total_tokens": inp + out}

    lines = [
        ev("2025-10-05T12:00:00.000Z", "session_meta",
           {"id": uid, "timestamp": "2025-10-05T12:00:00.000Z", "cwd": "/work/codex-demo",
            "originator": "codex_cli_rs", "cli_version": "0.50.0", "model_provider": "openai"}),
        ev("2025-10-05T12:00:01.000Z", "turn_context", {"cwd": "/work/codex-demo", "model": CODEX_MODEL}),
        ev("2025-10-05T12:00:02.000Z", "response_item",
           {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the bug"}]}),
        ev("2025-10-05T12:00:03.000Z", "event_msg", {"type": "token_count", "info": None,
                                                     "rate_limits": {"primary": {"used_percent": 1}}}),
        ev("2025-10-05T12:00:04.000Z", "response_item",
           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking"}]}),
        # turn 1: input 1000 of which 600 cached, output 300 of which 100 reasoning
        tc("2025-10-05T12:00:05.000Z", u(1000, 600, 300, 100), u(1000, 600, 300, 100)),
        # the same event again (Codex repeats it): not a new turn
        tc("2025-10-05T12:00:05.100Z", u(1000, 600, 300, 100), u(1000, 600, 300, 100)),
        ev("2025-10-05T12:00:06.000Z", "response_item",
           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done"}]}),
        # turn 2: last given
        tc("2025-10-05T12:00:07.000Z", u(2000, 1500, 50, 0), u(3000, 2100, 350, 100)),
        # turn 3: an older Codex without last_token_usage: the difference of the totals
        tc("2025-10-05T12:00:08.000Z", None, u(3400, 2150, 420, 120)),
    ]
    path = folder / f"rollout-2025-10-05T12-00-00-{uid}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


CODEX_EXPECTED = dict(input=(1000 - 600) + (2000 - 1500) + (400 - 50), cache_read=600 + 1500 + 50,
                      output=300 + 50 + 70, reasoning=100 + 0 + 20, responses=3)


def pi_session(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": "cccccccc-0000-4000-8000-000000000001",
              "timestamp": "2025-10-07T08:00:00.000Z", "cwd": "/work/pi-demo"}

    def msg(i, parent, usage):
        return {"type": "message", "id": f"e{i:07d}", "parentId": parent,
                "timestamp": f"2025-10-07T08:00:{i:02d}.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": f"r{i}"}],
                            "api": "anthropic-messages", "provider": "anthropic",
                            "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "stop",
                            "timestamp": 1759824000000 + i}}

    def user(i, parent):
        return {"type": "message", "id": f"e{i:07d}", "parentId": parent,
                "timestamp": f"2025-10-07T08:00:{i:02d}.000Z",
                "message": {"role": "user", "content": "go", "timestamp": 1759824000000 + i}}

    lines = [
        header,
        user(1, None),
        # logged cost: used as it is (on purpose not what the table would say)
        msg(2, "e0000001", {"input": 100, "output": 200, "cacheRead": 0, "cacheWrite": 0,
                            "totalTokens": 300, "cost": {"input": 0.5, "output": 0.25, "cacheRead": 0,
                                                         "cacheWrite": 0, "total": 0.75}}),
        user(3, "e0000002"),
        # no cost logged: computed from the table
        msg(4, "e0000003", {"input": 1000, "output": 2000, "cacheRead": 0, "cacheWrite": 0,
                            "totalTokens": 3000}),
        user(5, "e0000004"),
        # cost logged as 0 for a response that used tokens: pi had no price; computed
        msg(6, "e0000005", {"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0,
                            "totalTokens": 30, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                                        "cacheWrite": 0, "total": 0}}),
    ]
    path = folder / "2025-10-07T08-00-00-000Z_cccccccc-0000-4000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path
