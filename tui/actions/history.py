"""The app's actions on history: undo (through core.actions.undo's log), hide or show a branch,
rename a branch, make a checkpoint, name a new branch. A mixin of ArborApp, so that these
keys live together and app.py keeps the panes and the operations it always had.

Every change goes through `_recorded`, which logs it for `u`, in the app's queue of writes
(`_write`, store_calls): the screen never waits for the store.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text

from core.seed.models import InternalSession

from ..components.branches_pane import branch_title, suggest_branch_name
from ..render.formatting import FAINT, short_id
from ..render.safe_text import safe_line

NAME_HINT = Text("enter accepts · edit the name first if you like · escape cancels", FAINT)


def _text_of(message) -> str:
    """A message's own words (its text blocks; not tool calls or thinking)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block.get("text", "") for block in content
                        if isinstance(block, dict) and block.get("type") == "text"
                        and isinstance(block.get("text"), str))
    return ""


class HistoryActions:
    """Mixed into ArborApp (uses its store, panes, say/_error/reload)."""

    _undo_blocked: int | None = None      # an operation `u` could not undo, said so once

    @staticmethod
    def _recorded(store, session_id: int, kind: str, description: str):
        """Run an operation in one transaction and log it for undo (core.actions.undo)."""
        from core.actions import undo

        return undo.recorded(store, session_id, kind, description)

    # --------------------------------------------------------------------- undo
    def action_undo(self) -> None:
        from core.actions import undo

        self._catch_up()

        def write(store):
            # (`_undo_blocked` is read and set here, in the writing thread: a second u
            # pressed before the first was done sees what the first found)
            pending = store.oplog.last_undoable()
            if pending is not None and pending.seq == self._undo_blocked:
                # asked again: leave that one as it is and undo the one before it
                undo.leave_as_is(store, pending)
            result = undo.undo_last(store)
            self._undo_blocked = result.operation.seq if result is not None and \
                not result.done else None
            return result

        self._write("undo", write, done=self._undone)

    def _undone(self, result) -> None:
        if result is None:
            self.say("Nothing to undo: the operations of this app are all undone.",
                     title="Undo", markup=False)
            return
        operation = result.operation
        if not result.done:
            self.say(f"Cannot undo “{operation.description}”: {result.conflict}. Nothing was "
                     "changed. Press u again to leave it as it is and undo the one before it.",
                     title="Undo", severity="warning", markup=False, timeout=10)
            return
        self.say(f"Undid: {operation.description}.", title="Undo", markup=False)
        keep = self.branches_pane.highlighted
        self.reload(session_id=operation.external_session_id,
                    branch_id=keep.id if keep is not None and
                    operation.external_session_id == self.session_id else None,
                    keep_seq=self._kept_seq())

    # ------------------------------------------------------------- naming a branch
    def _ask_branch_name(self, source: InternalSession, where: str,
                         done: Callable[[str | None], None], *, key: tuple) -> None:
        from ..components.text_prompt import TextPrompt

        if self.session_id == source.external_session_id and self._tree_branches:
            branches = self._tree_branches   # (the session's, as show_session read them)
        else:
            try:
                branches = self.store.branches.of_session(source.external_session_id)
            except self.store.errors as error:
                self._error(error)
                return
        title = Text("New branch at ", "bold")
        title.append_text(safe_line(where, 50, style="bold #5fafff"))
        self.push_screen(TextPrompt(title, value=self.typed(key, suggest_branch_name(source, branches)),
                                    placeholder="a name for the new branch", hint=NAME_HINT,
                                    id="branch-name-dialog"), done)

    # ------------------------------------------------------------- branch actions
    def action_hide_branch(self) -> None:
        """Hide the highlighted branch (confirmed), or show a hidden one again."""
        from core.actions import operations

        from ..components.confirm_dialog import ConfirmDialog

        self._catch_up()
        branch = self._target_branch()
        if branch is None:
            return
        title = branch_title(branch)

        def hide(hidden: bool) -> None:
            description = f"{'hide' if hidden else 'show'} {title}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "hide", description):
                    operations.hide_branch(store, branch.id, hidden)

            def written(_result) -> None:
                if hidden:
                    self.say(f"{title} is hidden; nothing is deleted. A shows hidden branches, "
                             "u undoes.", title="Hidden", markup=False)
                else:
                    self.say(f"{title} is shown again.", markup=False)
                self.reload(branch_id=branch.id if not hidden else None)

            self._write(description, write, done=written)

        if branch.is_hidden:
            hide(False)
            return
        if branch.is_current:
            self.say("The current branch cannot be hidden: make another branch current first "
                     "(enter on it).", severity="warning", markup=False)
            return
        question = Text("Hide ")
        question.append_text(safe_line(title, 50, style="bold"))
        question.append(f" ({branch.message_count:,} messages)?\n\nIt leaves the tree; nothing "
                        "is deleted. A shows hidden branches and archived sessions; u undoes.")
        self.push_screen(ConfirmDialog(Text("Hide branch", "bold"), question, yes="Hide"),
                         lambda yes: hide(True) if yes else None)

    def action_rename_branch(self) -> None:
        from core.actions import operations

        from ..components.text_prompt import TextPrompt

        self._catch_up()
        branch = self._target_branch()
        if branch is None:
            return
        old = branch_title(branch)
        key = ("rename", "branch", branch.id)

        def done(name: str | None) -> None:
            if name is None or not name.strip():
                return
            description = f"rename {old} to {name.strip()}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "rename", description):
                    operations.rename_branch(store, branch.id, name)

            def written(_result) -> None:
                self.reload(branch_id=branch.id, keep_seq=self._kept_seq())

            self._write(description, write, done=written, keep=(key, name))

        self.push_screen(TextPrompt(Text("Rename branch", "bold"),
                                    value=self.typed(key, branch.name or old),
                                    placeholder="branch name", id="rename-branch-dialog"), done)

    def action_checkpoint(self) -> None:
        """A named checkpoint on the highlighted message, or the highlighted branch's head."""
        from core.actions import operations

        from ..components.text_prompt import TextPrompt

        self._catch_up()
        pane = self._focused_pane()
        if pane in (self.messages_pane, self.entries_pane):
            picked = self._highlighted_entry()
            if picked is None:
                return
            branch, entry = picked
            where = f"entry {short_id(entry.id)}"
            # named after the words of the message (a reply shown as one message is named
            # by its first entry, not by the tool result it ends with)
            first = self.messages_pane.cursor_item if pane is self.messages_pane else None
            words = first.entry if first is not None else entry
        else:
            branch = self._target_branch()
            if branch is None:
                return
            if branch.head_seq is None:
                self.say(f"{branch_title(branch)} has no entries yet: there is nothing to mark.",
                         markup=False)
                return
            try:
                entry = self.store.entries.get(branch.head_seq)
            except self.store.errors as error:
                self._error(error)
                return
            if entry is None:
                return
            where = f"the head of {branch_title(branch)}"
            words = entry
        said = " ".join(_text_of(words.message).split()[:6]) if words is not None else ""
        if not said and entry is not None and entry.type == "compaction":
            said = "the compacted context"
        suggestion = f"at: {said}" if said else f"checkpoint at {short_id(entry.id)}"
        key = ("checkpoint", branch.id)

        def done(name: str | None) -> None:
            if name is None:
                return
            typed = name
            name = name.strip() or suggestion
            description = f"checkpoint {name} at {where}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "checkpoint", description):
                    operations.checkpoint(store, branch.id, name, at_entry_id=entry.seq)

            def written(_result) -> None:
                self.say(f"Checkpoint “{name}” at {where}: r offers it to roll back to.",
                         title="Checkpoint", markup=False)
                self.reload(branch_id=self.branch.id if self.branch else None,
                            keep_seq=self._kept_seq())

            self._write(description, write, done=written, keep=(key, typed))

        title = Text("Checkpoint at ", "bold")
        title.append_text(safe_line(where, 50, style="bold #5fafff"))
        self.push_screen(TextPrompt(title, value=self.typed(key, suggestion[:60]),
                                    placeholder="checkpoint name", hint=NAME_HINT,
                                    id="checkpoint-dialog"), done)
