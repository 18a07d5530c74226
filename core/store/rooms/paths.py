"""The path from the root to a head: its entries by depth, counted without reading
them, and replayed (the newest compaction applied)."""

from __future__ import annotations


from core.model.entries import Entry
from core.model.errors import NotFound, ReplayError

TYPE_CHECKING = False   # (replay and session_types are imported where they are used: an
if TYPE_CHECKING:       # import of appended lines needs neither, ~5 ms of its start; nor
    from core.history.replay import ReplayState   # does a program that only reads, such as the
    from typing import Any   # nor typing, ~2.5 ms)


from core.store.records import PathCounts, _loads
from . import Room


class PathsRoom(Room):
    def segments(self, head_seq: int) -> tuple[tuple[int, int, int], ...]:
        """The root-to-head path as (chain, first depth, last depth) pieces, root first.

        Entries never change, so the answer for a head is cached.
        """
        sql = self._sql
        with self._lock:
            cached = self._segments_cache.get(head_seq)
            if cached is not None:
                self._segments_cache.move_to_end(head_seq)
                return cached
            pieces = []
            seq: int | None = head_seq
            conn = self._store._conn
            while seq is not None:
                row = conn.execute(sql.PATH_DEPTH_CHAIN, (seq,)).fetchone()
                if row is None:
                    raise NotFound(f"entry {seq} does not exist")
                depth, chain = row
                start = conn.execute(sql.PATH_CHAIN_START, (chain,)).fetchone()
                pieces.append((chain, start[0], depth))
                seq = start[1]
            result = tuple(reversed(pieces))
            self._segments_cache[head_seq] = result
            if len(self._segments_cache) > 512:
                self._segments_cache.popitem(last=False)
            return result

    def length(self, head_seq: int | None) -> int:
        if head_seq is None:
            return 0
        return self.segments(head_seq)[-1][2] + 1

    def entries(self, head_seq: int | None, start: int = 0, stop: int | None = None) -> list[Entry]:
        """Entries at depths [start, stop) of the path from the root to `head_seq`."""
        if head_seq is None:
            return []
        segments = self.segments(head_seq)
        last = segments[-1][2]
        stop = last + 1 if stop is None else min(stop, last + 1)
        start = max(0, start)
        out: list[Entry] = []
        with self._lock:
            for chain, low, high in segments:
                lo, hi = max(low, start), min(high, stop - 1)
                if lo > hi:
                    continue
                rows = self._store._conn.execute(self._sql.PATH_PIECE, (chain, lo, hi)).fetchall()
                out.extend(self._store.entries._from_rows(rows))
        return out

    def _pieces(self, head_seq: int, start: int, stop: int | None,
                newest_first: bool = False) -> list[tuple[int, int, int]]:
        """(chain, first depth, last depth) of each piece of depths [start, stop) of a path."""
        segments = self.segments(head_seq)
        last = segments[-1][2]
        stop = last + 1 if stop is None else min(stop, last + 1)
        pieces = [(chain, max(low, start), min(high, stop - 1)) for chain, low, high in segments
                  if max(low, start) <= min(high, stop - 1)]
        return pieces[::-1] if newest_first else pieces

    def counts(self, head_seq: int | None, start: int = 0, stop: int | None = None) -> PathCounts:
        """How many entries, messages and compactions depths [start, stop) of a path hold,
        without reading them: depths are contiguous, each entry stores how many messages
        lead to it (msg_index), and compactions have their own index."""
        if head_seq is None:
            return PathCounts(0, 0, 0)
        pieces = self._pieces(head_seq, start, stop)
        if not pieces:
            return PathCounts(0, 0, 0)
        first, last = pieces[0][1], pieces[-1][2]
        segments = self.segments(head_seq)

        def messages_to(depth: int) -> int:
            if depth < 0:
                return 0
            chain = next(c for c, low, high in segments if low <= depth <= high)
            return self._one(self._sql.PATH_MSG_INDEX, (chain, depth))[0]

        with self._lock:
            messages = messages_to(last) - messages_to(first - 1)
            compactions = sum(self._one(self._sql.PATH_COMPACTION_COUNT, piece)[0] for piece in pieces)
        return PathCounts(last - first + 1, messages, compactions)

    def end_entry(self, head_seq: int | None, start: int = 0, stop: int | None = None, *,
                  type: str | None = None, not_type: str | None = None,
                  last: bool = False) -> Entry | None:
        """The first (or last) entry in depths [start, stop) of a path, of a type or not of
        one (give one of them)."""
        if (type is None) == (not_type is None):
            raise ValueError("give exactly one of type or not_type")
        if head_seq is None:
            return None
        if type is not None:
            sql = self._sql.PATH_LAST_OF_TYPE if last else self._sql.PATH_FIRST_OF_TYPE
        else:
            sql = self._sql.PATH_LAST_NOT_OF_TYPE if last else self._sql.PATH_FIRST_NOT_OF_TYPE
        with self._lock:
            for chain, lo, hi in self._pieces(head_seq, start, stop, newest_first=last):
                row = self._one(sql, (chain, lo, hi, type if type is not None else not_type))
                if row:
                    return self._store.entries._from_row(row)
        return None

    def messages(self, head_seq: int | None, start: int = 0, stop: int | None = None, *,
                 limit: int | None = None, newest_first: bool = False,
                 role: str | None = None) -> list[dict[str, Any]]:
        """The messages in depths [start, stop) of a path, in path order (or newest first),
        at most `limit`, of one `role` if given. Only `message` entries' data is read: no
        Entry is made."""
        out: list[dict[str, Any]] = []
        if head_seq is None:
            return out
        sql = self._sql
        if role is None:
            query = sql.PATH_MESSAGES_NEWEST if newest_first else sql.PATH_MESSAGES
        else:
            query = sql.PATH_ROLE_MESSAGES_NEWEST if newest_first else sql.PATH_ROLE_MESSAGES
        with self._lock:
            for chain, lo, hi in self._pieces(head_seq, start, stop, newest_first):
                remaining = -1 if limit is None else limit - len(out)
                if remaining == 0:
                    break
                args = (chain, lo, hi, remaining) if role is None else (chain, lo, hi, role, remaining)
                for (data,) in self._store._conn.execute(query, args):
                    message = _loads(data, {}).get("message")
                    if isinstance(message, dict):
                        out.append(message)
        return out

    def sample(self, head_seq: int | None, start: int, stop: int, count: int) -> list[dict[str, Any]]:
        """The messages at `count` depths spread evenly over [start, stop) of a path (an
        index lookup each): what an estimate over a long range reads."""
        if head_seq is None or stop <= start or count <= 0:
            return []
        step = max(1, (stop - start) // count)
        depths = range(start, stop, step)
        out: list[dict[str, Any]] = []
        with self._lock:
            for chain, lo, hi in self._pieces(head_seq, start, stop):
                wanted = [d for d in depths if lo <= d <= hi]
                for at in range(0, len(wanted), 500):
                    part = wanted[at:at + 500]
                    rows = self._store._conn.execute(self._sql.path_messages_at(len(part)), (chain, *part))
                    for (data,) in rows:
                        message = _loads(data, {}).get("message")
                        if isinstance(message, dict):
                            out.append(message)
        return out

    def at_depth(self, head_seq: int, depth: int) -> int | None:
        for chain, low, high in self.segments(head_seq):
            if low <= depth <= high:
                row = self._one(self._sql.PATH_SEQ_AT_DEPTH, (chain, depth))
                return row[0] if row else None
        return None

    def is_ancestor(self, seq: int, head_seq: int) -> bool:
        """Whether `seq` lies on the path from the root to `head_seq` (inclusive)."""
        entry = self._store.entries.get(seq)
        return entry is not None and self.at_depth(head_seq, entry.depth) == seq

    def newest_compaction(self, head_seq: int) -> Entry | None:
        with self._lock:
            for chain, low, high in reversed(self.segments(head_seq)):
                row = self._store._conn.execute(self._sql.PATH_NEWEST_COMPACTION,
                                         (chain, low, high)).fetchone()
                if row:
                    return self._store.entries.get(row[0])
        return None

    def compactions(self, head_seq: int) -> list[Entry]:
        out = []
        with self._lock:
            for chain, low, high in self.segments(head_seq):
                seqs = [r[0] for r in self._store._conn.execute(self._sql.PATH_COMPACTIONS,
                                                         (chain, low, high))]
                out.extend(self._store.entries.get(s) for s in seqs)
        return out

    def replay_start(self, head_seq: int | None) -> tuple[Entry | None, int]:
        """The newest compaction on the path and the depth its kept entries start at.
        ReplayError when the stored compaction keeps something that is not an entry of this
        path (an old store or an imported log may hold one): see `replay`."""
        if head_seq is None:
            return None, 0
        compaction = self.newest_compaction(head_seq)
        if compaction is None:
            return None, 0
        from core.history.replay import first_kept_id, off_path

        kept_id = first_kept_id(compaction)
        if kept_id is None:
            return compaction, compaction.depth + 1
        kept = self._store.entries.find(compaction.external_session_id, kept_id)
        if kept is None or kept.depth > compaction.depth or \
                self.at_depth(head_seq, kept.depth) != kept.seq:
            raise off_path(compaction, kept_id)
        return compaction, kept.depth

    def replay(self, head_seq: int | None) -> ReplayState:
        """The context an agent resumes with at this head (newest compaction applied).

        Never raises on stored data: a compaction whose kept entry is not on the path
        gives every message of the path instead, with `warning` saying why."""
        from core.history.replay import ReplayState, replay_fallback, replay_kept

        if head_seq is None:
            return ReplayState()
        with self.reading():
            try:
                compaction, start = self.replay_start(head_seq)
            except ReplayError as error:
                return replay_fallback(self.entries(head_seq), error)
            return replay_kept(compaction, self.entries(head_seq, start))
