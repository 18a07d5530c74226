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
    needle = " ".join(words_of(folded(query)))
    wanted = words_of(needle)
    raw = folded(query.strip())
    rows = [(key, words_of(folded(name)), folded(uid)) for key, name, uid in names]
    if not wanted and not raw:
        return []
    vocabulary = {w for _, name_words, _ in rows for w in name_words}
    tables = [word_scores(w, vocabulary) for w in wanted]
    ranked: list[tuple[float, int, K]] = []
    for order, (key, name_words, uid) in enumerate(rows):
        score = 0.0
        if wanted:
            best = [max((table.get(w, 0.0) for w in name_words), default=0.0) for table in tables]
            if all(best):
                score = sum(best) / len(best)
                if needle and (" " + needle) in (" " + " ".join(name_words)):
                    score = EXACT + len(needle) / 100   # the words as typed, together
        if raw and len(raw) >= 4 and raw in uid:
            score = max(score, EXACT)
        if score:
            ranked.append((-score, order, key))
    ranked.sort()
    found = [(key, -negative) for negative, _, key in ranked]
    return found[:limit] if limit is not None else found
