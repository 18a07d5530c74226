"""Benchmark: handing a 10,000-message branch to another agent (issue 31's target: < 3 s).

    .venv/bin/python bench/bench_handoff.py [--messages 10000] [--repeat 3]

Generates a Claude Code transcript of --messages messages (prompts; replies with thinking,
text and tool calls of Bash, Read, Edit, TodoWrite; their results with ~600 bytes of
output), imports it, and hands its branch to every other agent arbor writes (Codex, pi,
Gemini CLI, Qwen Code, droid, Kimi CLI, opencode, Copilot CLI); each copy (imported by the hand-off) is then handed
back to Claude Code, and the Codex and pi copies to each other. `--pairs codex:pi,...`
runs only those pairs (a target's copy must come before it is a source).
Each hand-off is timed in two parts, as `arbor resume --in` does them: the hand-off proper
(reading the branch, translating it, writing the agent's file: after it the agent can be
started) and arbor's side (importing the file into the store, the provenance links, the log
row), and whole. Twice per pair:
the whole branch (the context limit raised), and with the default limit, where the branch
(~565k tokens) is handed off compacted by arbor's summariser ("fits": the target's context
holds it, as Gemini CLI's 1M does, and nothing is compacted). Best of --repeat (each repeat
writes a new session: another `now`), and the slowest of them; "cpu s" is the processor
time the best one took (what the machine's load does not change).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SESSION = "b0b0b0b0-0000-4000-8000-000000000001"
START = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def generate(path: Path, messages: int, cwd: str) -> None:
    """A Claude Code transcript of `messages` messages, one chain."""
    lines = []
    parent = None
    count = 0
    when = START

    def line(kind: str, message: dict, **extra) -> None:
        nonlocal parent, count, when
        count += 1
        when += timedelta(seconds=2)
        uuid = f"{count:08x}-0000-4000-8000-000000000000"
        lines.append({"parentUuid": parent, "isSidechain": False, "userType": "external",
                      "cwd": cwd, "sessionId": SESSION, "version": "2.1.90", "gitBranch": "main",
                      "type": kind, "message": message, "uuid": uuid,
                      "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"), **extra})
        parent = uuid

    tools = [("Bash", {"command": "pytest -q tests/test_parser.py", "description": "run"}),
             ("Read", {"file_path": "src/parser.py"}),
             ("Edit", {"file_path": "src/parser.py", "old_string": "x = 1", "new_string": "x = 2"}),
             ("TodoWrite", {"todos": [{"content": "fix", "status": "in_progress",
                                       "activeForm": "fixing"}]})]
    turn = 0
    while len(lines) < messages:
        turn += 1
        line("user", {"role": "user", "content": f"step {turn}: go on with the parser " * 3})
        name, args = tools[turn % len(tools)]
        msg = {"id": f"msg_01{turn:024d}", "type": "message", "role": "assistant",
               "model": "claude-opus-4-5", "stop_reason": "tool_use", "stop_sequence": None,
               "usage": {"input_tokens": 100, "output_tokens": 20}}
        line("assistant", {**msg, "content": [
            {"type": "thinking", "thinking": "Consider the failing case.", "signature": "Eq" + "x" * 40},
            {"type": "text", "text": f"Turn {turn}: I will use {name}."},
            {"type": "tool_use", "id": f"toolu_{turn:020d}", "name": name, "input": args}]})
        line("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{turn:020d}",
             "content": ("line of output " * 40)[:600]}]})
        line("assistant", {**msg, "id": f"msg_02{turn:024d}", "stop_reason": "end_turn",
                           "content": [{"type": "text", "text": f"Done with step {turn}."}]})
    path.write_text("".join(json.dumps(item) + "\n" for item in lines[:messages]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pairs", default="", help="source:target,... (default: all)")
    args = parser.parse_args()

    from core import open_store
    from core.handoff import finish_handoff, prepare_handoff
    from core.importing import import_paths

    rows = []
    with tempfile.TemporaryDirectory(prefix="arbor-bench-handoff-") as folder:
        root = Path(folder)
        cwd = root / "work"
        cwd.mkdir()
        env = {"HOME": str(root / "home"), "CLAUDE_CONFIG_DIR": str(root / "claude"),
               "CODEX_HOME": str(root / "codex"), "PI_CODING_AGENT_DIR": str(root / "pi")}
        (root / "codex").mkdir()
        kimi = root / "home" / ".kimi"      # the work folder as Kimi CLI lists one it ran in
        kimi.mkdir(parents=True)
        (kimi / "kimi.json").write_text(json.dumps({"work_dirs": [
            {"path": str(cwd), "kaos": "local", "last_session_id": None}]}))
        source = root / f"{SESSION}.jsonl"
        generate(source, args.messages, str(cwd))
        store = open_store(root / "bench.db")
        started = time.perf_counter()
        import_paths(store, [source])
        print(f"imported {args.messages:,} messages in {time.perf_counter() - started:.2f} s",
              flush=True)
        sessions = {"claude_code": store.sessions.by_uid(SESSION)}
        others = ("codex", "pi", "gemini", "qwen", "droid", "kimi", "opencode", "copilot")
        pairs = [("claude_code", target) for target in others] + \
            [(source, "claude_code") for source in others] + [("codex", "pi"), ("pi", "codex")]
        if args.pairs:
            pairs = [tuple(pair.split(":", 1)) for pair in args.pairs.split(",")]
        tick = 0
        for source_agent, target in pairs:
            session = sessions[source_agent]
            branch = store.branches.current(session.id)
            length = store.paths.length(branch.head_seq)
            for mode, limit, compact in (("whole", 10**9, False), ("compacted", None, True)):
                best = None
                worst = 0.0
                for _ in range(args.repeat):
                    tick += 1
                    now = START + timedelta(days=1, seconds=tick)
                    begun, cpu = time.perf_counter(), time.process_time()
                    plan = prepare_handoff(store, session, branch, target=target, env=env, now=now,
                                           context_limit=limit, compact=compact, link=False)
                    wrote = time.perf_counter()
                    finish_handoff(store, plan)
                    done = time.perf_counter()
                    took = (wrote - begun, done - wrote, done - begun, time.process_time() - cpu)
                    best = took if best is None or took[2] < best[2] else best
                    worst = max(worst, took[2])
                    assert not plan.reused and plan.imported_id is not None
                    if mode == "whole" and target not in sessions:
                        sessions[target] = store.sessions.get(plan.imported_id)
                    size = sum(f.stat().st_size for f in plan.file.parent.iterdir()) \
                        if target in ("kimi", "copilot") else plan.file.stat().st_size
                    if target in ("kimi", "copilot"):      # (a folder per session)
                        import shutil

                        shutil.rmtree(plan.file.parent)
                    else:
                        plan.file.unlink()      # the next repeat writes anew (not reused)
                shown = mode if mode == "whole" or plan.compacted else "fits"
                rows.append((source_agent, target, shown, length, best, worst, size, plan.tokens))
        store.close()
    print(f"{'from':>12} {'to':>12} {'branch':>10} {'entries':>8} {'written s':>9} "
          f"{'import s':>8} {'total s':>7} {'slowest':>7} {'cpu s':>5} {'MB':>5} {'tokens loaded':>13}")
    for source_agent, target, mode, length, best, worst, size, tokens in rows:
        print(f"{source_agent:>12} {target:>12} {mode:>10} {length:>8,} {best[0]:>9.2f} "
              f"{best[1]:>8.2f} {best[2]:>7.2f} {worst:>7.2f} {best[3]:>5.2f} {size / 1e6:>5.1f} "
              f"{tokens:>13,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
