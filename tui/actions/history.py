"""The app's actions on history: branch (b), make current (enter), roll back (r), compact
(c), undo (u, through core.actions.undo's log), hide or show a branch, rename a branch, and
naming a new branch. A mixin of ArborApp; labels and checkpoints are in annotations.py.

Every change goes through `_recorded`, which logs it for `u`, in the app's queue of writes
(`_write`, store_calls): the screen never waits for the store.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text

from core.seed.models import InternalSession

from tui.components.branches_pane import branch_title, suggest_branch_name
from tui.render.formatting import FAINT, short_id
from tui.render.safe_text import safe_line

NAME_HINT = Text("enter accepts · edit the name first if you like · escape cancels", FAINT)


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
        from tui.components.text_prompt import TextPrompt

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

        from tui.components.confirm_dialog import ConfirmDialog

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

        from tui.components.text_prompt import TextPrompt

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

    # ------------------------------------------------- branch, make current, roll back, compact
    def action_branch(self) -> None:
        from core.actions import operations

        self._catch_up()
        if self.branch is None:
            self.say("Open a session first.", severity="warning")
            return
        pane = self._focused_pane()
        if pane in (self.messages_pane, self.entries_pane):
            picked = self._highlighted_entry()
            if picked is None:
                return
            source, at = picked
            where = f"{'message' if pane is self.messages_pane else 'entry'} {short_id(at.id)}"
        else:
            source = self._target_branch()
            if source is None:
                return
            at = None
            where = f"the head of {branch_title(source)}"
        key = ("branch", source.id)   # (what was typed is offered again on this branch)

        def done(name: str | None) -> None:
            if name is None:
                return
            name = name.strip()
            description = f"branch {name or 'unnamed'} at {where}"

            def write(store):
                with self._recorded(store, source.external_session_id, "branch", description):
                    return operations.branch(store, source.id, at, name=name)

            def written(new) -> None:
                self.say(f"New branch {branch_title(new)} at {where}; it is now current.",
                         title="Branched", markup=False)
                self.reload(branch_id=new.id, keep_seq=at.seq if at is not None else None)

            self._write(description, write, done=written, keep=(key, name))

        self._ask_branch_name(source, where, done, key=key)

    def action_make_current(self) -> None:
        from core.actions import operations

        self._catch_up()
        branch = self._target_branch()
        if branch is None:
            return
        if branch.is_current:
            self.say(f"{branch_title(branch)} is already current.", markup=False)
            return
        description = f"make {branch_title(branch)} current"

        def write(store):
            with self._recorded(store, branch.external_session_id, "make_current", description):
                operations.make_current(store, branch.id)

        def written(_result) -> None:
            self.say(f"{branch_title(branch)} is now current.", markup=False)
            self.reload(branch_id=branch.id, keep_seq=self._kept_seq())

        self._write(description, write, done=written)

    def action_rollback(self) -> None:
        from core.actions import operations

        from tui.components.rollback_dialog import RollbackDialog, RollbackTarget, checkpoint_label

        self._catch_up()
        focused = self._focused_pane()
        entry = None                  # the highlighted entry, offered as a target
        if focused is self.entries_pane:
            picked = self._tree_branch_point()
            if picked is None:
                return
            branch, entry = picked
        else:
            branch = self._target_branch() if focused is self.branches_pane else self.branch
        if branch is None:
            return
        branch = self._fresh_branch(branch.id) or branch
        targets: list[RollbackTarget] = []
        item = self.messages_pane.highlighted
        if focused is self.messages_pane and self._in_child_session(item):
            return
        if entry is None and item is not None and not item.nest and self.branch is not None \
                and self.branch.id == branch.id:
            entry = item.entry
        message_target = None
        if entry is not None and entry.seq != branch.head_seq:
            label = Text("◉ the highlighted entry ", "bold")
            label.append(short_id(entry.id))
            message = entry.message
            if message is not None:
                from core.model.entries import content_text
                label.append("  ")
                label.append_text(safe_line(f"{message.get('role', '?')}: "
                                            f"{content_text(message.get('content'))}", 60, style="italic"))
            message_target = RollbackTarget(label, entry.seq)
        try:
            checkpoints = [c for c in self.store.annotations.checkpoints_of_session(branch.external_session_id)
                           if not c.is_hidden]
            on_path = [(cp, cp.entry_seq is not None and branch.head_seq is not None and
                        self.store.paths.is_ancestor(cp.entry_seq, branch.head_seq)) for cp in checkpoints]
        except self.store.errors as error:
            self._error(error)
            return
        on_path.sort(key=lambda pair: (not pair[1], -(pair[0].entry_seq or 0)))
        for checkpoint, here in on_path:
            if checkpoint.entry_seq is None:
                continue
            targets.append(RollbackTarget(checkpoint_label(checkpoint.checkpoint_name, checkpoint.entry_id,
                                                           here, checkpoint.is_auto),
                                          checkpoint.entry_seq, checkpoint.id))
        initial = 0
        if message_target is not None:
            if focused in (self.messages_pane, self.entries_pane):
                targets.insert(0, message_target)
            else:
                targets.append(message_target)
                initial = 0
        if not targets:
            self.say("No checkpoints in this session: highlight a message in the messages pane "
                        "and press r to roll back to it.", severity="warning", markup=False)
            return

        def done(choice) -> None:
            if choice is None:
                return
            description = f"roll back {branch_title(branch)}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "rollback", description):
                    return operations.rollback(store, branch.id,
                                               checkpoint_id=choice.checkpoint_id,
                                               entry_id=choice.entry_seq, summary=choice.summary)

            def written(new) -> None:
                note = " with a branch summary" if choice.summary else ""
                self.say(f"Rolled back: new current branch {branch_title(new)}{note}. "
                         f"{branch_title(branch)} is kept as it was.", title="Rolled back",
                         markup=False)
                self.reload(branch_id=new.id)

            self._write(description, write, done=written)

        reader = self._reader()
        if reader is not None:
            self.push_screen(RollbackDialog(reader, branch, targets, initial), done)

    def action_compact(self) -> None:
        from core.actions import operations

        from tui.components.compact_dialog import CompactDialog

        self._catch_up()
        branch = self._target_branch() if self._focused_pane() is self.branches_pane else self.branch
        if branch is None:
            return
        branch = self._fresh_branch(branch.id) or branch

        def done(choice) -> None:
            if choice is None:
                return
            description = f"compact {branch_title(branch)}"

            def write(store):
                with self._recorded(store, branch.external_session_id, "compact", description):
                    entry_id = operations.compact(store, branch.id, summary=choice.summary,
                                                  keep_recent_tokens=choice.keep_recent_tokens)
                return store.entries.find(branch.external_session_id, entry_id)

            def written(entry) -> None:
                self.say(f"Compacted {branch_title(branch)}: the raw messages are kept (v shows "
                         "them).", title="Compacted", markup=False)
                self.reload(branch_id=branch.id, keep_seq=entry.seq if entry else None)

            self._write(description, write, done=written)

        reader = self._reader()
        if reader is not None:
            self.push_screen(CompactDialog(reader, branch), done)
