"""The app's annotations: a label on the highlighted message, entry or branch (l), and a
named checkpoint (m) that roll back (r) offers. A mixin of ArborApp, like history.py; each
change is logged for undo through `_recorded` and goes through the app's queue of writes.
"""

from __future__ import annotations

from rich.text import Text

from tui.components.branches_pane import branch_title
from tui.render.formatting import FAINT, short_id
from tui.render.safe_text import safe_line
from .history import NAME_HINT


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


def _label_description(text: str, what: str) -> str:
    label = text.strip()
    return f"label {what} {label}" if label else f"clear the label of {what}"


class AnnotationActions:
    """Mixed into ArborApp (uses its store, panes, say/_error/reload, _recorded/_write)."""

    def action_label(self) -> None:
        from core.actions import operations

        from tui.components.text_prompt import TextPrompt

        self._catch_up()
        pane = self._focused_pane()
        if pane is self.messages_pane or pane is self.entries_pane:
            if pane is self.entries_pane:
                entry = self.entries_pane.highlighted
                if entry is None:
                    self.say("This session has no entries to label.", markup=False)
                    return
            else:
                item = self.messages_pane.highlighted
                if item is None:
                    self._say_no_messages()
                    return
                if self._in_child_session(item):
                    return
                entry = item.entry
            key = ("label", "entry", entry.seq)
            shown = self.messages_pane.labels if self.messages_pane.source is not None and \
                self.messages_pane.source.branch.external_session_id == entry.external_session_id \
                else None
            if shown is None:
                try:
                    shown = self.store.annotations.entry_labels(entry.external_session_id)
                except self.store.errors:
                    shown = {}   # (the store does not answer: the label is typed anew)
            current = self.typed(key, shown.get(entry.seq, ""))
            title = Text("Label entry ", "bold")
            title.append(short_id(entry.id), "bold #5fafff")

            def done(text: str | None) -> None:
                if text is None:
                    return
                description = _label_description(text, f"entry {short_id(entry.id)}")

                def write(store):
                    with self._recorded(store, entry.external_session_id, "label", description):
                        operations.set_label(store, entry.seq, text.strip() or None)
                    return store.annotations.entry_labels(entry.external_session_id)

                def written(labels) -> None:
                    self.messages_pane.set_labels(labels)
                    self._tree_labels_changed(labels)
                    self.say("Label cleared." if not text.strip() else "Label saved.",
                             markup=False)

                self._write(description, write, done=written, keep=(key, text))

            self.push_screen(TextPrompt(title, value=current, placeholder="a short label",
                                        hint=Text("enter saves · empty clears · escape cancels", FAINT),
                                        id="label-dialog"), done)
            return
        if pane is self.branches_pane or pane is None:
            branch = self._target_branch()
            if branch is None:
                return
            row = self.branches_pane.rows[self.branches_pane.cursor]
            key = ("label", "branch", branch.id)
            title = Text("Label branch ", "bold")
            title.append_text(safe_line(branch_title(branch), 40, style="bold #5fafff"))

            def done_branch(text: str | None) -> None:
                if text is None:
                    return
                description = _label_description(text, branch_title(branch))

                def write(store):
                    with self._recorded(store, branch.external_session_id, "label", description):
                        operations.set_branch_label(store, branch.id, text.strip() or None)

                def written(_result) -> None:
                    if self.session_id == branch.external_session_id:
                        self.show_session(branch.external_session_id, keep_branch=branch.id,
                                          keep_seq=self._kept_seq())
                    self.say("Label cleared." if not text.strip() else "Label saved.",
                             markup=False)

                self._write(description, write, done=written, keep=(key, text))

            self.push_screen(TextPrompt(title, value=self.typed(key, row.label or ""),
                                        placeholder="a short label",
                                        hint=Text("enter saves · empty clears · escape cancels", FAINT),
                                        id="label-dialog"), done_branch)
            return
        self.say("Labels go on messages and branches: tab to one of those panes first.",
                    severity="warning", markup=False)

    def action_checkpoint(self) -> None:
        """A named checkpoint on the highlighted message, or the highlighted branch's head."""
        from core.actions import operations

        from tui.components.text_prompt import TextPrompt

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
