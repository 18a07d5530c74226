"""Session names matched as a person types them: word prefixes, pieces of words, stems and
typos ("flaky logn" finds "Fix flaky login test", "migration" finds "Migrate orders…").

Names are few (thousands, not millions), so they are scored here rather than indexed: every
distinct word of every name is compared once with each word of the query (rapidfuzz's
edit-distance similarity, in C), then each name takes the best score of its words for each
query word. Every query word must match some word of the name; the name's score is their
mean, and the whole query standing in the name as it is typed scores highest.
"""

from __future__ import annotations

from os.path import commonprefix
from typing import Iterable, TypeVar

from .search_query import folded, words_of

K = TypeVar("K")

EXACT = 100.0
PREFIX = 95.0     # "migr" -> "migrate": a word being typed
INSIDE = 85.0     # "ession" -> "session"
STEM = 80.0       # "migration" -> "migrate": the same word but for its ending


def _similar_from(word: str) -> float:
    """The similarity a typo must reach: more of a short word is at stake in one letter
    ("logn" -> "login" 88.9, but "logn" -> "long" 75 is another word)."""
    return 80.0 if len(word) <= 5 else 75.0


def word_scores(word: str, vocabulary: Iterable[str], *, lookup: _Lookup | None = None
                ) -> dict[str, float]:
    """How well each word of `vocabulary` (folded) matches the query word `word` (folded):
    only the words that match at all. `lookup`: the same vocabulary made ready to find the
    words that begin with or hold a piece of text without comparing each (NameIndex)."""
    from rapidfuzz import fuzz, process

    vocabulary = list(vocabulary) if lookup is None else lookup.words
    found: dict[str, float] = {}
    # (a number is a name's id or version: "04242" is not a typo of "04243")
    tolerant = len(word) >= 4 and not any(c.isdigit() for c in word)
    stems, stem = tolerant and len(word) >= 5, word[:4]
    if tolerant:
        for candidate, score, _ in process.extract(word, vocabulary, scorer=fuzz.ratio,
                                                  score_cutoff=_similar_from(word), limit=None):
            found[candidate] = score * 0.85     # a typo: below any exact kind of match
    for candidate in (vocabulary if lookup is None else lookup.candidates(word, stems and stem)):
        if candidate == word:
            score = EXACT
        elif candidate.startswith(word):
            score = PREFIX
        elif len(word) >= 3 and word in candidate:
            score = INSIDE
        elif stems and candidate.startswith(stem) and len(commonprefix((word, candidate))) >= \
                max(4, min(len(word), len(candidate)) - 2):
            score = STEM
        else:
            continue
        if score > found.get(candidate, 0.0):
            found[candidate] = score
    return found


class _Lookup:
    """A vocabulary made ready for `word_scores`: sorted (the words that begin with a piece
    of text are a range of it) and joined in one string (the words that hold one are found
    by `str.find`, in C): what is compared then is the few words that can match at all, not
    every word of every name at each key."""

    def __init__(self, words: list[str]):
        self.words = words
        self.sorted = sorted(words)
        self.blob = "\n" + "\n".join(self.sorted) + "\n"
        starts, at = [], 1
        for word in self.sorted:
            starts.append(at)
            at += len(word) + 1
        self.starts = starts

    def beginning(self, piece: str) -> list[str]:
        from bisect import bisect_left

        words = self.sorted
        first = bisect_left(words, piece)
        last = first
        while last < len(words) and words[last].startswith(piece):
            last += 1
        return words[first:last]

    def holding(self, piece: str) -> list[str]:
        from bisect import bisect_right

        blob, starts, words = self.blob, self.starts, self.sorted
        out: list[str] = []
        seen = -1
        at = blob.find(piece)
        while at >= 0:
            index = bisect_right(starts, at) - 1
            if index != seen:
                out.append(words[index])
                seen = index
            at = blob.find(piece, starts[index] + len(words[index]) + 1) \
                if index + 1 < len(starts) else -1
        return out

    def candidates(self, word: str, stem: str | bool) -> list[str]:
        """The words that may score as exact, prefix, inside or stem matches of `word` (a
        word holding a newline cannot: words have none)."""
        if "\n" in word or not word:
            return [w for w in self.words if w == word]
        found = self.holding(word) if len(word) >= 3 else self.beginning(word)
        if stem:
            found = list(dict.fromkeys(found + self.beginning(stem)))
        return found


def rank_names(query: str, names: Iterable[tuple[K, str, str]], limit: int | None = None
               ) -> list[tuple[K, float]]:
    """(key, score) of the names that match `query`, best first (ties: in the order given).

    `names`: (key, name, uid) triples; a uid matches when the query is a piece of it."""
    return NameIndex(names).rank(query, limit)


class NameIndex:
    """Names made ready once (their folded words, which names hold each word) for many
    queries: what a search run at each key asks of the same names."""

    def __init__(self, names: Iterable[tuple[K, str, str]]):
        self.rows = [(key, words_of(folded(name)), folded(uid)) for key, name, uid in names]
        self.joined = [" " + " ".join(name_words) for _, name_words, _ in self.rows]
        self.holding: dict[str, list[int]] = {}
        for order, (_key, name_words, _uid) in enumerate(self.rows):
            for word in set(name_words):
                self.holding.setdefault(word, []).append(order)
        self.vocabulary = list(self.holding)
        self._lookup: _Lookup | None = None
        self._uids: tuple[str, list[int]] | None = None
        # per query word, the best score of each name holding a word that matches it: the
        # words typed before the one being typed are not scored again at each key
        self._by_word: dict[str, dict[int, float]] = {}

    def _scores(self, word: str) -> dict[int, float]:
        this = self._by_word.get(word)
        if this is None:
            if self._lookup is None:
                self._lookup = _Lookup(self.vocabulary)
            this = {}
            for name_word, score in word_scores(word, self.vocabulary, lookup=self._lookup).items():
                for order in self.holding[name_word]:
                    if score > this.get(order, 0.0):
                        this[order] = score
            if len(self._by_word) >= 64:
                self._by_word.clear()
            self._by_word[word] = this
        return this

    def rank(self, query: str, limit: int | None = None) -> list[tuple[K, float]]:
        """See `rank_names`."""
        needle = " ".join(words_of(folded(query)))
        wanted = words_of(needle)
        raw = folded(query.strip())
        if not wanted and not raw:
            return []
        scores: dict[int, float] = {}
        if wanted:
            # each query word: the best score of a name's words, for the names that have one
            best: dict[int, float] | None = None
            for this in (self._scores(w) for w in wanted):
                best = this if best is None else \
                    {o: v + this[o] for o, v in best.items() if o in this}
            spaced = " " + needle
            for order, total in (best or {}).items():
                scores[order] = EXACT + len(needle) / 100 if spaced in self.joined[order] \
                    else total / len(wanted)   # the words as typed, together: first
        if raw and len(raw) >= 4:
            for order in self._uids_holding(raw):
                scores[order] = max(scores.get(order, 0.0), EXACT)
        pairs = ((-score, order) for order, score in scores.items())
        if limit is not None and limit < len(scores):
            from heapq import nsmallest

            ranked = nsmallest(limit, pairs)
        else:
            ranked = sorted(pairs)
        return [(self.rows[order][0], -negative) for negative, order in ranked]

    def _uids_holding(self, piece: str) -> list[int]:
        """The names (their order) whose uid holds `piece`: found in the uids joined in one
        string rather than each compared in turn."""
        if "\n" in piece:
            return [order for order, row in enumerate(self.rows) if piece in row[2]]
        if self._uids is None:
            starts, at = [], 0
            for _key, _words, uid in self.rows:
                starts.append(at)
                at += len(uid) + 1
            self._uids = ("\n".join(row[2] for row in self.rows) + "\n", starts)
        from bisect import bisect_right

        blob, starts = self._uids
        found: list[int] = []
        at = blob.find(piece)
        while at >= 0:
            order = bisect_right(starts, at) - 1
            found.append(order)
            end = starts[order + 1] if order + 1 < len(starts) else len(blob)
            at = blob.find(piece, end)
        return found
