"""The nodes of a Claude Code read (`_Nodes`, a part of `importer._Import`): each line
read becomes a node, a few small fields in arrays; here nodes are made (and, for a resumed
read, made on demand for stored entries), attached below their effective parent (a rewind
starts a branch, anything else goes below the tip) and walked (the tip, ancestors).
Also the line kinds the importer's parts share."""

from __future__ import annotations

from .snapshot import short_key

FORMAT = "claude_code"

META, PROMPT, USER_OTHER, ASSISTANT, BOUNDARY, OTHER = range(6)
UNREAD = -2   # a stored node's parent or newest child, not read from the store yet


class _Nodes:
    """The tree of nodes of one read. See the module doc of `importer`."""

    # Nodes of stored entries, made on demand (a resumed read): their effective parent
    # and newest child are read from the store when first needed.
    def _node_for(self, entry_id: str | None, sidechains: bool = True) -> int:
        """The node of an entry: one made by this read, or a stored entry's; -1 if none.
        `sidechains`: look in the sub-agents written inline too (for a sidechain line)."""
        if entry_id is None:
            return -1
        node = self.index.get(entry_id)
        if node is not None:
            return node
        seq = self.stored.get(entry_id) if self.stored is not None else None
        if seq is None and self.stored is not None and sidechains:
            # a resumed read: the sub-agents written inline so far keep their own entries
            for owner, side in enumerate(self.sidechains):
                seq = self._target_for(owner, switch=False).known.get(entry_id)
                if seq is not None:
                    return self._stored_node(entry_id, seq, owner)
        return -1 if seq is None else self._stored_node(entry_id, seq)

    def _stored_node(self, entry_id: str, seq: int, owner: int = -1) -> int:
        node = self._new_node(entry_id, OTHER, owner >= 0, -1, owner)
        self.eff[node] = UNREAD
        self.fwd[node] = UNREAD
        self.seq[node] = seq
        self.index[entry_id] = node
        self.by_seq[seq] = node
        return node

    def _stored_by_seq(self, seq: int) -> int:
        node = self.by_seq.get(seq)
        if node is None:
            entry_id, _parent = self.store.entries.link(seq)
            node = self._node_for(entry_id)
        return node

    def _newest_child(self, node: int) -> int:
        """A stored node's newest child (the tip walk goes on through it), from the store."""
        child = self.store.entries.newest_child(self.seq[node])
        self.fwd[node] = nxt = -1 if child is None else self._stored_by_seq(child)
        return nxt

    def _is_ancestor(self, node: int, start: int) -> bool:
        current = self._parent_node(start)
        steps = 0
        while current >= 0 and steps < 10_000_000:
            if current == node:
                return True
            current = self._parent_node(current)
            steps += 1
        return False

    def _parent_node(self, node: int) -> int:
        e = self.eff[node]
        if e == UNREAD:
            _id, parent_seq = self.store.entries.link(self.seq[node])
            self.eff[node] = e = -1 if parent_seq is None else self._stored_by_seq(parent_seq)
        return e

    def _tip(self, node: int) -> int:
        fwd = self.fwd
        nxt = fwd[node]
        if nxt == UNREAD:
            nxt = self._newest_child(node)
        if nxt < 0:
            return node
        trail = []
        last = node
        while nxt >= 0:
            trail.append(last)
            last = nxt
            nxt = fwd[last]
            if nxt == UNREAD:
                nxt = self._newest_child(last)
        for item in trail[:-1]:
            fwd[item] = last
        return last

    def _new_node(self, entry_id: str, kind: int, side: bool, e: int, owner: int = -1) -> int:
        node = len(self.kind)
        self.owner.append(owner)
        self.ids.append(entry_id)
        self.kind.append(kind)
        self.side.append(1 if side else 0)
        self.eff.append(e)
        self.seq.append(0)
        self.prompt_child.append(0)
        self.offsets.append(-1)
        self.fwd.append(-1)
        if e >= 0:
            self.fwd[e] = node
        return node

    def _chain_meta(self, e: int, start: tuple[int, int] | None = None) -> int:
        first = self.pending_meta[0]
        start = start or (first[3], first[1] - 1)
        for d, number, ts, offset in self.pending_meta:
            entry_id = f"L{number}"
            node = self._new_node(entry_id, META, False, e)
            self._queue(node, entry_id, d, number, ts, start)
            e = node
        self.pending_meta.clear()
        return e

    def _emit(self, entry_id: str, k: int, side: bool, p: int, d, number: int, ts,
              offset: int, owner: int = -1) -> int:
        if p < 0:
            e = -1
        else:
            if k == PROMPT and (self.prompt_child[p] or (
                    self.prompt_parents and short_key(self.ids[p]) in self.prompt_parents)):
                e = p                      # a rewind: a real branch
            else:
                e = self._tip(p)           # a continuation: collapse false forks
            if k == PROMPT:
                self.prompt_child[p] = 1
        # where a new read must start to place this node the same way: its own line, or
        # the first of the metadata lines chained before it
        start = (offset, number - 1)
        if self.pending_meta and owner < 0:
            # (lines without a uuid stay with the main thread: a sub-agent's lines wait)
            first = self.pending_meta[0]
            start = (first[3], first[1] - 1)
            e = self._chain_meta(e, start)
        node = self._new_node(entry_id, k, side, e, owner)
        self._queue(node, entry_id, d, number, ts, start)
        if owner < 0:
            self.last_node = node
            if not side:
                self.last_main = node
        return node
