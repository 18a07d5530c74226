"""Sub-agents written inline in their parent's file (`_InlineAgents`, a part of
`importer._Import`; older Claude Code versions): the Task calls they answer, the session
each gets, and which session a node's entry is written to."""

from __future__ import annotations

from core.importing.session import INLINE_BELOW, SessionTarget
from core.model.entries import content_text
from .nodes import FORMAT
from .sidechains import Sidechain, spawn_calls
from .snapshot import short_key

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from typing import Any


class _InlineAgents:
    """The sidechains of one read and the targets their entries go to."""

    def _task_calls(self, message: Any) -> None:
        """The Task/Agent calls of a main-thread reply, for the sidechains written inline
        after them (`_new_sidechain`)."""
        for block in spawn_calls(message):
            given = block.get("input") if isinstance(block.get("input"), dict) else {}
            prompt, what = given.get("prompt"), given.get("description")
            kind = given.get("subagent_type")
            self.task_calls.append([block["id"], short_key(prompt.strip()) if
                                    isinstance(prompt, str) else "",
                                    what if isinstance(what, str) else "",
                                    kind if isinstance(kind, str) else ""])

    def _new_sidechain(self, d: dict[str, Any], uuid: str, number: int, ts) -> int:
        """A sub-agent written inline starts at this line: its session, and the Task call
        that started it (the one whose prompt its first line repeats, else the oldest not
        matched yet)."""
        agent = d.get("agentId")
        agent = agent if isinstance(agent, str) else ""
        for owner, known in enumerate(self.sidechains):
            if known.root == uuid or (agent and known.agent == agent):
                return owner               # (read again after a resume, or its second root)
        message = d.get("message")
        prompt = content_text(message.get("content")).strip() if isinstance(message, dict) else ""
        key = short_key(prompt) if prompt else None
        calls = self.task_calls
        found = next((i for i, call in enumerate(calls) if key and call[1] == key), None)
        if found is None and calls:
            found = 0
        call = calls.pop(found) if found is not None else None
        side = Sidechain(root=uuid, line=number, agent=agent,
                          call=call[0] if call else "", description=call[2] if call else "",
                          agent_type=call[3] if call else "", prompt=prompt[:400], started=ts)
        self.sidechains.append(side)
        return len(self.sidechains) - 1

    def _sidechain_at(self, number: int) -> int:
        """The sub-agent being written where this line stands (the last one started before
        it): a sidechain line whose parent is missing belongs to it."""
        best = 0
        for owner, side in enumerate(self.sidechains):
            if side.line <= number:
                best = owner
        return best

    def _target_for(self, owner: int, *, switch: bool = True) -> SessionTarget:
        """The session a node's entry goes to: the file's own (-1) or a sub-agent's written
        inline. One entry writer writes at a time (each gives seqs from where the store
        is): the other is flushed, and this one goes on after its rows."""
        main = self.target or self._ensure_target()
        if owner < 0:
            target = main
        else:
            side = self.sidechains[owner]
            target = side.target
            if target is None:
                if switch and self.writing is not None:
                    self.writing.writer.flush()
                    self.writing = None
                target = side.target = self._side_target(side, main)
        if switch and target is not self.writing:
            if self.writing is not None:
                self.writing.writer.flush()
                target.writer.after_others()
            self.writing = target
        return target

    def _side_target(self, side: "Sidechain", main: SessionTarget) -> SessionTarget:
        metadata: dict[str, Any] = {"format": FORMAT, "path": str(self.path), "inline": True,
                                    "rootUuid": side.root, "lineDefaults": self.defaults}
        for key, value in (("toolUseId", side.call), ("description", side.description),
                           ("agentType", side.agent_type), ("agentId", side.agent)):
            if value:
                metadata[key] = value
        spawn_ref = f"key:claude:{side.call}" if side.call else \
            f"key:claude-agent:{side.agent}" if side.agent else None
        resuming = self.stored is not None
        return SessionTarget(
            self.store, uid=side.uid(main.uid), name=side.name(), source=FORMAT, cwd=self.cwd,
            metadata=metadata, created_at=side.started or self.clock.first or self.fallback,
            kind="subagent", parent_session=main.uid, spawn_ref=spawn_ref, remember_new=False,
            ids_on_demand=resuming,
            background=not resuming or self.ticker.total - self.start_offset >= INLINE_BELOW)
