"""Aider: the Markdown chat history it keeps in each project (`.aider.chat.history.md`) read
into the store (`importer`). Aider records nowhere which projects it ran in, so there is
no folder for `--discover`: a project (or a folder of projects) is named to `arbor import`
or `arbor follow`, which find the history files in it by name. Facts: docs/agents/aider.md."""

from __future__ import annotations

from core.agents.base import Agent

HISTORY = ".aider.chat.history.md"


def _history(name: str) -> bool:
    return name == HISTORY


def _by_name(path: str) -> bool:
    return path.endswith("/" + HISTORY) or path == HISTORY


AGENT = Agent(
    source="aider", title="Aider", colour="#5fd7af", rank=88,
    places=(), by_name=_by_name, follows=_history,
    importer="core.agents.aider.importer", writer="core.agents.aider.writer",
    session_noun="Aider chat history",
    logs_note="`.aider.chat.history.md` in each project (Aider records no list of its "
              "projects: name them, `arbor import ~/code`, `arbor follow ~/code`)",
    resume_note="at the end of a project's history: `aider --restore-chat-history` from the "
                "project folder (Aider reads the whole history back); an earlier branch "
                "cannot be handed to Aider (one history per project): export it and give it "
                "as a prompt",
    usage_rule="each `> Tokens: … sent, … received.` line once, on the answer before it "
               "(Aider writes counts above 1,000 rounded, 2.3k); `sent` less the cache hit "
               "and cache write it names is input; the weak model's requests (commit "
               "messages, summaries) are not in the file")
