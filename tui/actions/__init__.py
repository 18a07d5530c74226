"""What the app does on a key, one family per module, each a mixin of `tui.app.ArborApp`:
history (branch, roll back, compact, undo, ...), annotations (label, checkpoint), sessions
(archive, rename), agents (open in agent, import, following), views (compare, usage, search,
help, raw/context, thinking, zoom), the entry tree, the keys of other panes, screenshots;
and the app's side of the store (store/: loading what the panes show, polling, the queue of
writes, a store that does not answer).

Mixins rather than objects the app holds: Textual finds a binding's `action_*` method, and a
message's `on_*` handler, on the App's class, so each family's methods stay the app's own
(bindings, the command palette and tests call `app.action_branch()` as before). `@on`
handlers stay in app.py: Textual collects them only on classes of its own, never on a plain
mixin."""
