"""Sub-agents in a Claude Code transcript: the Agent/Task calls that start them, a sub-agent
written inline in its parent's file (`Sidechain`), and what the `agent-<id>.meta.json` beside
a sub-agent's own file says of it."""

from __future__ import annotations

from pathlib import Path

from core.importing.base import title_from_text

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any

    from core.importing.session import SessionTarget

# Tools that start a sub-agent (Claude Code renamed Task to Agent in 2.1).
SPAWN_TOOLS = frozenset({"Agent", "Task"})


def spawn_calls(message: Any):
    """The Agent/Task tool calls (tool_use blocks with an id) of an assistant message."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use" and \
                block.get("name") in SPAWN_TOOLS and isinstance(block.get("id"), str):
            yield block


class Sidechain:
    """A sub-agent written inline in its parent's file (see the module doc)."""

    __slots__ = ("root", "line", "agent", "call", "description", "agent_type", "prompt",
                 "started", "target")

    def __init__(self, *, root: str, line: int, agent: str = "", call: str = "",
                 description: str = "", agent_type: str = "", prompt: str = "",
                 started: Any = None):
        self.root, self.line, self.agent, self.call = root, line, agent, call
        self.description, self.agent_type, self.prompt = description, agent_type, prompt
        self.started = started
        self.target: SessionTarget | None = None

    def uid(self, parent_uid: str) -> str:
        """As a sub-agent's own file is known (`<session>:agent-<id>`), else by its root."""
        return f"{parent_uid}:agent-{self.agent}" if self.agent else \
            f"{parent_uid}:sidechain-{self.root}"

    def name(self) -> str:
        return title_from_text(self.description or self.prompt) or "sub-agent"

    def record(self) -> list[Any]:
        """What a resumed read is told of it (`restored`)."""
        return [self.root, self.line, self.agent, self.call, self.description,
                self.agent_type, self.prompt[:200], self.started]

    @classmethod
    def restored(cls, value: Any) -> "Sidechain | None":
        if not isinstance(value, list) or len(value) != 8 or not isinstance(value[0], str) \
                or type(value[1]) is not int:
            return None
        texts = [v if isinstance(v, str) else "" for v in value[2:7]]
        return cls(root=value[0], line=value[1], agent=texts[0], call=texts[1],
                   description=texts[2], agent_type=texts[3], prompt=texts[4],
                   started=value[7] if isinstance(value[7], str) else None)


def subagent_meta(path: Path) -> dict[str, Any]:
    """What Claude Code's `agent-<id>.meta.json` beside a sub-agent's file says of it:
    the tool call that spawned it (`toolUseId`), its type and description."""
    from core.util.fastjson import loads

    from core.store.held_files import open_unless_held

    try:
        with open_unless_held(path.with_name(path.name[: -len(".jsonl")] + ".meta.json"
                                             if path.name.endswith(".jsonl")
                                             else path.name + ".meta.json")) as handle:
            value = loads(handle.read(1 << 16))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {key: value[key] for key in ("toolUseId", "agentType", "description", "name",
                                        "spawnDepth", "isFork")
            if isinstance(value.get(key), (str, int, bool)) and value.get(key) != ""}
