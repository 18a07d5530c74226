"""Which session and branch the agent calling `arbor mcp` is in.

What each agent gives the MCP servers it starts (found by running each one headless with a
probe server that recorded its environment and its `initialize` request; see the README):

- Claude Code: `CLAUDE_CODE_SESSION_ID` (the id of its transcript, which is the session's uid
  once imported) and `CLAUDE_PROJECT_DIR`; client name `claude-code`; roots.
- Codex: nothing but HOME, LANG, PATH, TERM, TMPDIR and the server's configured `env`; client
  name `codex-mcp-client`. (`CODEX_THREAD_ID` is set only for the shell commands it runs.)
- Gemini CLI: `GEMINI_CLI=1`; client name `gemini-cli-mcp-client`; roots.
- pi (its MCP client, from 0.99 on): no session id (PI_SESSION_ID is only for the commands it
  runs); client name `pi`; roots.

So the rules, first that answers: 1. a session id in the environment (`ARBOR_SESSION` set
by hand in the agent's server config, `CLAUDE_CODE_SESSION_ID`, `CODEX_THREAD_ID`); 2. the
newest session of the working folder (the client's first root, else `CLAUDE_PROJECT_DIR`,
else the server's own folder), of the calling agent's source when the client says which.
"""

from __future__ import annotations

import os
from typing import Any, Mapping
from urllib.parse import unquote, urlparse

from . import shapes

SESSION_VARIABLES = (("ARBOR_SESSION", None), ("CLAUDE_CODE_SESSION_ID", "claude_code"),
                     ("CODEX_THREAD_ID", "codex"))
# the client's name in its `initialize` request -> the source its sessions are imported as
CLIENT_SOURCES = {"claude-code": "claude_code", "claude-ai": "claude_code",
                  "codex-mcp-client": "codex", "codex": "codex",
                  "gemini-cli-mcp-client": "gemini", "pi": "pi"}


def folder_of(roots: list[str] | None, env: Mapping[str, str], cwd: str) -> tuple[str, str]:
    """The agent's working folder and where it was read."""
    for root in roots or ():
        parsed = urlparse(root)
        if parsed.scheme == "file" and parsed.path:
            return os.path.normpath(unquote(parsed.path)), "the client's first root"
    if env.get("CLAUDE_PROJECT_DIR"):
        return os.path.normpath(env["CLAUDE_PROJECT_DIR"]), "CLAUDE_PROJECT_DIR"
    return os.path.normpath(cwd), "the server's working folder"


def identify(store, *, env: Mapping[str, str], cwd: str, client: str | None = None,
             roots: list[str] | None = None) -> dict[str, Any]:
    """The calling agent's session and branch, and the rule that found them."""
    source = CLIENT_SOURCES.get((client or "").lower())
    out: dict[str, Any] = {"client": shapes.text(client, 100) if client else None,
                           "agent_source": source}
    for variable, agent in SESSION_VARIABLES:
        value = (env.get(variable) or "").strip()
        if not value:
            continue
        found = store.sessions.by_uid(value)
        if found is not None:
            return _answer(store, out, found, f"{variable} names this session")
        out.setdefault("not_in_store", []).append(
            f"{variable}={shapes.text(value, 80)} is not in the store yet (arbor import or "
            f"arbor watch brings it in)")
        source = source or agent
    folder, where = folder_of(roots, env, cwd)
    out["folder"] = shapes.text(folder, 500)
    candidates = store.sessions.find(cwd=folder, kind="session", limit=50)
    if source:
        own = [s for s in candidates if s.source == source]
        if own:
            return _answer(store, out, own[0], f"the newest {source} session of {where}")
    if candidates:
        return _answer(store, out, candidates[0], f"the newest session of {where}")
    out.update({"session": None, "branch": None,
                "rule": f"no session in the store was run in {where} ({shapes.text(folder, 300)})"})
    return out


def _answer(store, out: dict[str, Any], session: Any, rule: str) -> dict[str, Any]:
    branch = store.branches.current(session.id)
    out.update(shapes.session(session))
    out["branch"] = shapes.branch(branch) if branch is not None else None
    out["rule"] = rule
    return out
