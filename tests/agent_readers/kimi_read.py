"""Load a Kimi CLI session the way `kimi -r <id>` does, with Kimi CLI's own code: its
`Session.find` (through ~/.kimi/kimi.json and the work folder's sessions folder) and its
`Context.restore` of `context.jsonl` (the history it sends the model). Prints the history,
the title it lists the session under and the wire log's metadata line as JSON.

    <kimi venv>/bin/python kimi_read.py <session id> <work folder>

Run with the Python of Kimi CLI's own venv (tests/agent_lab/install_agents.sh)."""

import asyncio
import json
import sys


async def main(session_id: str, cwd: str) -> dict:
    from kaos.path import KaosPath
    from kimi_cli.session import Session
    from kimi_cli.soul.context import Context

    session = await Session.find(KaosPath(cwd), session_id)
    if session is None:
        raise SystemExit(f"Kimi CLI does not find session {session_id} in {cwd}")
    context = Context(session.context_file)
    if not await context.restore():
        raise SystemExit(f"Kimi CLI restores nothing of {session.context_file}")
    history = [message.model_dump(mode="json", exclude_none=True) for message in context.history]
    with open(session.wire_file.path, encoding="utf-8") as wire:
        metadata = json.loads(wire.readline())
    return {"id": session.id, "title": session.title, "history": history,
            "system": context.system_prompt, "metadata": metadata}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(asyncio.run(main(*sys.argv[1:3]))))
