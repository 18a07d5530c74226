"""Gemini CLI: its session files (`~/.gemini/tmp/<project>/chats/*.jsonl`) read into the
store (`importer`), and a branch written back as a new session Gemini CLI resumes
(`writer`). Facts: docs/agents/gemini-cli.md."""

from __future__ import annotations

from core.agents.base import Agent, Place

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _recognise(first: dict[str, Any]) -> bool:
    if "projectHash" in first and "sessionId" in first and "startTime" in first:
        return True     # the header
    if "$set" in first or "$rewindTo" in first:
        return True
    return first.get("type") in ("user", "gemini") and "id" in first and \
        "parentUuid" not in first and "uuid" not in first


def _in_chats(name: str) -> bool:
    return name.endswith(".jsonl")


def _by_name(path: str) -> bool:
    return "/.gemini/tmp/" in path and "/chats/" in path and path.endswith(".jsonl")


AGENT = Agent(
    source="gemini", title="Gemini CLI", colour="#5f87ff", rank=40,
    places=(Place("", (".gemini",), "tmp", _in_chats),),
    recognise=_recognise, by_name=_by_name,
    importer="core.agents.gemini.importer", writer="core.agents.gemini.writer",
    session_noun="Gemini CLI session",
    logs_note="`~/.gemini/tmp/<project>/chats/session-*.jsonl` (sub-agents in "
              "`chats/<session id>/`)",
    resume_note="writes the branch as a new session file in Gemini CLI's folder for the "
                "project (never changing `projects.json`) and runs `gemini --resume <id>` from "
                "the project folder; at the end of a session Gemini CLI wrote, nothing is "
                "written",
    usage_rule="`tokens` of each `gemini` record, counted once per record id (a record "
               "written again under its id is the same response); `cached` is cache "
               "read, `thoughts` output")
