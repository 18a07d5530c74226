"""The app's side of the entry tree (t): loading a session's tree, following its cursor
in the messages pane, showing an entry in its branch, finding text in the session.
A mixin of ArborApp, like history_actions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual import work

from core.seed.models import InternalSession

from tui.components.branches_pane import branch_title
from tui.entry_filters import FILTER_HELP, FILTERS
from tui.render.formatting import FAINT
from tui.render.safe_text import safe_line

if TYPE_CHECKING:   # (loaded with the first tree read, not before the first frame)
    from tui.entry_tree import EntryTree

FIND_LIMIT = 5000
WORDED_LIMIT = 50_000


class TreeActions:
    """Mixed into ArborApp (uses its store, panes, say/_error, show_session/show_branch)."""

    _tree_branches: list[InternalSession] = []

    # ------------------------------------------------------------------ switching
    def action_toggle_tree(self) -> None:
        """t: the middle pane shows the session's entries (a tree), or its branches."""
        self._catch_up()
        had_focus = self.focused in (self.branches_pane, self.entries_pane)
        self.tree_mode = not self.tree_mode
        self.query_one("#panes").set_tree(self.tree_mode)   # (it shows one middle pane)
        if self.tree_mode and self.session_id is not None:
            self._load_tree(self.session_id, self._kept_seq(), False)
        if had_focus:
            self.set_focus(self.middle_pane)

    def _tree_session_shown(self, session_id: int, branches: list[InternalSession],
                            subtitle: Text | None) -> None:
        """show_session read a session: the tree follows when it is what the pane shows."""
        same = self.entries_pane.entry_tree is not None and getattr(self, "_tree_session", None) == session_id
        self._tree_branches = branches
        if subtitle is not None:
            self.entries_pane.border_subtitle = subtitle
        if self.tree_mode:
            self._load_tree(session_id, None, same)

    def _tree_branch_shown(self, branch: InternalSession | None) -> None:
        """The messages pane shows another branch: its path is drawn bright in the tree."""
        pane = self.entries_pane
        tree = pane.entry_tree
        if not self.tree_mode or tree is None or getattr(self, "_tree_session", None) != (
                branch.external_session_id if branch else None):
            return
        pane.current_path = _path(tree, branch.head_seq if branch else None)
        pane.invalidate()

    @work(thread=True, exclusive=True, group="tree")
    def _load_tree(self, session_id: int, keep_seq: int | None, same_session: bool) -> None:
        # (the reader: a thread never holds the connection the screen reads through)
        try:
            store = self.store.reader()
            tree = read_session_tree(store, session_id)
            times: dict[int, str] = {}
            seqs = {}
            for change in store.annotations.label_log(session_id):
                target = change["target_entry"]
                if target is None:
                    continue
                if target not in seqs:
                    seqs[target] = store.entries.seq_of(session_id, target)
                if seqs[target] is not None:
                    times[seqs[target]] = change["at"]
        except self.store.errors as error:
            self.call_from_thread(self._error, error, quiet=True)
            return
        self.call_from_thread(self._tree_loaded, session_id, tree, times, keep_seq, same_session)

    def _tree_loaded(self, session_id: int, tree: EntryTree, times: dict[int, str],
                     keep_seq: int | None, same_session: bool) -> None:
        if session_id != self.session_id:
            return
        self._tree_session = session_id
        heads: dict[int, list[tuple[str, bool]]] = {}
        for branch in self._tree_branches:
            if branch.head_seq is not None and (self.show_archived or not branch.is_hidden):
                heads.setdefault(branch.head_seq, []).append((branch_title(branch), branch.is_current))
        shown = self.branch if self.branch is not None and \
            self.branch.external_session_id == session_id else None
        store = self.store

        def entry_of(seq: int):
            try:
                return store.entries.get(seq)
            except store.errors:
                return None

        self.entries_pane.set_tree(tree, entry_of=entry_of, heads=heads,
                                   current_path=_path(tree, shown.head_seq if shown else None),
                                   label_times=times, keep_seq=keep_seq, same_session=same_session)

    # -------------------------------------------------------------- the cursor
    def _follow_entries_cursor(self) -> None:
        """An entry on the shown branch: the messages pane goes to it (cheap); another
        branch's entry waits for enter (loading a branch per cursor step would not be)."""
        seq = self.entries_pane.highlighted_seq
        source = self.messages_pane.source
        if seq is None or source is None or seq not in self.entries_pane.current_path:
            return
        index = source.index_of_seq(seq)
        if index is not None:
            self.messages_pane.move_cursor(index)

    def action_show_entry(self) -> None:
        """enter in the entry tree: the messages pane shows a branch through the entry
        (the shown one when it passes there), at that entry."""
        seq = self.entries_pane.highlighted_seq
        if seq is None or self.session_id is None:
            return
        if seq in self.entries_pane.current_path and self.branch is not None:
            before = self.messages_pane.cursor
            self._follow_entries_cursor()
            if self.messages_pane.cursor == before:     # (it was there already)
                self.say(f"It is shown in the messages pane, on {branch_title(self.branch)}.",
                         markup=False)
            return
        try:
            branch = self.store.branches.containing(seq)
        except self.store.errors as error:
            self._error(error)
            return
        if branch is None:
            self.say("No branch passes through this entry: b makes one here.", markup=False)
            return
        self.show_session(self.session_id, keep_branch=branch.id, keep_seq=seq, at_end=False)
        shown = self.branches_pane.highlighted
        if shown is not None and shown.id != branch.id:
            # a hidden branch (A shows them): show its messages all the same
            self.show_branch(branch, keep_seq=seq, at_end=False)
        self._tree_branch_shown(self.branch)
        note = Text("Showing ", end="")
        note.append_text(safe_line(branch_title(branch), 40))
        self.say(note.plain + ("" if branch.is_current else " (not the current branch)."),
                 markup=False)

    def _tree_labels_changed(self, labels: dict[int, str]) -> None:
        if self._message_filter == "labelled":
            self._show_filtered()
        pane = self.entries_pane
        if pane.entry_tree is not None and getattr(self, "_tree_session", None) == self.session_id:
            pane.entry_tree.labels = labels
            if self.tree_mode and self.session_id is not None:
                self._load_tree(self.session_id, pane.highlighted_seq, True)  # label times too

    def _tree_branch_point(self):
        """b in the entry tree: (the branch to branch from, the highlighted entry): the
        shown branch when it passes there, else one that does."""
        entry = self.entries_pane.highlighted
        if entry is None:
            self.say("This session has no entries yet.", markup=False)
            return None
        if self.branch is not None and entry.seq in self.entries_pane.current_path:
            return self.branch, entry
        try:
            source = self.store.branches.containing(entry.seq)
        except self.store.errors as error:
            self._error(error)
            return None
        source = source or self.branch
        if source is None:
            self.say("No branch passes through this entry.", markup=False)
            return None
        return source, entry

    # ---------------------------------------------------------------------- find
    def action_find_in_session(self) -> None:
        """ctrl+f: find text in the session's entries (and labels); n/N walk the hits."""
        from tui.components.text_prompt import TextPrompt

        if self.session_id is None:
            return
        if not self.tree_mode:
            self.action_toggle_tree()
        pane = self.entries_pane
        session_id = self.session_id

        def done(text: str | None) -> None:
            if text is None or not text.strip():
                return
            self._find(session_id, text.strip())

        self.push_screen(TextPrompt(Text("Find in this session", "bold"),
                                    value=" ".join(pane.hit_words), placeholder="words",
                                    hint=Text("enter finds · then n / N: next / previous · "
                                              "escape cancels", FAINT),
                                    id="find-dialog"), done)

    def _find(self, session_id: int, text: str) -> None:
        import re

        words = re.findall(r"\w+", text, flags=re.UNICODE)
        if not words:
            self.say("Type a word to find.", markup=False)
            return
        try:
            hits = {hit.seq for hit in self.store.search.messages(text, limit=FIND_LIMIT,
                                                         external_session_id=session_id)}
        except self.store.errors as error:
            self._error(error)
            return
        pane = self.entries_pane
        tree = pane.entry_tree
        if tree is not None:
            lowered = [w.lower() for w in words]
            hits |= {seq for seq, label in tree.labels.items()
                     if all(w in label.lower() for w in lowered)}
        if session_id != self.session_id:
            return
        if not hits:
            pane.set_hits(words, [], f"{text}: none")
            self.say(f"Not found in this session: {text}", markup=False)
            return
        pane.set_hits(words, sorted(hits), text)
        pane.action_next_hit()


    # -------------------------------------------------- the messages pane's filter (F)
    # The entry tree's filters and predicate (tui.entry_tree.shows), on the shown branch:
    # the depths of its path that the filter leaves out are not shown (MessageSource).
    _message_filter = FILTERS[-1]             # "everything": what the pane showed always
    _filter_trees: dict[int, tuple[tuple, EntryTree]] = {}   # session -> (its span, tree)
    _filter_pending: int | None = None        # a big session's tree being read for it

    def action_cycle_message_filter(self) -> None:
        """F: the next filter of the messages pane (the entry tree's f, in the same order)."""
        self._catch_up()
        mode = FILTERS[(FILTERS.index(self._message_filter) + 1) % len(FILTERS)]
        self._message_filter = self.messages_pane.filter = mode
        self._show_filtered()
        self.say(f"Messages: {mode} ({FILTER_HELP[mode]}). F: the next filter.", markup=False)

    def _show_filtered(self) -> None:
        """The shown branch again, through the filter, the cursor kept where it can be."""
        if self.branch is None:
            self._update_messages_title()
            return
        pane = self.messages_pane
        item = pane.highlighted
        depth = item.entry.depth if item is not None and item.kind == "entry" and \
            not item.nest else None
        self.show_branch(self.branch, keep_seq=item.entry.seq if item is not None else None,
                         keep_depth=depth, at_end=item is None)
        shown = pane.highlighted
        if depth is not None and pane.source is not None and (
                shown is None or shown.entry.seq != item.entry.seq):
            # the filter left it out: the nearest message before it that it shows
            index = pane.source.index_near_depth(depth)
            if index is not None:
                pane.move_cursor(index)

    def _hidden_for(self, branch: InternalSession, labels: dict[int, str]) -> list[int] | None:
        """The depths of the branch's path the messages pane's filter leaves out (None: no
        filter, or its tree is still being read in a worker: shown unfiltered until then)."""
        mode = self._message_filter
        if mode == FILTERS[-1] or branch.head_seq is None:
            return None
        session_id = branch.external_session_id
        span = self.store.entries.span(session_id)
        cached = self._filter_trees.get(session_id)
        if cached is None or cached[0] != span:
            if span[2] > FILTER_AT_ONCE:
                if self._filter_pending != session_id:
                    self._filter_pending = session_id
                    self._read_filter_tree(session_id, span)
                return None
            cached = (span, read_session_tree(self.store, session_id))
            self._filter_trees = {session_id: cached}    # (the shown session's only)
        tree = cached[1]
        tree.labels = labels
        path = tree.path_to(branch.head_seq)
        if len(path) != self.store.paths.length(branch.head_seq):
            return None      # (a path the outline does not hold whole: shown unfiltered)
        return tree.hidden_depths(branch.head_seq, mode)

    @work(thread=True, exclusive=True, group="message-filter")
    def _read_filter_tree(self, session_id: int, span: tuple) -> None:
        # (the reader: a thread never holds the connection the screen reads through)
        try:
            tree = read_session_tree(self.store.reader(), session_id)
        except self.store.errors as error:
            self.call_from_thread(self._error, error, quiet=True)
            return
        self.call_from_thread(self._filter_tree_read, session_id, span, tree)

    def _filter_tree_read(self, session_id: int, span: tuple, tree: EntryTree) -> None:
        self._filter_pending = None
        self._filter_trees = {session_id: (span, tree)}
        if self.branch is not None and self.branch.external_session_id == session_id:
            self._show_filtered()

    def _filter_title(self, title: Text) -> None:
        """The filter after the messages pane's title (nothing for "everything")."""
        mode = self._message_filter
        if mode != FILTERS[-1]:
            title.append(" · ")
            pending = self.branch is not None and \
                self._filter_pending == self.branch.external_session_id
            title.append(f"filter: {mode}{'…' if pending else ''}", "#d7af5f")

    def _messages_empty_text(self, branch: InternalSession) -> Text:
        if self._message_filter != FILTERS[-1] and branch.head_seq is not None:
            return Text(f"The filter {self._message_filter} shows nothing here: F changes it.",
                        FAINT)
        return Text("This branch has no entries yet.", FAINT)


FILTER_AT_ONCE = 5_000   # entries: a session up to this size is read for F at once


def read_session_tree(store, session_id: int) -> EntryTree:
    """A session's entry tree: its outline, labels, and which tool calls also say something
    in words (the entry tree pane and the messages pane's filter read it the same way)."""
    from tui.entry_tree import EntryTree, OutlineEntry

    entries = [OutlineEntry(*row) for row in store.entries.outline(session_id)]
    labels = store.annotations.entry_labels(session_id)
    return EntryTree(entries, labels, worded_calls(store, EntryTree.answered_calls(entries)))


def worded_calls(store, calls: set[int]) -> set[int]:
    """Which tool calls also say something in words (read per entry; past WORDED_LIMIT
    calls they all count as tool steps)."""
    if len(calls) > WORDED_LIMIT:
        return set()
    worded = set()
    for seq in calls:
        entry = store.entries.get(seq)
        message = entry.message if entry is not None else None
        content = message.get("content") if message else None
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") in ("text", "output_text")
                and str(b.get("text", "")).strip() for b in content):
            worded.add(seq)
    return worded


def _path(tree: EntryTree, head_seq: int | None) -> frozenset[int]:
    """The entries from the root to `head_seq`."""
    return frozenset(tree.path_to(head_seq))
