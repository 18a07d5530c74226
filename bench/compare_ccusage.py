"""arbor's totals beside ccusage's, on a generated Claude Code folder (issue 10's check).

Writes a folder laid out as Claude Code's (`projects/<project>/<session>.jsonl`, sub-agents
under `<session>/subagents/`) with the cases that separate counting rules: responses
streamed over several lines whose first copies carry a partial output count, responses
without `requestId`, sub-agent files, long-context requests (over 200k input), a model
without a price, and cache writes for 5 minutes and for an hour. Then it reports:

* arbor: `arbor import FOLDER` then `arbor usage --by model --json` (UTC);
* ccusage: `ccusage daily --json --offline --timezone UTC` with CLAUDE_CONFIG_DIR=FOLDER
  (give its path with --ccusage; `npm install ccusage@20.0.24` in a scratch folder);
* what each counting rule gives, recomputed here from the file, so that each difference is
  explained by a rule and not guessed.

    .venv/bin/python bench/compare_ccusage.py --ccusage /tmp/usage-npm/node_modules/.bin/ccusage
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001")
UNPRICED = "claude-imaginary-9"
START = datetime(2025, 10, 1, 9, tzinfo=timezone.utc)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def generate(root: Path, sessions: int = 60, seed: int = 10) -> list[dict]:
    """The folder, and every line that carries usage (the rules below recount them)."""
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    carried: list[dict] = []

    def session_file(folder: Path, sid: str, moment: datetime, turns: int, *, sidechain: bool,
                     model: str, agent: str | None = None) -> tuple[list[dict], datetime]:
        lines, parent = [], None

        def line(kind: str, **more) -> dict:
            nonlocal parent, moment
            moment += timedelta(seconds=rng.randrange(1, 40))
            here = {"parentUuid": parent, "isSidechain": sidechain, "userType": "external",
                    "cwd": f"/work/{folder.name}", "sessionId": sid, "version": "2.0.14",
                    "gitBranch": "main", "type": kind, "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "timestamp": _stamp(moment)}
            if agent:
                here["agentId"] = agent
            here.update(more)
            parent = here["uuid"]
            lines.append(here)
            return here

        for turn in range(turns):
            line("user", message={"role": "user", "content": f"step {turn}: carry on"})
            long_context = rng.random() < 0.06
            read = rng.randrange(200_500, 260_000) if long_context else rng.randrange(0, 120_000)
            write = rng.randrange(0, 8_000)
            one_hour = write if rng.random() < 0.2 else 0
            final_output = rng.randrange(20, 3_000)
            usage = {"input_tokens": rng.randrange(1, 40), "cache_creation_input_tokens": write,
                     "cache_read_input_tokens": read, "output_tokens": final_output,
                     "service_tier": "standard",
                     "cache_creation": {"ephemeral_5m_input_tokens": write - one_hour,
                                        "ephemeral_1h_input_tokens": one_hour}}
            blocks = rng.choice([1, 2, 2, 3])
            msg_id = f"msg_{rng.getrandbits(64):016x}"
            request = None if rng.random() < 0.05 else f"req_{rng.getrandbits(64):016x}"
            for block in range(blocks):
                last = block == blocks - 1
                copy = dict(usage, output_tokens=final_output if last else rng.randrange(1, 12))
                content = [{"type": "text", "text": f"part {block}"}] if last else \
                    [{"type": "thinking", "thinking": "…", "signature": "s"}]
                extra = {"requestId": request} if request else {}
                line("assistant", message={"model": model, "id": msg_id, "type": "message",
                                           "role": "assistant", "content": content,
                                           "stop_reason": None if not last else "end_turn",
                                           "usage": copy}, **extra)
                carried.append({"model": model, "id": msg_id, "request": request, "usage": copy,
                                "timestamp": lines[-1]["timestamp"], "block": block})
        return lines, moment

    for number in range(sessions):
        project = root / "projects" / f"-work-project{number % 6}"
        project.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        model = UNPRICED if number == 7 else MODELS[number % len(MODELS)]
        moment = START + timedelta(days=number % 14, minutes=rng.randrange(0, 600))
        lines, moment = session_file(project, sid, moment, rng.randrange(5, 40), sidechain=False,
                                     model=model)
        (project / f"{sid}.jsonl").write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
        if number % 5 == 0:   # a sub-agent with its own file, as Claude Code 2 writes it
            agents = project / sid / "subagents"
            agents.mkdir(parents=True)
            agent = f"a{number:04x}"
            sub, _ = session_file(project, sid, moment, rng.randrange(2, 8), sidechain=True,
                                  model=MODELS[2], agent=agent)
            (agents / f"agent-{agent}.jsonl").write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in sub))
    return carried


KINDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def responses(carried: list[dict]) -> dict[str, list[dict]]:
    """The lines each rule counts, as (model, timestamp, usage) records.

    arbor: one per response, keyed by message.id + requestId (message.id alone without it),
    the largest copy. ccusage 20.0.24, as observed on purpose-made lines: one per
    message.id + requestId with its largest copy, and a line without requestId counted
    every time it appears."""
    ours: dict[str, dict] = {}
    theirs: dict[str, dict] = {}
    loose: list[dict] = []
    for line in carried:
        key = f"{line['id']}:{line['request']}" if line["request"] else line["id"]
        for held_by, always in ((ours, False), (theirs, True)):
            if always and not line["request"]:
                loose.append(line)
                continue
            held = held_by.get(key)
            if held is None or sum(line["usage"][k] for k in KINDS) > sum(held["usage"][k] for k in KINDS):
                held_by[key] = line
    return {"arbor rule": list(ours.values()), "ccusage rule": list(theirs.values()) + loose}


def priced(lines: list[dict], *, marginal: bool) -> float:
    """Their cost with arbor's price table: a long-context request at the higher tier as a
    whole (the provider's rule, arbor's), or `marginal`: each kind's tokens above the
    threshold at the higher rate and the rest at the base rate (how ccusage prices)."""
    from core.usage.pricing import parse_time, price_book

    book, total = price_book(), 0.0
    for line in lines:
        u = line["usage"]
        card = book.card(line["model"], "anthropic", parse_time(line["timestamp"]))
        if card is None:
            continue
        one_hour = u.get("cache_creation", {}).get("ephemeral_1h_input_tokens", 0)
        write = u["cache_creation_input_tokens"]
        if not marginal or len(card.tiers) == 1:
            total += card.cost(u["input_tokens"], write, one_hour, u["cache_read_input_tokens"],
                               u["output_tokens"])
            continue
        base, high, start = card.tiers[0], card.tiers[1], card.starts[1]

        def split(count: int, base_rate: float, high_rate: float) -> float:
            return min(count, start) * base_rate + max(0, count - start) * high_rate

        total += (split(u["input_tokens"], base.input, high.input)
                  + split(write - one_hour, base.cache_write, high.cache_write)
                  + split(one_hour, base.cache_write_1h, high.cache_write_1h)
                  + split(u["cache_read_input_tokens"], base.cache_read, high.cache_read)
                  + split(u["output_tokens"], base.output, high.output))
    return total


def run_arbor(root: Path, db: Path) -> dict:
    env = {**os.environ, "TZ": "UTC"}
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "tui", "import", "-q", "--db", str(db), str(root / "projects")],
                   check=True, env=env)
    done = subprocess.run([sys.executable, "-m", "tui", "usage", "--db", str(db), "--by", "model",
                           "--json", "--timezone", "UTC"], check=True, env=env,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def run_ccusage(command: str, root: Path) -> tuple[str, dict]:
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(root), "TZ": "UTC"}
    version = subprocess.run([command, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    done = subprocess.run([command, "daily", "--json", "--offline", "--timezone", "UTC", "--breakdown"],
                          capture_output=True, text=True, env=env, check=True)
    return version, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="/tmp/usage-ccusage-compare")
    parser.add_argument("--ccusage", help="the ccusage command (not run without it)")
    parser.add_argument("--sessions", type=int, default=60)
    args = parser.parse_args()
    root = Path(args.folder)
    carried = generate(root, args.sessions)
    rules = responses(carried)
    report = run_arbor(root, root / "arbor.db")
    t = report["totals"]
    rows = [("arbor usage", t["input_tokens"], t["output_tokens"], t["cache_creation_tokens"],
             t["cache_read_tokens"], t["cost_usd"])]
    per_model = {r["key"]: r["cost_usd"] for r in report["rows"]}
    for name, lines in rules.items():
        counts = {k: sum(line["usage"][k] for line in lines) for k in KINDS}
        rows.append((f"recount, {name}", counts["input_tokens"], counts["output_tokens"],
                     counts["cache_creation_input_tokens"], counts["cache_read_input_tokens"],
                     priced(lines, marginal=False)))
    rows.append(("recount, ccusage rule, marginal", *rows[-1][1:5],
                 priced(rules["ccusage rule"], marginal=True)))
    their_models: dict[str, float] = {}
    if args.ccusage:
        version, data = run_ccusage(args.ccusage, root)
        c = data["totals"]
        rows.insert(1, (f"{version} --offline", c["inputTokens"], c["outputTokens"],
                        c["cacheCreationTokens"], c["cacheReadTokens"], c["totalCost"]))
        for day in data["daily"]:
            for part in day.get("modelBreakdowns", []):
                their_models[part["modelName"]] = their_models.get(part["modelName"], 0.0) + part["cost"]
    print(f"folder: {root} ({sum(1 for _ in root.rglob('*.jsonl'))} files, "
          f"{len(carried):,} lines with usage)")
    print(f"{'':<34}{'input':>10}{'output':>12}{'cache write':>14}{'cache read':>14}{'cost $':>12}")
    for name, inp, out, write, read, cost in rows:
        money = f"{cost:>12,.2f}" if cost is not None else f"{'':>12}"
        print(f"{name:<34}{inp:>10,}{out:>12,}{write:>14,}{read:>14,}{money}")
    print("\ncost by model")
    for model in sorted(set(per_model) | set(their_models)):
        ours = per_model.get(model)
        theirs = their_models.get(model)
        print(f"  {model:<32}{'arbor':>7} {'' if ours is None else f'{ours:,.2f}':>10}"
              f"{'ccusage':>10} {'' if theirs is None else f'{theirs:,.2f}':>10}")
    ours_rule = priced(rules["arbor rule"], marginal=False)
    theirs_whole = priced(rules["ccusage rule"], marginal=False)
    theirs_marginal = priced(rules["ccusage rule"], marginal=True)
    print("\nthe difference in cost, rule by rule (priced with arbor's table)")
    print(f"  lines without requestId counted each time   {theirs_whole - ours_rule:+10,.2f}")
    print(f"  long context priced per kind, above 200k only {theirs_marginal - theirs_whole:+8,.2f}")
    if args.ccusage:
        print(f"  left (ccusage's own reading and table)       {c['totalCost'] - theirs_marginal:+10,.2f}")
    unpriced = [r for r in report["rows"] if r["incomplete"]]
    for row in unpriced:
        print(f"  arbor: no price for {row['key']} ({row['total_tokens']:,} tokens; cost incomplete)")


if __name__ == "__main__":
    main()
