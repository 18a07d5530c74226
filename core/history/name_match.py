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


def word_scores(word: str, vocabulary: Iterable[str]) -> dict[str, float]:
    """How well each word of `vocabulary` (folded) matches the query word `word` (folded):
    only the words that match at all."""
    from rapidfuzz import fuzz, process

    vocabulary = list(vocabulary)
    found: dict[str, float] = {}
    # (a number is a name's id or version: "04242" is not a typo of "04243")
    tolerant = len(word) >= 4 and not any(c.isdigit() for c in word)
    stems, stem = tolerant and len(word) >= 5, word[:4]
    if tolerant:
        for candidate, score, _ in process.extract(word, vocabulary, scorer=fuzz.ratio,
                                                  score_cutoff=_similar_from(word), limit=None):
            found[candidate] = score * 0.85     # a typo: below any exact kind of match
    for candidate in vocabulary:
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
            for table in (word_scores(w, self.vocabulary) for w in wanted):
                this: dict[int, float] = {}
                for word, score in table.items():
                    for order in self.holding[word]:
                        if score > this.get(order, 0.0):
                            this[order] = score
                best = this if best is None else {o: v + this[o] for o, v in best.items() if o in this}
            spaced = " " + needle
            for order, total in (best or {}).items():
                scores[order] = EXACT + len(needle) / 100 if spaced in self.joined[order] \
                    else total / len(wanted)   # the words as typed, together: first
        if raw and len(raw) >= 4:
            for order, (_key, _words, uid) in enumerate(self.rows):
                if raw in uid:
                    scores[order] = max(scores.get(order, 0.0), EXACT)
        ranked = sorted((-score, order) for order, score in scores.items())
        found = [(self.rows[order][0], -negative) for negative, order in ranked]
        return found[:limit] if limit is not None else found
