"""What a search query asks for: words (matched by stem and as prefixes) and "exact phrases".

Any text is a valid query. Words outside quotes are matched through the index's stemmer
(SQLite's porter, PostgreSQL's English Snowball stemmer): `migration`, `migrations` and
`migrat` all find "Migrate the orders…". A quoted phrase must stand in the text as
written, its words in that order (case, accents and the punctuation between words aside):
the index narrows the entries down, `phrases_in` checks the text itself. A quote not
closed yet (a query being typed) counts as plain words until it is.
"""

from __future__ import annotations

import re
import unicodedata

_QUOTED = re.compile(r'"([^"]*)"')
_WORD = re.compile(r"\w+", re.UNICODE)


def words_of(text: str) -> list[str]:
    """The words of a text as the index's tokenizer cuts them (letters and digits)."""
    return _WORD.findall(text)


def folded(text: str) -> str:
    """Lower case without accents (`remove_diacritics` of the index): "Café" -> "cafe"."""
    text = text.casefold()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


class SearchQuery:
    """A parsed query: `words` (each a prefix, stemmed) and `phrases` (each a list of words
    that must follow one another in the text)."""

    __slots__ = ("text", "words", "phrases", "prefix_from", "typing")

    def __init__(self, text: str, *, prefix_from: int = 1, typing: bool = False):
        """`prefix_from`: a loose word shorter than this is matched whole, not as a prefix
        (search as a person types: "b" as a prefix is every word that starts with b, a
        read of much of the index; the full query follows when typing pauses). `typing`:
        only the last loose word, the one being typed, is a prefix; the words before it
        were finished (a space came after them) and are matched whole (by their stems):
        FTS5 reads every word a prefix begins whole, so "the cac" asked as `the* cac*` read
        all of "the", "then", "there"… (36 ms on the 1M-entry store) for a word finished."""
        self.text = text
        self.prefix_from = prefix_from
        self.typing = typing
        phrases: list[list[str]] = []
        loose: list[str] = []
        rest = _QUOTED.sub(lambda m: phrases.append(words_of(m.group(1))) or " ", text)
        loose.extend(words_of(rest.replace('"', " ")))
        # a phrase of one word is that word, whole; an empty one ("") asks nothing
        self.phrases = [p for p in phrases if p]
        self.words = loose

    def __bool__(self) -> bool:
        return bool(self.words or self.phrases)

    def __repr__(self) -> str:
        return f"SearchQuery({self.text!r})"

    def is_prefix(self, word: str) -> bool:
        """Whether a loose word is matched as a prefix (else whole)."""
        if self.typing and word != self.words[-1]:
            return False
        return len(word) >= self.prefix_from

    @property
    def shortened(self) -> bool:
        """Whether some loose word is matched whole only because it is short."""
        return any(not self.is_prefix(w) for w in self.words)

    def whole(self) -> "SearchQuery":
        """The same query with every loose word a prefix."""
        return SearchQuery(self.text)

    @property
    def all_words(self) -> list[str]:
        """Every word asked for, loose and in phrases (to show where a hit matched)."""
        return self.words + [w for phrase in self.phrases for w in phrase]

    def phrases_in(self, text: str) -> bool:
        """Whether every phrase stands in `text` as written (True when there is none)."""
        if not self.phrases:
            return True
        flat = " " + " ".join(words_of(folded(text))) + " "
        return all(" " + " ".join(folded(w) for w in phrase) + " " in flat
                   for phrase in self.phrases)


def stem_hint(word: str) -> list[str]:
    """Where to look for a stemmed match of `word` in a text, longest first: the word, then
    shorter prefixes down to 4 letters or 3 fewer ("migration" shows on "Migrate")."""
    word = word.casefold()
    shortest = max(min(len(word), 4), len(word) - 3)
    return [word[:n] for n in range(len(word), shortest - 1, -1)]
