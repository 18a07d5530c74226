"""The app's actions on a session: archive or restore it (a), rename it (R), show or hide
archived sessions (A). A mixin of ArborApp; each change is logged for undo.
"""

from __future__ import annotations

from rich.text import Text

from tui.render.safe_text import safe_line


class SessionActions:
    """Mixed into ArborApp (uses its store, panes, say/reload, _recorded/_write)."""

    def action_archive(self) -> None:
        from tui.components.confirm_dialog import ConfirmDialog

        session = self.sessions_pane.highlighted
        if session is None:
            return
        if not session.is_active:
            description = f"restore {session.name or 'a session'} from the archive"

            def restore(store):
                with self._recorded(store, session.id, "archive", description):
                    store.sessions.set_active(session.id, True)

            def restored(_result) -> None:
                self.say("Session restored from the archive.", markup=False)
                self.reload(session_id=session.id)

            self._write(description, restore, done=restored)
            return
        question = Text("Archive ")
        question.append_text(safe_line(session.name or "(unnamed)", 60, style="bold"))
        question.append("?\n\nIt leaves the list; nothing is deleted. ", "")
        question.append("arbor --archived", "bold")
        question.append(" shows archived sessions.", "")

        def done(yes: bool | None) -> None:
            if not yes:
                return
            description = f"archive {session.name or 'a session'}"

            def archive(store):
                with self._recorded(store, session.id, "archive", description):
                    store.sessions.set_active(session.id, False)

            def archived(_result) -> None:
                self.say("Session archived.", markup=False)
                self.reload(session_id=session.id)

            self._write(description, archive, done=archived)

        self.push_screen(ConfirmDialog(Text("Archive session", "bold"), question, yes="Archive"), done)

    def action_rename(self) -> None:
        from tui.components.text_prompt import TextPrompt

        session = self.sessions_pane.highlighted
        if session is None:
            return

        key = ("rename", "session", session.id)

        def done(name: str | None) -> None:
            if name is None or not name.strip():
                return
            description = f"rename {session.name or 'a session'} to {name.strip()}"

            def write(store):
                with self._recorded(store, session.id, "rename", description):
                    store.sessions.rename(session.id, name.strip())

            def written(_result) -> None:
                self.reload(session_id=session.id,
                            branch_id=self.branch.id if self.branch else None,
                            keep_seq=self._kept_seq())

            self._write(description, write, done=written, keep=(key, name))

        self.push_screen(TextPrompt(Text("Rename session", "bold"),
                                    value=self.typed(key, session.name),
                                    placeholder="session name", id="rename-dialog"), done)

    def action_toggle_archived(self) -> None:
        self.show_archived = not self.show_archived
        self.reload()
