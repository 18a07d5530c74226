"""The end of a read (`_Finishing`, a part of `importer._Import`): the session's name,
facts and lineage, its branches synced, and the same for each sub-agent written inline."""

from __future__ import annotations

from core.importing.base import title_from_text
from core.importing.session import first_text_title
from core.importing.tree import sync_branches, sync_new_branches
from .nodes import FORMAT

TYPE_CHECKING = False  # `typing` costs ~2.5 ms at start-up; only annotations use it
if TYPE_CHECKING:
    from core.importing.session import SessionTarget
    from .sidechains import Sidechain


class _Finishing:
    """The sessions of one read, finished."""

    def finish(self) -> None:
        result = self.result
        target = self.target
        if target is None:
            if not result.skipped:
                result.status, result.error = "not-a-log", "no Claude Code lines in this file"
            else:
                result.status, result.error = "failed", "no line of this file could be read"
            return
        for each in self._targets():
            each.flush()
        name = self.titles.get("custom-title") or self.titles.get("ai-title") or \
            self.titles.get("summary") or self.titles.get("description") or \
            title_from_text(self.first_prompt or self.side_prompt) or self.path.stem
        metadata = {"cwd": self.cwd, "model": self.model, "sessionId": self.session_id,
                    "version": self.version, "gitBranch": self.git_branch,
                    "agentId": self.agent_id, "danglingParents": self.dangling,
                    "lineDefaults": self.defaults}
        target.update_metadata(metadata)
        target.set_cwd(self.cwd)
        store = self.store
        if self.forked_from is not None and not self.first_side and \
                self.forked_from[0] != target.uid:
            store.sessions.set_lineage(target.id, kind="fork", parent_ref=self.forked_from[0],
                              spawn_ref=f"entry:{self.forked_from[1]}")

        def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
            title = first_text_title(store, path_, 40)
            first = store.entries.get(path_[0]) if path_ else None
            side = bool(first and isinstance(first.data.get("claude"), dict)
                        and first.data["claude"].get("isSidechain"))
            if fork is None:
                if side:
                    return f"sidechain: {title}" if title else "sidechain"
                return "main" if not store.branches.heads(target.id) else (title or "root")
            return title or "branch"

        # the current branch: the one holding the main thread's last line (see the module doc)
        newest = self.seq[self.newest_main[1]] if self.newest_main[1] >= 0 else None
        self._sync(target, name_for, newest)
        result.sessions.append(target.finish(name=name))
        for side in self.sidechains:
            if side.target is not None:
                self._finish_sidechain(side)

    def _targets(self) -> list[SessionTarget]:
        return [t for t in [self.target, *(side.target for side in self.sidechains)]
                if t is not None]

    def _sync(self, target: SessionTarget, name_for, newest: int | None = None) -> None:
        store = self.store
        if self.stored is not None and store.branches.heads(target.id):
            # a grown file: only the entries this read added are looked at
            sync = sync_new_branches(store, target.id, target.writer.written_rows(),
                                     key_prefix=f"{FORMAT}:{target.uid}", name_for=name_for,
                                     newest_leaf=newest)
        else:
            sync = sync_branches(store, target.id, key_prefix=f"{FORMAT}:{target.uid}",
                                 name_for=name_for, tree=target.writer.written_rows(),
                                 newest_leaf=newest)
        target.result.branches_added = sync.added

    def _finish_sidechain(self, side: "Sidechain") -> None:
        """A sub-agent written inline: its session's branches and name, as a sub-agent's own
        file gets them."""
        target = side.target
        store = self.store
        target.set_cwd(self.cwd)

        def name_for(leaf: int, fork: int | None, path_: list[int]) -> str:
            title = first_text_title(store, path_, 40)
            if fork is None:
                return "main" if not store.branches.heads(target.id) else (title or "root")
            return title or "branch"

        self._sync(target, name_for)
        self.result.sessions.append(target.finish(name=side.name()))
